"""The ``openai`` provider: any OpenAI-compatible embeddings endpoint (DESIGN.md §6).

Uses the official ``openai`` client (``remote.base_url``, the API key,
``remote.headers``); the default model is ``text-embedding-3-small``.
Document texts are cut to the model's input limit and packed into requests
under it, sent with bounded concurrency; with ``remote.batch.enabled`` they
go through the Batch API instead (:mod:`engine.providers.openai_batch`),
with inline requests after repeated batch failures. The client's own
retries are off: :mod:`engine.providers.retry` applies DESIGN.md §6's policy
(429/5xx/timeouts 3 times, 0.5-8 s backoff with jitter, ``Retry-After``);
a query embedding gets one overall deadline (the query timeout,
``remote.query_deadline_ms``, 5 s) across its attempts, and one call
embedding documents inline gets one too (the embedding deadline,
``remote.deadline_ms``, 60 s), however the server answers
(:mod:`engine.providers.deadline`). Vectors are checked and error messages
redacted on the way out (:mod:`engine.providers.base`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import httpx2
import openai

from ..errors import ProviderError
from ..paths import AppPaths
from ..redact import Redactor
from ..settings import AgentConfig, BatchSettings
from ..status import BatchStatus
from .base import EmbeddingProvider, EmbedProgress, ProviderFactory
from .deadline import call_within, deadline_client
from .openai_batch import BatchFailed, OpenAIBatchEmbedder, decode_embedding
from .packing import cap_input, pack, run_packed
from .remote import RemoteTarget, deadlines, remote_target
from .retry import Deadline, Failure, RetryPolicy, call_with_retries, is_retryable_status, parse_retry_after

log = logging.getLogger("memext")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"
#: Per input, in tokens (all current OpenAI embedding models).
MAX_INPUT_TOKENS = 8192
#: The API's cap on inputs per request.
MAX_REQUEST_INPUTS = 2048
#: A query embedding, all attempts and waits (``remote.query_deadline_ms``):
#: someone waits for the search.
QUERY_TIMEOUT_S = 5.0
DOCUMENT_TIMEOUT_S = 120.0
#: One embed_batch call (a sync's group of texts), all requests and retries
#: (``remote.deadline_ms``): what a silent server holds a writer lock for.
EMBEDDING_DEADLINE_S = 60.0
CONNECT_TIMEOUT_S = 10.0
#: Requests in flight at once while embedding documents inline.
CONCURRENCY = 4
#: Texts per engine call when embedding inline: enough requests to keep
#: CONCURRENCY busy, small enough for steady progress and writes.
INLINE_GROUP_SIZE = 256


def classify(exc: Exception) -> Failure | None:
    """An ``openai`` client exception as the retry loop sees it."""
    if isinstance(exc, openai.APITimeoutError):
        return Failure("the request timed out", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        return Failure(f"cannot connect ({cause or exc})", retryable=True)
    if isinstance(exc, openai.APIStatusError):
        return Failure(
            status_message(exc.status_code, exc.body, exc.response.text if exc.body is None else None),
            retryable=is_retryable_status(exc.status_code),
            retry_after=parse_retry_after(exc.response.headers),
        )
    if isinstance(exc, (openai.OpenAIError, ValueError)):  # bad response shapes
        return Failure(f"unexpected response: {exc}", retryable=False)
    return None


def status_message(status: int, body: Any, text: str | None = None) -> str:
    """``HTTP 401: <the server's message>``."""
    message = None
    if isinstance(body, Mapping):
        inner = body.get("error")
        message = body.get("message") or (inner.get("message") if isinstance(inner, Mapping) else inner)
    elif isinstance(body, str):
        message = body.strip() or None
    if not message and text:
        message = text.strip() or None
    return f"HTTP {status}: {str(message)[:500]}" if message else f"HTTP {status}"


class OpenAIProvider(EmbeddingProvider):
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

    Timeouts, retry policy, concurrency and request limits are constructor
    arguments (tests shrink them); the defaults are DESIGN.md §6's. ``sleep``
    replaces the waits between retries and batch polls; ``batch_options``
    go to :class:`~engine.providers.openai_batch.OpenAIBatchEmbedder`.
    """

    id = "openai"

    def __init__(
        self,
        target: RemoteTarget,
        *,
        batch: BatchSettings | None = None,
        batch_state_file: Path | None = None,
        retry: RetryPolicy | None = None,
        query_timeout_s: float = QUERY_TIMEOUT_S,
        document_timeout_s: float = DOCUMENT_TIMEOUT_S,
        embedding_deadline_s: float = EMBEDDING_DEADLINE_S,
        concurrency: int = CONCURRENCY,
        max_input_tokens: int = MAX_INPUT_TOKENS,
        max_request_tokens: int | None = None,
        max_request_inputs: int = MAX_REQUEST_INPUTS,
        sleep: Callable[[float], None] | None = None,
        batch_options: Mapping[str, Any] | None = None,
    ):
        self.model = target.model
        self.endpoint_key = target.endpoint_key
        self.base_url = target.base_url
        self.max_input_tokens = max_input_tokens
        # The per-request budget defaults to the model's input limit: some
        # OpenAI-compatible servers cap a whole request at the context size.
        self._max_request_tokens = max_request_tokens or max_input_tokens
        self._max_request_inputs = max_request_inputs
        self._retry = retry or RetryPolicy()
        self._sleep = sleep or time.sleep
        self.query_timeout_s = query_timeout_s
        self.embedding_deadline_s = embedding_deadline_s
        self._document_timeout_s = document_timeout_s
        self._document_timeout = httpx2.Timeout(document_timeout_s, connect=min(CONNECT_TIMEOUT_S, document_timeout_s))
        self._concurrency = max(1, concurrency)
        self.redact = Redactor(target.secrets)
        self._client = openai.OpenAI(
            api_key=target.api_key,
            base_url=target.base_url,
            default_headers=dict(target.headers) or None,
            max_retries=0,  # retry.py applies the policy
            timeout=self._document_timeout,
            http_client=deadline_client(timeout=self._document_timeout, follow_redirects=True),
        )
        self._batch: OpenAIBatchEmbedder | None = None
        if batch is not None and batch.enabled:
            self._batch = OpenAIBatchEmbedder(
                self._client,
                self.model,
                batch,
                call=self._call,
                state_file=batch_state_file,
                sleep=sleep,
                redact=self.redact,
                request_deadline_s=embedding_deadline_s,
                **dict(batch_options or {}),
            )

    # -- EmbeddingProvider ------------------------------------------------------

    @property
    def batch_group_size(self) -> int | None:  # type: ignore[override]
        # The Batch API wants every text of a sync in one job.
        return None if self._batch is not None and self._batch.active else INLINE_GROUP_SIZE

    def embed_query(self, text: str) -> list[float]:
        capped = cap_input(text, self.max_input_tokens)
        deadline = Deadline(self.query_timeout_s)  # across attempts, not per attempt
        response = self._call(
            lambda: self._client.embeddings.create(model=self.model, input=capped, timeout=_attempt_timeout(deadline, deadline.seconds)),
            "query embedding",
            deadline=deadline,
        )
        return self._vectors(response, 1, "query vector")[0]

    def embed_batch(self, texts: Sequence[str], progress: EmbedProgress | None = None) -> list[list[float]]:
        if not texts:
            return []
        capped = [cap_input(t, self.max_input_tokens) for t in texts]
        if self._batch is not None and self._batch.active:
            try:
                return self._batch.embed(capped, progress)
            except BatchFailed as exc:
                log.warning("OpenAI batch failed, embedding %d texts inline instead: %s", len(capped), self.redact(str(exc)))
        return self._embed_inline(capped, progress)

    def batch_status(self) -> BatchStatus | None:
        return self._batch.status() if self._batch is not None else None

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()
        self._client.close()

    # -- requests ---------------------------------------------------------------

    def _call(self, fn: Callable[[], Any], what: str, deadline: Deadline | None = None) -> Any:
        """``fn`` under the retry policy; with a ``deadline``, each attempt
        ends when it passes, however slowly the server answers."""
        attempt = fn if deadline is None else (lambda: call_within(deadline, fn, name="memext-openai"))
        return call_with_retries(
            attempt,
            classify,
            self._retry,
            what=f"OpenAI {what} ({self.base_url})",
            sleep=self._sleep,
            deadline=deadline,
            redact=self.redact,
        )

    def _embed_inline(self, texts: list[str], progress: EmbedProgress | None) -> list[list[float]]:
        groups = pack(texts, max_request_tokens=self._max_request_tokens, max_request_inputs=self._max_request_inputs)
        # One deadline for the whole call: every request, retry and wait.
        deadline = Deadline(self.embedding_deadline_s, "embedding deadline (remote.deadline_ms)")

        def send(inputs: list[str]) -> list[list[float]]:
            response = self._call(
                lambda: self._client.embeddings.create(
                    model=self.model, input=inputs, timeout=_attempt_timeout(deadline, self._document_timeout_s)
                ),
                f"embeddings request ({len(inputs)} texts)",
                deadline=deadline,
            )
            return self._vectors(response, len(inputs), "batch")

        return run_packed(texts, groups, send, concurrency=self._concurrency, progress=progress)

    def _vectors(self, response: Any, expected: int, what: str) -> list[list[float]]:
        """The response's vectors in input order (``data`` is ordered by ``index``)."""
        data = sorted(response.data or [], key=lambda d: d.index)
        if len(data) != expected or [d.index for d in data] != list(range(expected)):
            raise ProviderError(f"OpenAI embeddings ({self.base_url}) returned {len(data)} vectors for {expected} inputs")
        try:
            vectors = [decode_embedding(d.embedding) for d in data]
        except ValueError as exc:
            raise ProviderError(f"OpenAI embeddings ({self.base_url}) returned a malformed vector: {exc}") from exc
        # Each request's answer is checked as it comes (size, finite, not
        # zero); embed_query/embed_batch check the whole again on the way out.
        return self.accept_vectors(vectors, expected, what)


def _attempt_timeout(deadline: Deadline, limit: float) -> httpx2.Timeout:
    """One attempt's timeout: ``limit``, or what is left of the deadline when less."""
    left = deadline.timeout(limit)
    return httpx2.Timeout(left, connect=min(CONNECT_TIMEOUT_S, left))


def create(
    agent: AgentConfig, paths: AppPaths, env: Mapping[str, str] | None = None, *, primary: str | None = None, **options: Any
) -> OpenAIProvider:
    """Build the OpenAI provider for an agent (no request is made yet).

    ``primary`` is the provider in force as the primary (what ``auto``
    resolved to): when it is Gemini, this is only its fallback and the
    shared remote settings are not its own (see :func:`remote.owns_settings`).
    ``options`` go to :class:`OpenAIProvider` (timeouts, retry policy...).
    Without ``remote.base_url``, ``OPENAI_BASE_URL`` or the public API is used.
    """
    env = os.environ if env is None else env
    target = remote_target(
        "openai",
        agent,
        env,
        default_base_url=env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
        default_model=DEFAULT_MODEL,
        primary=primary,
    )
    batch = agent.settings.remote.batch
    state_file = None
    if batch.enabled and not batch.wait:
        digest = hashlib.sha256(f"{target.endpoint_key}\0{target.model}".encode()).hexdigest()[:16]
        state_file = paths.cache_dir / "openai-batches" / f"{digest}.json"
    return OpenAIProvider(target, batch=batch, batch_state_file=state_file, **deadlines(agent, options))


if TYPE_CHECKING:
    _create: ProviderFactory = create  # the contract create_provider() calls (DESIGN.md §6)
