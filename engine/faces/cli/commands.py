"""The engine's ``memext`` command group and its one table of commands,
:data:`COMMANDS` (:mod:`memext.cli` adds ``memext tray`` and is the
console script: the engine imports no face). The commands live in
``index_commands`` (index, status), ``search_commands`` (search, get),
``lifecycle_commands`` (note, forget, capture, consolidate, recall),
``mcp_command``, ``agent_commands`` (agents, config) and
``model_commands``; adding one is its function there and a row here.

Every command takes ``-a/--agent`` and ``--json``, after it or before it
(``memext -a work search x``). A command that works on one agent (index,
search, get, note) takes, without ``-a``, the agent whose workspace holds
the current folder, else the first configured one, and then names it when
there are others; without a config, the current folder is the agent.
Exit statuses are grep's: 0 done, 1 nothing found (search, get, recall,
consolidate), 2 an error (an argument or stdin that is not UTF-8 too), printed as one line on stderr (130 for Ctrl+C). ``search`` syncs a stale index in
the foreground first (a one-shot process cannot leave that to a background
thread), through the agent tools' :class:`~memext.engine.agents.index_hosts.SyncWhenNeeded`.
"""

from __future__ import annotations

import click

from .group import (
    CommandError as CommandError,  # CommandError: memext/cli.py raises it
    MemextGroup,
)
from .options import (
    COLOR_CHOICES,
    check_group_options,
    color_setting,
    complete_agent_id,
    examples,
    group_defaults,
)

#: Every command of the engine's ``memext`` group: its name and where it is
#: defined (``module:attribute``). A command's module is imported when it
#: runs or a help lists it, so a one-shot ``memext search`` loads only the
#: search's. ``memext tray`` is the program's own row (memext/cli.py: the
#: engine imports no face).
COMMANDS: dict[str, str] = {
    "index": "memext.engine.faces.cli.index_commands:index_cmd",
    "status": "memext.engine.faces.cli.index_commands:status_cmd",
    "search": "memext.engine.faces.cli.search_commands:search_cmd",
    "get": "memext.engine.faces.cli.search_commands:get_cmd",
    "note": "memext.engine.faces.cli.lifecycle_commands:note_cmd",
    "forget": "memext.engine.faces.cli.lifecycle_commands:forget_cmd",
    "capture": "memext.engine.faces.cli.lifecycle_commands:capture_cmd",
    "consolidate": "memext.engine.faces.cli.lifecycle_commands:consolidate_cmd",
    "recall": "memext.engine.faces.cli.lifecycle_commands:recall_cmd",
    "mcp": "memext.engine.faces.cli.mcp_command:mcp_cmd",
    "agents": "memext.engine.faces.cli.agent_commands:agents_cmd",
    "config": "memext.engine.faces.cli.agent_commands:config_cmd",
    "model": "memext.engine.faces.cli.model_commands:model_group",
}


@click.group(
    cls=MemextGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=examples(
        "memext agents add work ~/agents/work",
        'memext search -a work "who owns billing"',
        nothing="nothing found (search, get, recall, consolidate)",
    ),
    lazy_commands=COMMANDS,
)
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="Config file (default: $MEMEXT_CONFIG or the user config dir)."
)
@click.option(
    "-a",
    "--agent",
    "group_agent",
    metavar="ID",
    help="Agent id for the command that follows (as its own -a).",
    shell_complete=complete_agent_id,
)
@click.option("--json", "group_json", is_flag=True, help="Print JSON, for the command that follows (as its own --json).")
@click.option(
    "--color",
    type=click.Choice(COLOR_CHOICES),
    default="auto",
    show_default=True,
    help="Colour the output: auto colours a terminal unless NO_COLOR is set (FORCE_COLOR colours any output).",
)
@click.version_option(package_name="memext")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, group_agent: str | None, group_json: bool, color: str) -> None:
    """Search an agent's Markdown memory (MEMORY.md, memory/*.md) with
    hybrid semantic + keyword search and path:line citations."""
    ctx.ensure_object(dict)
    ctx.obj["config_path"] = config_path
    ctx.color = color_setting(color)  # every command's context inherits it, and click.echo obeys it
    given = group_defaults(group_agent, group_json)
    if given and ctx.invoked_subcommand:
        assert isinstance(ctx.command, click.Group)
        check_group_options(given, ctx.command.get_command(ctx, ctx.invoked_subcommand), ctx.invoked_subcommand)
        ctx.default_map = given
