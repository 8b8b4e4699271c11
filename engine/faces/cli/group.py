"""The ``memext`` command group's class: lazy commands, and the one place
where every command's failure becomes one line on stderr and an exit status."""

from __future__ import annotations

import sys
from typing import IO, Any

import click

from ... import MemextError, WorkspaceMissing

__all__ = ["CommandError", "Interrupted", "MemextGroup", "os_error_line", "trouble"]


class CommandError(click.ClickException):
    """A failure the user can act on: one line on stderr, exit status 1."""

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"memext: error: {self.format_message()}", err=True)


def trouble(message: str) -> CommandError:
    """A :class:`CommandError` with exit status 2, as grep's for trouble:
    for a command whose exit 1 means an answer ("no memory matches"), or
    a health check (``memext status``) that must tell "broken" apart."""
    error = CommandError(message)
    error.exit_code = 2
    return error


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
    Ctrl+C) become one line on stderr and exit status 1 (2 for a workspace
    out of reach, 130 for Ctrl+C).

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
            # A workspace out of reach: never the 1 of "no memory matches",
            # which an agent takes for an answer.
            raise (trouble if isinstance(exc, WorkspaceMissing) else CommandError)(str(exc)) from exc
        except BrokenPipeError:
            # The reader went away (`memext search x | head -1`): stop quietly.
            # stdout goes to devnull so the interpreter's last flush cannot
            # print a second Broken pipe error; click's main() exits with 1.
            _silence_stdout()
            raise
        except OSError as exc:
            raise CommandError(os_error_line(exc)) from exc
        except KeyboardInterrupt:
            raise Interrupted("interrupted") from None


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test runner's buffer)
        pass


def os_error_line(exc: OSError) -> str:
    """One line for an OS error: the file it names, then what went wrong."""
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"
