"""What an agent's index holds and how it is doing (DESIGN.md §10)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class IndexStatus:
    """A snapshot of one agent's index; ``to_dict()`` is what ``--json`` prints."""

    agent: str
    workspace: str
    db_path: str
    enabled: bool
    files: dict[str, int]  # per source
    chunks: dict[str, int]  # per source
    dirty: bool | None  # None: not checked (status(check_files=False))
    syncing: bool
    last_sync: dict | None  # {"at", "duration_s", "rebuilt", ...}
    provider: dict  # {"requested", "in_force", "model", "reason", "failed"}
    fallback: dict | None  # {"from", "reason"} while a fallback is in force
    vector: dict  # {"available", "store", "backend", "dims", "extension", "error"}
    fts: dict  # {"available", "error"}
    cache: dict  # {"enabled", "entries", "max_entries"}
    batch: dict  # provider batch state, {} when not batching
    sqlite: dict  # {"binding", "version"}
    skipped: list[dict] = field(default_factory=list)  # [{"path", "reason"}]
    last_error: str | None = None
    #: Why a search now would be keyword-only although a provider is in
    #: force (index built for another model, no vectors, query failures).
    keyword_only_reason: str | None = None

    @property
    def total_files(self) -> int:
        return sum(self.files.values())

    @property
    def total_chunks(self) -> int:
        return sum(self.chunks.values())

    @property
    def mode(self) -> str:
        """"hybrid" or "keyword-only", as a search would run now."""
        if self.provider.get("in_force") in (None, "none") or self.keyword_only_reason:
            return "keyword-only"
        return "hybrid"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["mode"] = self.mode
        return d
