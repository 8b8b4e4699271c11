"""Regenerate engine/data/minilm_reference.json, the vectors that
`memext model install minilm` checks its converted model against.

The reference model is the all-MiniLM-L6-v2 GGUF that llama.cpp's own
converter made from sentence-transformers/all-MiniLM-L6-v2 (it agrees with
the PyTorch model to cosine 0.9997). Run once, by hand:

    python scripts/make_model_reference.py /path/to/all-minilm-l6-v2-f16.gguf
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

from engine.providers.local import embed_isolated

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


def main(model: str) -> None:
    vectors = embed_isolated(Path(model), TEXTS)
    data = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "made_with": f"llama-cpp-python {version('llama-cpp-python')}, context 512, mean pooling, L2-normalised, "
        f"from {Path(model).name} (llama.cpp's converter)",
        "texts": TEXTS,
        "vectors": [[round(float(x), 6) for x in v] for v in vectors],
    }
    OUT.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(TEXTS)} vectors of {len(vectors[0])})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT.parent / "shared" / "models" / "all-minilm-l6-v2-f16.gguf"))
