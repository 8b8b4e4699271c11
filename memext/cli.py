"""The ``memext`` program (console script and ``python -m memext``): the
engine's commands (:mod:`memext.engine.faces.cli.commands`) plus ``memext tray``.

``memext tray`` lives here rather than beside the other commands because
the engine imports no face; it imports the tray lazily, so the CLI works
without the ``tray`` extra and says in one line how to install it.
"""

from __future__ import annotations

import gc

import click

from memext.engine.faces.cli.commands import COMMANDS, CommandError, MemextGroup, cli as engine_cli

TRAY_EXTRA = "pip install 'memext[tray]'"


@click.command(
    "tray",
    short_help="Run the tray app (the same as memext-tray).",
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def tray_cmd(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Run the tray app that keeps every agent's index fresh (the same as
    memext-tray: --headless, --polling, --reconcile-seconds, -v; see
    `memext tray --help`)."""
    try:
        from memext.tray.__main__ import main as tray_main
    except ImportError as exc:
        raise CommandError(f"the tray app needs the tray extra ({exc}): {TRAY_EXTRA}") from None
    argv = list(args)
    config = (ctx.obj or {}).get("config_path")
    if config and "--config" not in argv:
        argv = ["--config", config, *argv]
    ctx.exit(tray_main(argv, prog="memext tray"))


#: The whole ``memext`` group: the engine's table of commands
#: (:data:`~memext.engine.faces.cli.commands.COMMANDS`) and ``tray`` (a new
#: group built from the engine group's public parts, so importing this module
#: changes nothing in :mod:`memext.engine.faces.cli.commands`).
cli = MemextGroup(
    name="memext",
    commands=[tray_cmd],
    lazy_commands=COMMANDS,
    params=engine_cli.params,
    callback=engine_cli.callback,
    help=engine_cli.help,
    epilog=engine_cli.epilog,
    context_settings=engine_cli.context_settings,
)


def main() -> None:
    """Entry point of the ``memext`` console script."""
    try:
        cli(prog_name="memext")
    finally:
        # The process ends here. Python's shutdown runs a full garbage
        # collection over every object the imports made, about 10 ms of a
        # 0.1 s one-shot search; it skips frozen objects. Output is still
        # flushed, atexit handlers still run and objects are still freed as
        # their modules go: only cycles left unreachable are not collected.
        gc.freeze()
