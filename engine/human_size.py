"""Numbers as people read them: ``10485760`` bytes is ``10 MB``."""

from __future__ import annotations


def human_size(n: int | None) -> str:
    """A byte count in binary units (``512 bytes``, ``1.5 KB``, ``10 MB``)."""
    if n is None:
        return "-"
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            if unit == "bytes" or size == int(size):
                return f"{int(size)} {unit}"
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"  # pragma: no cover - the loop always returns
