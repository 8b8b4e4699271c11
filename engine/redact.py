"""Keeping secrets out of messages.

A server may echo what it was sent: an API key, a header value (a gateway
token). Every provider error passes through a :class:`Redactor` built from
the configured secrets before it leaves the provider, so such a message is
never printed, logged (``tray.log``) or stored in the index's status.
"""

from __future__ import annotations

import re
from typing import Iterable

#: What a secret becomes in a message.
MASK = "[redacted]"
#: Values shorter than this are not treated as secrets: masking "1" or
#: "json" everywhere would garble messages and protect nothing.
MIN_SECRET_CHARS = 6


class Redactor:
    """``redactor(text)``: ``text`` with every known secret replaced by ``[redacted]``.

    A redactor without secrets returns text unchanged. Longer secrets are
    masked first, so one secret inside another leaves no fragment behind.
    """

    def __init__(self, secrets: Iterable[str | None] = ()):
        found = sorted({s.strip() for s in secrets if s and len(s.strip()) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        self.secrets: tuple[str, ...] = tuple(found)
        self._pattern = re.compile("|".join(re.escape(s) for s in found)) if found else None

    def __call__(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(MASK, text)

    def reveals(self, text: str) -> bool:
        """True when ``text`` holds one of the secrets."""
        return self._pattern is not None and bool(text) and self._pattern.search(text) is not None

    def __repr__(self) -> str:  # never show the secrets themselves
        return f"Redactor({len(self.secrets)} secrets)"


#: Redacts nothing (providers without secrets).
NO_SECRETS = Redactor()
