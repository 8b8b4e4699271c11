"""The agent tools ``memory_search``, ``memory_get`` and ``memory_append``,
defined once with JSON Schemas; the MCP server, the OpenAI definitions and
the adapters are all generated from :data:`TOOLS`.

Each schema is written for OpenAI strict function calling (every property
listed in ``required``, optional ones nullable, ``additionalProperties:
false``); :attr:`ToolSpec.input_schema` is the same schema with only the
non-nullable properties required, the form MCP and Anthropic clients expect
(a model need not send ``null`` for what it leaves out). Both are valid
tool definitions for either side; tests/test_tools.py checks the rules.

:class:`MemoryTools` answers calls: it validates the arguments against the
schema (omitted optional ones count as null, numbers sent as text count as
numbers: :mod:`.tool_arguments`), shapes what it returns in one place
(:mod:`.tool_results`) and turns every failure,
whatever its cause, into a :class:`ToolError` whose message tells the agent
what to do, never a traceback. What a model reads (errors, notices) leaves
out the absolute index path and the pid and host of a process holding the
writer lock (:func:`.model_text.for_model`): logs and ``memext status`` keep them.
"""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, Sequence

from ..config import Config, load_config
from ..errors import MemextError
from ..index import MemoryIndex
from ..memory.entries import EntryMeta
from ..search.results import SearchResponse
from .hosts import IndexHost, KeptFresh, SyncWhenNeeded
from .model_text import IndexPaths, for_model, notices_for_model
from .tool_arguments import ToolError, describe_error, typed_text
from .tool_results import append_result, get_result, search_result

if TYPE_CHECKING:
    from ..freshness.supervisor import Supervisor

#: What memory_append records as an entry's origin (DESIGN.md §17).
AGENT_ORIGIN = EntryMeta(origin="agent", via="tool")
#: The most results one memory_search may ask for.
MAX_RESULTS_LIMIT = 50
#: The largest reading budget an agent may ask for in one search.
MAX_LINES_LIMIT = 2000


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, what it is for, and its arguments' JSON Schema
    (OpenAI-strict form), plus MCP-style hints about its effects."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    read_only: bool
    destructive: bool
    idempotent: bool

    @property
    def input_schema(self) -> dict[str, Any]:
        """The schema with only its non-nullable properties required (MCP,
        Anthropic): a client may leave the optional ones out."""
        schema = copy.deepcopy(dict(self.parameters))
        schema["required"] = [k for k in schema["required"] if not _nullable(schema["properties"][k])]
        return schema

    def with_agents(self, agents: Sequence[str]) -> "ToolSpec":
        """This tool with the agents a server serves named in its descriptions."""
        if not agents:
            return self
        listed = ", ".join(repr(a) for a in agents)
        if len(agents) == 1:
            note = f"Memory of agent {agents[0]!r}."
            arg = f"The agent whose memory to use: only {agents[0]!r} is served (null picks it)."
        else:
            note = f"Serves the memory of agents {listed}; pick one with `agent` (null: {agents[0]!r})."
            arg = f"The agent whose memory to use, one of {listed} (null: {agents[0]!r})."
        params = copy.deepcopy(dict(self.parameters))
        params["properties"]["agent"]["description"] = arg
        return ToolSpec(self.name, f"{self.description} {note}", params, self.read_only, self.destructive, self.idempotent)


def _nullable(prop: Mapping[str, Any]) -> bool:
    t = prop.get("type")
    return t == "null" or (isinstance(t, list) and "null" in t)


def _object(properties: dict[str, dict]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


_AGENT = {"type": ["string", "null"], "description": "The agent whose memory to use (null: the default agent)."}

MEMORY_SEARCH = ToolSpec(
    name="memory_search",
    description=(
        "Search the long-term memory (MEMORY.md and the daily notes memory/*.md) for facts, decisions, "
        "preferences, people and past work, by meaning and by keyword. Call it before answering anything "
        "that may depend on earlier sessions. Each result has a `citation` (path:start-end) and a `snippet`: "
        "the lines around its best match, numbered as in the file (`>` marks the best line, `⋮` lines left "
        "out); read more around a hit with memory_get. Each result has a `confidence` (0..1) and `confident`. "
        "An empty `results` with a `notice` means memory holds nothing that matches: say you do not know "
        "rather than guess, and do not cite anything for it (include_weak: true shows weak matches, "
        "marked confident: false)."
    ),
    parameters=_object(
        {
            "query": {"type": "string", "description": "What to look for, in natural language or keywords."},
            "max_results": {
                "type": ["integer", "null"],
                "minimum": 1,
                "maximum": MAX_RESULTS_LIMIT,
                "description": "How many results at most (null: the configured default, usually 6).",
            },
            "min_score": {
                "type": ["number", "null"],
                "minimum": 0,
                "maximum": 1,
                "description": "Drop results scoring below this, 0..1 (null: the configured default).",
            },
            "max_lines": {
                "type": ["integer", "null"],
                "minimum": 1,
                "maximum": MAX_LINES_LIMIT,
                "description": (
                    "A reading budget: as many results as fit in this many lines, overlapping hits of one file "
                    "merged into one citation (null: no budget, max_results results)."
                ),
            },
            "after": {
                "type": ["string", "null"],
                "description": (
                    "Only memory dated on or after this: an ISO date (2026-03-01) or date and time, an age "
                    "(7d, 2w, 3m, 1y: days, weeks, months, years ago), today or yesterday (null: no lower bound). "
                    "A note's date is its daily-note name's, else its front matter's date:, else when it was last saved."
                ),
            },
            "before": {
                "type": ["string", "null"],
                "description": "Only memory dated before this, in the same forms as `after` (null: no upper bound).",
            },
            "include_weak": {
                "type": ["boolean", "null"],
                "description": "Return weak matches when none is confident (null: false, an empty answer instead).",
            },
            "include_forgotten": {
                "type": ["boolean", "null"],
                "description": "Also return entries marked forgotten or superseded (null: false).",
            },
            "agent": _AGENT,
        }
    ),
    read_only=True,
    destructive=False,
    idempotent=True,
)

MEMORY_GET = ToolSpec(
    name="memory_get",
    description=(
        "Read lines of a memory file (MEMORY.md, memory/**/*.md), e.g. around a memory_search citation "
        "path:start-end. Paths outside the agent's memory are refused. Long files come in windows: when "
        "`truncated` is true, call again with `from` set to `to_line` + 1."
    ),
    parameters=_object(
        {
            "path": {"type": "string", "description": "Workspace-relative memory file, e.g. MEMORY.md or memory/2026-03-04.md."},
            "from": {"type": ["integer", "null"], "minimum": 1, "description": "First line, 1-based (null: line 1)."},
            "lines": {
                "type": ["integer", "null"],
                "minimum": 1,
                "description": "How many lines (null: to the end, within the output limit).",
            },
            "numbered": {
                "type": ["boolean", "null"],
                "description": "Prefix each line with its number in the file, as search snippets are (null: false, the text as it is).",
            },
            "agent": _AGENT,
        }
    ),
    read_only=True,
    destructive=False,
    idempotent=True,
)

MEMORY_APPEND = ToolSpec(
    name="memory_append",
    description=(
        "Write to memory: append an entry (a short heading and the text) to today's daily note "
        "memory/YYYY-MM-DD.md, or to MEMORY.md for lasting facts and preferences. Append-only: nothing "
        "already in memory is changed, except that `supersedes` marks the entry it replaces. Use it for "
        "what should be remembered in later sessions: decisions, "
        "preferences, facts learned, work done. The entry is searchable as soon as the call returns."
    ),
    parameters=_object(
        {
            "text": {"type": "string", "description": "The entry, in Markdown (lists welcome)."},
            "file": {
                "type": ["string", "null"],
                "description": "Memory file to append to: MEMORY.md for long-term facts, or memory/<name>.md (null: today's daily note).",
            },
            "heading": {"type": ["string", "null"], "description": "A short title for the entry (null: the current time)."},
            "supersedes": {
                "type": ["string", "null"],
                "description": "The citation (path:start-end) of an entry this one replaces, e.g. an old preference; it is marked superseded (null: none).",
            },
            "agent": _AGENT,
        }
    ),
    read_only=False,
    destructive=False,
    idempotent=False,
)

MEMORY_FORGET = ToolSpec(
    "memory_forget",
    "Mark an entry of memory as no longer true, e.g. when the user says it is wrong or asks to forget it. The file keeps "
    "the entry, marked forgotten with today's date and the reason; search leaves it out. To replace an entry with a "
    "corrected one, use memory_append with `supersedes` instead.",
    _object(
        {
            "citation": {
                "type": "string",
                "description": "The entry's citation, path:start-end (or path:line), as memory_search gives it.",
            },
            "reason": {"type": ["string", "null"], "description": "Why it is no longer true (null: none given)."},
            "agent": _AGENT,
        }
    ),
    read_only=False,
    destructive=False,
    idempotent=True,
)

TOOLS: tuple[ToolSpec, ...] = (MEMORY_SEARCH, MEMORY_GET, MEMORY_APPEND, MEMORY_FORGET)


def openai_tools(api: Literal["chat", "responses"] = "chat", tools: Sequence[ToolSpec] = TOOLS) -> list[dict]:
    """The tools as OpenAI function definitions (strict), for the Chat
    Completions (``"chat"``) or the Responses (``"responses"``) API."""
    if api == "chat":
        return [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": copy.deepcopy(dict(t.parameters)), "strict": True},
            }
            for t in tools
        ]
    if api == "responses":
        return [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": copy.deepcopy(dict(t.parameters)),
                "strict": True,
            }
            for t in tools
        ]
    raise ValueError(f"api must be 'chat' or 'responses', not {api!r}")


class MemoryTools:
    """Answers tool calls for one or more agents.

    ``indexes`` is where the agents' indexes come from: a function
    ``open_index(agent_id)`` (indexes are then opened on first use, synced
    before a search when their files changed, and closed by :meth:`close`:
    :class:`~.tool_hosts.SyncWhenNeeded`), or an
    :class:`~.tool_hosts.IndexHost` such as :class:`~.tool_hosts.KeptFresh`
    (a running Supervisor keeps them fresh; see :meth:`kept_fresh`).
    ``agents`` are the ids served (the first is the default). Calls for
    one agent are serialised (its index is not searched while it is being
    written through another call); calls for different agents are not, so
    one agent's stalled store holds up no other. ``busy_timeout``: how long
    a call waits for the agent's previous call before it fails with a
    ToolError (None: as long as it takes).
    """

    def __init__(
        self,
        indexes: Callable[[str], MemoryIndex] | IndexHost,
        agents: Sequence[str],
        *,
        lock_timeout: float = 2.0,
        follow: Callable[[], Sequence[str]] | None = None,
        busy_timeout: float | None = None,
        index_path: Callable[[str], Path | None] | None = None,
    ):
        if not agents:
            raise MemextError("no agents to serve: add one with `memext agents add ID WORKSPACE`")
        self.host: IndexHost = indexes if isinstance(indexes, IndexHost) else SyncWhenNeeded(indexes, lock_timeout)
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._agent_locks: dict[str, threading.RLock] = {}
        self._follow = follow
        #: Where the agents' index files are: left out of what a model reads.
        self._paths = IndexPaths(index_path)
        self._serve(tuple(agents))
        # Imported here, not at the top: `import jsonschema` takes about 2 s
        # (its URI format checker compiles grammars), which every
        # `import memext.engine` would pay.
        from jsonschema import Draft202012Validator

        self._validators = {t.name: Draft202012Validator(dict(t.parameters)) for t in self.specs}

    @classmethod
    def from_config(cls, config: Config | None = None, agents: Sequence[str] | None = None, *, lock_timeout: float = 2.0) -> "MemoryTools":
        """Tools over the agents of ``config`` (loaded from the usual place
        when None): ``agents`` (ids) or all of them; indexes synced before a
        search when their files changed (:class:`~.tool_hosts.SyncWhenNeeded`)."""
        cfg = config or load_config()
        chosen = [cfg.agent(a) for a in agents] if agents else list(cfg.agents)
        by_id = {a.id: a for a in chosen}
        return cls(
            lambda agent_id: MemoryIndex(by_id[agent_id], config_file=cfg.path),
            list(by_id),
            lock_timeout=lock_timeout,
            index_path=lambda agent_id: by_id[agent_id].db_path() if agent_id in by_id else None,
        )

    @classmethod
    def kept_fresh(
        cls, supervisor: "Supervisor", agents: Sequence[str] | None = None, *, busy_timeout: float | None = None
    ) -> "MemoryTools":
        """Tools over the agents of a started :class:`~.supervisor.Supervisor`
        (``agents``, or all of them: then agents added to or removed from the
        config file are served or dropped at the next call, see
        :meth:`refresh_agents`), whose keepers keep the indexes fresh:
        searches never sync, and say ``stale`` when the index did not match
        the files (:class:`~.tool_hosts.KeptFresh`)."""

        def index_path(agent_id: str) -> Path | None:
            return supervisor.keeper(agent_id).agent.db_path()  # without opening an index not used yet

        if not agents:  # every agent of the config, as it is edited
            return cls(
                KeptFresh(supervisor),
                supervisor.agent_ids(),
                follow=lambda: _reloaded_agents(supervisor),
                busy_timeout=busy_timeout,
                index_path=index_path,
            )
        for agent_id in agents:
            supervisor.keeper(agent_id)  # an unknown agent fails here, not at the first call
        return cls(KeptFresh(supervisor), list(agents), busy_timeout=busy_timeout, index_path=index_path)

    def _serve(self, agents: tuple[str, ...]) -> None:
        self.agents: tuple[str, ...] = agents
        self.specs: tuple[ToolSpec, ...] = tuple(t.with_agents(agents) for t in TOOLS)
        self._by_name = {t.name: t for t in self.specs}

    def refresh_agents(self) -> bool:
        """Serve the agents the config holds now (tools made by
        :meth:`kept_fresh` without ``agents``: the config file is reloaded
        when it changed). True when the served agents changed, so the tool
        descriptions naming them did too. A no-op for a fixed list."""
        if self._follow is None:
            return False
        now = tuple(self._follow())
        if not now or now == self.agents:
            return False
        with self._lock:
            self._serve(now)
        return True

    @property
    def default_agent(self) -> str:
        return self.agents[0]

    def index(self, agent: str | None = None) -> MemoryIndex:
        """The index of ``agent`` (the default agent when None)."""
        return self.host.index(self._served(agent))

    def _served(self, agent: str | None) -> str:
        agent_id = self.default_agent if agent is None else agent
        if agent_id not in self.agents:
            served = ", ".join(repr(a) for a in self.agents)
            raise ToolError(f"no agent {agent_id!r} here; this memory serves {served} (or pass agent=null for {self.default_agent!r})")
        return agent_id

    def openai_tools(self, api: Literal["chat", "responses"] = "chat") -> list[dict]:
        """:func:`openai_tools` with the served agents named."""
        return openai_tools(api, self.specs)

    def close(self) -> None:
        """Close the indexes this object opened (idempotent; a
        Supervisor's indexes stay with it), after the calls running (or
        ``busy_timeout``, for a call stalled on its store)."""
        with self._lock:
            locks = list(self._agent_locks.values())
        held = [lock for lock in locks if lock.acquire(timeout=-1 if self.busy_timeout is None else self.busy_timeout)]
        try:
            with self._lock:
                self.host.close()
        finally:
            for lock in held:
                lock.release()

    def __enter__(self) -> "MemoryTools":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- dispatch -------------------------------------------------------------

    def call_tool(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> dict:
        """Run tool ``name`` with ``arguments`` (a mapping, a JSON object as
        text, as OpenAI sends it, or None); returns a JSON-ready dict.

        Raises ToolError, with a message the agent can act on, for any
        failure: unknown tool, bad arguments, a refused path, an index error.
        """
        self.refresh_agents()  # an agent added to the config is served at once
        spec = self._by_name.get(name) if isinstance(name, str) else None
        if spec is None:
            raise ToolError(f"no tool {name!r}; the tools are {', '.join(t.name for t in self.specs)}")
        args = self._arguments(spec, arguments)
        handler = {"memory_search": self._search, "memory_get": self._get, "memory_append": self._append, "memory_forget": self._forget}[
            name
        ]
        agent = self._served(args["agent"])
        lock = self._agent_lock(agent)
        if not lock.acquire(timeout=-1 if self.busy_timeout is None else self.busy_timeout):
            raise ToolError(
                f"{name}: an earlier call for agent {agent!r} has not finished within {self.busy_timeout:g} s "
                "(its index's store may not be answering); try again shortly"
            )
        try:
            result = handler(args)
            self._paths.opened(agent, lambda: self.host.index(agent).db_path)
        except MemextError as exc:  # ToolError included: its message may quote one
            raise ToolError(self._for_model(str(exc))) from exc
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise ToolError(self._for_model(f"{name} failed: {where}{exc.strerror or exc}")) from exc
        except Exception as exc:  # the agent gets a message, the host keeps running
            raise ToolError(self._for_model(f"{name} failed unexpectedly: {type(exc).__name__}: {exc}")) from exc
        finally:
            lock.release()
        if result.get("notice") or result.get("fallback"):
            result = notices_for_model(result, self._paths.all(self.agents))
        return result

    def _agent_lock(self, agent: str) -> threading.RLock:
        with self._lock:
            return self._agent_locks.setdefault(agent, threading.RLock())

    def _for_model(self, text: str) -> str:
        return for_model(text, self._paths.all(self.agents))

    def _arguments(self, spec: ToolSpec, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """The arguments as a dict with every property present (omitted
        optional ones as None), checked against the schema."""
        if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
            arguments = {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                raise ToolError(f"{spec.name}: the arguments are not valid JSON ({exc}); send a JSON object") from None
        if not isinstance(arguments, Mapping):
            raise ToolError(f"{spec.name}: the arguments must be a JSON object, not {type(arguments).__name__}")
        props = spec.parameters["properties"]
        args = {k: None for k, p in props.items() if _nullable(p)}
        args.update(arguments)
        for key, value in args.items():
            if isinstance(value, str) and key in props:
                args[key] = typed_text(spec.name, key, value, props[key])
        errors = sorted(self._validators[spec.name].iter_errors(args), key=lambda e: list(e.absolute_path))
        if errors:
            raise ToolError(f"{spec.name}: bad arguments: {describe_error(errors[0], props)}")
        return args

    def _search(self, args: dict[str, Any]) -> dict:
        if not args["query"].strip():
            raise ToolError("memory_search: the query is empty; say what to look for")

        def run(index: MemoryIndex) -> SearchResponse:
            return index.search(
                args["query"],
                max_results=args["max_results"],
                min_score=args["min_score"],
                max_lines=args["max_lines"],
                after=args["after"],
                before=args["before"],
                include_weak=bool(args.get("include_weak")),
                include_forgotten=bool(args["include_forgotten"]),
            )

        resp, stale_notice = self.host.search(self._served(args["agent"]), run)
        return search_result(resp, stale_notice)

    def _get(self, args: dict[str, Any]) -> dict:
        res = self.index(args["agent"]).get(args["path"], args["from"], args["lines"])
        return get_result(res, numbered=bool(args["numbered"]))

    def _append(self, args: dict[str, Any]) -> dict:
        agent = self._served(args["agent"])
        return append_result(
            self.host.append(agent, args["text"], args["file"], args["heading"], meta=AGENT_ORIGIN, supersedes=args["supersedes"])
        )

    def _forget(self, args: dict[str, Any]) -> dict:
        return self.host.forget(self._served(args["agent"]), args["citation"], args["reason"]).to_dict()


def _reloaded_agents(supervisor: "Supervisor") -> list[str]:
    """The supervisor's agents after reloading a config file that changed."""
    supervisor.reload_if_changed()
    return supervisor.agent_ids()
