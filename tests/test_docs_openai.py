"""The OpenAI loops of docs/agents.md (Chat Completions and Responses) run
as written, with the real openai client, against a scripted model on
127.0.0.1 (tests/chat_server.py), in a copy of the example memory."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from chat_server import ChatModelServer
from conftest import ROOT

from memext.engine import openai_tools

DOC = "docs/agents.md"
SECTION = "## OpenAI function calling"


def _shape(schema):
    """A schema without its descriptions (the served ones name the agents)."""
    if isinstance(schema, dict):
        return {k: _shape(v) for k, v in schema.items() if k != "description"}
    return schema


def openai_example() -> str:
    text = (ROOT / DOC).read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    return next(c for c in re.findall(r"```python\n(.*?)```", text[start:end], re.S) if "client.responses.create" in c)


def test_the_openai_loops_answer_from_memory_with_citations(example_workspace):
    code = openai_example()
    with ChatModelServer() as model:
        env = {k: v for k, v in os.environ.items() if k not in ("MEMEXT_WORKSPACE", "MEMEXT_CONFIG")}
        env |= {"OPENAI_API_KEY": model.api_key, "OPENAI_BASE_URL": model.base_url}
        out = subprocess.run([sys.executable, "-c", code], cwd=example_workspace, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        chat, responses = out.stdout.strip().splitlines()
        assert "New food: 55 g per day" in chat and re.search(r"\[memory/2026-10-09\.md:\d+-\d+\]$", chat)
        assert "Miguel's birthday is 3 December" in responses and re.search(r"\[memory/2026-11-02\.md:\d+-\d+\]$", responses)
        # Two turns per API; each request carried the strict definitions of its API.
        assert [route for route, _ in model.requests] == ["completions", "completions", "responses", "responses"]
        # The key is the chat model's: with provider = "auto" and no consent
        # (allow_remote), no note went to the embeddings endpoint.
        assert model.embeddings.requests("openai.embeddings") == []
        for route, body in model.requests:
            api = "chat" if route == "completions" else "responses"
            sent, expected = body["tools"], openai_tools(api)
            if api == "chat":
                assert [t["function"]["name"] for t in sent] == [t["function"]["name"] for t in expected]
                assert [_shape(t["function"]["parameters"]) for t in sent] == [_shape(t["function"]["parameters"]) for t in expected]
                assert all(t["type"] == "function" and t["function"]["strict"] is True for t in sent)
            else:
                assert [(t["type"], t["name"], _shape(t["parameters"]), t["strict"]) for t in sent] == [
                    (t["type"], t["name"], _shape(t["parameters"]), t["strict"]) for t in expected
                ]
        # The tool results went back to the model as the API expects them.
        tool_message = model.requests[1][1]["messages"][-1]
        assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_1"
        output = model.requests[3][1]["input"][-1]
        assert output["type"] == "function_call_output" and output["call_id"] == "call_1" and '"results"' in output["output"]
