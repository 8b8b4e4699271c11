"""Progress display for ``%memindex``: an ipywidgets bar in notebooks, a
rich text bar in terminals. Both take :class:`engine.SyncProgress` reports."""

from __future__ import annotations

import time
from typing import IO, Any

from memext.engine import SyncProgress
from memext.engine.for_faces import TextProgress, describe_progress

#: Minimum seconds between two widget updates (each one is a message to the front end).
WIDGET_UPDATE_EVERY_S = 0.1


class WidgetProgress:
    """An ``IntProgress`` bar and a label, displayed on enter."""

    def __init__(self, label: str):
        import ipywidgets as w

        self.label = label
        self.bar = w.IntProgress(value=0, min=0, max=1, description=label, bar_style="info", style={"description_width": "initial"})
        self.text = w.HTML(value="starting…")
        self.box = w.HBox([self.bar, self.text])
        self._last = 0.0

    def __enter__(self) -> "WidgetProgress":
        from IPython.display import display

        display(self.box)
        return self

    def __call__(self, p: SyncProgress) -> None:
        now = time.monotonic()
        if p.phase != "done" and now - self._last < WIDGET_UPDATE_EVERY_S:
            return
        self._last = now
        self.bar.max = max(1, p.chunks_total)
        self.bar.value = min(p.chunks_done, self.bar.max)
        self.text.value = describe_progress(p)

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is None:
            self.bar.value = self.bar.max
            self.bar.bar_style = "success"
            self.text.value = "done"
        else:
            self.bar.bar_style = "danger"
            self.text.value = "failed"


def progress_for(shell: Any, label: str, stream: IO[str] | None = None) -> WidgetProgress | TextProgress:
    """A widget bar when the shell has a notebook front end, else a text bar."""
    if getattr(shell, "kernel", None) is not None:
        try:
            return WidgetProgress(label)
        except ImportError:  # ipywidgets is optional (memext[notebook])
            pass
    return TextProgress(label, stream)
