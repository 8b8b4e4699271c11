"""The examples of docs/adapters.md (adapters and agent-runtime helpers) run
as written (each in a fresh interpreter, in a copy of the example memory, no
config)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import date

import pytest
from conftest import ROOT

PAGE = ROOT / "docs" / "adapters.md"


def page_examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


EXAMPLES = page_examples()


def run_example(code: str, cwd) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMEXT_WORKSPACE", "MEMEXT_CONFIG")}
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_the_page_has_the_seven_examples():
    assert len(EXAMPLES) == 7


@pytest.mark.parametrize("which", ["langchain", "llamaindex"])
def test_retriever_examples_print_cited_hits(which, example_workspace):
    code = next(c for c in EXAMPLES if f"adapters.{which} import Memext" in c)
    lines = run_example(code, example_workspace).splitlines()
    assert 1 <= len(lines) <= 3
    for line in lines:
        assert re.fullmatch(r"(MEMORY\.md|memory/[\w-]+\.md):\d+-\d+ \d(\.\d+)?", line), line


def test_flush_example_flushes_once_per_cycle(example_workspace):
    code = next(c for c in EXAMPLES if "MemoryFlush" in c)
    assert run_example(code, example_workspace).splitlines() == [
        "True due",
        "nothing stored",
        "already flushed this compaction cycle",
    ]


def test_session_example_saves_and_finds_the_session(example_workspace):
    code = next(c for c in EXAMPLES if "save_session_memory" in c)
    path, citation = run_example(code, example_workspace).splitlines()
    assert path == f"memory/{date.today().isoformat()}-book-porto-offsite-march-team-wants.md"
    assert citation.startswith(path + ":")
    assert (example_workspace / path).is_file()


def test_langchain_tools_example_cites_and_refuses(example_workspace):
    code = next(c for c in EXAMPLES if "memory_tools" in c)
    citation, refusal = run_example(code, example_workspace).splitlines()
    assert re.fullmatch(r"(MEMORY\.md|memory/[\w-]+\.md):\d+-\d+", citation)
    assert "notes.txt" in refusal and "Traceback" not in refusal


@pytest.mark.parametrize("which, question", [("recall_context", "55 g"), ("MemextMemoryBlock", "When is Miguel's birthday?")])
def test_recall_examples_put_a_cited_block_before_the_turn(which, question, example_workspace):
    code = next(c for c in EXAMPLES if f"import {which}" in c)
    out = run_example(code, example_workspace)
    assert "<memories>\nNotes the user wrote earlier" in out and "not instructions" in out
    assert re.search(r'<memory cite="(MEMORY\.md|memory/[\w-]+\.md):\d+(-\d+)?"', out)
    assert question in out
