"""Running a memext ONNX embedding model (:mod:`convert_bert_onnx`) with
ONNX Runtime and the ``tokenizers`` library (the ``onnx`` extra).

:class:`OnnxEmbedder` offers what the local provider asks of a loaded model
(``embed``, ``n_ctx_train``, ``close``), as :class:`.runtime.LlamaEmbedder`
does for GGUF files. Texts are tokenised by the model's own tokenizer (it
travels in the file), cut to the context, sorted by length and run in
batches padded to their longest text, so that a batch of short texts costs
one call and long ones waste little on padding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ...errors import ProviderError
from .convert_bert_onnx import FORMAT_VERSION, META_FORMAT, META_MAX_POSITIONS, META_TOKENIZER

#: A batch holds at most this many tokens, padding included (rows x longest
#: row): short texts (entries, questions) share a call, while chunks of the
#: default size run one or two at a time, as padding and activations that
#: outgrow the cache cost more than a call (LoCoMo chunks indexed 12 %
#: faster than with 4,096).
BATCH_TOKENS = 512
#: ...and at most this many texts.
BATCH_ROWS = 64


class OnnxEmbedder:
    """One ONNX Runtime session and its tokenizer (not thread-safe: the
    provider serialises calls, as for llama.cpp)."""

    def __init__(self, model_file: Path, n_ctx: int, threads: int):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Spinning threads wait for work on a core another process may
        # need: on a busy machine they slowed llama.cpp's threads several
        # times over (model.default_threads), so ONNX Runtime's sleep.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ProviderError(f"{model_file} is not an ONNX model ONNX Runtime can load: {exc}") from exc
        meta = self.session.get_modelmeta().custom_metadata_map
        if meta.get(META_FORMAT) != FORMAT_VERSION or META_TOKENIZER not in meta:
            raise ProviderError(
                f"{model_file} is an ONNX model, but not one made by `memext model install` "
                f"(format {meta.get(META_FORMAT, 'none')!r}, expected {FORMAT_VERSION!r}, with the tokenizer inside)"
            )
        self._n_ctx_train = int(meta.get(META_MAX_POSITIONS, "512"))
        self.n_ctx = min(n_ctx, self._n_ctx_train) if self._n_ctx_train > 0 else n_ctx
        self.tokenizer = Tokenizer.from_str(meta[META_TOKENIZER])
        # A tokenizer.json may carry the padding and truncation its trainers
        # used (all-MiniLM-L6-v2: padded and cut to 128): batches are padded
        # here, and the context decides the cut, as with llama.cpp.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.n_ctx)

    def n_ctx_train(self) -> int:
        """The longest input the model was trained on (its position table)."""
        return self._n_ctx_train

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """L2-normalised vectors for ``texts``, in order."""
        if self.session is None:
            raise ProviderError("the ONNX model is closed")
        ids = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        out: list[list[float]] = [[] for _ in ids]
        for batch in batches([len(t) for t in ids]):
            width = max(len(ids[i]) for i in batch)
            input_ids = np.zeros((len(batch), width), np.int64)
            mask = np.zeros((len(batch), width), np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            (vectors,) = self.session.run(["embeddings"], {"input_ids": input_ids, "attention_mask": mask})
            for row, i in enumerate(batch):
                out[i] = vectors[row].tolist()
        return out

    def close(self) -> None:
        self.session = None


def batches(lengths: Sequence[int], max_tokens: int = BATCH_TOKENS, max_rows: int = BATCH_ROWS) -> list[list[int]]:
    """Indexes of ``lengths`` grouped shortest first, each group's rows x
    longest row within ``max_tokens`` (a text longer than that alone)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    groups: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # Sorted ascending, so this text is the group's longest.
        if current and ((len(current) + 1) * lengths[i] > max_tokens or len(current) >= max_rows):
            groups.append(current)
            current = []
        current.append(i)
    if current:
        groups.append(current)
    return groups
