"""Answering the agent tools' calls: :class:`MemoryTools` (the tools, and
the function that answers each, are the rows of :mod:`.tool_specs`).

:class:`MemoryTools` validates the arguments against the schema (omitted
optional ones count as null, numbers sent as text count as numbers:
:mod:`.tool_arguments`), shapes what it returns in one place
(:mod:`.tool_results`) and turns every failure,
whatever its cause, into a :class:`ToolError` whose message tells the agent
what to do, never a traceback. What a model reads (errors, notices) leaves
out the absolute index path and the pid and host of a process holding the
writer lock (:func:`.model_text.for_model`): logs and ``memext status`` keep them.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, Sequence

from ..config import Config, load_config
from ..errors import MemextError
from ..index import MemoryIndex
from ..search.recall import Recall, nothing
from .index_hosts import IndexHost, KeptFresh, SyncWhenNeeded
from .model_text import IndexPaths, for_model, notices_for_model
from .tool_arguments import ToolError, describe_error, typed_text
from .tool_specs import TOOLS, ToolSpec, nullable, openai_tools

if TYPE_CHECKING:
    from ..freshness.supervisor import Supervisor


class MemoryTools:
    """Answers tool calls for one or more agents.

    ``indexes`` is where the agents' indexes come from: a function
    ``open_index(agent_id)`` (indexes are then opened on first use, synced
    before a search when their files changed, and closed by :meth:`close`:
    :class:`~.index_hosts.SyncWhenNeeded`), or an
    :class:`~.index_hosts.IndexHost` such as :class:`~.index_hosts.KeptFresh`
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
        search when their files changed (:class:`~.index_hosts.SyncWhenNeeded`)."""
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
        """Tools over the agents of a started :class:`~memext.engine.Supervisor`
        (``agents``, or all of them: then agents added to or removed from the
        config file are served or dropped at the next call, see
        :meth:`refresh_agents`), whose keepers keep the indexes fresh:
        searches never sync, and say ``stale`` when the index did not match
        the files (:class:`~.index_hosts.KeptFresh`)."""

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

    def recall(self, message: str, agent: str | None = None) -> Recall:
        """The memories of ``agent`` (the default agent when None) that
        ``message`` calls for (:meth:`MemoryIndex.recall`, DESIGN.md §18),
        from its index as it is (recall never syncs nor waits for a sync).
        Within the agent's ``recall.deadline_ms``: a call for the agent that
        has not finished by then leaves recall empty, with a notice. Raises
        ToolError for an agent not served or a failed search."""
        self.refresh_agents()
        agent_id = self._served(agent)
        started = time.perf_counter()
        index = self.host.index(agent_id)
        seconds = index.agent.settings.recall.deadline_ms / 1000.0
        lock = self._agent_lock(agent_id)
        if not lock.acquire(timeout=seconds):
            return nothing(f"an earlier call for agent {agent_id!r} has not finished within {seconds:g} s: nothing recalled", started)
        try:
            got = index.recall(message, deadline=max(seconds - (time.perf_counter() - started), 0.001))
        except MemextError as exc:
            raise ToolError(self._for_model(str(exc))) from exc
        finally:
            lock.release()
        return got

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
        answer = spec.answer
        if answer is None:
            raise ToolError(f"{name}: this tool has no answer here")
        agent = self._served(args["agent"])
        lock = self._agent_lock(agent)
        if not lock.acquire(timeout=-1 if self.busy_timeout is None else self.busy_timeout):
            raise ToolError(
                f"{name}: an earlier call for agent {agent!r} has not finished within {self.busy_timeout:g} s "
                "(its index's store may not be answering); try again shortly"
            )
        try:
            result = answer(self.host, agent, args)
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
        args = {k: None for k, p in props.items() if nullable(p)}
        args.update(arguments)
        for key, value in args.items():
            if isinstance(value, str) and key in props:
                args[key] = typed_text(spec.name, key, value, props[key])
        errors = sorted(self._validators[spec.name].iter_errors(args), key=lambda e: list(e.absolute_path))
        if errors:
            raise ToolError(f"{spec.name}: bad arguments: {describe_error(errors[0], props)}")
        return args


def _reloaded_agents(supervisor: "Supervisor") -> list[str]:
    """The supervisor's agents after reloading a config file that changed."""
    supervisor.reload_if_changed()
    return supervisor.agent_ids()
