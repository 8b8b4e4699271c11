"""The LlamaIndex adapter against the real llama-index-core and a real
index (example memory, real GGUF model)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

import pytest
from adapter_helpers import shared_example_index
from conftest import TESTS
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from memext.engine.faces.adapters.llamaindex import MemextLlamaRetriever

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


def test_nodes_carry_the_search_results_with_citations(index):
    query = "When does the nightly reconciliation job run?"
    hits = MemextLlamaRetriever(index, max_results=4).retrieve(query)
    expected = index.search(query, max_results=4)
    assert hits and all(isinstance(h, NodeWithScore) and isinstance(h.node, TextNode) for h in hits)
    assert [h.node.node_id for h in hits] == [r.citation for r in expected]
    for hit, r in zip(hits, expected):
        assert set(hit.node.metadata) == METADATA_KEYS
        assert hit.node.metadata["citation"] == f"{r.path}:{r.start_line}-{r.end_line}"
        assert hit.score == pytest.approx(r.score)
        assert hit.node.get_content() == r.snippet
    assert any("02:30" in h.node.get_content() for h in hits)


def test_the_llm_sees_the_citation_but_not_the_bookkeeping(index):
    hit = MemextLlamaRetriever(index, max_results=1).retrieve("green tea")[0]
    shown = hit.node.get_content(metadata_mode=MetadataMode.LLM)
    assert f"citation: {hit.node.metadata['citation']}" in shown
    assert "score:" not in shown and "start_line" not in shown
    assert hit.node.get_content(metadata_mode=MetadataMode.EMBED) == hit.node.get_content()


def test_lines_content_query_bundle_and_async(index, shared):
    example_workspace = shared[1]
    retriever = MemextLlamaRetriever(index, max_results=2, content="lines")
    hits = retriever.retrieve(QueryBundle("Biscuit vaccines"))
    assert hits
    for h in hits:
        m = h.node.metadata
        lines = (example_workspace / m["path"]).read_text(encoding="utf-8").splitlines()
        assert h.node.get_content() == "\n".join(lines[m["start_line"] - 1 : m["end_line"]])
    again = asyncio.run(retriever.aretrieve("Biscuit vaccines"))
    assert [h.node.node_id for h in again] == [h.node.node_id for h in hits]


def test_settings_reach_the_search(index):
    assert len(MemextLlamaRetriever(index, max_results=1).retrieve("deploy")) == 1
    assert MemextLlamaRetriever(index, min_score=0.99).retrieve("quantum origami zeppelin") == []
    with pytest.raises(ValueError):
        MemextLlamaRetriever(index, content="all").retrieve("deploy")


def test_missing_extra_names_it():
    code = (
        "import sys; sys.modules['llama_index.core'] = None\n"
        "try:\n    import memext.engine.faces.adapters.llamaindex\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "the LlamaIndex adapter needs the 'llamaindex' extra: pip install 'memext[llamaindex]'"


def test_both_adapters_work_with_the_network_cut_off(example_workspace, tmp_path):
    """llama-index-core is known to fetch NLTK data and tiktoken files on
    demand; any attempt to open a connection here fails the run."""
    script = textwrap.dedent(
        f"""
        import socket
        def refuse(*a, **k):
            raise AssertionError("network access attempted: %r" % (a,))
        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        sys_path = {str(TESTS)!r}
        import sys; sys.path.insert(0, sys_path)
        from pathlib import Path
        from adapter_helpers import example_index
        from memext.engine.faces.adapters.llamaindex import MemextLlamaRetriever
        from memext.engine.faces.adapters.langchain import MemextRetriever
        from llama_index.core.utils import get_tokenizer
        idx = example_index(Path({str(example_workspace)!r}), Path({str(tmp_path)!r}))
        assert MemextLlamaRetriever(idx).retrieve("green tea")
        assert MemextRetriever(index=idx).invoke("green tea")
        assert get_tokenizer()("green tea")
        print("offline ok")
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("NLTK_DATA", "TIKTOKEN_CACHE_DIR")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("offline ok")


def test_memory_block_recalls_for_the_latest_user_message(index):
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.memory import Memory

    from memext.engine.faces.adapters.llamaindex import MemextMemoryBlock

    memory = Memory.from_defaults(session_id="t", memory_blocks=[MemextMemoryBlock(memory=index)], insert_method="user")
    memory.put(ChatMessage(role="user", content="What is the wifi password at the cabin in Lapland?"))
    assert "<memories>" not in str(memory.get()[-1].content)  # nothing recalled: nothing added
    memory.put(ChatMessage(role="assistant", content="I don't know."))
    memory.put(ChatMessage(role="user", content="How much food does Biscuit get per day?"))
    last = memory.get()[-1]
    text = str(last.content)
    assert last.role == "user" and text.endswith("How much food does Biscuit get per day?")
    assert "<memories>" in text and "55 g" in text and 'cite="memory/2026-10-09.md:' in text
    # The block stores nothing: memory is the Markdown files.
    block = memory.memory_blocks[0]
    assert block.accept_short_term_memory is False and asyncio.run(block.aput([ChatMessage(role="user", content="x")])) is None
