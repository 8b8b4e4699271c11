"""Splitting texts into embedding requests, and running those requests.

Remote APIs limit each input (the model's input limit) and each request
(inputs per request, tokens per request). Inputs are cut to the input
limit; requests are packed greedily in order under both request limits and
sent with bounded concurrency. Token counts are estimates (chars/4, a CJK
character as one token: :func:`engine.text.estimate_tokens`).
"""

from __future__ import annotations

import math
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Callable, Sequence, TypeVar

from ..text import safe_cut, token_weight
from .base import EmbedProgress

V = TypeVar("V")


def cap_input(text: str, max_tokens: int) -> str:
    """``text`` cut to about ``max_tokens`` estimated tokens; never empty.

    Remote APIs reject an empty input, so an empty text becomes one space.
    """
    if not text:
        return " "
    budget = max_tokens * 4  # token_weight counts quarter tokens
    if token_weight(text) <= budget:
        return text
    # The longest prefix within budget (weight grows with the prefix).
    lo, hi = 0, min(len(text), budget)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if token_weight(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return safe_cut(text, lo) or " "


def estimated_tokens(text: str) -> int:
    return max(1, math.ceil(token_weight(text) / 4))


def pack(texts: Sequence[str], *, max_request_tokens: int, max_request_inputs: int) -> list[list[int]]:
    """Indices of ``texts`` grouped into requests, in order.

    Each group's estimated tokens stay within ``max_request_tokens`` (a text
    alone over it gets a request of its own) and its size within
    ``max_request_inputs``.
    """
    groups: list[list[int]] = []
    current: list[int] = []
    tokens = 0
    for i, text in enumerate(texts):
        t = estimated_tokens(text)
        if current and (tokens + t > max_request_tokens or len(current) >= max_request_inputs):
            groups.append(current)
            current, tokens = [], 0
        current.append(i)
        tokens += t
    if current:
        groups.append(current)
    return groups


def run_packed(
    texts: Sequence[str],
    groups: Sequence[Sequence[int]],
    send: Callable[[list[str]], list[V]],
    *,
    concurrency: int,
    progress: EmbedProgress | None = None,
) -> list[V]:
    """Send every group with at most ``concurrency`` requests in flight.

    Results come back in the order of ``texts``. The first failure cancels
    the requests not yet started and is raised.
    """
    out: list[V | None] = [None] * len(texts)
    total = len(texts)
    done = 0

    def finish(group: Sequence[int], vectors: list[V]) -> None:
        nonlocal done
        for i, v in zip(group, vectors):
            out[i] = v
        done += len(group)
        if progress is not None:
            progress(done, total)

    if concurrency <= 1 or len(groups) <= 1:
        for group in groups:
            finish(group, send([texts[i] for i in group]))
        return out  # type: ignore[return-value]

    pool = ThreadPoolExecutor(max_workers=min(concurrency, len(groups)), thread_name_prefix="memext-embed")
    try:
        futures = {pool.submit(send, [texts[i] for i in g]): g for g in groups}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for fut in finished:
                exc = fut.exception()
                if exc is not None:
                    raise exc
                finish(futures[fut], fut.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return out  # type: ignore[return-value]
