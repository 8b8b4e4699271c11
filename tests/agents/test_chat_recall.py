"""Recall before each turn of an OpenAI loop (engine/agents/chat_recall.py):
the real ``openai`` client against a scripted model on 127.0.0.1
(tests/chat_server.py), over a real index of the example memory embedded
with the real GGUF model."""

from __future__ import annotations

import json
import re

import pytest
from adapter_helpers import shared_example_index
from chat_server import ChatModelServer
from openai import OpenAI

from memext.engine import MemoryTools, ToolError, with_recall
from memext.engine.agents.chat_recall import is_recall_message

pytestmark = pytest.mark.model  # the real MiniLM index (adapter_helpers)

FOOD = "How much food does Biscuit get per day?"
ABSENT = "What is the wifi password at the cabin in Lapland?"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    idx, _ = shared_example_index(tmp_path_factory)
    yield idx
    idx.close()


@pytest.fixture
def tools(index):
    t = MemoryTools(lambda _id: index, ["ex"])
    yield t


def test_the_block_goes_just_before_the_latest_user_message(index):
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "Hi!"},
        {"role": "user", "content": FOOD},
    ]
    out = with_recall(messages, index)
    assert out[:3] == messages[:3] and out[-1] == messages[-1]
    block = out[3]
    assert block["role"] == "user" and is_recall_message(block)
    assert "55 g" in block["content"] and re.search(r'cite="memory/2026-10-09\.md:\d+(-\d+)?"', block["content"])
    assert messages[3]["content"] == FOOD and len(messages) == 4  # the caller's list is not changed


def test_earlier_blocks_are_taken_out_so_one_block_rides_along(index):
    first = with_recall([{"role": "user", "content": FOOD}], index)
    history = first + [{"role": "assistant", "content": "55 g."}, {"role": "user", "content": ABSENT}]
    out = with_recall(history, index)
    assert not any(is_recall_message(m) for m in out)  # nothing on the wifi: no block, and the old one is gone
    assert [m["content"] for m in out] == [FOOD, "55 g.", ABSENT]


def test_responses_input_forms(index):
    out = with_recall(FOOD, index)  # a plain string input is one user message
    assert [m["role"] for m in out] == ["user", "user"] and is_recall_message(out[0]) and out[1]["content"] == FOOD
    parts = [{"role": "user", "content": [{"type": "input_text", "text": FOOD}]}]
    out = with_recall(parts, index)
    assert is_recall_message(out[0]) and out[1] is parts[0]


def test_a_pasted_block_is_kept_and_recalls_nothing_more(index):
    block = with_recall(FOOD, index)[0]["content"]
    pasted = [{"role": "user", "content": block}]
    assert with_recall(pasted, index) == pasted
    later = pasted + [{"role": "assistant", "content": "Noted."}, {"role": "user", "content": "thanks"}]
    assert with_recall(later, index) == later


def _run(tools: MemoryTools, name: str, arguments: str) -> str:
    try:
        return json.dumps(tools.call_tool(name, arguments))
    except ToolError as exc:
        return json.dumps({"error": str(exc)})


def test_chat_completions_loop_with_recall_before_each_turn(tools):
    with ChatModelServer() as model:
        client = OpenAI(api_key=model.api_key, base_url=model.base_url)
        messages: list = []
        answers = []
        for question in (FOOD, ABSENT):
            messages.append({"role": "user", "content": question})
            messages = with_recall(messages, tools)
            while True:
                msg = client.chat.completions.create(model="m", messages=messages, tools=tools.openai_tools("chat")).choices[0].message
                messages.append(msg.model_dump(exclude_none=True))
                if not msg.tool_calls:
                    break
                for call in msg.tool_calls:
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": _run(tools, call.function.name, call.function.arguments)}
                    )
            answers.append(msg.content)
    # Turn 1: recall held the answer: one request, no tool call, the recalled citation.
    assert "55 g per day" in answers[0] and re.search(r"\[memory/2026-10-09\.md:\d+(-\d+)?\]$", answers[0])
    sent = [body["messages"] for _, body in model.requests]
    assert len(sent) == 3
    assert is_recall_message(sent[0][0]) and sent[0][1]["content"] == FOOD
    # Turn 2: nothing recalled (and turn 1's block left out): the model searched, and memory said nothing.
    assert not any(is_recall_message(m) for m in sent[1]) and sent[1][-1]["content"] == ABSENT
    assert sent[2][-1]["role"] == "tool" and '"results":[]' in sent[2][-1]["content"].replace(" ", "")
    assert answers[1].startswith("I found nothing in memory")


def test_responses_loop_with_recall_before_each_turn(tools):
    with ChatModelServer() as model:
        client = OpenAI(api_key=model.api_key, base_url=model.base_url)
        items: list = []
        answers = []
        for question in (ABSENT, FOOD):
            items = with_recall(items + [{"role": "user", "content": question}], tools)
            while True:
                response = client.responses.create(model="m", input=items, tools=tools.openai_tools("responses"))
                items += response.output  # SDK objects: with_recall reads them as they are
                calls = [item for item in response.output if item.type == "function_call"]
                if not calls:
                    break
                items += [{"type": "function_call_output", "call_id": c.call_id, "output": _run(tools, c.name, c.arguments)} for c in calls]
            answers.append(response.output_text)
    assert answers[0].startswith("I found nothing in memory")
    assert "55 g per day" in answers[1] and re.search(r"\[memory/2026-10-09\.md:\d+(-\d+)?\]$", answers[1])
    sent = [body["input"] for _, body in model.requests]
    assert len(sent) == 3  # a search for the first question; the second answered from recall
    assert not any(i.get("role") == "user" and i["content"].startswith("<memories>") for i in sent[0])
    assert sent[2][-2]["content"].startswith("<memories>") and sent[2][-1]["content"] == FOOD
