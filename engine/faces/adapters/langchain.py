"""LangChain adapter (extra ``langchain``): a retriever over an agent's
memory and the memory tools as LangChain tools.

::

    from memext.engine import open_index
    from memext.engine.faces.adapters.langchain import MemextRetriever

    retriever = MemextRetriever(index=open_index("work"), max_results=4)
    docs = retriever.invoke("deploy checklist")
    docs[0].metadata["citation"]        # "memory/2026-01-05.md:3-4"

Before each turn, ``recall_context(memory)`` gives the memories the user's
message calls for as a context block (DESIGN.md §18), for a chain's
prompt::

    chain = RunnablePassthrough.assign(memory=recall_context(index)) | prompt | model

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
    from langchain_core.messages import BaseMessage
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable, RunnableLambda
    from langchain_core.tools import StructuredTool, ToolException
    from pydantic import ConfigDict
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise ImportError("the LangChain adapter needs the 'langchain' extra: pip install 'memext[langchain]'") from exc

from ... import MemoryTools, Recaller, ToolError, ToolSpec
from .hits import Content, Searchable, search_hits

__all__ = ["MemextRetriever", "memory_tools", "recall_context"]


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
    """The engine's agent tools (``memory_search``, ``memory_get``,
    ``memory_append``, ``memory_forget``, ``memory_capture``, in that order)
    as LangChain tools that run through ``tools.call_tool``.

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


def recall_context(memory: Recaller, *, key: str = "input") -> Runnable[Any, str]:
    """A runnable that turns a chain's input into the recall block for it:
    the memories the user's latest message calls for, quoted as notes the
    user wrote earlier, not instructions (:meth:`MemoryIndex.recall`), or
    "" when nothing is recalled.

    ``memory`` is a :class:`MemoryIndex` or :class:`MemoryTools`. The input
    may be the message text, a dict holding it under ``key``, or a list of
    messages (the latest human message is used)."""

    def run(value: Any) -> str:
        text = _user_text(value, key)
        return memory.recall(text).context if text.strip() else ""

    return RunnableLambda(run, name="memext_recall")


def _user_text(value: Any, key: str) -> str:
    if isinstance(value, dict):
        value = value.get(key, "")
    if isinstance(value, BaseMessage):
        value = [value]
    if isinstance(value, (list, tuple)):
        humans = [m for m in value if isinstance(m, BaseMessage) and m.type == "human"]
        return str(humans[-1].text) if humans else ""
    if not isinstance(value, str):
        raise TypeError(f"recall_context: expected the message text, a dict with {key!r} or messages, not {type(value).__name__}")
    return value
