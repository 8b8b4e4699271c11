"""The ``local`` provider: an embedding model run on this machine, a GGUF
file by llama-cpp-python or a memext ONNX file by ONNX Runtime.

- ``local.model_path`` is a GGUF file (absolute, ``~``, or relative to the
  workspace) or ``hf:owner/repo/file.gguf``, fetched into the cache dir by
  :mod:`engine.providers.hub`.
- The model is loaded lazily, once per process (a model is big and its
  runtime not thread-safe: one instance per model file, calls serialised).
  The file's suffix picks the runtime: ``.onnx`` runs with ONNX Runtime
  (:mod:`onnx_engine`, the ``onnx`` extra), anything else with llama.cpp.
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
- A native crash (SIGILL/SIGSEGV in ggml, seen with quantised models on AMX
  CPUs) would kill the host process, a notebook kernel or the tray. So a
  model is first probed in a subprocess; a model that kills the probe is
  reported as unusable, with the reason, and never loaded in-process. The
  verdict is remembered per model file (path, size, mtime, runtime
  version) in the cache dir, with the file's hash, so the probe runs once,
  not per process.
  A load failure is reported with llama.cpp's own reason (e.g. "invalid
  magic characters" for a file that is not GGUF). ``embed_isolated`` runs
  texts through the same subprocess (``memext model install`` checks new
  models with it).

Over 500 lines because the probe subprocess, the in-process model and the
query deadline share the model-file identity, the lock and the verdict
cache; split apart, each part would reach into the others' state.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

from ...config import AgentConfig
from ...errors import ProviderError
from ...paths import AppPaths, private_dir
from ...status import LocalModelStatus
from ..base import EmbeddingProvider, EmbedProgress, ProviderFactory
from ..registry import local_model_spec, provider_spec

PROBE_TIMEOUT_S = 300
#: DESIGN.md §6: a local query embedding gives up after 5 minutes.
QUERY_TIMEOUT_S = 300.0
#: Texts per llama call: short batches embed as fast as single calls here
#: and bound the latency of progress reports (ECOSYSTEM_NOTES).
EMBED_BATCH = 8


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    dims: int = 0
    n_ctx_train: int = 0
    error: str = ""


class Embedder(Protocol):
    """What the provider asks of a loaded model, whatever runs it."""

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...
    def n_ctx_train(self) -> int: ...
    def close(self) -> None: ...


class LlamaEmbedder:
    """A GGUF model loaded by llama-cpp-python (:func:`load_llama`)."""

    def __init__(self, llama):
        self.llama = llama

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [list(v) for v in self.llama.embed(list(texts), normalize=True, truncate=True)]

    def n_ctx_train(self) -> int:
        return int(self.llama._model.n_ctx_train())

    def close(self) -> None:
        self.llama.close()


def is_onnx_model(model_file: Path | str) -> bool:
    """Whether ``model_file`` runs in ONNX Runtime (by its suffix, as a GGUF
    file is known by its own). Cheap: a search path asks it."""
    return Path(model_file).suffix.lower() == ".onnx"


def load_engine(model_file: Path, n_ctx: int, threads: int, *, verbose: bool = False) -> Embedder:
    """Load ``model_file`` with the runtime its suffix names (module docstring)."""
    if is_onnx_model(model_file):
        from .onnx_engine import OnnxEmbedder  # ONNX Runtime is imported only for an ONNX model

        return OnnxEmbedder(model_file, n_ctx, threads)
    return LlamaEmbedder(load_llama(model_file, n_ctx, threads, verbose=verbose))


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


def default_threads() -> int:
    """One thread per core less one, up to 8: a sync embedding in the
    background leaves a core to the user. On a busy 2-core machine two
    threads were 3.6-5.6x slower than one (llama.cpp's threads wait on each
    other when one is descheduled)."""
    return max(1, min((os.cpu_count() or 1) - 1, 8))


def load_llama(model_file: Path, n_ctx: int, threads: int, *, verbose: bool = False):
    """Load a GGUF model for embeddings, with ggml's weight repacking off.

    Repacked ("extra buffer") weights take the AMX/AVX-512 code path that
    crashed with quantised models on this project's CPUs; f16/f32 models
    lose nothing by skipping it. llama-cpp-python has no argument for it,
    so the default model params are adjusted while the model loads.
    ``verbose`` lets llama.cpp log to stderr (the probe reads load errors
    from there); otherwise its logs are silenced.
    """
    import llama_cpp
    from llama_cpp import llama_cpp as lowlevel

    original = lowlevel.llama_model_default_params

    def params():
        p = original()
        if hasattr(p, "use_extra_bufts"):
            p.use_extra_bufts = False
        return p

    # Callers hold _MODELS_LOCK (or are the probe process), so no other
    # thread sees the patched function.
    lowlevel.llama_model_default_params = params
    try:
        with contextlib.nullcontext() if verbose else _quiet_stderr():
            return llama_cpp.Llama(
                model_path=str(model_file),
                embedding=True,
                n_ctx=n_ctx,
                n_batch=n_ctx,
                n_ubatch=n_ctx,  # must equal n_batch for embeddings
                n_threads=threads,
                n_threads_batch=threads,
                verbose=verbose,
            )
    finally:
        lowlevel.llama_model_default_params = original


@contextlib.contextmanager
def _quiet_stderr():
    """llama.cpp prints load logs on fd 2 even with verbose=False."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


# -- the subprocess probe --------------------------------------------------------

#: TEST HOOK: when set (to a signal name such as ``SIGSEGV``) in the probe
#: process's environment, the probe kills itself with that signal before
#: loading the model. It stands in for a native crash in llama.cpp, which
#: cannot be caused on demand; only the tests set it.
FAULT_ENV = "MEMEXT_TEST_PROBE_FAULT"
_STAGES = {"start": "while starting", "load": "while loading the model", "embed": "while embedding a test sentence"}


def _probe_key(model_file: Path) -> str:
    st = model_file.stat()
    runtime = _runtime_build("onnxruntime" if is_onnx_model(model_file) else "llama_cpp")
    return f"{model_file.resolve()}|{st.st_size}|{st.st_mtime_ns}|{runtime}"


def file_digest(model_file: Path) -> str:
    """sha256 of a model file (about 0.1 s for a 45 MB model; remembered
    with the probe verdict)."""
    h = hashlib.sha256()
    with open(model_file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@functools.lru_cache(maxsize=2)
def _runtime_build(module: str) -> str:
    """Which build of a runtime (``llama_cpp``, ``onnxruntime``) is
    installed, for the probe cache key: where its package lies and when it
    was written (an upgrade or rebuild changes it). Found without importing
    it, and without a package-metadata lookup, which scans every
    distribution on the path (about 60 ms per process)."""
    try:
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            return "?"
        st = os.stat(spec.origin)
        return f"{spec.origin}@{st.st_mtime_ns}"
    except (ImportError, ValueError, OSError):
        return "?"


def cached_probe(model_file: Path, cache_dir: Path | None) -> ProbeResult | None:
    """The remembered verdict for a model file, without probing."""
    if cache_dir is None or not model_file.is_file():
        return None
    cached = _read_probe_cache(cache_dir / "probes.json").get(_probe_key(model_file))
    if not isinstance(cached, dict):
        return None
    return ProbeResult(**{f.name: cached[f.name] for f in dataclasses.fields(ProbeResult) if f.name in cached})


def forget_probe(model_file: Path, cache_dir: Path | None) -> None:
    """Drop the remembered verdict so the next use probes again."""
    if cache_dir is None or not model_file.is_file():
        return
    _update_probe_cache(cache_dir / "probes.json", _probe_key(model_file), None)


def probe_model(model_file: Path, cache_dir: Path | None = None, timeout: float = PROBE_TIMEOUT_S) -> ProbeResult:
    """Load and run the model once in a fresh interpreter; remember the verdict.

    A model that crashes the probe (a signal), or loads and embeds fine, is
    remembered per file; other failures (a timeout, a missing package) are
    not, so they are tried again next time.
    """
    cache_file = (cache_dir / "probes.json") if cache_dir else None
    cached = cached_probe(model_file, cache_dir)
    if cached is not None:
        return cached
    result, _, crashed = _run_probe(model_file, None, timeout)
    if result.ok or crashed:
        _update_probe_cache(cache_file, _probe_key(model_file), dataclasses.asdict(result))
    return result


def model_digest(model_file: Path, cache_dir: Path | None) -> str:
    """sha256 of ``model_file``, remembered beside its probe verdict (under
    a key of its own, which older versions of memext pass over)."""
    cache_file = (cache_dir / "probes.json") if cache_dir else None
    key = "sha256|" + _probe_key(model_file)
    digest = _read_probe_cache(cache_file).get(key)
    if not isinstance(digest, str):
        digest = file_digest(model_file)
        _update_probe_cache(cache_file, key, digest)
    return digest


def embed_isolated(model_file: Path, texts: Sequence[str], timeout: float = PROBE_TIMEOUT_S) -> list[list[float]]:
    """Embed ``texts`` in a subprocess (context 512, L2-normalised).

    For checking a model before anything loads it in-process (``memext
    model install``): a crash costs the subprocess, not the caller.
    """
    result, vectors, _ = _run_probe(model_file, list(texts), timeout)
    if not result.ok or vectors is None:
        raise ProviderError(f"local model {model_file} is unusable: {result.error}")
    return vectors


def _run_probe(model_file: Path, texts: list[str] | None, timeout: float) -> tuple[ProbeResult, list | None, bool]:
    """(verdict, vectors for ``texts``, whether the probe died of a signal)."""
    cmd = [sys.executable, "-m", "memext.engine.providers.local.model", str(model_file)]
    try:
        proc = subprocess.run(
            cmd,
            input=json.dumps(texts) if texts is not None else "",
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return ProbeResult(False, error=f"loading the model took over {timeout:g} s"), None, False
    lines = proc.stdout.strip().splitlines()
    stages = [ln.split(" ", 1)[1] for ln in lines if ln.startswith("stage ")]
    if proc.returncode < 0:
        num = -proc.returncode
        sig = signal.Signals(num).name if num in signal.Signals._value2member_map_ else f"signal {num}"
        when = _STAGES.get(stages[-1] if stages else "start", "")
        error = f"the model crashed the probe process ({sig}) in the native llama.cpp library {when}".rstrip()
        return ProbeResult(False, error=error), None, True
    if proc.returncode != 0:
        return ProbeResult(False, error=f"the model failed to load: {_load_error(proc.stderr)}"), None, False
    try:
        data = json.loads(lines[-1])
        result = ProbeResult(True, dims=int(data["dims"]), n_ctx_train=int(data["n_ctx_train"]))
    except (ValueError, KeyError, IndexError):
        return ProbeResult(False, error=f"the probe printed no result: {proc.stdout[-200:]!r}"), None, False
    return result, data.get("vectors"), False


#: Marks memext's own reason for a load failure on the probe's stderr.
_PROBE_ERROR = "memext-probe-error: "


def _load_error(stderr: str) -> str:
    """The most specific reason in the probe's stderr (memext's own, else
    llama.cpp logs or a traceback)."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith(_PROBE_ERROR):
            return ln.removeprefix(_PROBE_ERROR)
    generic = ("failed to load model", "error loading model")
    for ln in lines:
        low = ln.lower()
        if ("invalid" in low or "failed" in low or "error" in low) and not any(g in low for g in generic):
            # "gguf_init_from_reader: invalid magic ..." -> "invalid magic ..."
            reason = ln.split(": ", 1)[1] if re.match(r"^[a-z_]+: ", ln) else ln
            return f"{reason} (not a valid GGUF model file?)" if ln.startswith("gguf_") else reason
    return lines[-1] if lines else "unknown error"


def _read_probe_cache(path: Path | None) -> dict:
    if path is None:
        return {}
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _update_probe_cache(path: Path | None, key: str, value: dict | str | None) -> None:
    if path is None:
        return
    data = _read_probe_cache(path)
    if value is None:
        data.pop(key, None)
    else:
        data[key] = value
    try:
        private_dir(path.parent, tighten=False)
        tmp = path.with_name(path.name + f".{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, path)
    except OSError:
        pass


def _probe_main(model_file: str) -> None:
    """In the probe subprocess: load, embed, print dims (and vectors) as JSON.

    Texts to embed come as a JSON list on stdin (empty: one test sentence).
    Each stage is announced on stdout first, so the parent can tell where a
    crash happened.
    """

    def stage(name: str) -> None:
        print(f"stage {name}", flush=True)

    stage("start")
    raw = sys.stdin.read().strip()
    texts = json.loads(raw) if raw else None
    stage("load")
    fault = os.environ.get(FAULT_ENV)
    if fault:
        os.kill(os.getpid(), getattr(signal, fault))
    # llama.cpp's log goes to stderr, where the parent looks for load errors.
    try:
        engine = load_engine(Path(model_file), 512, 1, verbose=True)
    except ProviderError as exc:  # memext's own reason: the parent reports it as it is
        print(f"{_PROBE_ERROR}{exc}", file=sys.stderr, flush=True)
        sys.exit(1)
    n_ctx_train = engine.n_ctx_train()
    stage("embed")
    (vec,) = engine.embed(["memext probe"])
    out: dict = {"dims": len(vec), "n_ctx_train": n_ctx_train}
    if texts is not None:
        out["vectors"] = [engine.embed([t])[0] for t in texts]
    print(json.dumps(out), flush=True)


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


if __name__ == "__main__":
    _probe_main(sys.argv[1])
