"""How IPython reads the end of a memext magic line, and what makes it
leave that end to the magic: the input transformers ``%load_ext memext``
registers, and the quiet display of a result.

A trailing ``;`` for magics: ``%memsearch deploy;`` shows nothing.

IPython hides a cell's result when the cell ends in ``;``, but it checks the
*translated* code, and a line magic's ``;`` is passed to the magic as text.
So the magics strip it and mark their result quiet for the rest of the
cell: ``r = %memsearch deploy;`` still assigns ``r``, and ``r`` displays
normally in later cells. Two input transformers, registered by
``%load_ext memext``, make a bare ``%memsearch deploy;`` as quiet as any
``expr;`` (no empty ``Out[n]:``) and let ``%memstatus;`` name its magic.

A trailing ``?`` on a memext magic line is part of the query.

IPython reads ``anything?`` at the end of a line as a help request
(``%pinfo``), before any magic runs: ``%memsearch -n 3 when is the Berlin
trip?`` would print ``Object `trip` not found.``. An input cleanup
transformer, registered by ``%load_ext memext``, turns such a line into
the magic call itself first, so the ``?`` reaches the magic as text. A bare
``%memsearch?`` (no arguments) is still IPython's help for the magic.
"""

from __future__ import annotations

import re
from typing import Any

#: The line magics whose trailing ``;`` the transformers understand.
QUIET_MAGICS = ("memsearch", "memget", "memstatus", "memindex")

_NAME_THEN_SEMICOLON = re.compile(r"%(" + "|".join(QUIET_MAGICS) + r");")
_CALL_ENDING_IN_SEMICOLON = re.compile(r"get_ipython\(\)\.run_line_magic\('(?:" + "|".join(QUIET_MAGICS) + r")', (['\"]).*;\1\)\s*$")


def space_before_semicolon(lines: list[str]) -> list[str]:
    """Input cleanup: ``%memstatus;`` -> ``%memstatus ;``.

    IPython takes everything up to the first space as the magic's name, so
    without this the name would be ``memstatus;``.
    """
    return [_NAME_THEN_SEMICOLON.sub(r"%\1 ;", line) for line in lines]


def semicolon_after_quiet_call(lines: list[str]) -> list[str]:
    """Post-transform: a cell whose last line is a memext magic call ending
    in ``;`` gets a real ``;`` after the call, so IPython's display hook
    stays silent as it does for ``expr;``."""
    filled = [i for i, line in enumerate(lines) if line.strip()]
    if not filled:
        return lines
    last = filled[-1]
    if not _CALL_ENDING_IN_SEMICOLON.search(lines[last]):
        return lines
    return lines[:last] + [lines[last].rstrip() + ";\n"] + lines[last + 1 :]


def split_quiet(line: str) -> tuple[str, bool]:
    """``line`` without a trailing ``;``, and whether it had one."""
    stripped = line.rstrip()
    if stripped.endswith(";"):
        return stripped[:-1].rstrip(), True
    return line, False


class QuietDisplay:
    """Mixin: while quiet, the object tells IPython it displayed itself."""

    _quiet = False

    @property
    def _ipython_display_(self):
        # IPython looks this method up with getattr(): an AttributeError
        # means "no such method", so display proceeds as usual.
        if not self._quiet:
            raise AttributeError("_ipython_display_")
        return lambda: None

    def hide_display_in_this_cell(self, shell: Any) -> None:
        """Show nothing if this is the cell's result; normal again afterwards."""
        self._quiet = True
        events = getattr(shell, "events", None)
        if events is None:
            return

        def restore(*_args: Any) -> None:
            self._quiet = False
            events.unregister("post_run_cell", restore)

        events.register("post_run_cell", restore)


#: The line magics whose argument may end in ``?``: every one memext has,
#: since a query, a message, a reason or a path may all end in one.
MAGICS = ("memsearch", "memrecall", "memget", "memforget", "memstatus", "memindex", "memconsolidate")

# Optional ``name =`` (an assignment, as IPython's MagicAssign allows), the
# magic, at least one argument, and a trailing ``?`` (or ``??``).
_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<lhs>[A-Za-z_][\w.]*\s*=\s*)?%(?P<name>" + "|".join(MAGICS) + r")"
    r"[ \t]+(?P<args>\S.*\?)[ \t]*$"
)


def question_mark_is_query(lines: list[str]) -> list[str]:
    """Input cleanup: ``%memsearch when is it?`` ->
    ``get_ipython().run_line_magic('memsearch', 'when is it?')`` (and the
    same after ``r = ``), before IPython's help syntax can claim the ``?``.
    A line continued with ``\\`` and a cell magic's body are left alone."""
    if lines and lines[0].lstrip().startswith("%%"):
        return lines
    out = []
    for i, line in enumerate(lines):
        continued = i > 0 and lines[i - 1].rstrip("\n").endswith("\\")
        m = None if continued else _LINE.match(line.rstrip("\n"))
        if m is None:
            out.append(line)
            continue
        lhs = m["lhs"] or ""
        newline = "\n" if line.endswith("\n") else ""
        out.append(f"{m['indent']}{lhs}get_ipython().run_line_magic({m['name']!r}, {m['args']!r}){newline}")
    return out
