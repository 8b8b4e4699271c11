"""A trailing ``?`` on a memext magic line is part of the query.

IPython reads ``anything?`` at the end of a line as a help request
(``%pinfo``), before any magic runs: ``%memsearch -n 3 when is the Berlin
trip?`` would print ``Object `trip` not found.``. An input cleanup
transformer, registered by ``%load_ext memext``, turns such a line into
the magic call itself first, so the ``?`` reaches the magic as text. A bare
``%memsearch?`` (no arguments) is still IPython's help for the magic.
"""

from __future__ import annotations

import re

#: The line magics whose argument may end in ``?``.
MAGICS = ("memsearch", "memget", "memstatus", "memindex")

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
