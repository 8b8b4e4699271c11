"""Session transcripts (JSONL) as a second, opt-in source of memory.

Each line of a transcript is one JSON record. Message records become
``User: ...`` / ``Assistant: ...`` lines numbered with their JSONL line, so
a search result points at the lines of the ``.jsonl`` file itself.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

from ..human_size import human_size
from .discovery import Skipped, SourceFile

SESSIONS_PREFIX = "sessions/"


class Transcript(NamedTuple):
    """The searchable lines of one transcript."""

    lines: list[tuple[int, str]]  # (JSONL line number, rendered text)
    messages: int


def discover_session_files(folder: Path, max_bytes: int) -> tuple[list[SourceFile], list[Skipped]]:
    """``*.jsonl`` files directly in the sessions folder (no hidden ones)."""
    files: list[SourceFile] = []
    skipped: list[Skipped] = []
    if not folder.is_dir():
        return files, skipped
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith(".") or not entry.name.endswith(".jsonl") or entry.is_symlink():
            continue
        try:
            st = entry.stat()
        except OSError as exc:
            skipped.append(Skipped(SESSIONS_PREFIX + entry.name, f"cannot read: {exc.strerror or exc}"))
            continue
        if not entry.is_file():
            continue
        if st.st_size > max_bytes:
            skipped.append(Skipped(SESSIONS_PREFIX + entry.name, f"larger than the {human_size(max_bytes)} limit"))
            continue
        files.append(SourceFile(SESSIONS_PREFIX + entry.name, entry.path, "sessions", st.st_mtime_ns, st.st_size))
    return files, skipped


def parse_transcript(text: str) -> Transcript:
    """Turn JSONL text into numbered ``Role: text`` lines; bad lines are skipped."""
    out: list[tuple[int, str]] = []
    messages = 0
    # Split on "\n" only: JSON strings may hold U+2028, which splitlines()
    # would count as a line break and shift every line number after it.
    for number, raw in enumerate(text.split("\n"), start=1):
        rendered = render_record(raw)
        if rendered is None:
            continue
        messages += 1
        for line in rendered.splitlines():
            out.append((number, line))
    return Transcript(out, messages)


def render_record(raw: str) -> str | None:
    """``User: ...`` or ``Assistant: ...`` for a message record, else None."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("type") != "message":
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    role = message.get("role")
    if role not in ("user", "assistant"):
        return None
    text = _content_text(message.get("content"))
    if not text.strip():
        return None
    return f"{'User' if role == 'user' else 'Assistant'}: {text.strip()}"


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block.get("text", "")
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        ]
        return "\n".join(parts)
    return ""
