"""Loading a local model file with the runtime that runs it: a GGUF file
with llama-cpp-python, a memext ``.onnx`` file with ONNX Runtime
(:mod:`.onnx_engine`). Both give an :class:`Embedder`; nothing here keeps
state between calls (the provider, :mod:`.model`, keeps one loaded model
per file, and :mod:`.probe` loads it first in a subprocess)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Protocol, Sequence


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
