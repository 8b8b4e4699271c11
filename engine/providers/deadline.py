"""Whole-call deadlines for remote embedding requests.

httpx's timeouts bound each network operation (connect, one read, one
write), not a call: a server that trickles one byte every 2 s never trips a
60 s read timeout and can hold a search or a sync (and its writer lock) for
many minutes. Here a :class:`~engine.providers.retry.Deadline` bounds the
whole call, in two layers:

- :func:`deadline_client`'s hooks cap every timeout of a request at the
  time left and check the deadline between chunks of the answer, so a
  trickled answer is cut off and its connection closed;
- :func:`call_within` runs one attempt on a worker thread and stops waiting
  at the deadline, which also covers what the transport cannot see (status
  line or headers trickled byte by byte): the caller is back on time
  whatever the server does, and the abandoned attempt ends at its next read.
"""

from __future__ import annotations

import contextvars
import threading
from typing import Any, Callable, Iterator, TypeVar

import httpx2

from .retry import Deadline, DeadlineExceeded

T = TypeVar("T")

#: The deadline of the attempt running in this context (set by call_within
#: on its worker thread, read by the client's hooks in the same thread): the
#: client is shared by every request, the deadline is not.
_current: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("memext_request_deadline", default=None)


def call_within(deadline: Deadline, fn: Callable[[], T], *, name: str = "memext-request") -> T:
    """``fn()``'s result, or :class:`DeadlineExceeded` once ``deadline`` passes.

    ``fn`` runs on a daemon thread with ``deadline`` in force for the
    :func:`deadline_client` requests it makes.
    """
    if deadline.passed:
        raise DeadlineExceeded(deadline)
    done = threading.Event()
    outcome: dict[str, object] = {}
    context = contextvars.copy_context()

    def attempt() -> None:
        _current.set(deadline)
        try:
            outcome["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=context.run, args=(attempt,), name=name, daemon=True)
    worker.start()
    if not done.wait(deadline.remaining()):
        raise DeadlineExceeded(deadline)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def deadline_client(**kwargs) -> httpx2.Client:
    """An ``httpx2.Client`` whose requests honour :func:`call_within`'s deadline.

    Event hooks, not a transport of its own: a client given a transport
    stops reading proxy settings from the environment (HTTPS_PROXY).
    """
    hooks: dict[str, list[Callable[..., Any]]] = {"request": [_cap_timeouts], "response": [_watch_body]}
    return httpx2.Client(event_hooks=hooks, **kwargs)


def _cap_timeouts(request: httpx2.Request) -> None:
    """Every timeout of the request at most the time left."""
    deadline = _current.get()
    if deadline is None:
        return
    left = deadline.remaining()
    if left <= 0.0:
        raise httpx2.ReadTimeout(_passed(deadline), request=request)
    asked = dict(request.extensions.get("timeout") or {})
    request.extensions["timeout"] = {
        k: left if asked.get(k) is None else min(float(asked[k]), left) for k in ("connect", "read", "write", "pool")
    }


def _watch_body(response: httpx2.Response) -> None:
    """The answer's body (not read yet) stops once the deadline passes."""
    deadline = _current.get()
    if deadline is not None:
        response.stream = _DeadlineStream(response.stream, deadline, response.request)  # type: ignore[arg-type]


class _DeadlineStream(httpx2.SyncByteStream):
    """An answer's body that stops (closing its connection) once the deadline passes."""

    def __init__(self, inner: httpx2.SyncByteStream, deadline: Deadline, request: httpx2.Request):
        self._inner = inner
        self._deadline = deadline
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if self._deadline.passed:
                raise httpx2.ReadTimeout(_passed(self._deadline) + " while the answer was still arriving", request=self._request)
            yield chunk

    def close(self) -> None:
        self._inner.close()


def _passed(deadline: Deadline) -> str:
    return f"the {deadline.seconds:g} s {deadline.label} passed"
