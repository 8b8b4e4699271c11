"""What every ``memext`` command shares: the ``-a``/``--json`` options (also
accepted before the command, as ``memext -a work search x``), the
parameters of the commands that answer a text, the agent a command works
on and its index, the colour setting and a sync's progress bar, the
examples that end each ``--help``, the config of the invocation and JSON
output."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, TypeVar

import click

from ... import AgentConfig, Config, MemoryIndex, load_config

if TYPE_CHECKING:
    from ...for_faces import TextProgress

F = TypeVar("F", bound=Callable[..., Any])


def complete_agent_id(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of ``-a``: the configured agents' ids (none when the
    config does not load: completion must not print an error)."""
    from ... import MemextError

    try:
        cfg = load_config(ctx.find_root().params.get("config_path"))
    except (MemextError, OSError):
        return []
    return [a.id for a in cfg.agents if a.id.startswith(incomplete)]


agent_option = click.option("-a", "--agent", help="Agent id (default: the first configured agent).", shell_complete=complete_agent_id)
#: ``-a`` of the commands that work on one agent, picked by :func:`pick_agent`.
picked_agent_option = click.option(
    "-a",
    "--agent",
    help="Agent id (default: the agent whose workspace holds the current folder, else the first configured).",
    shell_complete=complete_agent_id,
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def text_agent_and_count(name: str, most: int, count_help: str) -> Callable[[F], F]:
    """The parameters of a command that answers a text for one agent
    (``search``, ``recall``): the words NAME (``-`` reads stdin), ``-a``
    (:data:`picked_agent_option`) and ``-n``/``--max-results`` up to ``most``."""

    def decorate(fn: F) -> F:
        fn = click.option("-n", "--max-results", type=click.IntRange(1, most), help=count_help)(fn)
        fn = picked_agent_option(fn)
        return click.argument(name, nargs=-1, required=True)(fn)

    return decorate


#: The parameter names that ``memext -a ID`` and ``memext --json`` fill in
#: for the command that follows (each command's own option wins).
GROUP_DEFAULTS = {"agent": "-a/--agent", "as_json": "--json"}

COLOR_CHOICES = ("auto", "always", "never")


class InheritedDefaults(dict):
    """A ``default_map`` that hands the same defaults to every command below
    the group: click looks a subcommand's map up as ``.get(its name)``, and a
    parameter's default with ``in`` and ``[]``, which see only the real keys."""

    def get(self, key: Any, default: Any = None) -> Any:
        return super().get(key, self)


def group_defaults(agent: str | None, as_json: bool) -> InheritedDefaults:
    """The defaults ``memext -a ID --json CMD`` gives CMD and the commands below it."""
    given = InheritedDefaults()
    if agent is not None:
        given["agent"] = agent
    if as_json:
        given["as_json"] = True
    return given


def check_group_options(given: Mapping[str, Any], command: click.Command | None, name: str) -> None:
    """Refuse ``memext -a ID CMD`` where CMD has no such option (it would be
    ignored without a word). A group's commands are not checked: ``agents``
    and ``model`` hold commands that take them."""
    if command is None or isinstance(command, click.Group):
        return
    takes = {p.name for p in command.params}
    for key in given:
        if key not in takes:
            raise click.UsageError(f"{GROUP_DEFAULTS[key]} does not apply to `memext {name}`")


def color_setting(choice: str, env: Mapping[str, str] | None = None) -> bool | None:
    """``--color``, then ``NO_COLOR`` (no-color.org) and ``FORCE_COLOR``
    (force-color.org): True or False to force colour on or off, None to
    colour only a terminal."""
    env = os.environ if env is None else env
    if choice != "auto":
        return choice == "always"
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return None


class PickedAgent(NamedTuple):
    """The agent a command works on, and whether its output must name it."""

    agent: AgentConfig
    #: True when the first of several configured agents answers for want of
    #: a choice (no -a, the current folder in no agent's workspace).
    name_it: bool
    #: How many agents the config has.
    configured: int

    def header(self) -> str:
        """The line that names the agent that answered."""
        return f"agent {self.agent.id} (first of {self.configured} configured; -a ID or cd into a workspace to choose)"


def pick_agent(cfg: Config, agent_id: str | None, cwd: Path | None = None) -> PickedAgent:
    """``-a``'s agent; else, with a config, the agent whose workspace holds
    the current folder; else the first configured (the ad-hoc agent without
    a config is the current folder already)."""
    if agent_id is None and cfg.path is not None:
        here = cfg.agent_at(cwd if cwd is not None else Path.cwd())
        if here is not None:
            return PickedAgent(here, False, len(cfg.agents))
        return PickedAgent(cfg.agent(None), len(cfg.agents) > 1, len(cfg.agents))
    return PickedAgent(cfg.agent(agent_id), False, len(cfg.agents))


#: What exit status 2 means, for every command (grep's and ripgrep's 2).
ERROR_KINDS = "an error (usage, configuration, I/O, provider)"


def check_has_memory(agent: AgentConfig) -> None:
    """Refuse an ad-hoc agent (no config: the current folder) with no memory
    files, which would silently get an empty index (and an index file to
    prune later): say where memory is looked for. ``index``, ``search`` and
    ``recall`` agree on it; ``note`` writes the first memory file instead."""
    from ... import MemextError
    from ...for_faces import MEMORY_DIR, ROOT_FILES

    ws = agent.workspace
    if not agent.adhoc or any((ws / name).is_file() for name in ROOT_FILES) or (ws / MEMORY_DIR).is_dir() or agent.extra_path_list():
        return
    raise MemextError(
        f"no memory files found in {ws} (no MEMORY.md and no {MEMORY_DIR}/ folder): run memext in an agent's "
        "workspace, or add one with `memext agents add ID WORKSPACE`"
    )


def picked_with_memory(cfg: Config, agent_id: str | None) -> PickedAgent:
    """:func:`pick_agent`'s agent, refused as :func:`check_has_memory` says
    (an ad-hoc folder with no memory files)."""
    picked = pick_agent(cfg, agent_id)
    check_has_memory(picked.agent)
    return picked


def examples(*lines: str, ok: str = "done", nothing: str | None = None, error: str = ERROR_KINDS) -> str:
    """A command's ``epilog``: its exit statuses, grep's (0 ``ok``, 1
    ``nothing`` for a command that can find nothing, 2 ``error``), then its
    examples, one a line. ``\b`` keeps click from rewrapping them into one
    paragraph."""
    found = f", 1 {nothing}" if nothing else ""
    return f"Exit status: 0 {ok}{found}, 2 {error}.\n\n\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def ctx_config(ctx: click.Context) -> Config:
    """The config named by ``--config`` (or $MEMEXT_CONFIG, or the user's)."""
    return load_config((ctx.obj or {}).get("config_path"))


def stdin_text(what: str) -> str:
    """All of stdin, read as UTF-8; bytes that are not UTF-8 are an error
    naming ``what`` (exit status 2), never text holding lone surrogates."""
    from .group import NotUtf8, not_utf8

    raw = getattr(sys.stdin, "buffer", None)
    if raw is None:  # a text stream with no bytes under it
        text = sys.stdin.read()
        if not_utf8(text):
            raise NotUtf8(f"{what} on stdin is not valid UTF-8")
        return text
    data = raw.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8(f"{what} on stdin is not valid UTF-8 (byte {exc.start + 1} is {data[exc.start : exc.start + 1]!r})") from None


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout, characters that would act on a
    terminal (controls, bidirectional controls) written as ``\\u`` escapes."""
    from ...for_faces import json_safe

    click.echo(json_safe(json.dumps(data, indent=2, ensure_ascii=False, default=str)))


def one_shot_index(cfg: Config, agent: AgentConfig) -> MemoryIndex:
    """The agent's index for one command (``one_shot``: no background work);
    errors name ``cfg``'s file."""
    return MemoryIndex(agent, config_file=cfg.path, one_shot=True)


def picked_from_ctx(ctx: click.Context, agent_id: str | None) -> PickedAgent:
    """The agent of a command that works on one (:func:`pick_agent`), from
    the invocation's config."""
    return pick_agent(ctx_config(ctx), agent_id)


def picked_index(ctx: click.Context, picked: PickedAgent) -> MemoryIndex:
    """The picked agent's index for one command (:func:`one_shot_index`),
    errors naming the invocation's config file."""
    return one_shot_index(ctx_config(ctx), picked.agent)


def sync_progress_bar(label: str) -> TextProgress:
    """The bar a sync shows on a terminal (gone when done), in the
    invocation's colours (``--color``, NO_COLOR, FORCE_COLOR)."""
    from ...for_faces import TextProgress

    ctx = click.get_current_context(silent=True)
    return TextProgress(label, transient=True, color=ctx.color if ctx is not None else None)
