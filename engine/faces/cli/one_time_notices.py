"""Notices a person needs to read once, not before every command.

``memext search`` says that search is keyword-only the first time for an
agent's workspace and that reason, and again only when the reason changes
(a model installed then removed, a key set): the reason holds for every
search, so repeating it would bury the results. ``--json`` always carries
it. What was said is remembered in a small file in the user state folder:
a list of hashes, so it holds neither paths nor reasons.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from ... import app_paths
from ...for_faces import private_dir, write_private_text

#: The file, in the user state folder.
FILE_NAME = "said-once.json"
#: How many remembered notices the file keeps (the newest).
KEEP = 256
#: Columns a notice line may take: one line of an 80-column terminal.
WIDTH = 79


class SaidOnce:
    """What was said, in ``path`` (default: the user state folder's file)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else app_paths().state_dir / FILE_NAME

    def first_time(self, *key: str) -> bool:
        """True the first time ``key`` is asked for, and remembers it; False
        after. When the file cannot be written it says True: a notice
        said twice is better than one never said."""
        digest = _sha256_hex("\0".join(key).encode("utf-8"))[:32]
        said = self._read()
        if digest in said:
            return False
        try:
            private_dir(self.path.parent)
            write_private_text(self.path, json.dumps([*said, digest][-KEEP:]))
        except OSError:
            pass
        return True

    def _read(self) -> list[str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []  # none yet, or damaged: start again
        return [d for d in data if isinstance(d, str)] if isinstance(data, list) else []


def _sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` in hex, from CPython's own implementation where
    it has one: ``hashlib`` loads OpenSSL's, about 3 ms of a one-shot
    keyword-only search (which asks whether to say its notice)."""
    for name in ("_sha256", "_sha2"):  # Python up to 3.11, from 3.12
        try:
            return importlib.import_module(name).sha256(data).hexdigest()
        except ImportError:
            continue
    import hashlib

    return hashlib.sha256(data).hexdigest()


def keyword_only_line(cause: str | None) -> str:
    """The one line that says search is keyword-only: with its cause when
    that fits in :data:`WIDTH` columns, else pointing at ``memext status``
    (which has the cause and what to do in full)."""
    short = f"note: keyword-only search ({cause})"
    if cause and len(short) <= WIDTH:
        return short
    return "note: keyword-only search; `memext status` says why and what to do"
