"""Temporal decay (``query.hybrid.temporal_decay``, off by default): a
daily log's hits weigh less as its day grows older (DESIGN.md §7)."""

from __future__ import annotations

import math
import re
from datetime import date

_DATED = re.compile(r"(?:^|/)(\d{4})-(\d{2})-(\d{2})\.md$")


def decay_factor(path: str, half_life_days: float, today: date) -> float:
    """``exp(-ln2 * age / half_life)`` for dated daily files; 1 otherwise."""
    m = _DATED.search(path)
    if not m or path.rsplit("/", 1)[-1].upper() == "MEMORY.MD":
        return 1.0
    try:
        day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return 1.0
    age = max(0, (today - day).days)
    return math.exp(-math.log(2) * age / half_life_days)
