"""``store.url`` for the postgres driver: checking it and showing it safely.

The URL is a libpq connection URL (``postgresql://user@host:port/db``).
The password is best left out of it: libpq reads ``PGPASSWORD`` and
``~/.pgpass`` (``PGPASSFILE``) by itself. When a URL does carry one, it is
never shown: every message, status line and log names the URL through
:func:`redact_url`, and errors from the server pass through
:func:`scrub`. Pure string work: nothing here loads a database driver.
"""

from __future__ import annotations

import hashlib
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

SCHEMES = ("postgresql", "postgres")
#: PostgreSQL truncates identifiers to 63 bytes.
MAX_IDENTIFIER = 63
SCHEMA_PREFIX = "memext_"
SHADOW_PREFIX = "memext_rebuild_"


def check_url(url: str) -> str | None:
    """Why ``url`` cannot be a store URL, or None when it can."""
    if not url:
        return 'store.driver = "postgres" needs store.url, e.g. "postgresql://memext@db.example.org:5432/memext"'
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError as exc:
        return f"not a valid URL ({exc}): {redact_url(url)}"
    if parts.scheme not in SCHEMES:
        return f'must be a postgresql:// URL, got "{redact_url(url)}"'
    return None


def password_of(url: str) -> str | None:
    """The password written into the URL (user info or ``?password=``), if any."""
    try:
        parts = urlsplit(url)
        inline = parts.password
    except ValueError:
        return None
    if inline:
        return unquote(inline)
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "password" and value:
            return value
    return None


def redact_url(url: str) -> str:
    """``url`` without its password (user info and ``?password=``)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
        user = parts.username
    except ValueError:
        return "<a store.url that cannot be parsed>"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = (f"{user}@" if user else "") + host + (f":{port}" if port else "")
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def scrub(text: str, url: str) -> str:
    """``text`` with the URL's password masked (a server or driver message
    may quote the connection string)."""
    secret = password_of(url)
    if secret:
        text = text.replace(secret, "[redacted]")
    return text.replace(url, redact_url(url))


def agent_schema(agent_id: str) -> str:
    """The schema holding one agent's index: ``memext_<agent id>``, cut and
    suffixed with a hash when too long for an identifier (agent ids may be
    64 characters; ids differing only in case get distinct schemas, as
    quoted identifiers are case-sensitive)."""
    name = SCHEMA_PREFIX + agent_id
    if len(name.encode()) <= MAX_IDENTIFIER:
        return name
    digest = hashlib.sha256(agent_id.encode()).hexdigest()[:10]
    return f"{SCHEMA_PREFIX}{agent_id[: MAX_IDENTIFIER - len(SCHEMA_PREFIX) - 11]}_{digest}"


def lock_key(agent_id: str) -> int:
    """The advisory-lock key of an agent's writer lock (a signed 64-bit int)."""
    digest = hashlib.sha256(b"memext-writer\0" + agent_id.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
