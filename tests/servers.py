"""A real HTTP server on 127.0.0.1 that speaks the embedding APIs' wire formats.

:class:`EmbeddingAPIServer` answers what the remote providers send:

- OpenAI: ``POST /embeddings`` (float or base64 vectors, ``data`` shuffled
  so clients must order by ``index``), ``POST /files`` (multipart upload),
  ``GET /files/{id}/content``, ``POST /batches``, ``GET /batches/{id}``,
  ``POST /batches/{id}/cancel``; errors in OpenAI's JSON shape; Bearer auth.
- Gemini: ``POST .../models/{model}:embedContent`` and
  ``:batchEmbedContents`` (at most 100 requests), ``x-goog-api-key`` auth,
  errors in Google's JSON shape.

Routes match on their tail, so one server can stand behind any base URL
prefix (like a gateway that serves both APIs). Vectors are a deterministic
function of the text (hashed words, different per API), so texts sharing
words are similar and a test can compute the expected vector with
:func:`text_vector`. Faults (status, body, ``Retry-After``, delay, count)
are programmed per route; every request is logged. Nothing here is a test
double of the client: the real ``openai`` client and ``httpx2`` talk to it
over TCP.

Bad behaviours, also per fault: ``vectors`` corrupts a normal
answer ("nan", "inf", "zero", "dims:N"); ``trickle_s`` sends the answer one
byte at a time with that pause (``trickle_headers`` from the status line
on, else after the headers); ``echo_request`` makes an error message quote
the request's headers, API key included, as a careless gateway would.

(Over 500 lines: one fake of two vendors' wire formats with their faults;
split up, each half would repeat the routing, logging and fault plumbing.)
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import hashlib
import json
import math
import os
import random
import re
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

OPENAI_KEY = "sk-test-openai"
GEMINI_KEY = "gemini-test-key"
OPENAI_MODELS = ("text-embedding-3-small", "text-embedding-3-large")
GEMINI_MODELS = ("gemini-embedding-001", "text-embedding-004")


def two_agents_cli(tmp_path: Path, alpha: Path, base_url: str, remote: str) -> Callable[..., subprocess.Popen]:
    """A config of two agents on one OpenAI-compatible server at
    ``base_url``: ``alpha`` on the given workspace, ``beta`` on one of its
    own holding "The grey heron nests by the Severn.", with ``remote`` (a
    line of ``[memory_search.remote]``, a deadline say) and their indexes
    under ``tmp_path/index``. Returns what starts ``memext ARGS`` under that
    config as a user would (its own process, output piped as text)."""
    beta = tmp_path / "beta"
    beta.mkdir()
    (beta / "MEMORY.md").write_text("# Memory\n\n- The grey heron nests by the Severn.\n", encoding="utf-8")
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[memory_search]\nprovider = "openai"\n[memory_search.remote]\nbase_url = "{base_url}"\n{remote}\n'
        f'[memory_search.store]\npath = "{tmp_path}/index/{{agent_id}}.sqlite"\n'
        f'[[agents]]\nid = "alpha"\nworkspace = "{alpha}"\n[[agents]]\nid = "beta"\nworkspace = "{beta}"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "MEMEXT_CONFIG": str(cfg), "OPENAI_API_KEY": OPENAI_KEY}

    def memext(*args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "memext", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    return memext


def text_vector(text: str, dims: int, salt: str) -> list[float]:
    """The server's embedding: signed hashed words plus a small constant part."""
    v = [0.0] * dims
    for w in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(f"{salt}:{w}".encode(), digest_size=8).digest(), "big")
        v[1 + h % (dims - 1)] += 1.0 if (h >> 40) & 1 else -1.0
    v[0] = 0.05  # never the zero vector
    return v


def estimate_tokens(text: str) -> int:
    """The server's token count (chars/4, like the client's estimate for ASCII)."""
    return max(1, math.ceil(len(text) / 4))


@dataclass
class Logged:
    """One request as the server saw it."""

    route: str
    method: str
    path: str
    at: float
    inputs: list[str] = field(default_factory=list)
    task_types: list[str] = field(default_factory=list)
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    #: The parsed JSON body of an embeddings request.
    body: Any = None


@dataclass
class Fault:
    """A programmed answer for requests whose route starts with ``route``.

    ``status`` None means "answer normally, after ``delay_s``".
    ``times`` None means "until cleared".
    """

    route: str
    status: int | None = 500
    message: str = "The server had an error while processing your request."
    retry_after: str | None = None
    delay_s: float = 0.0
    times: int | None = 1
    body: Any = None
    #: Corrupt a normal answer's vectors: "nan", "inf", "zero" (in the first
    #: vector) or "dims:N" (every vector cut or padded to N values).
    vectors: str | None = None
    #: Send the answer one byte at a time, this many seconds apart.
    trickle_s: float = 0.0
    #: Trickle from the status line on (else only the body).
    trickle_headers: bool = False
    #: Quote the request's headers (the API key among them) in the error message.
    echo_request: bool = False


@dataclass
class _Batch:
    id: str
    input_file_id: str
    endpoint: str
    metadata: dict
    created_at: int
    status: str = "validating"
    polls: int = 0
    outcome: str = "completed"  # "completed", "failed", "never"
    lines: list[dict] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: dict | None = None
    completed: int = 0
    failed: int = 0


class EmbeddingAPIServer:
    """OpenAI- and Gemini-speaking HTTP server; use as a context manager."""

    def __init__(
        self,
        *,
        openai_dims: int = 64,
        gemini_dims: int = 48,
        float_only: bool = False,
        max_input_tokens: int = 8192,
        max_request_tokens: int = 300_000,
        max_request_inputs: int = 2048,
        batch_polls_to_finish: int = 2,
        seed: int = 7,
    ):
        self.openai_dims = openai_dims
        self.gemini_dims = gemini_dims
        #: Like many OpenAI-compatible servers: ignore encoding_format, send floats.
        self.float_only = float_only
        self.max_input_tokens = max_input_tokens
        self.max_request_tokens = max_request_tokens
        self.max_request_inputs = max_request_inputs
        self.batch_polls_to_finish = batch_polls_to_finish
        self.log: list[Logged] = []
        self.faults: list[Fault] = []
        #: Outcomes for the next batches created ("failed", "never"); then "completed".
        self.batch_outcomes: list[str] = []
        self.files: dict[str, dict] = {}
        #: Texts embedded by finished batch jobs, in input-file order.
        self.batch_inputs: list[str] = []
        self.batches: dict[str, _Batch] = {}
        self.in_flight: dict[str, int] = {}
        self.max_in_flight: dict[str, int] = {}
        self._rng = random.Random(seed)
        self._ids = 0
        self._lock = threading.RLock()  # batch completion embeds under it
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- lifecycle -----------------------------------------------------------

    def start(self, port: int = 0) -> "EmbeddingAPIServer":
        server = self

        class Handler(_Handler):
            api = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="test-embedding-api", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering: new connections are refused from now on."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "EmbeddingAPIServer":
        return self.start() if self._httpd is None else self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    @property
    def gemini_base_url(self) -> str:
        return self.url + "/v1beta"

    # -- programming and inspection --------------------------------------------

    def add_fault(self, route: str, status: int | None = 500, message: str | None = None, **kw) -> Fault:
        fault = Fault(route, status, message or Fault.message, **kw)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def requests(self, route: str | None = None) -> list[Logged]:
        """Logged requests whose route starts with ``route`` (all when None)."""
        with self._lock:
            return [r for r in self.log if route is None or r.route.startswith(route)]

    def inputs(self, route: str) -> list[str]:
        """Every text successfully embedded through ``route`` (200 answers only)."""
        return [t for r in self.requests(route) if r.status == 200 for t in r.inputs]

    def reset_log(self) -> None:
        with self._lock:
            self.log.clear()
            self.batch_inputs.clear()

    def openai_vector(self, text: str) -> list[float]:
        return text_vector(text, self.openai_dims, "openai")

    def gemini_vector(self, text: str) -> list[float]:
        return text_vector(text, self.gemini_dims, "gemini")

    # -- internals used by the handler -------------------------------------------

    def _new_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}-{self._ids:05d}{self._rng.randrange(16**6):06x}"

    def _take_fault(self, route: str) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if route.startswith(f.route) and (f.times is None or f.times > 0):
                    if f.times is not None:
                        f.times -= 1
                    return f
        return None


class _Handler(BaseHTTPRequestHandler):
    api: EmbeddingAPIServer
    protocol_version = "HTTP/1.0"  # one request per connection: stop() really stops

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    # -- plumbing ----------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        route, args = self._route(method, self.path.split("?")[0])
        entry = Logged(route, method, self.path, time.monotonic(), headers={k.lower(): v for k, v in self.headers.items()})
        with self.api._lock:
            self.api.log.append(entry)
            self.api.in_flight[route] = self.api.in_flight.get(route, 0) + 1
            self.api.max_in_flight[route] = max(self.api.max_in_flight.get(route, 0), self.api.in_flight[route])
        self._fault: Fault | None = None
        try:
            status, payload, headers = self._answer(route, args, raw, entry)
            entry.status = status
            fault = self._fault
            if fault is not None and fault.vectors and status == 200:
                payload = _corrupt(payload, fault.vectors)
            self._send(status, payload, headers, fault)
        finally:
            with self.api._lock:
                self.api.in_flight[route] -= 1

    def _route(self, method: str, path: str) -> tuple[str, tuple]:
        m = re.search(r"/models/([^/:]+):(embedContent|batchEmbedContents)$", path)
        if m and method == "POST":
            return f"gemini.{m.group(2)}", (m.group(1),)
        for pattern, meth, name in (
            (r"/embeddings$", "POST", "openai.embeddings"),
            (r"/files$", "POST", "openai.files.create"),
            (r"/files/([^/]+)/content$", "GET", "openai.files.content"),
            (r"/batches$", "POST", "openai.batches.create"),
            (r"/batches/([^/]+)/cancel$", "POST", "openai.batches.cancel"),
            (r"/batches/([^/]+)$", "GET", "openai.batches.retrieve"),
        ):
            m = re.search(pattern, path)
            if m and method == meth:
                return name, m.groups()
        return "unknown", ()

    def _send(self, status: int, payload: Any, headers: dict[str, str], fault: "Fault | None" = None) -> None:
        if isinstance(payload, bytes):
            data, ctype = payload, "application/octet-stream"
        else:
            data, ctype = json.dumps(payload).encode(), "application/json"
        trickle = fault.trickle_s if fault is not None else 0.0
        if trickle and fault is not None and fault.trickle_headers:
            head = f"HTTP/1.0 {status} OK\r\ncontent-type: {ctype}\r\ncontent-length: {len(data)}\r\n\r\n".encode()
            self._trickle(head + data, trickle)
            return
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if trickle:
            self.wfile.flush()
            self._trickle(data, trickle)
        else:
            self.wfile.write(data)

    def _trickle(self, data: bytes, pause: float) -> None:
        """One byte, a pause, the next byte... until done or the client leaves."""
        try:
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                time.sleep(pause)
        except OSError:
            pass  # the client gave up: what a deadline is for

    # -- behaviour -------------------------------------------------------------------

    def _answer(self, route: str, args: tuple, raw: bytes, entry: Logged) -> tuple[int, Any, dict]:
        if route == "unknown":
            return 404, {"error": {"message": f"Invalid URL ({self.command} {self.path})", "type": "invalid_request_error"}}, {}
        gemini = route.startswith("gemini.")
        if gemini:
            denied = self._gemini_auth()
        else:
            denied = self._openai_auth()
        if denied:
            return denied
        if gemini and raw:
            try:  # log what was asked even when a fault answers
                body = entry.body = json.loads(raw)
                reqs = body.get("requests") or [body]
                entry.inputs = [p.get("text", "") for r in reqs for p in (r.get("content") or {}).get("parts", [])]
                entry.task_types = [r.get("taskType", "") for r in reqs]
            except ValueError:
                pass
        elif route == "openai.embeddings" and raw:
            try:
                entry.body = json.loads(raw)
                inp = entry.body.get("input")
                entry.inputs = [inp] if isinstance(inp, str) else list(inp or [])
            except ValueError:
                pass
        fault = self.api._take_fault(route)
        self._fault = fault
        if fault is not None:
            if fault.delay_s:
                time.sleep(fault.delay_s)
            if fault.status is not None:
                headers = {"retry-after": fault.retry_after} if fault.retry_after is not None else {}
                if fault.body is not None:
                    return fault.status, fault.body, headers
                message = fault.message
                if fault.echo_request:
                    message += " (request headers: " + "; ".join(f"{k}: {v}" for k, v in self.headers.items()) + ")"
                if gemini:
                    return fault.status, _gemini_error(fault.status, message), headers
                return fault.status, _openai_error(message, "server_error" if fault.status >= 500 else "invalid_request_error"), headers
        handler = getattr(self, "_" + route.replace(".", "_"))
        return handler(args, raw)

    # OpenAI ------------------------------------------------------------------------

    def _openai_auth(self) -> tuple[int, Any, dict] | None:
        auth = self.headers.get("authorization", "")
        if auth != f"Bearer {OPENAI_KEY}":
            shown = auth.removeprefix("Bearer ")[:6] + "****"
            return (
                401,
                _openai_error(
                    f"Incorrect API key provided: {shown}. You can find your API key at https://platform.openai.com/account/api-keys.",
                    "invalid_request_error",
                    code="invalid_api_key",
                ),
                {},
            )
        return None

    def _embed_openai(self, body: dict) -> tuple[int, Any]:
        model = body.get("model")
        if model not in OPENAI_MODELS:
            return 404, _openai_error(
                f"The model `{model}` does not exist or you do not have access to it.", "invalid_request_error", code="model_not_found"
            )
        inp = body.get("input")
        inputs = [inp] if isinstance(inp, str) else inp
        if not isinstance(inputs, list) or not inputs or any(not isinstance(t, str) or t == "" for t in inputs):
            return 400, _openai_error(
                "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
                "invalid_request_error",
            )
        if len(inputs) > self.api.max_request_inputs:
            return 400, _openai_error(
                f"'$.input' is too long: at most {self.api.max_request_inputs} inputs per request", "invalid_request_error"
            )
        counts = [estimate_tokens(t) for t in inputs]
        if max(counts) > self.api.max_input_tokens:
            n = max(counts)
            return 400, _openai_error(
                f"This model's maximum context length is {self.api.max_input_tokens} tokens, however you requested {n} tokens "
                f"({n} in your prompt; 0 for the completion). Please reduce your prompt; or completion length.",
                "invalid_request_error",
            )
        if sum(counts) > self.api.max_request_tokens:
            return 400, _openai_error(
                f"Requested {sum(counts)} tokens, max {self.api.max_request_tokens} tokens per request",
                "invalid_request_error",
                code="max_tokens_per_request",
            )
        b64 = body.get("encoding_format") == "base64" and not self.api.float_only
        data = []
        for i, t in enumerate(inputs):
            vec = self.api.openai_vector(t)
            emb: Any = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode() if b64 else vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        with self.api._lock:
            self.api._rng.shuffle(data)  # clients must order by index
        usage = {"prompt_tokens": sum(counts), "total_tokens": sum(counts)}
        return 200, {"object": "list", "data": data, "model": model, "usage": usage}

    def _openai_embeddings(self, args: tuple, raw: bytes) -> tuple[int, Any, dict]:
        try:
            body = json.loads(raw)
        except ValueError:
            return 400, _openai_error("We could not parse the JSON body of your request.", "invalid_request_error"), {}
        status, payload = self._embed_openai(body)
        return status, payload, {}

    def _openai_files_create(self, args: tuple, raw: bytes) -> tuple[int, Any, dict]:
        ctype = self.headers.get("content-type", "")
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(f"content-type: {ctype}\r\n\r\n".encode() + raw)
        fields: dict[str, Any] = {}
        filename = "upload"
        for part in msg.iter_parts() if msg.is_multipart() else []:
            name = part.get_param("name", header="content-disposition")
            if part.get_filename():
                filename = part.get_filename()
            fields[name] = part.get_payload(decode=True)
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return 400, _openai_error("Invalid file upload: 'purpose' must be 'batch' and 'file' is required", "invalid_request_error"), {}
        fid = self.api._new_id("file")
        content = fields["file"]
        now = int(time.time())
        with self.api._lock:
            self.api.files[fid] = {"content": content, "filename": filename, "purpose": "batch"}
        return (
            200,
            {
                "object": "file",
                "id": fid,
                "bytes": len(content),
                "created_at": now,
                "filename": filename,
                "purpose": "batch",
                "status": "processed",
                "expires_at": None,
                "status_details": None,
            },
            {},
        )

    def _openai_files_content(self, args: tuple, raw: bytes) -> tuple[int, Any, dict]:
        f = self.api.files.get(args[0])
        if f is None:
            return 404, _openai_error(f"No such File object: {args[0]}", "invalid_request_error"), {}
        return 200, f["content"], {}

    def _openai_batches_create(self, args: tuple, raw: bytes) -> tuple[int, Any, dict]:
        body = json.loads(raw)
        fid = body.get("input_file_id")
        if fid not in self.api.files:
            return 400, _openai_error(f"Invalid 'input_file_id': '{fid}'. File not found.", "invalid_request_error"), {}
        if body.get("endpoint") != "/v1/embeddings" or body.get("completion_window") != "24h":
            return 400, _openai_error("Invalid endpoint or completion_window", "invalid_request_error"), {}
        with self.api._lock:
            outcome = self.api.batch_outcomes.pop(0) if self.api.batch_outcomes else "completed"
        batch = _Batch(self.api._new_id("batch"), fid, body["endpoint"], body.get("metadata") or {}, int(time.time()), outcome=outcome)
        lines = self.api.files[fid]["content"].decode("utf-8").splitlines()
        batch.lines = [json.loads(line) for line in lines if line.strip()]
        ids = [line.get("custom_id") for line in batch.lines]
        if len(set(ids)) != len(ids):
            batch.outcome = "failed"
            batch.errors = {
                "object": "list",
                "data": [{"code": "duplicate_custom_id", "message": "The custom_id values must be unique.", "param": None, "line": None}],
            }
        with self.api._lock:
            self.api.batches[batch.id] = batch
        return 200, _batch_json(batch), {}

    def _openai_batches_retrieve(self, args: tuple, raw: bytes) -> tuple[int, Any, dict]:
        batch = self.api.batches.get(args[0])
        if batch is None:
            return 404, _openai_error(f"No batch found with id '{args[0]}'.", "invalid_request_error"), {}
        with self.api._lock:
            self._advance(batch)
        return 200, _batch_json(batch), {}

    def _openai_batches_cancel(self, args: tuple, raw: bytes) -> tuple[int, Any, dict]:
        batch = self.api.batches.get(args[0])
        if batch is None:
            return 404, _openai_error(f"No batch found with id '{args[0]}'.", "invalid_request_error"), {}
        with self.api._lock:
            batch.status = "cancelling"
            batch.outcome = "cancelled"
        return 200, _batch_json(batch), {}

    def _advance(self, batch: _Batch) -> None:
        """One poll moves a batch along: validating -> in_progress -> ended."""
        if batch.status in ("completed", "failed", "cancelled", "expired"):
            return
        if batch.status == "cancelling":
            batch.status = "cancelled"
            return
        batch.polls += 1
        if batch.outcome == "failed" and batch.polls >= 1:
            batch.status = "failed"
            if batch.errors is None:
                batch.errors = {
                    "object": "list",
                    "data": [
                        {
                            "code": "invalid_request",
                            "message": "The batch failed: the input file could not be processed.",
                            "param": None,
                            "line": None,
                        }
                    ],
                }
            return
        if batch.outcome == "never" or batch.polls < self.api.batch_polls_to_finish:
            batch.status = "in_progress"
            batch.completed = len(batch.lines) // 2 if batch.outcome != "never" else 0
            return
        self._finish(batch)

    def _finish(self, batch: _Batch) -> None:
        out, err = [], []
        for line in batch.lines:
            status, payload = self._embed_openai(line.get("body") or {})
            entry = {
                "id": f"batch_req_{self.api._rng.randrange(16**8):08x}",
                "custom_id": line.get("custom_id"),
                "response": {"status_code": status, "request_id": f"req_{self.api._rng.randrange(16**8):08x}", "body": payload},
                "error": None,
            }
            (out if status == 200 else err).append(entry)
            if status == 200:
                self.api.batch_inputs.append((line.get("body") or {}).get("input"))
        self.api._rng.shuffle(out)  # output order is not input order
        batch.completed, batch.failed = len(out), len(err)
        for rows, attr in ((out, "output_file_id"), (err, "error_file_id")):
            if rows:
                fid = f"file-out{self.api._rng.randrange(16**8):08x}"
                self.api.files[fid] = {
                    "content": "".join(json.dumps(r) + "\n" for r in rows).encode(),
                    "filename": "batch_output.jsonl",
                    "purpose": "batch_output",
                }
                setattr(batch, attr, fid)
        batch.status = "completed"

    # Gemini -------------------------------------------------------------------------

    def _gemini_auth(self) -> tuple[int, Any, dict] | None:
        key = self.headers.get("x-goog-api-key")
        if key is None:
            return (
                403,
                _gemini_error(
                    403,
                    "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
                ),
                {},
            )
        if key != GEMINI_KEY:
            return 400, _gemini_error(400, "API key not valid. Please pass a valid API key."), {}
        return None

    def _gemini_model(self, model: str, method: str) -> tuple[int, Any, dict] | None:
        if model not in GEMINI_MODELS:
            return (
                404,
                _gemini_error(
                    404,
                    f"models/{model} is not found for API version v1beta, or is not supported for {method}. Call ListModels to see the list of available models and their supported methods.",
                ),
                {},
            )
        return None

    def _gemini_one(self, model: str, req: dict) -> list[float] | str:
        if req.get("model") not in (None, f"models/{model}"):
            return f"Model name in request ({req.get('model')}) must match the model in the URL (models/{model})"
        parts = (req.get("content") or {}).get("parts") or []
        text = " ".join(p.get("text", "") for p in parts)
        if not text:
            return "* EmbedContentRequest.content: contents is not specified"
        return self.api.gemini_vector(text)

    def _gemini_embedContent(self, args: tuple, raw: bytes) -> tuple[int, Any, dict]:
        bad = self._gemini_model(args[0], "embedContent")
        if bad:
            return bad
        vec = self._gemini_one(args[0], json.loads(raw))
        if isinstance(vec, str):
            return 400, _gemini_error(400, vec), {}
        return 200, {"embedding": {"values": vec}}, {}

    def _gemini_batchEmbedContents(self, args: tuple, raw: bytes) -> tuple[int, Any, dict]:
        bad = self._gemini_model(args[0], "batchEmbedContents")
        if bad:
            return bad
        reqs = json.loads(raw).get("requests") or []
        if len(reqs) > 100:
            return 400, _gemini_error(400, "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch"), {}
        out = []
        for r in reqs:
            vec = self._gemini_one(args[0], r)
            if isinstance(vec, str):
                return 400, _gemini_error(400, vec), {}
            out.append({"values": vec})
        return 200, {"embeddings": out}, {}


def _corrupt(payload: Any, how: str) -> Any:
    """A normal embeddings answer (OpenAI or Gemini shape) with bad vectors."""
    if isinstance(payload, dict) and "data" in payload:  # OpenAI, floats or base64
        items = sorted(payload["data"], key=lambda d: d["index"])
        for item in items:
            raw = item["embedding"]
            b64 = isinstance(raw, str)
            vec = list(struct.unpack(f"<{len(base64.b64decode(raw)) // 4}f", base64.b64decode(raw))) if b64 else list(raw)
            vec = _bad_vector(vec, how, first=item is items[0])
            item["embedding"] = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode() if b64 else vec
        return payload
    if isinstance(payload, dict) and "embedding" in payload:  # Gemini embedContent
        payload["embedding"]["values"] = _bad_vector(payload["embedding"]["values"], how, first=True)
    elif isinstance(payload, dict) and "embeddings" in payload:  # Gemini batchEmbedContents
        for i, e in enumerate(payload["embeddings"]):
            e["values"] = _bad_vector(e["values"], how, first=i == 0)
    return payload


def _bad_vector(vec: list[float], how: str, *, first: bool) -> list[float]:
    if how.startswith("dims:"):
        n = int(how.split(":")[1])
        return (vec + [0.5] * n)[:n]
    if not first:
        return vec
    if how == "nan":
        return vec[:1] + [float("nan")] + vec[2:]
    if how == "inf":
        return vec[:1] + [float("inf")] + vec[2:]
    if how == "zero":
        return [0.0] * len(vec)
    raise ValueError(f"unknown corruption {how!r}")


def _openai_error(message: str, type_: str, code: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def _gemini_error(code: int, message: str) -> dict:
    return {"error": {"code": code, "message": message, "status": _GOOGLE_STATUS.get(code, "UNKNOWN")}}


def _batch_json(b: _Batch) -> dict:
    now = int(time.time())
    return {
        "id": b.id,
        "object": "batch",
        "endpoint": b.endpoint,
        "errors": b.errors,
        "input_file_id": b.input_file_id,
        "completion_window": "24h",
        "status": b.status,
        "output_file_id": b.output_file_id,
        "error_file_id": b.error_file_id,
        "created_at": b.created_at,
        "in_progress_at": now if b.status != "validating" else None,
        "expires_at": b.created_at + 86400,
        "finalizing_at": None,
        "completed_at": now if b.status == "completed" else None,
        "failed_at": now if b.status == "failed" else None,
        "expired_at": None,
        "cancelling_at": None,
        "cancelled_at": now if b.status == "cancelled" else None,
        "request_counts": {"total": len(b.lines), "completed": b.completed, "failed": b.failed},
        "metadata": b.metadata,
    }


# -- helpers for the remote-provider tests -----------------------------------------


def unit(v) -> Any:
    import numpy as np

    a = np.asarray(v, dtype=np.float32)
    return a / np.linalg.norm(a)


def stored_vectors(index) -> dict:
    """Chunk text -> stored unit vector, read from an index: a MemoryIndex
    (any store backend) or an index file."""
    from memext.engine.store import open_store
    from memext.engine.store.sqlite.store import Store

    store = open_store(index.agent, index.db_path) if hasattr(index, "agent") else Store(index)
    try:
        ids = range(1, 100_000)  # every rowid a test index can hold, through the interface alone
        rows = store.chunks(ids)
        return {rows[i].text: v for i, v in store.chunk_vectors(list(rows)).items()}
    finally:
        store.close()
