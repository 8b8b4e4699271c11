"""The embedding-provider interface every provider implements (DESIGN.md §6).

Whatever a provider's ``embed_query`` / ``embed_batch`` return is checked
on the way out (:mod:`.vector_checks`: one vector per text, all
finite, of the right size, none all zero), and whatever error leaves them
has the configured secrets masked (:mod:`engine.redact`). Both are wired
into every subclass when it is defined, so no provider (built in, a test's
or a user's) can hand the index a vector it must not store, or a message
holding an API key.

:class:`ProviderFactory` is what a provider module's ``create()`` must
look like: :func:`engine.providers.choice.create_provider` imports the
module a row of :mod:`engine.providers.registry` names and calls it.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

from ..errors import BadEmbeddings, ProviderError
from ..redact import NO_SECRETS, Redactor
from .vector_checks import BadVectors, check_vectors

if TYPE_CHECKING:
    from ..paths import AppPaths
    from ..settings import AgentConfig
    from ..status import BatchStatus, LocalModelStatus

#: Called with (texts done, texts total) while a batch is embedded.
EmbedProgress = Callable[[int, int], None]


class EmbeddingProvider(ABC):
    """Turns text into vectors.

    Subclasses set ``id`` (``"openai"``, ``"gemini"``, ``"local"``...),
    ``model`` and ``endpoint_key`` (what identifies the endpoint in the
    index fingerprint and cache: base URL and header *names*, never
    secrets). Vectors need not be normalised: the engine L2-normalises them.
    """

    id: str = "base"
    model: str = ""
    endpoint_key: str = ""
    #: Inputs longer than this many estimated tokens are cut before embedding.
    max_input_tokens: int = 8192
    #: How many texts the sync hands over per call; None means "all at once"
    #: (the OpenAI Batch API wants one job across every file).
    batch_group_size: int | None = 256
    #: The size of the vectors the caller already holds (the index sets its
    #: own): an answer of another size is rejected. None: an answer must
    #: match :attr:`dims` when that is known.
    expected_dims: int | None = None
    #: Masks the configured secrets in error messages (remote providers set it).
    redact: Redactor = NO_SECRETS
    #: The size of the last accepted answer (see :attr:`dims`).
    _accepted_dims: int | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, check in (("embed_query", _checked_query), ("embed_batch", _checked_batch)):
            fn = cls.__dict__.get(name)
            if fn is not None and not getattr(fn, "__isabstractmethod__", False) and not getattr(fn, "_memext_checked", False):
                setattr(cls, name, check(fn))

    @property
    def dims(self) -> int | None:
        """Vector size, once known (None before the first call if unknown).

        For a remote model it is the size of the last accepted answer: a
        mismatching answer is rejected *and* forgotten, so one bad answer
        (a wrong model behind a gateway for a while) cannot make every
        later healthy answer look wrong.
        """
        return self._accepted_dims

    @abstractmethod
    def embed_query(self, text: str) -> list[float]:
        """Embed a search query."""

    @abstractmethod
    def embed_batch(self, texts: Sequence[str], progress: EmbedProgress | None = None) -> list[list[float]]:
        """Embed documents (chunks); one vector per text, in order."""

    def batch_status(self) -> "BatchStatus | None":
        """The Batch API state when this provider batches documents, else None."""
        return None

    def model_status(self) -> "LocalModelStatus | None":
        """The state of a model this provider runs in-process, else None."""
        return None

    def close(self) -> None:
        """Release clients, threads or models."""

    # -- checks on the way out ---------------------------------------------------

    def accept_vectors(self, vectors: Sequence[Sequence[float]], count: int, what: str) -> list[list[float]]:
        """``vectors`` if they may be stored, else ProviderError naming the problem."""
        want = self.expected_dims or self.dims
        try:
            out = check_vectors(vectors, count, want)
        except BadVectors as exc:
            self._accepted_dims = None  # judge the next answer on its own (see dims)
            raise BadEmbeddings(f"{self.id} ({self.model}) returned {exc}; the {what} was rejected, nothing was stored or cached") from None
        if out:
            self._accepted_dims = len(out[0])
        return out

    def scrub(self, exc: BaseException) -> BaseException:
        """``exc`` fit to leave the provider: secrets masked in its message,
        and the chain that led to it dropped when that chain reveals one."""
        redact = self.redact
        if not redact.secrets:
            return exc
        chain_reveals = any(redact.reveals(str(e)) for e in _chain(exc))
        if not chain_reveals:
            return exc
        message = redact(str(exc))
        if isinstance(exc, ProviderError):
            exc.args = (message,)
            scrubbed: BaseException = exc
        else:
            scrubbed = ProviderError(f"{self.id}: {message}")
        scrubbed.__cause__ = None
        scrubbed.__context__ = None
        scrubbed.__suppress_context__ = True
        return scrubbed


class ProviderFactory(Protocol):
    """The ``create()`` of a provider module: builds the provider for an agent.

    ``env`` stands in for ``os.environ`` (None: the real one). ``primary``
    is the provider in force as the primary (what ``auto`` resolved to)
    when this one is built as its fallback, so that settings meant for the
    primary's vendor (``remote.*``, ``model``) stay with it; it is the
    provider's own name when it is the primary. A provider that cannot
    start raises :class:`~engine.errors.ProviderError` saying why (no key,
    no model file, a missing extra) and makes no request it can avoid.
    Every module a registry row names has one, and says so to mypy with
    ``_: ProviderFactory = create`` under ``if TYPE_CHECKING:``.
    """

    def __call__(
        self, agent: AgentConfig, paths: AppPaths, env: Mapping[str, str] | None = None, *, primary: str | None = None
    ) -> EmbeddingProvider: ...


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in seen:
        seen.append(e)
        e = e.__cause__ or e.__context__
    return seen


def _checked_query(fn: Callable[..., list[float]]) -> Callable[..., list[float]]:
    @functools.wraps(fn)
    def embed_query(self: EmbeddingProvider, text: str) -> list[float]:
        try:
            vector = fn(self, text)
        except Exception as exc:
            scrubbed = self.scrub(exc)
            if scrubbed is exc:
                raise
            raise scrubbed from None
        return self.accept_vectors([vector], 1, "query vector")[0]

    embed_query._memext_checked = True  # type: ignore[attr-defined]
    return embed_query


def _checked_batch(fn: Callable[..., list[list[float]]]) -> Callable[..., list[list[float]]]:
    @functools.wraps(fn)
    def embed_batch(self: EmbeddingProvider, texts: Sequence[str], progress: EmbedProgress | None = None) -> list[list[float]]:
        try:
            vectors = fn(self, texts, progress)
        except Exception as exc:
            scrubbed = self.scrub(exc)
            if scrubbed is exc:
                raise
            raise scrubbed from None
        return self.accept_vectors(vectors, len(texts), "batch")

    embed_batch._memext_checked = True  # type: ignore[attr-defined]
    return embed_batch
