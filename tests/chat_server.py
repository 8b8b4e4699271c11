"""A real HTTP server on 127.0.0.1 that plays a tool-calling chat model over
OpenAI's Chat Completions (``POST /chat/completions``) and Responses
(``POST /responses``) wire formats.

TEST DOUBLE of the model, not of the client: the README's agent loops run
unchanged with the real ``openai`` client pointed at it (``OPENAI_BASE_URL``),
as no real model can be asked for the same answer on cue. Its script: asked
a question, it calls ``memory_search`` once with the question as the query
(every argument present, as strict mode requires); given the tool's result,
it answers with the best-matching line of the first hit and its citation.
When the turn carries a block of recalled memories (``with_recall``), it
answers from the block at once, with the recalled memory's citation, and
calls no tool.
Every request is logged, so a test can check the tool definitions the loop
sent. Embedding requests (``POST /embeddings``: an OpenAI key makes memext
embed with OpenAI too) go on to the :class:`~servers.EmbeddingAPIServer`
beside it, so one base URL serves both, as a gateway would.
"""

from __future__ import annotations

import html
import json
import re
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from servers import OPENAI_KEY, EmbeddingAPIServer

SEARCH_ARGUMENTS = {"max_results": 3, "min_score": None, "max_lines": None, "after": None, "before": None, "agent": None}


def answer_from(tool_output: str, question: str) -> str:
    """The model's answer: the first hit's line sharing most words with the
    question, and the hit's citation (or what the tool said went wrong)."""
    result = json.loads(tool_output)
    hits = result.get("results") or []
    if not hits:
        return f"I found nothing in memory ({result.get('error') or result.get('notice') or 'no results'})."
    words = {w for w in re.findall(r"\w+", question.lower()) if len(w) > 3}
    lines = [ln.strip(" -") for ln in hits[0]["snippet"].splitlines() if ln.strip()]
    best = max(lines, key=lambda ln: len(words & set(re.findall(r"\w+", ln.lower()))))
    return f"{best} [{hits[0]['citation']}]"


def question_of(items: list) -> str:
    """The latest user message that is not a recalled-memory block."""
    asked = [i["content"] for i in items if i.get("role") == "user" and not i["content"].startswith("<memories>")]
    return asked[-1]


def recalled_answer(items: list, question: str) -> str | None:
    """The answer from a recalled block in the turn: the recalled line
    sharing most words with the question, and its citation."""
    blocks = [i["content"] for i in items if i.get("role") == "user" and i["content"].startswith("<memories>")]
    if not blocks:
        return None
    memories = re.findall(r'<memory cite="([^"]+)"[^>]*>(.*?)</memory>', blocks[-1], re.S)
    words = {w for w in re.findall(r"\w+", question.lower()) if len(w) > 3}
    scored = [
        (len(words & set(re.findall(r"\w+", ln.lower()))), ln.strip(" -"), cite)
        for cite, text in memories
        for ln in html.unescape(text).splitlines()
    ]
    _, line, cite = max(scored)
    return f"{line} [{html.unescape(cite)}]"


class ChatModelServer:
    """The scripted model; use as a context manager."""

    api_key = OPENAI_KEY

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict]] = []
        self.embeddings = EmbeddingAPIServer()
        self._httpd: ThreadingHTTPServer | None = None

    def __enter__(self) -> "ChatModelServer":
        server = self
        self.embeddings.start()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                route = self.path.rsplit("/", 1)[-1]
                if route == "embeddings":
                    self._forward(raw)
                    return
                body = json.loads(raw or b"{}")
                server.requests.append((route, body))
                if self.headers.get("authorization", "") != f"Bearer {server.api_key}":
                    self._send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
                elif route == "completions":
                    self._send(200, _chat(body))
                elif route == "responses":
                    self._send(200, _responses(body))
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

            def _forward(self, raw: bytes) -> None:
                headers = {"content-type": "application/json", "authorization": self.headers.get("authorization", "")}
                req = urllib.request.Request(f"{server.embeddings.openai_base_url}/embeddings", raw, headers, method="POST")
                try:
                    with urllib.request.urlopen(req, timeout=30) as answer:
                        status, data = answer.status, answer.read()
                except urllib.error.HTTPError as exc:
                    status, data = exc.code, exc.read()
                self._send(status, json.loads(data))

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        self.embeddings.stop()

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"


def _chat(body: dict) -> dict:
    messages = body["messages"]
    question = question_of(messages)
    last = messages[-1]
    recalled = recalled_answer(messages, question) if last["role"] == "user" else None
    if recalled is not None:
        message: dict[str, Any] = {"role": "assistant", "content": recalled}
        finish = "stop"
    elif last["role"] == "tool":
        message = {"role": "assistant", "content": answer_from(last["content"], question)}
        finish = "stop"
    else:
        arguments = json.dumps({"query": question, **SEARCH_ARGUMENTS})
        call = {"id": "call_1", "type": "function", "function": {"name": "memory_search", "arguments": arguments}}
        message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _responses(body: dict) -> dict:
    items = body["input"]
    question = question_of(items)
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    recalled = recalled_answer(items, question) if items[-1].get("role") == "user" else None
    if recalled is not None or (outputs and items[-1] is outputs[-1]):
        text = recalled if recalled is not None else answer_from(outputs[-1]["output"], question)
        output = [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ]
    else:
        arguments = json.dumps({"query": question, **SEARCH_ARGUMENTS})
        output = [
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "memory_search",
                "arguments": arguments,
                "status": "completed",
            }
        ]
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": body["model"],
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": body.get("tools", []),
    }
