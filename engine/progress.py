"""A terminal progress bar for syncs (used by the CLI and by `%memindex`
in terminal IPython)."""

from __future__ import annotations

import sys
from typing import IO, Any

from .sync import SyncProgress


class TextProgress:
    """A rich progress bar on ``stream`` (stderr by default) that renders
    :class:`SyncProgress` reports: phase, files, chunks and time left."""

    def __init__(self, label: str, stream: IO[str] | None = None, *, transient: bool = False):
        self.label = label
        self.stream = stream or sys.stderr
        self.transient = transient
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
            console=Console(file=self.stream),
            transient=self.transient,
        )
        self._progress.__enter__()
        self._task = self._progress.add_task(self.label, total=None)
        return self

    def __call__(self, p: SyncProgress) -> None:
        phase = "rebuilding" if p.rebuild and p.phase != "done" else p.phase
        self._progress.update(
            self._task,
            description=f"{self.label}: {phase} ({p.files_done}/{p.files_total} files)",
            completed=p.chunks_done,
            # Unknown until the scan is over; a finished sync with nothing to
            # embed or write is complete, not "0/?".
            total=p.chunks_total if p.phase == "done" else (p.chunks_total or None),
        )

    def __exit__(self, *exc) -> None:
        self._progress.__exit__(*exc)
