"""The ``memext`` command group's class: lazy commands, and the one place
where every command's failure becomes one line on stderr and an exit status.

Exit statuses are grep's and ripgrep's, so a script can tell "no memory"
from "broken": 0 the command did what it was asked (a search answered),
1 nothing found (a search, a recall, a consolidation with nothing to
propose), 2 an error (usage, configuration, I/O, provider), 130 Ctrl+C."""

from __future__ import annotations

import re
import sys
from typing import IO, Any

import click

from ... import MemextError, WorkspaceMissing
from ...for_faces import terminal_safe

__all__ = ["ERROR_STATUS", "NOTHING_FOUND_STATUS", "CommandError", "Interrupted", "MemextGroup", "NotUtf8", "Trouble", "os_error_line"]

#: A command found nothing (grep's 1): no memory matches, nothing recalled.
NOTHING_FOUND_STATUS = 1
#: A command failed (grep's 2): usage, configuration, I/O, provider. Click's
#: own usage errors exit 2 too.
ERROR_STATUS = 2


class CommandError(click.ClickException):
    """A failure the user can act on: one line on stderr, exit status 2."""

    exit_code = ERROR_STATUS

    def show(self, file: IO[Any] | None = None) -> None:
        # Errors quote file names and input, which can hold control characters.
        click.echo(f"memext: error: {terminal_safe(self.format_message())}", err=True)


class Trouble(CommandError):
    """A failure with exit status 2, as grep's for trouble (every
    :class:`CommandError` is one): named where a command must never be
    read as "no memory matches" (a workspace out of reach)."""

    exit_code = ERROR_STATUS


class Interrupted(CommandError):
    """Ctrl+C: one line on stderr and exit status 130 (128 + SIGINT), as a
    shell reports a program that SIGINT stopped."""

    exit_code = 130

    def show(self, file: IO[Any] | None = None) -> None:
        # Below the ^C the terminal echoed: the user asked for it, no "error".
        click.echo(f"memext: {self.format_message()}", err=True)


class NotUtf8(CommandError):
    """Input that is not UTF-8 (an argument, stdin): one line naming it, exit
    status 2 as for any other bad usage. Python hands bytes that are not
    UTF-8 over as lone surrogates, which no file, index or terminal takes."""

    exit_code = ERROR_STATUS


#: What Python makes of bytes that are not UTF-8 (surrogateescape), and
#: any other lone surrogate.
_SURROGATES = re.compile("[\ud800-\udfff]")
#: The longest argument quoted whole in the error.
_QUOTED_CHARS = 200


def not_utf8(text: str) -> bool:
    """True when ``text`` holds bytes that were not UTF-8."""
    return _SURROGATES.search(text) is not None


def shown_bytes(text: str) -> str:
    """``text`` quoted, its undecodable bytes shown as ``\\xNN``."""
    if len(text) > _QUOTED_CHARS:
        at = _SURROGATES.search(text)
        start = max(0, (at.start() if at else 0) - _QUOTED_CHARS // 2)
        text = ("…" if start else "") + text[start : start + _QUOTED_CHARS] + "…"

    def byte(m: re.Match[str]) -> str:
        code = ord(m.group())
        return f"\\x{code - 0xDC00:02x}" if code >= 0xDC80 else f"\\u{code:04x}"

    return "'" + _SURROGATES.sub(byte, text) + "'"


class MemextGroup(click.Group):
    """The ``memext`` group: the ONE place where errors of every command
    below it (memext errors, OS errors such as an unwritable folder,
    Ctrl+C) become one line on stderr and exit status 2 (130 for Ctrl+C),
    and where an argument that is not UTF-8 is refused, named, with exit
    status 2 before any command reads it.

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

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any) -> click.Context:
        # Before click reads anything: every command takes text or paths,
        # and one not UTF-8 would fail wherever it is first written.
        if parent is None:
            for i, arg in enumerate(args):
                if not_utf8(arg):
                    what = argument_name(self, args, i)
                    raise NotUtf8(f"{what} is not valid UTF-8: {shown_bytes(arg)} (memext reads text and file names as UTF-8)")
        return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemextError as exc:
            # A workspace out of reach: never the 1 of "no memory matches",
            # which an agent takes for an answer.
            raise (Trouble if isinstance(exc, WorkspaceMissing) else CommandError)(str(exc)) from exc
        except BrokenPipeError:
            # The reader went away (`memext search x | head -1`): stop quietly
            # with status 0, as ripgrep does: what was asked for was found
            # and printed until the reader stopped reading. stdout goes to
            # devnull so the interpreter's last flush cannot print a second
            # Broken pipe error.
            _silence_stdout()
            raise click.exceptions.Exit(0) from None
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


def argument_name(root: click.Group, args: list[str], index: int) -> str:
    """What ``args[index]`` is to the command line ``args`` of ``root``: a
    command's argument by its name (``QUERY``), an option's value (``the
    value of --since``), else its position."""
    ctx = click.Context(root)
    cmd: click.Command = root
    seen = 0  # positional arguments of cmd so far
    i, options_end = 0, False
    while i < len(args):
        token = args[i]
        if token == "--" and not options_end:
            options_end = True
        elif token.startswith("-") and token != "-" and not options_end:
            name, equals, _ = token.partition("=")
            option, attached = _option(cmd, name)
            if i == index:
                return f"the value of {option.opts[0] if option else name}" if equals or attached else f"argument {i + 1}"
            if option is not None and not option.is_flag and not option.count and not equals and not attached:
                if i + 1 == index:
                    return f"the value of {name}"
                i += 1
        elif isinstance(cmd, click.Group):
            sub = cmd.get_command(ctx, token) if i != index else None
            if sub is None:
                break
            cmd, seen = sub, 0
        else:
            if i == index:
                return _positional(cmd, seen) or f"argument {i + 1}"
            seen += 1
        i += 1
    return f"argument {index + 1}"


def _option(cmd: click.Command, name: str) -> tuple[click.Option | None, bool]:
    """The option ``name`` names and whether its value is attached to it
    (``-aWORK``)."""
    for p in cmd.params:
        if isinstance(p, click.Option) and name in (*p.opts, *p.secondary_opts):
            return p, False
    if len(name) > 2 and not name.startswith("--"):
        for p in cmd.params:
            if isinstance(p, click.Option) and name[:2] in p.opts and not p.is_flag:
                return p, True
    return None, False


def _positional(cmd: click.Command, k: int) -> str | None:
    """The name of the argument the ``k``-th positional word fills."""
    for p in cmd.params:
        if not isinstance(p, click.Argument):
            continue
        if p.nargs < 0 or k < p.nargs:
            return p.human_readable_name
        k -= p.nargs
    return None
