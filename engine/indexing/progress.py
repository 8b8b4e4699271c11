"""Sync progress for people: :func:`describe_progress` (the one text every face
shows: the tray menu, the notebook bar, the CLI bar) and a terminal bar."""

from __future__ import annotations

import sys
from typing import IO, Any

from .reports import SyncProgress


def describe_progress(p: SyncProgress) -> str:
    """One line for a progress report, e.g. ``rebuilding: embedding 40/120
    chunks, about 12 s left`` or ``done (15/15 files)``."""
    if p.phase == "done":
        return f"done ({p.files_done}/{p.files_total} files)"
    if p.phase == "embed":
        text = f"embedding {p.chunks_done}/{p.chunks_total} chunks"
    elif p.phase == "write":
        text = f"indexing {p.files_done}/{p.files_total} files"
    elif p.phase == "scan":
        text = f"scanning {p.files_done}/{p.files_total} files"
    else:
        text = p.phase
    if p.eta_s is not None and p.eta_s >= 1:
        text += f", about {p.eta_s:.0f} s left"
    return ("rebuilding: " if p.rebuild else "") + text


class TextProgress:
    """A rich progress bar on ``stream`` (stderr by default) that renders
    :class:`SyncProgress` reports: phase, files, chunks and time left."""

    def __init__(self, label: str, stream: IO[str] | None = None, *, transient: bool = False, color: bool | None = None):
        self.label = label
        self.stream = stream or sys.stderr
        self.transient = transient
        #: False: no colour (``memext --color=never``); None: rich's own
        #: choice, which honours NO_COLOR and FORCE_COLOR.
        self.color = color
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> "TextProgress":
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("chunks"),
            TimeRemainingColumn(),
            console=Console(file=self.stream, no_color=True if self.color is False else None),
            transient=self.transient,
        )
        self._progress.__enter__()
        self._task = self._progress.add_task(self.label, total=None)
        return self

    def __call__(self, p: SyncProgress) -> None:
        self._progress.update(
            self._task,
            description=f"{self.label}: {describe_progress(p)}",
            completed=p.chunks_done,
            # Unknown until the scan is over; a finished sync with nothing to
            # embed or write is complete, not "0/?".
            total=p.chunks_total if p.phase == "done" else (p.chunks_total or None),
        )

    def __exit__(self, *exc) -> None:
        self._progress.__exit__(*exc)
