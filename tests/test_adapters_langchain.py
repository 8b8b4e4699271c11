"""The LangChain adapter against the real langchain-core and a real index
(example memory, real GGUF model)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from adapter_helpers import example_index
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from memext.engine import MemextError
from memext.engine.adapters.langchain import MemextRetriever

METADATA_KEYS = {"path", "start_line", "end_line", "citation", "score", "source"}


@pytest.fixture
def index(example_workspace, tmp_path):
    idx = example_index(example_workspace, tmp_path)
    yield idx
    idx.close()


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
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)


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
        "try:\n    import memext.engine.adapters.langchain\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "the LangChain adapter needs the 'langchain' extra: pip install 'memext[langchain]'"
