"""The ``memext`` command group's class: lazy commands, and the one place
where every command's failure becomes one line on stderr and an exit status.

Exit statuses are grep's and ripgrep's, so a script can tell "no memory"
from "broken": 0 the command did what it was asked (a search answered),
1 nothing found (a search, a recall, a consolidation with nothing to
propose), 2 an error (usage, configuration, I/O, provider), 130 Ctrl+C."""

from __future__ import annotations

import sys
from typing import IO, Any

import click

from ... import MemextError

__all__ = ["ERROR_STATUS", "NOTHING_FOUND_STATUS", "CommandError", "Interrupted", "MemextGroup"]

#: A command found nothing (grep's 1): no memory matches, nothing recalled.
NOTHING_FOUND_STATUS = 1
#: A command failed (grep's 2): usage, configuration, I/O, provider. Click's
#: own usage errors exit 2 too.
ERROR_STATUS = 2


class CommandError(click.ClickException):
    """A failure the user can act on: one line on stderr, exit status 2."""

    exit_code = ERROR_STATUS

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"memext: error: {self.format_message()}", err=True)


class Interrupted(CommandError):
    """Ctrl+C: one line on stderr and exit status 130 (128 + SIGINT), as a
    shell reports a program that SIGINT stopped."""

    exit_code = 130

    def show(self, file: IO[Any] | None = None) -> None:
        # Below the ^C the terminal echoed: the user asked for it, no "error".
        click.echo(f"memext: {self.format_message()}", err=True)


class MemextGroup(click.Group):
    """The ``memext`` group: the ONE place where errors of every command
    below it (memext errors, OS errors such as an unwritable folder,
    Ctrl+C) become one line on stderr and exit status 2 (130 for Ctrl+C).

    ``lazy_commands`` (name -> ``"module:attribute"``: the table of
    commands, :data:`~.commands.COMMANDS`) are imported when they run or a
    help lists them: a one-shot ``memext search`` pays for the search's
    module only."""

    def __init__(self, *args: Any, lazy_commands: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:
            # click suggests from the commands loaded so far: offer the lazy ones too.
            raise click.exceptions.NoSuchCommand(exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            import importlib

            module, attribute = self.lazy_commands[cmd_name].split(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemextError as exc:
            raise CommandError(str(exc)) from exc
        except BrokenPipeError:
            # The reader went away (`memext search x | head -1`): stop quietly
            # with status 0, as ripgrep does: what was asked for was found
            # and printed until the reader stopped reading. stdout goes to
            # devnull so the interpreter's last flush cannot print a second
            # Broken pipe error.
            _silence_stdout()
            raise click.exceptions.Exit(0) from None
        except OSError as exc:
            raise CommandError(_os_error_line(exc)) from exc
        except KeyboardInterrupt:
            raise Interrupted("interrupted") from None


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test runner's buffer)
        pass


def _os_error_line(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"
