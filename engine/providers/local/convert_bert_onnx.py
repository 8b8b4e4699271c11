"""Build an ONNX embedding model from a BERT sentence-transformers folder.

The graph is the model's forward pass written out with standard ONNX
operators (opset 20: ``LayerNormalization``, exact ``Gelu``), followed by
the folder's pooling (mean over the attention mask, or the first token)
and L2 normalisation, in float32. ONNX Runtime runs it with its own matrix
kernels, which reach a much larger share of the CPU's peak than llama.cpp
does for models this small (docs/benchmarks.md, "Local model").

The model's ``tokenizer.json`` travels inside the file (metadata
``memext.tokenizer``), so one file is the whole model, as a GGUF is; the
``tokenizers`` library reads it, whatever its kind (WordPiece, the
SentencePiece unigram vocabularies of multilingual models, ...).

Inputs of the graph: ``input_ids`` and ``attention_mask`` (int64, batch x
tokens); output: ``embeddings`` (float32, batch x hidden size).
Needs the ``onnx`` package (the ``onnx`` extra); covers what
:func:`convert_bert_gguf.check_supported` accepts.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .convert_bert_gguf import ConversionError, check_supported, pooling_mode, read_json

#: Metadata keys of a memext ONNX model (read by ``onnx_engine``).
META_TOKENIZER = "memext.tokenizer"
META_POOLING = "memext.pooling"
META_MAX_POSITIONS = "memext.max_positions"
META_FORMAT = "memext.format"
#: Bumped when the graph's inputs, outputs or metadata change meaning.
FORMAT_VERSION = "1"
OPSET = 20
#: What an attention score gets where the mask is 0 (as BERT's own code).
_MASKED = -10000.0


@dataclass(frozen=True)
class OnnxInfo:
    """What was written."""

    path: Path
    layers: int
    hidden_size: int
    pooling: str


def convert_bert_onnx(src: Path, out: Path, *, name: str, source_url: str = "", license: str = "") -> OnnxInfo:
    """Write ``src`` (a sentence-transformers BERT folder) to ``out`` as ONNX.

    The file appears atomically: a failed build leaves nothing at ``out``.
    """
    import onnx
    from onnx import TensorProto, helper

    src = Path(src)
    config = read_json(src / "config.json")
    check_supported(config, src)
    tokenizer_file = src / "tokenizer.json"
    if not tokenizer_file.is_file():
        raise ConversionError(f"{src}: tokenizer.json is missing (the ONNX model carries it)")
    tokenizer = tokenizer_file.read_text(encoding="utf-8")
    pooling = pooling_mode(src)
    weights = _read_weights(src / "model.safetensors")

    g = _Graph()
    x = _embeddings(g, weights, config)
    mask = g.node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    bias = g.node("Mul", [g.node("Sub", [g.const("one", np.float32(1)), mask]), g.const("masked", np.float32(_MASKED))])
    bias = g.node("Unsqueeze", [bias, g.const("axes_1_2", np.array([1, 2], np.int64))])  # batch x 1 x 1 x tokens
    for i in range(config["num_hidden_layers"]):
        x = _layer(g, weights, config, i, x, bias)
    pooled = _pool(g, x, mask, pooling)
    g.node("LpNormalization", [pooled], "embeddings", axis=-1, p=2)

    hidden = config["hidden_size"]
    graph = helper.make_graph(
        g.nodes,
        name,
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", hidden])],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="memext")
    model.ir_version = 9  # readable by ONNX Runtime 1.17 and later
    meta = {
        META_FORMAT: FORMAT_VERSION,
        META_TOKENIZER: tokenizer,
        META_POOLING: pooling,
        META_MAX_POSITIONS: str(config["max_position_embeddings"]),
        "memext.name": name,
        "memext.source_url": source_url,
        "memext.license": license,
    }
    helper.set_model_props(model, meta)
    onnx.checker.check_model(model)

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    try:
        onnx.save_model(model, str(tmp))
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return OnnxInfo(out, config["num_hidden_layers"], hidden, pooling)


def tokenizer_json(metadata: dict[str, str]) -> dict:
    """The tokenizer carried by a model's metadata (for tests and tools)."""
    return json.loads(metadata[META_TOKENIZER])


class _Graph:
    """Nodes and initialisers, with generated names."""

    def __init__(self) -> None:
        self.nodes: list = []
        self.initializers: list = []

    def const(self, name: str, value) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(self, op: str, inputs: list[str], output: str = "", **attrs) -> str:
        from onnx import helper

        output = output or f"{op.lower()}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output


def _read_weights(path: Path) -> dict[str, np.ndarray]:
    """float32 tensors by name, without the ``bert.`` prefix some checkpoints use."""
    from safetensors import safe_open

    if not path.is_file():
        raise ConversionError(f"{path} is missing")
    out = {}
    with safe_open(str(path), framework="numpy") as f:
        for key in f.keys():
            out[key.removeprefix("bert.")] = np.ascontiguousarray(f.get_tensor(key), dtype=np.float32)
    return out


def _weight(weights: dict[str, np.ndarray], name: str) -> np.ndarray:
    try:
        return weights[name]
    except KeyError:
        raise ConversionError(f"model.safetensors has no tensor {name!r}") from None


def _embeddings(g: _Graph, w: dict[str, np.ndarray], config: dict) -> str:
    """Word + position + token-type (segment 0) embeddings, layer-normalised."""
    eps = float(config.get("layer_norm_eps", 1e-12))
    shape = g.node("Shape", ["input_ids"])
    tokens = g.node("Gather", [shape, g.const("dim_1", np.array(1, np.int64))], axis=0)
    positions = g.node("Range", [g.const("zero", np.array(0, np.int64)), tokens, g.const("step", np.array(1, np.int64))])
    word = g.node("Gather", [g.const("word_embeddings", _weight(w, "embeddings.word_embeddings.weight")), "input_ids"], axis=0)
    pos = g.node("Gather", [g.const("position_embeddings", _weight(w, "embeddings.position_embeddings.weight")), positions], axis=0)
    x = g.node("Add", [word, pos])
    x = g.node("Add", [x, g.const("token_type_0", _weight(w, "embeddings.token_type_embeddings.weight")[0])])
    return g.node(
        "LayerNormalization",
        [x, g.const("emb_ln_w", _weight(w, "embeddings.LayerNorm.weight")), g.const("emb_ln_b", _weight(w, "embeddings.LayerNorm.bias"))],
        axis=-1,
        epsilon=eps,
    )


def _layer(g: _Graph, w: dict[str, np.ndarray], config: dict, i: int, x: str, bias: str) -> str:
    """One encoder layer: self-attention and feed-forward, each with its
    residual connection and layer norm (post-norm, as BERT)."""
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    if hidden % heads:
        raise ConversionError(f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    head = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    p = f"encoder.layer.{i}."

    def linear(inp: str, name: str) -> str:
        weight = g.const(f"l{i}.{name}.w", _weight(w, p + name + ".weight").T.copy())
        return g.node("Add", [g.node("MatMul", [inp, weight]), g.const(f"l{i}.{name}.b", _weight(w, p + name + ".bias"))])

    def norm(inp: str, name: str) -> str:
        return g.node(
            "LayerNormalization",
            [inp, g.const(f"l{i}.{name}.w", _weight(w, p + name + ".weight")), g.const(f"l{i}.{name}.b", _weight(w, p + name + ".bias"))],
            axis=-1,
            epsilon=eps,
        )

    split = f"split_{head}"
    if not any(t.name == split for t in g.initializers):
        g.const(split, np.array([0, 0, heads, head], np.int64))
        g.const("merge", np.array([0, 0, hidden], np.int64))
        g.const("scale", np.float32(1.0 / np.sqrt(head)))

    def heads_of(t: str) -> str:  # batch x heads x tokens x head
        return g.node("Transpose", [g.node("Reshape", [t, split])], perm=[0, 2, 1, 3])

    q = heads_of(linear(x, "attention.self.query"))
    k = g.node("Transpose", [g.node("Reshape", [linear(x, "attention.self.key"), split])], perm=[0, 2, 3, 1])
    v = heads_of(linear(x, "attention.self.value"))
    scores = g.node("Add", [g.node("Mul", [g.node("MatMul", [q, k]), "scale"]), bias])
    context = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), v])
    context = g.node("Reshape", [g.node("Transpose", [context], perm=[0, 2, 1, 3]), "merge"])
    x = norm(g.node("Add", [linear(context, "attention.output.dense"), x]), "attention.output.LayerNorm")
    ff = g.node("Gelu", [linear(x, "intermediate.dense")])  # exact (erf) GELU, BERT's "gelu"
    return norm(g.node("Add", [linear(ff, "output.dense"), x]), "output.LayerNorm")


def _pool(g: _Graph, x: str, mask: str, pooling: str) -> str:
    if pooling == "cls":
        return g.node("Gather", [x, g.const("first", np.array(0, np.int64))], axis=1)
    m = g.node("Unsqueeze", [mask, g.const("axis_2", np.array([2], np.int64))])
    axis = g.const("axis_1", np.array([1], np.int64))
    total = g.node("ReduceSum", [g.node("Mul", [x, m]), axis], keepdims=0)
    count = g.node("ReduceSum", [m, axis], keepdims=0)
    return g.node("Div", [total, count])
