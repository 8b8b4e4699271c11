"""Pre-compaction memory flush: ask the model to write memories before its
context is compacted away.

An agent runtime compacts (summarises) a conversation when it nears the
model's context window; whatever the model knew only from the dropped
turns is lost. The reference runs one silent turn first, once the session
crosses a soft threshold below the compaction point::

    threshold = context_window - reserve_tokens_floor - soft_threshold_tokens

with defaults 20000 and 4000. The turn gets two prompts (system + user)
telling the model to store durable memories in ``memory/YYYY-MM-DD.md``
and to answer ``NO_REPLY`` when there is nothing to store; a ``NO_REPLY``
answer is not shown to the user. At most one flush runs per compaction
cycle, and none in a workspace the agent cannot write to.

The runtime owns the turn; this module only decides and remembers::

    flush = MemoryFlush.for_index(index, context_window=200_000)
    decision = flush.check(total_tokens, session="chat-1", compaction_count=n)
    if decision.due:
        prompts = flush.prompts()
        reply = run_silent_turn(prompts.system, prompts.user)
        flush.mark_flushed(session="chat-1", compaction_count=n)
        if not is_no_reply(reply):
            ...  # the model wrote something (with memory_append, say)

The "already flushed" state lives in a small JSON file beside the agent's
index (``<agent>.flush.json`` next to ``<agent>.sqlite``), replaced
atomically under a file lock, so several processes serving one agent agree.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock, Timeout

from ..errors import LockTimeout, MemextError
from ..paths import private_dir

if TYPE_CHECKING:
    from ..index import MemoryIndex

DEFAULT_RESERVE_TOKENS_FLOOR = 20_000
DEFAULT_SOFT_THRESHOLD_TOKENS = 4_000
#: The silent token: a reply that is only this means "nothing to store".
NO_REPLY = "NO_REPLY"

DEFAULT_FLUSH_SYSTEM_PROMPT = (
    "Pre-compaction memory flush. This session is close to its context limit and older "
    "turns will soon be compacted into a summary. Store any durable memories now: decisions, "
    "facts about people and projects, preferences, open tasks. Append them to "
    "memory/{date}.md (create memory/ if needed; never overwrite or delete existing "
    "entries). If there is nothing worth storing, reply with exactly NO_REPLY."
)
DEFAULT_FLUSH_PROMPT = (
    "Write any lasting notes from this conversation to memory/{date}.md now "
    "(with the memory_append tool if you have it). Reply with NO_REPLY if there is nothing to store."
)

_STATE_VERSION = 1


@dataclass(frozen=True)
class FlushPrompts:
    """The two messages of a flush turn, with today's date filled in."""

    system: str
    user: str


@dataclass(frozen=True)
class FlushDecision:
    """Whether a flush is due now, and why (or why not).

    ``reason`` is one of ``"due"``, ``"disabled"``, ``"below threshold"``,
    ``"already flushed this compaction cycle"`` and ``"workspace is read-only"``.
    """

    due: bool
    reason: str
    threshold: int
    total_tokens: int


def flush_threshold(
    context_window: int,
    reserve_tokens_floor: int = DEFAULT_RESERVE_TOKENS_FLOOR,
    soft_threshold_tokens: int = DEFAULT_SOFT_THRESHOLD_TOKENS,
) -> int:
    """The token count at which a flush becomes due."""
    return context_window - reserve_tokens_floor - soft_threshold_tokens


def is_no_reply(text: str | None) -> bool:
    """True when a reply is the silent token alone (``NO_REPLY``, any case,
    surrounding white space allowed); a reply that merely mentions it is not."""
    return text is not None and text.strip().upper() == NO_REPLY


def flush_prompts(
    today: date | None = None,
    *,
    system_prompt: str = DEFAULT_FLUSH_SYSTEM_PROMPT,
    prompt: str = DEFAULT_FLUSH_PROMPT,
) -> FlushPrompts:
    """The flush turn's prompts; ``{date}`` becomes ``today`` (YYYY-MM-DD)."""
    day = (today or date.today()).isoformat()
    return FlushPrompts(system=system_prompt.replace("{date}", day), user=prompt.replace("{date}", day))


def workspace_writable(workspace: Path) -> bool:
    """Whether the agent could write its memory files: the ``memory/``
    folder (or the workspace, when that folder does not exist yet) is
    writable and not on a read-only file system."""
    target = workspace / "memory"
    if not target.is_dir():
        target = workspace
    if not target.is_dir():
        return False
    # os.access answers for the real user (root included) and for
    # read-only mounts; statvfs catches a read-only mount os.access may miss.
    if not os.access(target, os.W_OK | os.X_OK):
        return False
    try:
        return not os.statvfs(target).f_flag & os.ST_RDONLY
    except (OSError, AttributeError):  # no statvfs (Windows): trust os.access
        return True


class MemoryFlush:
    """Decides when a pre-compaction flush is due and remembers the flushes
    done, one per compaction cycle per session.

    ``state_path`` is the JSON state file; ``workspace`` the agent's
    workspace (a flush is never due when it is read-only).
    """

    def __init__(
        self,
        state_path: str | Path,
        workspace: str | Path,
        *,
        context_window: int,
        reserve_tokens_floor: int = DEFAULT_RESERVE_TOKENS_FLOOR,
        soft_threshold_tokens: int = DEFAULT_SOFT_THRESHOLD_TOKENS,
        enabled: bool = True,
        system_prompt: str = DEFAULT_FLUSH_SYSTEM_PROMPT,
        prompt: str = DEFAULT_FLUSH_PROMPT,
    ):
        for name, value in (
            ("context_window", context_window),
            ("reserve_tokens_floor", reserve_tokens_floor),
            ("soft_threshold_tokens", soft_threshold_tokens),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise MemextError(f"{name} must be a whole number of tokens, 0 or more (got {value!r})")
        if context_window == 0:
            raise MemextError("context_window must be the model's context size in tokens (got 0)")
        self.state_path = Path(state_path)
        self.workspace = Path(workspace)
        self.context_window = context_window
        self.reserve_tokens_floor = reserve_tokens_floor
        self.soft_threshold_tokens = soft_threshold_tokens
        self.enabled = enabled
        self.system_prompt = system_prompt
        self.prompt = prompt

    @classmethod
    def for_index(cls, index: "MemoryIndex", *, context_window: int, **options) -> "MemoryFlush":
        """A flush helper for an agent's index: state beside its ``.sqlite``
        file, the agent's workspace; ``options`` as for the constructor."""
        db = Path(index.db_path)
        state = db.with_name(db.stem + ".flush.json")
        return cls(state, index.agent.workspace, context_window=context_window, **options)

    @property
    def threshold(self) -> int:
        """The token count at which a flush becomes due."""
        return flush_threshold(self.context_window, self.reserve_tokens_floor, self.soft_threshold_tokens)

    def check(self, total_tokens: int, *, session: str = "default", compaction_count: int = 0) -> FlushDecision:
        """Is a flush due for ``session`` now? ``total_tokens`` is the
        session's current size; ``compaction_count`` how many times it has
        been compacted so far (the cycle a flush belongs to)."""
        if not isinstance(total_tokens, int) or isinstance(total_tokens, bool) or total_tokens < 0:
            raise MemextError(f"total_tokens must be a whole number, 0 or more (got {total_tokens!r})")
        threshold = self.threshold

        def decision(due: bool, reason: str) -> FlushDecision:
            return FlushDecision(due, reason, threshold, total_tokens)

        if not self.enabled:
            return decision(False, "disabled")
        if total_tokens < threshold:
            return decision(False, "below threshold")
        if self.last_flushed_cycle(session) == compaction_count:
            return decision(False, "already flushed this compaction cycle")
        if not workspace_writable(self.workspace):
            return decision(False, "workspace is read-only")
        return decision(True, "due")

    def prompts(self, today: date | None = None) -> FlushPrompts:
        """The flush turn's system and user prompts for ``today``."""
        return flush_prompts(today, system_prompt=self.system_prompt, prompt=self.prompt)

    def last_flushed_cycle(self, session: str = "default") -> int | None:
        """The compaction count of ``session``'s last flush, or None."""
        entry = self._read().get(session)
        return entry.get("compaction_count") if isinstance(entry, dict) else None

    def mark_flushed(self, *, session: str = "default", compaction_count: int = 0) -> None:
        """Record that ``session`` flushed in compaction cycle ``compaction_count``."""
        try:
            with FileLock(str(self.state_path) + ".lock", timeout=30):
                sessions = self._read()
                sessions[session] = {"compaction_count": compaction_count, "flushed_at": time.time()}
                self._write(sessions)
        except Timeout as exc:
            raise LockTimeout(f"another process holds {self.state_path}.lock; try again") from exc

    def _read(self) -> dict:
        try:
            raw = json.loads(self.state_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            # Losing this state only risks one extra flush: start afresh
            # rather than block the runtime on a damaged file.
            return {}
        sessions = raw.get("sessions") if isinstance(raw, dict) else None
        return dict(sessions) if isinstance(sessions, dict) else {}

    def _write(self, sessions: dict) -> None:
        private_dir(self.state_path.parent, tighten=False)
        data = json.dumps({"version": _STATE_VERSION, "sessions": sessions}, indent=1, sort_keys=True)
        fd, tmp = tempfile.mkstemp(prefix=self.state_path.name + ".", suffix=".tmp", dir=self.state_path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.state_path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
