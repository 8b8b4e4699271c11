"""When a remote embedding call is worth another try, and how long to wait.

DESIGN.md §6: rate limits (429), server errors (5xx), timeouts and dropped
connections are retried 3 times with exponential backoff from 0.5 s to 8 s
plus jitter; every other error fails at once with the server's message.

- A server's ``Retry-After`` (or Gemini's ``RetryInfo``) is honoured up to
  :attr:`RetryPolicy.max_retry_after_s` (60 s). A longer one fails at once
  with the server's message and when it said to come back: retrying early
  would only hit a rate-limited server again.
- A query embedding has one overall :class:`Deadline` (the query timeout)
  across its attempts and the waits between them, so a hanging server
  costs a search one timeout, not one per attempt; one call embedding
  documents (a sync's batch) has one too (the embedding deadline), besides
  its timeout per attempt. :mod:`engine.providers.deadline` makes each
  attempt end at the deadline even when the server trickles its answer;
  no retry starts past it, and a call that runs out its deadline raises
  :class:`~engine.errors.ProviderTimeout` (a sync asks that provider
  nothing more, DESIGN.md §6).
- Messages (raised and logged) pass through the provider's redactor, so a
  server that echoes the API key does not put it in a log or the index.

The OpenAI and Gemini providers share this policy; each supplies a
``classify`` function that turns its client's exceptions into a
:class:`Failure`.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, TypeVar

from ..errors import ProviderError, ProviderTimeout

log = logging.getLogger("memext")

T = TypeVar("T")


@dataclass(frozen=True)
class Failure:
    """What went wrong with one attempt, as the retry loop needs to know it."""

    message: str
    retryable: bool
    #: Seconds the server asked us to wait (``Retry-After``), if it did.
    retry_after: float | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter; the defaults are DESIGN.md §6's."""

    retries: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    #: Up to this fraction is added at random, so clients that failed
    #: together do not all come back at the same instant.
    jitter: float = 0.25
    #: A ``Retry-After`` up to this is waited for; a longer one is not
    #: retried at all (the call fails with the server's message at once).
    max_retry_after_s: float = 60.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def backoff(self, attempt: int) -> float:
        """Delay before retry number ``attempt + 1`` (0-based), within [base, max]."""
        delay = self.base_delay_s * (2**attempt) * (1.0 + self.rng.uniform(0.0, self.jitter))
        return min(max(delay, self.base_delay_s), self.max_delay_s)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """The server's ``Retry-After`` when it gave one, else the backoff.

        A ``Retry-After`` above ``max_retry_after_s`` is capped here; the
        retry loop never gets that far (it gives up instead, see
        :func:`call_with_retries`).
        """
        if retry_after is not None and retry_after >= 0.0:
            return min(retry_after, self.max_retry_after_s)
        return self.backoff(attempt)


class Deadline:
    """An overall time limit for one call, across its attempts and waits."""

    def __init__(
        self, seconds: float, label: str = "query timeout (remote.query_deadline_ms)", clock: Callable[[], float] = time.monotonic
    ):
        self.seconds = seconds
        self.label = label
        self._clock = clock
        self._end = clock() + seconds

    def remaining(self) -> float:
        return max(0.0, self._end - self._clock())

    @property
    def passed(self) -> bool:
        return self.remaining() <= 0.0

    def timeout(self, limit: float, floor: float = 0.001) -> float:
        """``limit`` or the time left, whichever is smaller (at least ``floor``)."""
        return max(floor, min(limit, self.remaining()))


class DeadlineExceeded(Exception):
    """An attempt was still running when its :class:`Deadline` passed."""

    def __init__(self, deadline: Deadline):
        super().__init__(f"the {deadline.seconds:g} s {deadline.label} passed")
        self.deadline = deadline


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` (OpenAI) or ``Retry-After`` (seconds or an HTTP date)."""
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def is_retryable_status(status: int) -> bool:
    """429 and 5xx are worth retrying, and 408 (the server's own timeout)."""
    return status in (408, 429) or status >= 500


def call_with_retries(
    fn: Callable[[], T],
    classify: Callable[[Exception], Failure | None],
    policy: RetryPolicy,
    *,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
    deadline: Deadline | None = None,
    redact: Callable[[str], str] = str,
) -> T:
    """Run ``fn``; retry what ``classify`` calls retryable, per ``policy``.

    Raises :class:`ProviderError` carrying the server's message once the
    error is not retryable, the retries are spent, or the server asks for a
    wait above ``policy.max_retry_after_s``; :class:`ProviderTimeout` once
    ``deadline`` passes during an attempt or the next attempt would start
    after it (``fn`` itself should bound each attempt by
    ``deadline.timeout(...)``, so the last attempt gets what is left). Exceptions that ``classify`` does not
    recognise (returns None) propagate unchanged: they are bugs, not
    provider trouble. ``redact`` masks secrets in every message.
    """
    attempt = 0
    while True:
        try:
            return fn()
        except DeadlineExceeded as exc:
            raise ProviderTimeout(f"{what} failed: the request timed out ({exc})") from None
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            failure = Failure(redact(failure.message), failure.retryable, failure.retry_after)
            tries = f"gave up after {attempt + 1} attempts" if attempt else ""
            if not failure.retryable or attempt >= policy.retries:
                raise ProviderError(f"{what} failed: {failure.message}{_note(tries)}") from exc
            ra = failure.retry_after
            if ra is not None and ra > policy.max_retry_after_s:
                raise ProviderError(
                    f"{what} failed: {failure.message} (the server asks to retry after {_duration(ra)}, "
                    f"at {_clock_time(ra)}; not retried sooner)"
                ) from exc
            wait = policy.delay(attempt, ra)
            if deadline is not None and deadline.remaining() <= wait:
                # No retry starts past the deadline: the call ends here.
                limit = f"the {deadline.seconds:g} s {deadline.label}"
                if ra is not None and ra > deadline.remaining():
                    why = f"the server asks to retry after {_duration(ra)}, beyond {limit}"
                    raise ProviderError(f"{what} failed: {failure.message}{_note(tries, why)}") from exc
                raise ProviderTimeout(f"{what} failed: {failure.message}{_note(tries, f'{limit} passed')}") from exc
            log.info("%s failed (%s); retry %d of %d in %.2f s", what, failure.message, attempt + 1, policy.retries, wait)
            sleep(wait)
            attempt += 1


def _note(*parts: str) -> str:
    parts = tuple(p for p in parts if p)
    return f" ({'; '.join(parts)})" if parts else ""


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _clock_time(seconds_from_now: float) -> str:
    """Local wall-clock time ``seconds_from_now`` ahead, e.g. ``14:05:03``."""
    when = time.localtime(time.time() + seconds_from_now)
    return time.strftime("%H:%M:%S" if seconds_from_now < 20 * 3600 else "%Y-%m-%d %H:%M:%S", when)
