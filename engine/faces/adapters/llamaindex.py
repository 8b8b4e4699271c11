"""LlamaIndex adapter (extra ``llamaindex``): a retriever over an agent's memory.

::

    from memext.engine import open_index
    from memext.engine.faces.adapters.llamaindex import MemextLlamaRetriever

    retriever = MemextLlamaRetriever(open_index("work"), max_results=4)
    for hit in retriever.retrieve("deploy checklist"):
        print(hit.score, hit.node.metadata["citation"], hit.node.get_content())

``MemextMemoryBlock`` is a memory block for LlamaIndex's ``Memory``: before
each turn it puts in the memories the user's latest message calls for
(DESIGN.md §18)::

    from llama_index.core.memory import Memory
    memory = Memory.from_defaults(memory_blocks=[MemextMemoryBlock(memory=open_index("work"))])

llama-index-core ships the NLTK and tiktoken data it uses inside its wheel,
and a retriever needs neither, so this works without network access.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Sequence

try:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.memory import BaseMemoryBlock
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
    from pydantic import Field
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise ImportError("the LlamaIndex adapter needs the 'llamaindex' extra: pip install 'memext[llamaindex]'") from exc

from ... import Recaller
from .hits import Content, Searchable, search_hits

__all__ = ["MemextLlamaRetriever", "MemextMemoryBlock"]

#: Metadata the LLM sees with a node's text: where it comes from. The rest
#: (score, lines) stays out of prompts and embeddings.
_SHOWN_TO_LLM = ("citation",)


class MemextLlamaRetriever(BaseRetriever):
    """A LlamaIndex retriever over one agent's memory index.

    Returns :class:`~llama_index.core.schema.NodeWithScore` s whose
    :class:`TextNode` holds a hit's snippet (or, with ``content="lines"``,
    its chunk's full lines), ``id_`` the citation, and the metadata
    ``path``, ``start_line``, ``end_line``, ``citation``, ``score`` and
    ``source``. ``index`` is a :class:`memext.engine.MemoryIndex` (it does
    not sync by itself); the other arguments are as for ``index.search``.
    """

    def __init__(
        self,
        index: Searchable,
        *,
        max_results: int | None = None,
        min_score: float | None = None,
        sources: Sequence[str] | None = None,
        search_kwargs: Mapping[str, Any] | None = None,
        content: Content = "snippet",
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ):
        self.index = index
        self.max_results = max_results
        self.min_score = min_score
        self.sources = list(sources) if sources is not None else None
        self.search_kwargs = dict(search_kwargs or {})
        self.content: Content = content
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = search_hits(
            self.index,
            query_bundle.query_str,
            max_results=self.max_results,
            min_score=self.min_score,
            sources=self.sources,
            search_kwargs=self.search_kwargs,
            content=self.content,
        )
        nodes = []
        for h in hits:
            hidden = [k for k in h.metadata if k not in _SHOWN_TO_LLM]
            node = TextNode(
                id_=h.id,
                text=h.text,
                metadata=h.metadata,
                excluded_llm_metadata_keys=hidden,
                excluded_embed_metadata_keys=list(h.metadata),
            )
            nodes.append(NodeWithScore(node=node, score=h.score))
        return nodes


class MemextMemoryBlock(BaseMemoryBlock[str]):
    """A block of LlamaIndex's ``Memory`` that recalls from memext: for the
    latest user message, the memories it calls for as a context block that
    quotes them as notes the user wrote earlier, not instructions
    (:meth:`MemoryIndex.recall`); "" when nothing is recalled, which
    ``Memory`` leaves out of the prompt.

    ``memory`` is a :class:`MemoryIndex` or :class:`MemoryTools`. The block
    only reads: messages put into it are not stored (memext's memory is
    its Markdown files; capture them with :func:`memext.engine.capture`).
    Its priority is 0: ``Memory`` never truncates what was recalled."""

    name: str = Field(default="memext", description="The name of the memory block.")
    memory: Any = Field(description="A MemoryIndex or MemoryTools to recall from.")
    accept_short_term_memory: bool = Field(default=False, description="Recall only reads; it stores nothing.")

    async def _aget(self, messages: Optional[List[ChatMessage]] = None, **block_kwargs: Any) -> str:
        users = [m for m in messages or [] if m.role == MessageRole.USER and (m.content or "").strip()]
        if not users:
            return ""
        recaller: Recaller = self.memory
        return recaller.recall(users[-1].content or "").context

    async def _aput(self, messages: List[ChatMessage]) -> None:
        return None
