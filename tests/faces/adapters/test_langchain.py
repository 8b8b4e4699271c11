"""The LangChain adapter against the real langchain-core and a real index
(example memory, real GGUF model)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from adapter_helpers import example_index, shared_example_index
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from memext.engine import MemextError
from memext.engine.faces.adapters.langchain import MemextRetriever
from memext.engine.search.updates import UPDATE_MARGIN

pytestmark = pytest.mark.model  # the real MiniLM index (adapter_helpers)

METADATA_KEYS = {"path", "start_line", "end_line", "citation", "score", "source", "confidence", "confident"}


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    idx, workspace = shared_example_index(tmp_path_factory)
    yield idx, workspace
    idx.close()


@pytest.fixture
def index(shared):
    return shared[0]


@pytest.fixture
def example_workspace(shared):
    """The shared index's workspace (these tests only read it)."""
    return shared[1]


def test_documents_carry_the_search_results_with_citations(index):
    docs = MemextRetriever(index=index, max_results=5).invoke("Who is the vet of Dana's cat Biscuit?")
    expected = index.search("Who is the vet of Dana's cat Biscuit?", max_results=5)
    assert docs and all(isinstance(d, Document) for d in docs)
    assert [d.metadata["citation"] for d in docs] == [r.citation for r in expected]
    for doc, hit in zip(docs, expected):
        assert set(doc.metadata) == METADATA_KEYS
        assert doc.id == hit.citation == f"{hit.path}:{hit.start_line}-{hit.end_line}"
        assert doc.page_content == hit.snippet
        assert doc.metadata["score"] == pytest.approx(hit.score)
        assert doc.metadata["source"] == "memory"
    assert "Sousa" in docs[0].page_content or "Biscuit" in docs[0].page_content
    # Best first, but a newer note on the same subject may move above an
    # older one it nearly ties with (knowledge updates), and a result the
    # engine placed higher says why (`reordered`: newer, more confident).
    assert all(
        later.score - earlier.score <= UPDATE_MARGIN or earlier.reordered
        for i, earlier in enumerate(expected.results)
        for later in expected.results[i + 1 :]
    )


def test_lines_content_is_the_chunk_text_from_the_file(index, example_workspace):
    docs = MemextRetriever(index=index, max_results=3, content="lines").invoke("reconciliation job timed out")
    assert docs
    for doc in docs:
        m = doc.metadata
        file_lines = (example_workspace / m["path"]).read_text(encoding="utf-8").splitlines()
        assert doc.page_content == "\n".join(file_lines[m["start_line"] - 1 : m["end_line"]])


def test_settings_reach_the_search(index):
    assert len(MemextRetriever(index=index, max_results=2).invoke("deploy")) == 2
    # A score no hit reaches leaves nothing (an exact keyword hit is kept:
    # use words the memory does not hold).
    assert MemextRetriever(index=index, min_score=0.99).invoke("quantum origami zeppelin") == []
    with pytest.raises(MemextError, match="not indexed"):
        MemextRetriever(index=index, sources=["sessions"]).invoke("deploy")
    with pytest.raises(TypeError):
        MemextRetriever(index=index, search_kwargs={"no_such_option": 1}).invoke("deploy")


def test_async_and_inside_a_chain(index):
    retriever = MemextRetriever(index=index, max_results=3)
    docs = asyncio.run(retriever.ainvoke("green tea"))
    assert docs and docs[0].metadata["citation"]
    chain = retriever | RunnableLambda(lambda ds: "\n".join(f"[{d.metadata['citation']}] {d.page_content}" for d in ds))
    text = chain.invoke("green tea")
    assert text.startswith(f"[{docs[0].metadata['citation']}]")


def test_bad_content_mode_is_refused(index):
    with pytest.raises(ValueError):
        MemextRetriever(index=index, content="everything")


def test_missing_extra_names_it():
    code = (
        "import sys; sys.modules['langchain_core'] = None\n"
        "try:\n    import memext.engine.faces.adapters.langchain\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "the LangChain adapter needs the 'langchain' extra: pip install 'memext[langchain]'"


# -- the memory tools as LangChain tools ---------------------------------------


@pytest.fixture
def tools(index):
    """Tools over the shared index, for tests that write nothing (not
    closed: the index stays open for the module's other tests)."""
    from memext.engine import MemoryTools

    return MemoryTools(lambda agent_id: index, ["ex"])


@pytest.fixture
def writable_tools(tmp_path):
    """Tools over an index of their own (a test that appends)."""
    import shutil

    from conftest import EXAMPLE_WORKSPACE

    from memext.engine import MemoryTools

    workspace = tmp_path / "own"
    shutil.copytree(EXAMPLE_WORKSPACE, workspace)
    with MemoryTools(lambda agent_id: example_index(workspace, tmp_path), ["ex"]) as t:
        yield t, workspace


def test_the_tools_are_the_engines_definitions(tools):
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from memext.engine import TOOLS
    from memext.engine.faces.adapters.langchain import memory_tools

    lc = memory_tools(tools)
    assert (
        [t.name for t in lc]
        == [t.name for t in TOOLS]
        == ["memory_search", "memory_get", "memory_append", "memory_forget", "memory_capture"]
    )
    by_name = {t.name: t for t in tools.specs}
    openai = {d["function"]["name"]: d["function"] for d in tools.openai_tools("chat")}
    for tool in lc:
        spec = by_name[tool.name]
        assert tool.description == spec.description and "'ex'" in tool.description
        assert tool.args_schema == dict(spec.parameters)
        # What a chat model is given through bind_tools is the same schema.
        fn = convert_to_openai_tool(tool)["function"]
        assert fn["parameters"] == openai[tool.name]["parameters"]
        assert tool.metadata == {"read_only": spec.read_only, "destructive": spec.destructive, "idempotent": spec.idempotent}


def test_search_get_and_append_through_langchain(writable_tools):
    from memext.engine.faces.adapters.langchain import memory_tools

    tools, example_workspace = writable_tools
    search, get, append, _forget, _capture = memory_tools(tools)
    found = search.invoke({"query": "Biscuit vet"})
    assert found == tools.call_tool("memory_search", {"query": "Biscuit vet"})
    top = found["results"][0]
    path, span = top["citation"].rsplit(":", 1)
    start = int(span.split("-")[0])
    read = get.invoke({"path": path, "from": start, "lines": 2})
    lines = (example_workspace / path).read_text(encoding="utf-8").splitlines()
    assert read["text"] == "\n".join(lines[start - 1 : start + 1])
    written = append.invoke({"text": "The spare office key is in the blue drawer.", "heading": "Keys"})
    assert written
    again = search.invoke({"query": "spare office key blue drawer", "max_results": 1, "agent": None})
    assert "blue drawer" in again["results"][0]["snippet"]


def test_a_model_tool_call_gets_a_tool_message(tools):
    from langchain_core.messages import ToolMessage

    from memext.engine.faces.adapters.langchain import memory_tools

    search = memory_tools(tools)[0]
    call = {
        "name": "memory_search",
        "args": {"query": "green tea", "max_results": 2, "min_score": None, "after": None, "before": None, "agent": None},
        "id": "call_1",
        "type": "tool_call",
    }
    msg = search.invoke(call)
    assert isinstance(msg, ToolMessage) and msg.tool_call_id == "call_1" and msg.status == "success"
    assert "citation" in msg.content and "MEMORY.md" in msg.content


def test_failures_come_back_to_the_model_as_messages(tools, example_workspace):
    from memext.engine.faces.adapters.langchain import memory_tools

    search, get, append, _forget, _capture = memory_tools(tools)
    before = {p: p.read_bytes() for p in example_workspace.rglob("*") if p.is_file()}
    refused = get.invoke({"path": "../../etc/passwd"})
    assert isinstance(refused, str) and "passwd" in refused
    bad = search.invoke({"query": 5})
    assert isinstance(bad, str) and "query must be string" in bad
    nobody = search.invoke({"query": "tea", "agent": "nobody"})
    assert "no agent 'nobody'" in nobody and "'ex'" in nobody
    outside = append.invoke({"text": "x", "file": "../notes.md"})
    assert isinstance(outside, str)
    msg = get.invoke({"name": "memory_get", "args": {"path": "secrets.txt"}, "id": "c2", "type": "tool_call"})
    assert msg.status == "error" and msg.tool_call_id == "c2"
    assert {p: p.read_bytes() for p in example_workspace.rglob("*") if p.is_file()} == before
    assert not (example_workspace.parent / "notes.md").exists()


def test_tools_run_async(tools):
    from memext.engine.faces.adapters.langchain import memory_tools

    search = memory_tools(tools)[0]
    found = asyncio.run(search.ainvoke({"query": "green tea", "max_results": 1}))
    assert len(found["results"]) == 1


def test_recall_context_puts_the_recalled_memories_into_the_prompt(index):
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough

    from memext.engine.faces.adapters.langchain import recall_context

    prompt = ChatPromptTemplate.from_messages([("system", "Answer the user."), ("user", "{memory}"), ("user", "{input}")])
    seen: list = []
    chain = RunnablePassthrough.assign(memory=recall_context(index)) | prompt | RunnableLambda(lambda p: seen.append(p) or "ok")
    assert chain.invoke({"input": "How much food does Biscuit get per day?"}) == "ok"
    block = seen[0].to_messages()[1].content
    assert block.startswith("<memories>\n") and "55 g" in block and 'cite="memory/2026-10-09.md:' in block
    # Nothing in memory on it: an empty block, not the least-bad notes.
    chain.invoke({"input": "What is the wifi password at the cabin in Lapland?"})
    assert seen[1].to_messages()[1].content == ""
    # A list of messages: the latest human message is the one recalled for.
    history = [
        HumanMessage("What is the wifi password at the cabin in Lapland?"),
        AIMessage("No idea."),
        HumanMessage("Biscuit's daily food?"),
    ]
    assert "55 g" in recall_context(index).invoke(history)
    assert asyncio.run(recall_context(index, key="question").ainvoke({"question": "Biscuit's daily food?"})) == recall_context(
        index
    ).invoke("Biscuit's daily food?")
    with pytest.raises(TypeError, match="expected the message text"):
        recall_context(index).invoke(42)
