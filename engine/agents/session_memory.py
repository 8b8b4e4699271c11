"""Session-to-memory: keep the end of a conversation as a memory file.

When a session ends (or is reset), the reference saves its last messages
as ``memory/YYYY-MM-DD-<slug>.md`` so later sessions can search them. The
slug comes from a caller-supplied function (an LLM summary, say), else from
the conversation itself: its first few ASCII words, lower-cased, common
words left out. An existing file is never overwritten: a name that is taken
gets a suffix from a hash of the content (then a counter), and the file is
created whole or not at all.

The file is an ordinary memory file: the next sync indexes it (call
``index.sync()``, or let the tray / a FreshnessKeeper's watcher do it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence, Union

from ..errors import MemextError
from ..memory.transcripts import render_record

DEFAULT_MESSAGES = 15
MAX_SLUG_WORDS = 6
FALLBACK_SLUG = "session"

#: Words too common to say what a conversation was about.
_STOPWORDS = frozenset(
    """a an the and or but if then so of to in on at by for with from as is are was were be been
    being am i me my we our you your he she it its they them their this that these those do does did
    done have has had can could would should will shall may might must not no yes ok okay please
    thanks thank hi hello hey what which who whom how why when where there here about into over just
    also very really let lets us want need like get got im ive dont user assistant""".split()
)

Messages = Union[str, Path, Sequence[Mapping]]
SlugFunction = Callable[[list[str]], str]


@dataclass(frozen=True)
class SavedSession:
    """Where a session was saved and how much of it."""

    path: Path  # the new file
    relative_path: str  # workspace-relative, e.g. "memory/2026-01-16-deploy-plan.md"
    messages_saved: int
    messages_total: int


def session_lines(transcript: Messages) -> list[str]:
    """The conversation as ``User: ...`` / ``Assistant: ...`` messages.

    ``transcript`` is a JSONL transcript (a path, or its text) in the format
    of :mod:`memext.engine.memory.transcripts`, or a list of ``{role, content}``
    messages (content a string or a list of ``{"type": "text"}`` blocks).
    Only user and assistant messages with text count.
    """
    if isinstance(transcript, Path):
        try:
            text = transcript.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise MemextError(f"cannot read the transcript {transcript}: {exc.strerror or exc}") from exc
        records: Iterable[str] = text.split("\n")
    elif isinstance(transcript, str):
        records = transcript.split("\n")
    else:
        records = (_as_record(m, i) for i, m in enumerate(transcript))
    # One rendering rule for transcripts, shared with the sessions source:
    # list messages are wrapped as JSONL records and go through it too.
    return [line for line in map(render_record, records) if line is not None]


def _as_record(message: Mapping, i: int) -> str:
    if not isinstance(message, Mapping):
        raise MemextError(f"message {i} is a {type(message).__name__}; give each as a dict with role and content")
    return json.dumps({"type": "message", "message": {"role": message.get("role"), "content": message.get("content")}})


def make_slug(text: str, max_words: int = MAX_SLUG_WORDS) -> str:
    """A file-name slug from ``text``: up to ``max_words`` lower-case ASCII
    words joined by ``-`` (accents folded, common words dropped when others
    remain); ``""`` when there are none."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    words = re.findall(r"[a-z0-9]+", folded)
    content = [w for w in words if w not in _STOPWORDS and not w.isdigit()]
    return "-".join((content or words)[:max_words])


def default_slug(messages: list[str]) -> str:
    """A deterministic slug: the gist of the user's first words, else the
    assistant's, else ``session``."""
    users = [m.split(": ", 1)[-1] for m in messages if m.startswith("User: ")]
    others = [m.split(": ", 1)[-1] for m in messages if not m.startswith("User: ")]
    for group in (users, others):
        slug = make_slug(" ".join(group))
        if slug:
            return slug
    return FALLBACK_SLUG


def format_session(messages: list[str], when: datetime, total: int, title: str | None = None) -> str:
    """The Markdown written for a saved session."""
    head = [f"# Session: {when.strftime('%Y-%m-%d %H:%M')} UTC", ""]
    if title:
        head.append(f"- **Topic**: {title}")
    head.append(f"- **Messages**: last {len(messages)} of {total}")
    body = "\n\n".join(messages)
    return "\n".join(head) + "\n\n## Conversation\n\n" + body + "\n"


def save_session_memory(
    workspace: str | Path,
    transcript: Messages,
    *,
    messages: int = DEFAULT_MESSAGES,
    slug: SlugFunction | None = None,
    when: datetime | None = None,
) -> SavedSession:
    """Save the last ``messages`` messages of ``transcript`` as
    ``memory/YYYY-MM-DD-<slug>.md`` in ``workspace``; never overwrites.

    ``transcript``: a JSONL transcript path (``pathlib.Path``) or text, or a
    list of ``{role, content}`` dicts. ``slug(messages) -> str`` names the
    file (its answer is cleaned to the slug rules); without it, or when it
    gives nothing usable, :func:`default_slug` does. ``when`` (default now,
    UTC) dates the file.
    """
    if not isinstance(messages, int) or isinstance(messages, bool) or messages < 1:
        raise MemextError(f"messages must be a whole number of 1 or more (got {messages!r})")
    ws = Path(workspace)
    if not ws.is_dir():
        raise MemextError(f"the workspace {ws} does not exist; create it or pass the agent's workspace")
    lines = session_lines(transcript)
    if not lines:
        hint = ""
        if isinstance(transcript, str):
            hint = " (a transcript file must be given as a pathlib.Path; a str is read as JSONL text)"
        raise MemextError(f"the transcript holds no user or assistant messages with text: nothing to save{hint}")
    kept = lines[-messages:]
    when = (when or datetime.now(timezone.utc)).astimezone(timezone.utc)
    name = make_slug(slug(kept)) if slug is not None else ""
    name = name or default_slug(kept)
    content = format_session(kept, when, len(lines))
    folder = ws / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    path = _create_new(folder, f"{when.date().isoformat()}-{name}", content)
    return SavedSession(path, path.relative_to(ws).as_posix(), len(kept), len(lines))


def _candidates(stem: str, content: str):
    yield stem
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()[:8]
    yield f"{stem}-{digest}"
    n = 2
    while True:
        yield f"{stem}-{digest}-{n}"
        n += 1


def _create_new(folder: Path, stem: str, content: str) -> Path:
    """Write ``content`` to the first free ``<stem>[-suffix].md``; the file
    appears whole (written to a temp file, then linked into place, which
    fails rather than replace a file another process made meanwhile)."""
    fd, tmp = tempfile.mkstemp(prefix=".session-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        for candidate in _candidates(stem, content):
            target = folder / f"{candidate}.md"
            try:
                os.link(tmp, target)
                return target
            except FileExistsError:
                continue
            except OSError:
                # No hard links here (some network or FAT file systems):
                # exclusive create still never replaces a file.
                if _write_exclusive(target, content):
                    return target
        raise AssertionError("unreachable")  # the candidates never run out
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def _write_exclusive(target: Path, content: str) -> bool:
    try:
        with open(target, "x", encoding="utf-8", newline="\n") as fh:
            fh.write(content)
    except FileExistsError:
        return False
    return True
