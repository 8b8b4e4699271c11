"""The "nothing" level of single lines for a model, measured on the LoCoMo dev split.

    python bench/line_null.py [--data PATH] [--model PATH] [--json]

A search calibrates a cosine against the index's own distribution: the
cosine of the query's ``CALIBRATION_DEPTH``-th nearest chunk is what a
chunk that merely shares the memory's style and topics reaches
(engine/search/confidence.py). A workspace of a few notes has no such
distribution, and a line has none of its own. This measures what a line
reaches by style alone: for every dev question (categories 1-4), the cosine
of its ``CALIBRATION_DEPTH``-th nearest line (a turn, as the memory file
holds it, less its speaker label) among its conversation's lines. Every
LoCoMo line opens with its speaker's name ("- **Caroline**: ...") and most
questions name a speaker, so with the label the measure is what a line
reaches by naming the person asked about; personal notes are not labelled
so (``--labels`` measures with them). The median over all questions is the
model's line null shipped in ``engine/search/lines.py`` (``LINE_NULLS``).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import locomo as L  # noqa: E402

from memext.engine.providers.local.model import LocalProvider  # noqa: E402
from memext.engine.search.confidence import CALIBRATION_DEPTH  # noqa: E402

_LABEL = re.compile(r"^- \*\*[^*]+\*\*: ")


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=L.DEFAULT_DATA)
    ap.add_argument("--model", type=Path, default=L.DEFAULT_MODEL)
    ap.add_argument("--labels", action="store_true", help="keep each line's speaker label")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    provider = LocalProvider(args.model)
    nulls: list[float] = []
    for sample in data:
        layout = L.build_layout(sample["conversation"])
        lines = [t if args.labels else _LABEL.sub("- ", t) for text in layout.files.values() for t in text if t.startswith("- ")]
        vectors = np.asarray(provider.embed_batch(lines), dtype=np.float32)
        for q in L.load_questions(sample, layout):
            cos = np.sort(vectors @ np.asarray(provider.embed_query(q.query), dtype=np.float32))[::-1]
            nulls.append(float(cos[CALIBRATION_DEPTH - 1]))
        print(f"{sample['sample_id']}: {len(lines)} lines, median so far {statistics.median(nulls):.3f}", file=sys.stderr)
    q1, median, q3 = statistics.quantiles(nulls, n=4)
    figures = {
        "model": args.model.name,
        "labels": args.labels,
        "questions": len(nulls),
        "line_null_median": round(median, 3),
        "q1": round(q1, 3),
        "q3": round(q3, 3),
    }
    print(
        json.dumps(figures)
        if args.json
        else f"{figures['model']}: line null (median of {len(nulls)} questions) {median:.3f} [q1 {q1:.3f}, q3 {q3:.3f}]"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
