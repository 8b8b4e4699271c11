"""Recall before each turn of an OpenAI Chat Completions or Responses loop
(DESIGN.md §18): the memories the latest user message calls for, put just
before that message as a message of their own.

The recalled block goes in as a ``user`` message, not a ``system`` or
``developer`` one: it quotes what the user wrote earlier, so it gets no
more authority than the user has. Blocks recalled for earlier turns are
taken out, so a long conversation carries one block, not one per turn: a
block is known by its opening tag and by the user message right after it
(a user who pastes a block as their message keeps it).
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from ..search.recall import OPEN_TAG, Recall


class Recaller(Protocol):
    """What :func:`with_recall` recalls from: a :class:`MemoryIndex` or
    :class:`MemoryTools` (for its default agent) is one."""

    def recall(self, text: str) -> Recall: ...


def with_recall(messages: Sequence[Any], memory: Recaller) -> list[Any]:
    """``messages`` (Chat Completions ``messages`` or Responses ``input``
    items; dicts or the SDK's objects) with the memories recalled for the
    latest user message inserted just before it as
    ``{"role": "user", "content": block}``, and the blocks of earlier turns
    left out. A Responses ``input`` given as a plain string is taken as one
    user message. Nothing recalled (nothing confident, a deadline passed):
    the messages come back without any block.

    Call it before each request that follows a new user message::

        messages = with_recall(messages, tools)
        client.chat.completions.create(model=..., messages=messages, tools=...)
    """
    items: list[Any] = [{"role": "user", "content": messages}] if isinstance(messages, str) else list(messages)
    items = [m for i, m in enumerate(items) if not (is_recall_message(m) and i + 1 < len(items) and _field(items[i + 1], "role") == "user")]
    last = _latest_user(items)
    if last is None:
        return items
    text = message_text(items[last])
    got = memory.recall(text) if text.strip() else None
    if not got:
        return items
    return items[:last] + [{"role": "user", "content": got.context}] + items[last:]


def is_recall_message(message: Any) -> bool:
    """True for a user message that opens with a recalled block, as those
    :func:`with_recall` puts in do."""
    return _field(message, "role") == "user" and message_text(message).startswith(OPEN_TAG + "\n")


def message_text(message: Any) -> str:
    """The text of a message: its ``content`` string, or its text parts
    (``text``, ``input_text``) joined."""
    content = _field(message, "content")
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        parts = [_field(p, "text") for p in content if _field(p, "type") in ("text", "input_text")]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _latest_user(items: list[Any]) -> int | None:
    for i in range(len(items) - 1, -1, -1):
        if _field(items[i], "role") == "user":
            return i
    return None


def _field(item: Any, name: str) -> Any:
    """A key of a dict or an attribute of an SDK object (a Responses
    ``output`` item appended to ``input`` as it came)."""
    if isinstance(item, dict):
        return item.get(name)
    return getattr(item, name, None)
