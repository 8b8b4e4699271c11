"""The ``local`` provider: an embedding model run on this machine, a GGUF
file by llama-cpp-python or a memext ONNX file by ONNX Runtime.

- ``local.model_path`` is a GGUF file (absolute, ``~``, or relative to the
  workspace) or ``hf:owner/repo/file.gguf``, fetched into the cache dir by
  :mod:`.hub`.
- The model is loaded lazily, once per process (a model is big and its
  runtime not thread-safe: one instance per model file, calls serialised).
  The file's suffix picks the runtime: ``.onnx`` runs with ONNX Runtime
  (:mod:`.onnx_engine`, the ``onnx`` extra), anything else with llama.cpp.
- The embedding cache and the index fingerprint know the model by its
  file name and a hash of its contents (``endpoint_key``), so a file
  replaced in place, or another build under the same name, never reuses
  the vectors of the one before.
- The context is sized to the chunk budget (capped by the model's training
  context); longer inputs are truncated to it; vectors are L2-normalised.
- A query embedding (loading the model included) has a time limit, 5 min
  by default (DESIGN.md §6): it runs on a worker thread and the caller gets a
  ProviderError when the limit passes. llama.cpp cannot be interrupted, so
  the abandoned call runs on; until it ends, further queries through the
  same provider fail at once ("model busy") instead of queueing behind it.
- Before a model file is loaded in-process it is probed in a subprocess
  (:mod:`.probe`): a model that crashes the native library is reported as
  unusable and never loaded here. :mod:`.runtime` loads a file with the
  runtime its suffix names.
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ...config import AgentConfig
from ...errors import ProviderError
from ...paths import AppPaths
from ...status import LocalModelStatus
from ..base import EmbeddingProvider, EmbedProgress, ProviderFactory
from ..registry import local_model_spec, provider_spec
from .probe import ProbeResult, model_digest, probe_model
from .runtime import Embedder, default_threads, is_onnx_model, load_engine

#: DESIGN.md §6: a local query embedding gives up after 5 minutes.
QUERY_TIMEOUT_S = 300.0
#: Texts per llama call: short batches embed as fast as single calls here
#: and bound the latency of progress reports (ECOSYSTEM_NOTES).
EMBED_BATCH = 8


class _LoadedModel:
    """One loaded model and the lock that serialises calls into it."""

    def __init__(self, engine: Embedder, n_ctx: int):
        self.engine = engine
        self.n_ctx = n_ctx
        self.lock = threading.Lock()
        #: Set (under ``lock``) once the model is freed at exit: a sync still
        #: running in a daemon thread then fails its next call instead of
        #: calling into freed memory (which crashed the process).
        self.closed = False


# One model per process and file: loading twice would double memory and the
# native library is not thread-safe, so every provider instance for the
# same file shares this entry.
_MODELS: dict[tuple[str, int], _LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def _close_models_at_exit() -> None:
    """Free the models before interpreter teardown.

    Left to ``Llama.__del__`` during teardown, freeing runs after
    llama_cpp's module globals are gone and prints tracebacks. A model
    still busy in a daemon thread is left alone rather than freed under it.
    """
    with _MODELS_LOCK:
        models = list(_MODELS.values())
        _MODELS.clear()
    for m in models:
        if m.lock.acquire(timeout=5):
            try:
                m.closed = True
                m.engine.close()
            except Exception:
                pass
            finally:
                m.lock.release()


atexit.register(_close_models_at_exit)


def resolve_model_file(
    spec: str, agent: AgentConfig, paths: AppPaths, *, download: bool = True, env: Mapping[str, str] | None = None
) -> Path:
    """The local file for ``local.model_path`` (downloading ``hf:`` specs)."""
    if not spec:
        raise ProviderError("no local model configured: set memory_search.local.model_path (or run `memext model install minilm`)")
    if spec.startswith("hf:"):
        from . import hub

        return hub.fetch(spec, model_cache_dir(agent, paths), download=download, env=env)
    p = Path(os.path.expanduser(spec))
    if not p.is_absolute():
        p = agent.workspace / p
    if not p.is_file():
        raise ProviderError(f"local model file {p} does not exist (memory_search.local.model_path)")
    return p


def model_cache_dir(agent: AgentConfig, paths: AppPaths) -> Path:
    """``local.model_cache_dir``, else the user cache's ``models`` folder."""
    return Path(agent.settings.local.model_cache_dir or paths.models_dir).expanduser()


def loaded_model_files() -> list[Path]:
    """The model files loaded in this process (one entry per file and context)."""
    with _MODELS_LOCK:
        return [Path(path) for path, _ in _MODELS]


def context_size(chunk_tokens: int, n_ctx_train: int) -> int:
    """A context for chunks of ``chunk_tokens`` estimated tokens.

    The chars/4 estimate undercounts WordPiece tokens for code and numbers,
    so leave 50 % headroom; never exceed what the model was trained on.
    """
    want = max(64, int(chunk_tokens * 1.5))
    size = 64
    while size < want:
        size *= 2
    return min(size, n_ctx_train) if n_ctx_train > 0 else size


class LocalProvider(EmbeddingProvider):
    """Embeddings from a local GGUF model (see the module docstring)."""

    id = "local"
    batch_group_size = 64

    def __init__(
        self,
        model_file: Path,
        chunk_tokens: int = 400,
        cache_dir: Path | None = None,
        threads: int | None = None,
        *,
        query_timeout_s: float = QUERY_TIMEOUT_S,
    ):
        self.model_file = Path(model_file)
        self.model = self.model_file.name
        #: Seconds a query embedding may take, loading the model included.
        self.query_timeout_s = query_timeout_s
        self._chunk_tokens = chunk_tokens
        self._cache_dir = cache_dir
        self._threads = threads or default_threads()
        self._probe: ProbeResult | None = None
        self._digest: str | None = None
        self._loaded: _LoadedModel | None = None
        #: A query that passed its time limit and is still running (or
        #: still waiting for the model), with when it started.
        self._abandoned: _QueryJob | None = None
        self._jobs_lock = threading.Lock()
        #: One worker runs every query embedding (started on first use):
        #: a thread per query cost about 3 ms each.
        self._jobs: queue.SimpleQueue[_QueryJob | None] | None = None
        self._worker: threading.Thread | None = None

    @property
    def threads(self) -> int:
        """CPU threads the model runs with (``local.threads``, else :func:`default_threads`)."""
        return self._threads

    # -- probe and load ------------------------------------------------------

    def probe(self) -> ProbeResult:
        """Load and run the model once in a subprocess (cached verdict)."""
        if self._probe is None:
            self._probe = probe_model(self.model_file, self._cache_dir)
        return self._probe

    @property
    def dims(self) -> int | None:
        return self.probe().dims or None

    @property
    def endpoint_key(self) -> str:  # type: ignore[override]
        """The model file's content hash: vectors are cached and the index
        fingerprinted per exact model, not per file name (module docstring)."""
        if self._digest is None:
            self._digest = model_digest(self.model_file, self._cache_dir)
        return f"sha256:{self._digest[:16]}"

    @property
    def max_input_tokens(self) -> int:  # type: ignore[override]
        return self._ensure_loaded().n_ctx

    def _ensure_loaded(self) -> _LoadedModel:
        if self._loaded is not None:
            return self._loaded
        result = self.probe()
        if not result.ok:
            raise ProviderError(f"local model {self.model_file} is unusable: {result.error}")
        n_ctx = context_size(self._chunk_tokens, result.n_ctx_train)
        key = (str(self.model_file.resolve()), n_ctx)
        with _MODELS_LOCK:
            loaded = _MODELS.get(key)
            if loaded is None:
                loaded = _LoadedModel(load_engine(self.model_file, n_ctx, self._threads), n_ctx)
                _MODELS[key] = loaded
        self._loaded = loaded
        return loaded

    # -- embedding -------------------------------------------------------------

    def embed_query(self, text: str) -> list[float]:
        """Embed a query within ``query_timeout_s`` (see the module docstring)."""
        with self._jobs_lock:
            stuck = self._abandoned
            if stuck is not None and not stuck.done.is_set():
                raise ProviderError(
                    f"local model {self.model} is busy: a query embedding started "
                    f"{time.monotonic() - stuck.started:.0f} s ago went past the {self.query_timeout_s:g} s "
                    "local query timeout and has not finished yet; try again when it ends"
                )
            self._abandoned = None
        job = _QueryJob(self, text)
        self._submit(job)
        finished = job.done.wait(self.query_timeout_s)
        if not finished:
            with self._jobs_lock:
                job.abandoned = True
                if not job.done.is_set():
                    self._abandoned = job
        if not finished or time.monotonic() - job.started > self.query_timeout_s:
            # Late is a failure even when the vector came in just after the
            # wait ended: no query answers later than its limit.
            raise ProviderError(
                f"local model {self.model}: the query embedding took over {self.query_timeout_s:g} s (the local query timeout)"
            )
        if job.error is not None:
            raise job.error
        assert job.vector is not None
        return job.vector

    def _submit(self, job: "_QueryJob") -> None:
        with self._jobs_lock:
            if self._jobs is None or self._worker is None or not self._worker.is_alive():
                self._jobs = queue.SimpleQueue()
                self._worker = threading.Thread(target=_run_queries, args=(self._jobs,), name="memext-local-query", daemon=True)
                self._worker.start()
            self._jobs.put(job)

    def close(self) -> None:
        """Stop the query worker (after the query it runs, if any); the
        model stays loaded for other providers of the same file."""
        with self._jobs_lock:
            if self._jobs is not None:
                self._jobs.put(None)
            self._jobs = self._worker = None

    def embed_batch(self, texts: Sequence[str], progress: EmbedProgress | None = None) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), EMBED_BATCH):
            vectors = self.embed_texts(texts[start : start + EMBED_BATCH])
            assert vectors is not None  # nothing to skip without ``skip``
            out.extend(vectors)
            if progress:
                progress(len(out), len(texts))
        return out

    def embed_texts(self, texts: Sequence[str], skip: Callable[[], bool] | None = None) -> list[list[float]] | None:
        """Vectors for ``texts``; None when ``skip()`` says, once the model
        is free, that nobody waits for them any more."""
        m = self._ensure_loaded()
        # An empty string has no tokens to pool: embed a space instead.
        inputs = [t if t.strip() else " " for t in texts]
        try:
            with m.lock:
                if m.closed:
                    raise ProviderError(f"local model {self.model}: closed, the process is exiting")
                if skip is not None and skip():
                    return None
                vectors = m.engine.embed(inputs)
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"local model {self.model}: {exc}") from exc
        return vectors

    def model_status(self) -> LocalModelStatus:
        p = self._probe
        return LocalModelStatus(
            model_file=str(self.model_file),
            probe=None if p is None else ("ok" if p.ok else f"failed: {p.error}"),
            loaded=self._loaded is not None,
            n_ctx=self._loaded.n_ctx if self._loaded else None,
            query_timeout_s=self.query_timeout_s,
            busy=self._abandoned is not None and not self._abandoned.done.is_set(),
        )


def _run_queries(jobs: "queue.SimpleQueue[_QueryJob | None]") -> None:
    """The query worker: runs jobs one at a time until it gets None. Jobs
    run in order, as they would have waited for the model's lock anyway."""
    while True:
        job = jobs.get()
        if job is None:
            return
        job.run()


class _QueryJob:
    """One query embedding on a worker thread (see LocalProvider.embed_query)."""

    def __init__(self, provider: LocalProvider, text: str):
        self.provider = provider
        self.text = text
        self.started = time.monotonic()
        self.done = threading.Event()
        #: Set when the caller stopped waiting: if the model is still busy
        #: with other work then, the job is dropped without running.
        self.abandoned = False
        self.vector: list[float] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            vectors = self.provider.embed_texts([self.text], skip=lambda: self.abandoned)
            if vectors is not None:
                self.vector = vectors[0]
        except BaseException as exc:  # handed to the caller
            self.error = exc
        finally:
            self.done.set()


# -- factory -------------------------------------------------------------------------


def create(
    agent: AgentConfig, paths: AppPaths, env: Mapping[str, str] | None = None, *, primary: str | None = None, **options: Any
) -> LocalProvider:
    """Build the local provider for an agent (the model loads on first use).

    ``options`` go to :class:`LocalProvider` (``query_timeout_s``...);
    ``primary`` is accepted like the remote providers' and not needed here.
    """
    spec = local_model_spec(agent, paths)
    if is_onnx_model(Path(spec)):
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError as exc:
            raise ProviderError(f"ONNX Runtime is not installed ({exc}); pip install 'memext[onnx]'") from exc
    else:
        try:
            import llama_cpp  # noqa: F401
        except ImportError as exc:
            raise ProviderError(f"llama-cpp-python is not installed ({exc}); {provider_spec('local').install_command}") from exc
    model_file = resolve_model_file(spec, agent, paths, env=env)
    options.setdefault("threads", agent.settings.local.threads or None)
    provider = LocalProvider(model_file, agent.settings.chunking.tokens, model_cache_dir(agent, paths), **options)
    result = provider.probe()
    if not result.ok:
        raise ProviderError(f"local model {model_file} is unusable: {result.error}")
    return provider


if TYPE_CHECKING:
    _create: ProviderFactory = create  # the contract create_provider() calls (DESIGN.md §6)
