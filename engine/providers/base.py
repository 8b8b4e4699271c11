"""The embedding-provider interface every provider implements (SPEC §6)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:
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

    @property
    def dims(self) -> int | None:
        """Vector size, once known (None before the first call if unknown)."""
        return None

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
