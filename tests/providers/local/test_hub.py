"""hf: downloads against a real HTTP server on 127.0.0.1 that speaks Range."""

from __future__ import annotations

import http.server
import os
import re
import socket
import threading
from pathlib import Path

import pytest
from conftest import MODEL_PATH, make_agent

from memext.engine.errors import ProviderError
from memext.engine.paths import app_paths
from memext.engine.providers import local_model_ready
from memext.engine.providers.local import hub

PAYLOAD = os.urandom(3 * 1024 * 1024 + 123)


class HubServer:
    """Serves ``/{owner}/{repo}/resolve/{rev}/{file}`` with HTTP Range support.

    ``cut_after``: bytes after which the next ``cuts`` responses close the
    connection mid-body (a dropped download); ``ignore_range`` answers every
    request with the whole file (a server without Range support).
    """

    def __init__(self, files: dict[str, bytes]):
        self.files = files
        self.requests: list[dict] = []
        self.cut_after: int | None = None
        self.cuts = 0
        self.ignore_range = False
        self.bytes_sent = 0
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                server.requests.append({"path": self.path, "range": self.headers.get("Range"), "auth": self.headers.get("Authorization")})
                m = re.match(r"^/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)$", self.path)
                data = server.files.get(f"{m.group(1)}/{m.group(2)}/{m.group(3)}/{m.group(4)}") if m else None
                if data is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "9")
                    self.end_headers()
                    self.wfile.write(b"not found")
                    return
                start = 0
                rng = self.headers.get("Range")
                if rng and not server.ignore_range:
                    start = int(re.match(r"bytes=(\d+)-", rng).group(1))
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                body = data[start:]
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                if server.cuts and server.cut_after is not None:
                    server.cuts -= 1
                    part = body[: max(0, server.cut_after - start)]
                    self.wfile.write(part)
                    self.wfile.flush()
                    server.bytes_sent += len(part)
                    # Drop the connection with the body unfinished.
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.wfile.write(body)
                server.bytes_sent += len(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "HubServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    with HubServer({"acme/models/main/sub/model.gguf": PAYLOAD}) as s:
        yield s


SPEC = "hf:acme/models/sub/model.gguf"


def env_for(server: HubServer, **extra) -> dict:
    return {"HF_ENDPOINT": server.url, **extra}


def test_download_lands_in_cache_by_repo_path(server, tmp_path):
    got = hub.fetch(SPEC, tmp_path, env=env_for(server))
    assert got == tmp_path / "acme" / "models" / "sub" / "model.gguf"
    assert got.read_bytes() == PAYLOAD
    assert not Path(str(got) + ".part").exists()
    # A second fetch uses the cached file: no request at all.
    n = len(server.requests)
    assert hub.fetch(SPEC, tmp_path, env=env_for(server)) == got
    assert len(server.requests) == n


def test_dropped_connection_is_resumed_with_range(server, tmp_path):
    cut = 1_000_000
    server.cut_after, server.cuts = cut, 1
    seen = []
    got = hub.fetch(SPEC, tmp_path, env=env_for(server), progress=lambda done, total: seen.append((done, total)))
    assert got.read_bytes() == PAYLOAD
    assert [r["range"] for r in server.requests] == [None, f"bytes={cut}-"]
    # Nothing was fetched twice.
    assert server.bytes_sent == len(PAYLOAD)
    assert seen[-1] == (len(PAYLOAD), len(PAYLOAD))


def test_part_file_left_by_a_failed_run_is_resumed_by_the_next(server, tmp_path):
    cut = 2_000_000
    server.cut_after, server.cuts = cut, 1
    with pytest.raises(ProviderError, match="resumes from there"):
        hub.fetch(SPEC, tmp_path, env=env_for(server), retries=0)
    part = tmp_path / "acme" / "models" / "sub" / "model.gguf.part"
    assert part.stat().st_size == cut
    assert not part.with_suffix("").exists()  # no half file under the final name
    got = hub.fetch(SPEC, tmp_path, env=env_for(server))
    assert got.read_bytes() == PAYLOAD
    assert server.requests[-1]["range"] == f"bytes={cut}-"


def test_server_without_range_support_restarts_cleanly(server, tmp_path):
    server.cut_after, server.cuts, server.ignore_range = 500_000, 1, True
    got = hub.fetch(SPEC, tmp_path, env=env_for(server))
    assert got.read_bytes() == PAYLOAD


def test_complete_part_file_is_finished_without_download(server, tmp_path):
    part = tmp_path / "acme" / "models" / "sub" / "model.gguf.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(PAYLOAD)
    got = hub.fetch(SPEC, tmp_path, env=env_for(server))
    assert got.read_bytes() == PAYLOAD
    assert server.bytes_sent == 0


def test_token_is_sent_and_revision_is_in_url_and_cache_path(tmp_path):
    with HubServer({"acme/models/v2/model.gguf": b"revision two"}) as s:
        got = hub.fetch("hf:acme/models@v2/model.gguf", tmp_path, env=env_for(s, HF_TOKEN="hf_secret"))
        assert got == tmp_path / "acme" / "models@v2" / "model.gguf"
        assert got.read_bytes() == b"revision two"
        assert s.requests[0]["path"] == "/acme/models/resolve/v2/model.gguf"
        assert s.requests[0]["auth"] == "Bearer hf_secret"


def test_missing_file_is_a_clear_error(server, tmp_path):
    with pytest.raises(ProviderError, match="not found on the hub"):
        hub.fetch("hf:acme/models/nope.gguf", tmp_path, env=env_for(server))
    assert not any(tmp_path.rglob("*.part"))


def test_offline_is_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    with pytest.raises(ProviderError) as err:
        hub.fetch(SPEC, tmp_path, env={"HF_ENDPOINT": f"http://127.0.0.1:{port}"})
    msg = str(err.value)
    assert "cannot reach" in msg and "Offline?" in msg and "memext model install minilm" in msg


def test_download_false_never_touches_the_network(tmp_path):
    with pytest.raises(ProviderError, match="not downloaded yet"):
        hub.fetch(SPEC, tmp_path, download=False, env={"HF_ENDPOINT": "http://127.0.0.1:9"})


@pytest.mark.parametrize("spec", ["hf:acme", "hf:acme/models", "hf:acme/models/../x.gguf", "hf:/models/x.gguf", "acme/models/x.gguf"])
def test_bad_specs_are_rejected(spec, tmp_path):
    with pytest.raises(ProviderError, match="hf:owner/repo/file.gguf"):
        hub.fetch(spec, tmp_path, env={})


def test_endpoint_defaults_to_the_public_hub():
    assert hub.endpoint_from_env({}) == "https://huggingface.co"
    assert hub.endpoint_from_env({"HF_ENDPOINT": "https://mirror.example/"}) == "https://mirror.example"


def test_local_provider_downloads_an_hf_model_into_the_cache(tmp_path, workspace):
    """End to end: local.model_path = hf:..., the real GGUF served locally."""
    from memext.engine.providers.local.model import create

    with HubServer({"sentence-transformers/minilm/main/all-minilm-l6-v2-f16.gguf": MODEL_PATH.read_bytes()}) as s:
        agent = make_agent(workspace, local={"model_path": "hf:sentence-transformers/minilm/all-minilm-l6-v2-f16.gguf"})
        paths = app_paths()
        assert not local_model_ready(agent, paths)
        provider = create(agent, paths, env={"HF_ENDPOINT": s.url})
        assert provider.model_file == paths.models_dir / "sentence-transformers" / "minilm" / "all-minilm-l6-v2-f16.gguf"
        assert provider.dims == 384
        # `auto` now sees the downloaded model.
        assert local_model_ready(agent, paths)
