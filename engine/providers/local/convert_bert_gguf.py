"""Convert a BERT sentence-transformers model (safetensors) to a GGUF file.

llama.cpp's ``convert_hf_to_gguf.py`` needs torch; this needs only the
``gguf`` and ``safetensors`` packages and numpy. It covers what
all-MiniLM-L6-v2 and its relatives use (``BertModel``, absolute positions,
a WordPiece tokenizer, mean or CLS pooling) and writes what llama.cpp's own
converter writes for them: the ``bert.*`` hyper-parameters, the vocabulary
in llama.cpp's "phantom space" form, the special token ids and the renamed
tensors (f16 matrices; f32 norms, biases, position and token-type
embeddings). Anything else is refused with a :class:`ConversionError`.

Input: a folder with ``config.json``, ``model.safetensors``,
``tokenizer.json`` (or ``vocab.txt``) and optionally
``1_Pooling/config.json``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...errors import MemextError

if TYPE_CHECKING:
    import gguf  # imported where used: the `local` extra

#: llama.cpp's WordPiece tokenizer marks a word start with U+2581.
PHANTOM_SPACE = "\u2581"
#: What llama.cpp's converter names the pre-tokenizer of BERT's uncased
#: WordPiece tokenizer (it identifies tokenizers by a hash of their output).
BERT_UNCASED_PRE = "jina-v2-en"
#: Tensors llama.cpp keeps in f32 even in an f16 file (small, precision-sensitive).
_KEEP_F32 = ("position_embd.weight", "token_types.weight")
#: Checkpoint tensors with no place in the GGUF (the pooler is unused for embeddings).
_DROPPED_PREFIXES = ("pooler.", "embeddings.position_ids")


class ConversionError(MemextError):
    """The model cannot be converted (unsupported architecture, missing file)."""


@dataclass(frozen=True)
class Vocab:
    """A WordPiece vocabulary in GGUF form."""

    tokens: list[str]
    token_types: list[int]
    special_ids: dict[str, int]


@dataclass(frozen=True)
class ConversionInfo:
    """What was written."""

    path: Path
    tensors: int
    vocab_size: int
    embedding_length: int


def convert_bert(src: Path, out: Path, *, name: str, source_url: str = "", license: str = "") -> ConversionInfo:
    """Write ``src`` (a sentence-transformers BERT folder) to ``out`` as f16 GGUF.

    The file appears atomically: a failed conversion leaves nothing at ``out``.
    """
    import gguf

    src = Path(src)
    config = read_json(src / "config.json")
    check_supported(config, src)
    vocab = read_vocab(src)
    if len(vocab.tokens) != config["vocab_size"]:
        raise ConversionError(f"{src}: tokenizer has {len(vocab.tokens)} tokens, config.json says {config['vocab_size']}")
    pooling = _pooling_type(src)

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    writer = gguf.GGUFWriter(str(tmp), arch="bert")
    try:
        writer.add_type(gguf.GGUFType.MODEL)
        writer.add_name(name)
        if license:
            writer.add_license(license)
        if source_url:
            writer.add_source_url(source_url)
        writer.add_block_count(config["num_hidden_layers"])
        writer.add_context_length(config["max_position_embeddings"])
        writer.add_embedding_length(config["hidden_size"])
        writer.add_feed_forward_length(config["intermediate_size"])
        writer.add_head_count(config["num_attention_heads"])
        writer.add_layer_norm_eps(config.get("layer_norm_eps", 1e-12))
        writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
        writer.add_causal_attention(False)
        writer.add_pooling_type(pooling)
        writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
        _add_vocab(writer, vocab, config.get("type_vocab_size", 2))
        count = _add_tensors(writer, src / "model.safetensors", config["num_hidden_layers"])
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    writer.close()
    os.replace(tmp, out)
    return ConversionInfo(out, count, len(vocab.tokens), config["hidden_size"])


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConversionError(f"{path} is missing") from exc
    except ValueError as exc:
        raise ConversionError(f"{path} is not valid JSON: {exc}") from exc


def check_supported(config: dict, src: Path) -> None:
    if config.get("model_type") != "bert":
        raise ConversionError(f"{src}: only BERT models convert here, this is {config.get('model_type')!r}")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ConversionError(f"{src}: position_embedding_type {config['position_embedding_type']!r} is not supported")
    if config.get("hidden_act", "gelu") != "gelu":
        raise ConversionError(f"{src}: hidden_act {config['hidden_act']!r} is not supported (llama.cpp's BERT uses gelu)")
    for key in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "max_position_embeddings"):
        if not isinstance(config.get(key), int):
            raise ConversionError(f"{src}/config.json: {key} is missing")
    if not (src / "model.safetensors").is_file():
        raise ConversionError(f"{src}/model.safetensors is missing")


def pooling_mode(src: Path) -> str:
    """``"mean"`` or ``"cls"``, from sentence-transformers' pooling config
    (mean when the folder has none)."""
    path = src / "1_Pooling" / "config.json"
    if not path.is_file():
        return "mean"
    cfg = read_json(path)
    if cfg.get("pooling_mode_mean_tokens"):
        return "mean"
    if cfg.get("pooling_mode_cls_token"):
        return "cls"
    raise ConversionError(f"{path}: only mean or CLS pooling is supported")


def _pooling_type(src: Path) -> gguf.PoolingType:
    """llama.cpp's pooling enum for :func:`pooling_mode`."""
    import gguf

    return gguf.PoolingType.MEAN if pooling_mode(src) == "mean" else gguf.PoolingType.CLS


def read_vocab(src: Path) -> Vocab:
    """The vocabulary from ``tokenizer.json`` (or ``vocab.txt``), in GGUF form.

    llama.cpp's WordPiece tokenizer wants word starts marked with U+2581
    and continuations (``##ing``) bare; special tokens stay as they are.
    """
    import gguf

    tokenizer_file = src / "tokenizer.json"
    if tokenizer_file.is_file():
        tok = read_json(tokenizer_file)
        model = tok.get("model", {})
        norm = tok.get("normalizer") or {}
        if model.get("type") != "WordPiece" or (tok.get("pre_tokenizer") or {}).get("type") != "BertPreTokenizer":
            raise ConversionError(f"{tokenizer_file}: only BERT WordPiece tokenizers are supported")
        if norm.get("type") != "BertNormalizer" or not norm.get("lowercase", False):
            raise ConversionError(f"{tokenizer_file}: only uncased (lowercasing) BERT tokenizers are supported")
        ids = model["vocab"]
        raw = sorted(ids, key=ids.get)
        if [ids[t] for t in raw] != list(range(len(raw))):
            raise ConversionError(f"{tokenizer_file}: token ids are not contiguous")
        added = {a["content"]: a for a in tok.get("added_tokens", [])}
    else:
        vocab_file = src / "vocab.txt"
        if not vocab_file.is_file():
            raise ConversionError(f"{src}: neither tokenizer.json nor vocab.txt is there")
        raw = vocab_file.read_text(encoding="utf-8").splitlines()
        added = {t: {"special": True} for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") if t in raw}

    tokens, types = [], []
    for t in raw:
        info = added.get(t)
        if info is not None and info.get("special"):
            tokens.append(t)
            types.append(gguf.TokenType.CONTROL)
        else:
            tokens.append(t[2:] if t.startswith("##") else PHANTOM_SPACE + t)
            types.append(gguf.TokenType.USER_DEFINED if info is not None else gguf.TokenType.NORMAL)
    index = {t: i for i, t in enumerate(raw)}
    special = {}
    for role, text in (("cls", "[CLS]"), ("sep", "[SEP]"), ("unk", "[UNK]"), ("pad", "[PAD]"), ("mask", "[MASK]")):
        if text not in index:
            raise ConversionError(f"{src}: the vocabulary has no {text} token")
        special[role] = index[text]
    return Vocab(tokens, [int(t) for t in types], special)


def _add_vocab(writer, vocab: Vocab, token_type_count: int) -> None:
    writer.add_token_type_count(token_type_count)
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre(BERT_UNCASED_PRE)
    writer.add_token_list(vocab.tokens)
    writer.add_token_types(vocab.token_types)
    # BERT wraps a text as [CLS] ... [SEP]: llama.cpp calls them BOS and EOS.
    writer.add_bos_token_id(vocab.special_ids["cls"])
    writer.add_eos_token_id(vocab.special_ids["sep"])
    writer.add_unk_token_id(vocab.special_ids["unk"])
    writer.add_sep_token_id(vocab.special_ids["sep"])
    writer.add_pad_token_id(vocab.special_ids["pad"])
    writer.add_mask_token_id(vocab.special_ids["mask"])
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    writer.add_add_sep_token(False)
    writer.add_bool("tokenizer.ggml.normalizer.lowercase", True)


def _add_tensors(writer, weights: Path, n_blocks: int) -> int:
    """Rename and add every tensor; returns how many were written."""
    import gguf
    from safetensors import safe_open

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, n_blocks)
    count = 0
    with safe_open(str(weights), framework="numpy") as f:
        for key in f.keys():
            hf_name = key[5:] if key.startswith("bert.") else key
            if hf_name.startswith(_DROPPED_PREFIXES):
                continue
            new_name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
            if new_name is None:
                raise ConversionError(f"{weights}: no GGUF name for tensor {key!r}")
            data = f.get_tensor(key)
            if data.dtype not in (np.float32, np.float16):
                data = data.astype(np.float32)
            if data.ndim >= 2 and new_name not in _KEEP_F32:
                data = data.astype(np.float16)
            else:
                data = data.astype(np.float32)
            writer.add_tensor(new_name, np.ascontiguousarray(data))
            count += 1
    return count
