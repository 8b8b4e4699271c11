"""The subprocess probe of a local model file (DESIGN.md §6).

A native crash (SIGILL/SIGSEGV in ggml, seen with quantised models on AMX
CPUs) would kill the host process, a notebook kernel or the tray. So a
model is first loaded and run in a fresh interpreter; a model that kills
the probe is reported as unusable, with the reason, and never loaded
in-process. The verdict is remembered per model file (path, size, mtime,
runtime build) in ``probes.json`` in the cache dir, with the file's hash,
so the probe runs once, not per process. A load failure is reported with
the runtime's own reason (e.g. "invalid magic characters" for a file that
is not GGUF). :func:`embed_isolated` runs texts through the same
subprocess (``memext model install`` checks new models with it).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ...errors import ProviderError
from ...paths import private_dir
from .runtime import is_onnx_model, load_engine

PROBE_TIMEOUT_S = 300


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    dims: int = 0
    n_ctx_train: int = 0
    error: str = ""


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
    cmd = [sys.executable, "-m", "memext.engine.providers.local.probe", str(model_file)]
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


if __name__ == "__main__":
    _probe_main(sys.argv[1])
