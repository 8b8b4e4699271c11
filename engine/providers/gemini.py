"""The ``gemini`` provider: Gemini's REST embedding API (DESIGN.md §6).

``models/{model}:embedContent`` embeds a query (task type
``RETRIEVAL_QUERY``); ``models/{model}:batchEmbedContents`` embeds
documents (``RETRIEVAL_DOCUMENT``), at most 100 per request, several
requests in flight. The key goes in the ``x-goog-api-key`` header. HTTP is
``httpx2`` (the client ``openai`` 3 is built on; a direct dependency in
pyproject.toml too, as this module imports it). Default model
``gemini-embedding-001``; base URL
``https://generativelanguage.googleapis.com/v1beta`` unless
``remote.base_url`` says otherwise. Retries follow
:mod:`engine.providers.retry`; Gemini's ``RetryInfo`` counts as Retry-After;
a query embedding gets one overall deadline (the query timeout,
``remote.query_deadline_ms``, 5 s) across its attempts, and one call
embedding documents one too (the embedding deadline, ``remote.deadline_ms``,
60 s), however the server answers
(:mod:`engine.providers.deadline`).
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import httpx2

from ..errors import ProviderError
from ..paths import AppPaths
from ..redact import Redactor
from ..settings import AgentConfig
from .base import EmbeddingProvider, EmbedProgress, ProviderFactory
from .deadline import call_within, deadline_client
from .packing import cap_input, pack, run_packed
from .remote import RemoteTarget, deadlines, remote_target
from .retry import Deadline, Failure, RetryPolicy, call_with_retries, is_retryable_status, parse_retry_after

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
DEFAULT_MODEL = "gemini-embedding-001"
#: gemini-embedding-001 reads 2048 tokens per input.
MAX_INPUT_TOKENS = 2048
#: batchEmbedContents takes at most 100 requests.
MAX_REQUEST_INPUTS = 100
#: Tokens per batchEmbedContents request (the API's own cap is far higher;
#: this keeps requests small enough to retry cheaply).
MAX_REQUEST_TOKENS = 100 * MAX_INPUT_TOKENS
#: A query embedding, all attempts and waits (``remote.query_deadline_ms``):
#: someone waits for the search.
QUERY_TIMEOUT_S = 5.0
DOCUMENT_TIMEOUT_S = 120.0
#: One embed_batch call (a sync's group of texts), all requests and retries
#: (``remote.deadline_ms``): what a silent server holds a writer lock for.
EMBEDDING_DEADLINE_S = 60.0
CONNECT_TIMEOUT_S = 10.0
CONCURRENCY = 4
INLINE_GROUP_SIZE = 256


class GeminiHTTPError(Exception):
    """A non-2xx answer from the Gemini API, with its message."""

    def __init__(self, status: int, message: str, retry_after: float | None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def classify(exc: Exception) -> Failure | None:
    """An ``httpx2`` exception or a Gemini error as the retry loop sees it."""
    if isinstance(exc, GeminiHTTPError):
        return Failure(str(exc), retryable=is_retryable_status(exc.status), retry_after=exc.retry_after)
    if isinstance(exc, httpx2.TimeoutException):
        return Failure("the request timed out", retryable=True)
    if isinstance(exc, httpx2.TransportError):
        return Failure(f"cannot connect ({exc})", retryable=True)
    if isinstance(exc, (ValueError, KeyError, TypeError)):  # bad response shapes
        return Failure(f"unexpected response: {exc!r}", retryable=False)
    return None


def error_from_response(response: httpx2.Response) -> GeminiHTTPError:
    """``HTTP 400 (INVALID_ARGUMENT): API key not valid...`` from Google's error body."""
    status = response.status_code
    retry_after = parse_retry_after(response.headers)
    try:
        err = response.json().get("error", {})
    except (ValueError, AttributeError):
        err = {}
    if not isinstance(err, dict):
        err = {}
    message = err.get("message") or response.text.strip()[:500] or response.reason_phrase
    label = f"HTTP {status} ({err['status']})" if err.get("status") else f"HTTP {status}"
    if retry_after is None:
        retry_after = _retry_info_delay(err.get("details"))
    return GeminiHTTPError(status, f"{label}: {message}", retry_after)


def _retry_info_delay(details: Any) -> float | None:
    """``google.rpc.RetryInfo``'s ``retryDelay`` ("17s", "0.5s"), if present."""
    for d in details or []:
        if isinstance(d, dict) and str(d.get("@type", "")).endswith("google.rpc.RetryInfo"):
            m = re.fullmatch(r"\s*([0-9.]+)s\s*", str(d.get("retryDelay", "")))
            if m:
                return float(m.group(1))
    return None


class GeminiProvider(EmbeddingProvider):
    """Embeddings from Gemini's ``embedContent`` / ``batchEmbedContents``.

    Timeouts, retry policy, concurrency and request limits are constructor
    arguments (tests shrink them); the defaults are DESIGN.md §6's.
    """

    id = "gemini"
    batch_group_size = INLINE_GROUP_SIZE

    def __init__(
        self,
        target: RemoteTarget,
        *,
        retry: RetryPolicy | None = None,
        query_timeout_s: float = QUERY_TIMEOUT_S,
        document_timeout_s: float = DOCUMENT_TIMEOUT_S,
        embedding_deadline_s: float = EMBEDDING_DEADLINE_S,
        concurrency: int = CONCURRENCY,
        max_input_tokens: int = MAX_INPUT_TOKENS,
        max_request_tokens: int = MAX_REQUEST_TOKENS,
        max_request_inputs: int = MAX_REQUEST_INPUTS,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.model = target.model.removeprefix("models/")
        self.endpoint_key = target.endpoint_key
        self.base_url = target.base_url
        self.max_input_tokens = max_input_tokens
        self._resource = f"models/{self.model}"
        self._max_request_tokens = max_request_tokens
        self._max_request_inputs = min(max_request_inputs, MAX_REQUEST_INPUTS)
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self.query_timeout_s = query_timeout_s
        self.embedding_deadline_s = embedding_deadline_s
        self._document_timeout_s = document_timeout_s
        self._document_timeout = httpx2.Timeout(document_timeout_s, connect=min(CONNECT_TIMEOUT_S, document_timeout_s))
        self._concurrency = max(1, concurrency)
        self.redact = Redactor(target.secrets)
        self._http = deadline_client(
            headers={**target.headers, "x-goog-api-key": target.api_key, "content-type": "application/json"},
            timeout=self._document_timeout,
        )

    def embed_query(self, text: str) -> list[float]:
        body = {"model": self._resource, "content": _content(cap_input(text, self.max_input_tokens)), "taskType": "RETRIEVAL_QUERY"}
        deadline = Deadline(self.query_timeout_s)  # across attempts, not per attempt
        vectors = self._post(
            "embedContent", body, deadline, deadline.seconds, "query embedding", lambda d: [_values(d["embedding"])], "query vector"
        )
        return vectors[0]

    def embed_batch(self, texts: Sequence[str], progress: EmbedProgress | None = None) -> list[list[float]]:
        if not texts:
            return []
        capped = [cap_input(t, self.max_input_tokens) for t in texts]
        groups = pack(capped, max_request_tokens=self._max_request_tokens, max_request_inputs=self._max_request_inputs)
        # One deadline for the whole call: every request, retry and wait.
        deadline = Deadline(self.embedding_deadline_s, "embedding deadline (remote.deadline_ms)")

        def send(inputs: list[str]) -> list[list[float]]:
            body = {"requests": [{"model": self._resource, "content": _content(t), "taskType": "RETRIEVAL_DOCUMENT"} for t in inputs]}

            def parse(data: dict) -> list[list[float]]:
                embeddings = data.get("embeddings") or []
                if len(embeddings) != len(inputs):
                    raise ProviderError(f"Gemini ({self.base_url}) returned {len(embeddings)} embeddings for {len(inputs)} texts")
                return [_values(e) for e in embeddings]

            return self._post(
                "batchEmbedContents",
                body,
                deadline,
                self._document_timeout_s,
                f"batchEmbedContents ({len(inputs)} texts)",
                parse,
                "batch",
            )

        return run_packed(capped, groups, send, concurrency=self._concurrency, progress=progress)

    def close(self) -> None:
        self._http.close()

    # -- requests ---------------------------------------------------------------

    def _post(
        self,
        method: str,
        body: dict,
        deadline: Deadline,
        attempt_limit_s: float,
        what: str,
        parse: Callable[[dict], list[list[float]]],
        kind: str,
    ) -> list[list[float]]:
        """POST to ``models/{model}:{method}`` under the retry policy; ``parse`` reads the vectors.

        ``deadline`` bounds all attempts together, however slowly the server
        answers; each attempt also ends after ``attempt_limit_s``.
        """
        url = f"{self.base_url}/{self._resource}:{method}"
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8", "replace")

        def attempt() -> list[list[float]]:
            left = deadline.timeout(attempt_limit_s)
            per_attempt = httpx2.Timeout(left, connect=min(CONNECT_TIMEOUT_S, left))
            response = self._http.post(url, content=payload, timeout=per_attempt)
            if response.status_code >= 400:
                raise error_from_response(response)
            data = response.json()
            if not isinstance(data, dict):
                raise ValueError(f"expected a JSON object, got {type(data).__name__}")
            vectors = parse(data)
            return self.accept_vectors(vectors, len(vectors), kind)

        return call_with_retries(
            lambda: call_within(deadline, attempt, name="memext-gemini"),
            classify,
            self._retry,
            what=f"Gemini {what} ({self.base_url})",
            sleep=self._sleep,
            deadline=deadline,
            redact=self.redact,
        )


def _content(text: str) -> dict:
    return {"parts": [{"text": text}]}


def _values(embedding: Any) -> list[float]:
    return [float(x) for x in embedding["values"]]


def create(
    agent: AgentConfig, paths: AppPaths, env: Mapping[str, str] | None = None, *, primary: str | None = None, **options: Any
) -> GeminiProvider:
    """Build the Gemini provider for an agent (no request is made yet).

    ``primary`` is the provider in force as the primary (what ``auto``
    resolved to): when it is OpenAI, this is only its fallback and the
    shared remote settings are not its own (see :func:`remote.owns_settings`).
    ``options`` go to :class:`GeminiProvider` (timeouts, retry policy...).
    """
    env = os.environ if env is None else env
    target = remote_target("gemini", agent, env, default_base_url=DEFAULT_BASE_URL, default_model=DEFAULT_MODEL, primary=primary)
    return GeminiProvider(target, **deadlines(agent, options))


if TYPE_CHECKING:
    _create: ProviderFactory = create  # the contract create_provider() calls (DESIGN.md §6)
