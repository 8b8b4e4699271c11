"""LangChain adapter (extra ``langchain``): a retriever over an agent's
memory and the memory tools as LangChain tools.

::

    from memext.engine import open_index
    from memext.engine.faces.adapters.langchain import MemextRetriever

    retriever = MemextRetriever(index=open_index("work"), max_results=4)
    docs = retriever.invoke("deploy checklist")
    docs[0].metadata["citation"]        # "memory/2026-01-05.md:3-4"

The tools come from the engine's one definition (``memext.engine.agents.tools``):
same names, descriptions and JSON Schemas as the MCP server and the OpenAI
tool list, run through ``MemoryTools.call_tool``.
"""

from __future__ import annotations

import copy
from typing import Any, Optional

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import StructuredTool, ToolException
    from pydantic import ConfigDict
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise ImportError("the LangChain adapter needs the 'langchain' extra: pip install 'memext[langchain]'") from exc

from ... import MemoryTools, ToolError, ToolSpec
from .hits import Content, Searchable, search_hits

__all__ = ["MemextRetriever", "memory_tools"]


class MemextRetriever(BaseRetriever):
    """A LangChain retriever over one agent's memory index.

    Each :class:`~langchain_core.documents.Document` holds a hit's snippet
    (or, with ``content="lines"``, its chunk's full lines) and the metadata
    ``path``, ``start_line``, ``end_line``, ``citation`` (``path:start-end``),
    ``score`` and ``source``; its ``id`` is the citation.

    ``index`` is a :class:`memext.engine.MemoryIndex` (it does not sync by
    itself: sync it, or keep it fresh with a keeper). ``max_results``,
    ``min_score`` and ``sources`` default to the agent's config;
    ``search_kwargs`` go to ``index.search`` as they are.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Any
    max_results: Optional[int] = None
    min_score: Optional[float] = None
    sources: Optional[list[str]] = None
    search_kwargs: dict[str, Any] = {}
    content: Content = "snippet"

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        index: Searchable = self.index
        hits = search_hits(
            index,
            query,
            max_results=self.max_results,
            min_score=self.min_score,
            sources=self.sources,
            search_kwargs=self.search_kwargs,
            content=self.content,
        )
        return [Document(page_content=h.text, metadata=h.metadata, id=h.id) for h in hits]


def memory_tools(tools: MemoryTools) -> list[StructuredTool]:
    """``memory_search``, ``memory_get`` and ``memory_append`` as LangChain
    tools that run through ``tools.call_tool``.

    Names, descriptions and argument schemas are the engine's (``tools.specs``:
    :data:`memext.engine.TOOLS` with the served agents named), in their
    OpenAI-strict form, which chat models' ``bind_tools`` accept as is.
    A failed call (bad arguments, a refused path, an unknown agent) comes
    back to the model as the tool's answer, the error's message, so it can
    correct itself; it is not raised into the agent loop.
    """
    return [_langchain_tool(spec, tools) for spec in tools.specs]


def _langchain_tool(spec: ToolSpec, tools: MemoryTools) -> StructuredTool:
    def run(**arguments: Any) -> dict:
        try:
            return tools.call_tool(spec.name, arguments)
        except ToolError as exc:
            raise ToolException(str(exc)) from exc

    return StructuredTool.from_function(
        func=run,
        name=spec.name,
        description=spec.description,
        args_schema=copy.deepcopy(dict(spec.parameters)),  # LangChain wants a plain dict
        handle_tool_error=True,
        metadata={"read_only": spec.read_only, "destructive": spec.destructive, "idempotent": spec.idempotent},
    )
