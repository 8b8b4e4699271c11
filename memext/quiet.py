"""A trailing ``;`` for magics: ``%memsearch deploy;`` shows nothing.

IPython hides a cell's result when the cell ends in ``;``, but it checks the
*translated* code, and a line magic's ``;`` is passed to the magic as text.
So the magics strip it and mark their result quiet for the rest of the
cell: ``r = %memsearch deploy;`` still assigns ``r``, and ``r`` displays
normally in later cells.
"""

from __future__ import annotations

from typing import Any


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
