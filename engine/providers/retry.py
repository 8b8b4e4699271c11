"""When a remote embedding call is worth another try, and how long to wait.

SPEC §6: rate limits (429), server errors (5xx), timeouts and dropped
connections are retried 3 times with exponential backoff from 0.5 s to 8 s
plus jitter, and a server's ``Retry-After`` is honoured; every other error
fails at once with the server's message. The OpenAI and Gemini providers
share this policy; each supplies a ``classify`` function that turns its
client's exceptions into a :class:`Failure`.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, TypeVar

from ..errors import ProviderError

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
    """Exponential backoff with jitter; the defaults are SPEC §6's."""

    retries: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0
    #: Up to this fraction is added at random, so clients that failed
    #: together do not all come back at the same instant.
    jitter: float = 0.25
    #: A ``Retry-After`` longer than this is not waited for (backoff instead).
    max_retry_after_s: float = 60.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def backoff(self, attempt: int) -> float:
        """Delay before retry number ``attempt + 1`` (0-based), within [base, max]."""
        delay = self.base_delay_s * (2**attempt) * (1.0 + self.rng.uniform(0.0, self.jitter))
        return min(max(delay, self.base_delay_s), self.max_delay_s)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        if retry_after is not None and 0.0 <= retry_after <= self.max_retry_after_s:
            return retry_after
        return self.backoff(attempt)


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
) -> T:
    """Run ``fn``; retry what ``classify`` calls retryable, per ``policy``.

    Raises :class:`ProviderError` carrying the server's message once the
    error is not retryable or the retries are spent. Exceptions that
    ``classify`` does not recognise (returns None) propagate unchanged:
    they are bugs, not provider trouble.
    """
    attempt = 0
    while True:
        try:
            return fn()
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if not failure.retryable or attempt >= policy.retries:
                tries = f" (gave up after {attempt + 1} attempts)" if attempt else ""
                raise ProviderError(f"{what} failed: {failure.message}{tries}") from exc
            wait = policy.delay(attempt, failure.retry_after)
            log.info("%s failed (%s); retry %d of %d in %.2f s", what, failure.message, attempt + 1, policy.retries, wait)
            sleep(wait)
            attempt += 1
