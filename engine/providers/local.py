"""The ``local`` provider: a GGUF embedding model run by llama-cpp-python.

- ``local.model_path`` is a GGUF file (absolute, ``~``, or relative to the
  workspace) or ``hf:owner/repo/file.gguf``, fetched into the cache dir by
  :mod:`engine.providers.hub`.
- The model is loaded lazily, once per process (``llama_cpp.Llama`` is big
  and not thread-safe: one instance per model file, calls serialised).
- The context is sized to the chunk budget (capped by the model's training
  context); longer inputs are truncated to it; vectors are L2-normalised.
- A native crash (SIGILL/SIGSEGV in ggml, seen with quantised models on AMX
  CPUs) would kill the host process, a notebook kernel or the tray. So a
  model is first probed in a subprocess; a model that kills the probe is
  reported as unusable, with the reason, and never loaded in-process. The
  verdict is remembered per model file (path, size, mtime, llama-cpp
  version) in the cache dir, so the probe runs once, not per process.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from ..config import AgentConfig
from ..errors import ProviderError
from ..paths import AppPaths
from .base import EmbeddingProvider, EmbedProgress

PROBE_TIMEOUT_S = 300
#: Texts per llama call: short batches embed as fast as single calls here
#: and bound the latency of progress reports (ECOSYSTEM_NOTES).
EMBED_BATCH = 8


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    dims: int = 0
    n_ctx_train: int = 0
    error: str = ""


class _LoadedModel:
    """One ``Llama`` and the lock that serialises calls into it."""

    def __init__(self, llama, n_ctx: int):
        self.llama = llama
        self.n_ctx = n_ctx
        self.lock = threading.Lock()


# One model per process and file: loading twice would double memory and the
# native library is not thread-safe, so every provider instance for the
# same file shares this entry.
_MODELS: dict[tuple[str, int], _LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def resolve_model_file(spec: str, agent: AgentConfig, paths: AppPaths, *, download: bool = True) -> Path:
    """The local file for ``local.model_path`` (downloading ``hf:`` specs)."""
    if not spec:
        raise ProviderError("no local model configured: set memory_search.local.model_path (or run `memext model install minilm`)")
    if spec.startswith("hf:"):
        from . import hub

        cache = Path(agent.settings.local.model_cache_dir or paths.models_dir).expanduser()
        return hub.fetch(spec, cache, download=download)
    p = Path(os.path.expanduser(spec))
    if not p.is_absolute():
        p = agent.workspace / p
    if not p.is_file():
        raise ProviderError(f"local model file {p} does not exist (memory_search.local.model_path)")
    return p


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

    def __init__(self, model_file: Path, chunk_tokens: int = 400, cache_dir: Path | None = None, threads: int | None = None):
        self.model_file = Path(model_file)
        self.model = self.model_file.name
        self.endpoint_key = ""
        self._chunk_tokens = chunk_tokens
        self._cache_dir = cache_dir
        self._threads = threads or max(1, min(os.cpu_count() or 1, 8))
        self._probe: ProbeResult | None = None
        self._loaded: _LoadedModel | None = None

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
                loaded = _LoadedModel(load_llama(self.model_file, n_ctx, self._threads), n_ctx)
                _MODELS[key] = loaded
        self._loaded = loaded
        return loaded

    # -- embedding -------------------------------------------------------------

    def embed_query(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def embed_batch(self, texts: Sequence[str], progress: EmbedProgress | None = None) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), EMBED_BATCH):
            out.extend(self._embed(texts[start : start + EMBED_BATCH]))
            if progress:
                progress(len(out), len(texts))
        return out

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        m = self._ensure_loaded()
        # An empty string has no tokens to pool: embed a space instead.
        inputs = [t if t.strip() else " " for t in texts]
        try:
            with m.lock:
                vectors = m.llama.embed(inputs, normalize=True, truncate=True)
        except Exception as exc:
            raise ProviderError(f"local model {self.model}: {exc}") from exc
        return [list(v) for v in vectors]

    def status(self) -> dict:
        p = self._probe
        return {
            "model_file": str(self.model_file),
            "probe": None if p is None else ("ok" if p.ok else f"failed: {p.error}"),
            "loaded": self._loaded is not None,
            "n_ctx": self._loaded.n_ctx if self._loaded else None,
        }


def load_llama(model_file: Path, n_ctx: int, threads: int):
    """Load a GGUF model for embeddings, with ggml's weight repacking off.

    Repacked ("extra buffer") weights take the AMX/AVX-512 code path that
    crashed with quantised models on this project's CPUs; f16/f32 models
    lose nothing by skipping it. llama-cpp-python has no argument for it,
    so the default model params are adjusted while the model loads.
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
        with _quiet_stderr():
            return llama_cpp.Llama(
                model_path=str(model_file),
                embedding=True,
                n_ctx=n_ctx,
                n_batch=n_ctx,
                n_ubatch=n_ctx,  # must equal n_batch for embeddings
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
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


def _probe_key(model_file: Path) -> str:
    st = model_file.stat()
    try:
        from importlib.metadata import version

        llama_version = version("llama-cpp-python")
    except Exception:
        llama_version = "?"
    return f"{model_file.resolve()}|{st.st_size}|{st.st_mtime_ns}|{llama_version}"


def probe_model(model_file: Path, cache_dir: Path | None = None, timeout: float = PROBE_TIMEOUT_S) -> ProbeResult:
    """Run :func:`_probe_main` in a fresh interpreter and read its verdict."""
    cache_file = (cache_dir / "probes.json") if cache_dir else None
    key = _probe_key(model_file)
    cached = _read_probe_cache(cache_file).get(key)
    if cached is not None:
        return ProbeResult(**cached)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "engine.providers.local", str(model_file)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return ProbeResult(False, error=f"loading the model took over {timeout:g} s")
    if proc.returncode < 0:
        sig = signal.Signals(-proc.returncode).name if -proc.returncode in signal.Signals._value2member_map_ else str(-proc.returncode)
        result = ProbeResult(False, error=f"the model crashed the probe process ({sig}) in the native llama.cpp library")
    elif proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
        result = ProbeResult(False, error=f"the model failed to load: {last}")
    else:
        try:
            data = json.loads(proc.stdout.strip().splitlines()[-1])
            result = ProbeResult(True, dims=int(data["dims"]), n_ctx_train=int(data["n_ctx_train"]))
        except (ValueError, KeyError, IndexError):
            result = ProbeResult(False, error=f"the probe printed no result: {proc.stdout[-200:]!r}")
    if result.ok or proc.returncode < 0:  # transient failures are not remembered
        _write_probe_cache(cache_file, key, result)
    return result


def _read_probe_cache(path: Path | None) -> dict:
    if path is None:
        return {}
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _write_probe_cache(path: Path | None, key: str, result: ProbeResult) -> None:
    if path is None:
        return
    data = _read_probe_cache(path)
    data[key] = result.__dict__
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1))
        os.replace(tmp, path)
    except OSError:
        pass


def _probe_main(model_file: str) -> None:
    """In the probe subprocess: load, embed once, print dims as JSON."""
    import llama_cpp  # noqa: F401  (fail here, not in the parent)

    # Load with a small context first to learn the training context.
    llama = load_llama(Path(model_file), 512, 1)
    n_ctx_train = llama._model.n_ctx_train()
    vec = llama.embed("memext probe", normalize=True)
    print(json.dumps({"dims": len(vec), "n_ctx_train": n_ctx_train}))


# -- factory -------------------------------------------------------------------------


def create(agent: AgentConfig, paths: AppPaths, env: Mapping[str, str] | None = None) -> LocalProvider:
    """Build the local provider for an agent (the model loads on first use)."""
    try:
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        raise ProviderError(f"llama-cpp-python is not installed ({exc}); pip install 'memext[local]'") from exc
    model_file = resolve_model_file(agent.settings.local.model_path, agent, paths)
    cache = Path(agent.settings.local.model_cache_dir or paths.models_dir).expanduser()
    provider = LocalProvider(model_file, agent.settings.chunking.tokens, cache)
    result = provider.probe()
    if not result.ok:
        raise ProviderError(f"local model {model_file} is unusable: {result.error}")
    return provider


if __name__ == "__main__":
    _probe_main(sys.argv[1])
