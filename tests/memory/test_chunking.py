"""Chunk boundaries, caps and line ranges (DESIGN.md §3)."""

from __future__ import annotations

import pytest

from memext.engine.memory.chunking import chunk_lines, chunk_markdown, split_lines
from memext.engine.text import token_weight


def _cap_holds(chunks, tokens):
    return all(token_weight(c.text) <= tokens * 4 for c in chunks)


def _lines_match(text, chunks):
    """Every chunk's text is made of the file's lines start..end."""
    lines = split_lines(text)
    for c in chunks:
        whole = "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.text in whole or whole in c.text, (c.start_line, c.end_line)


def test_short_file_is_one_chunk_with_1_based_lines():
    text = "# Title\n\nfirst\nsecond\n"
    chunks = chunk_markdown(text, 400, 80)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 4)]
    assert chunks[0].text == "# Title\n\nfirst\nsecond"


def test_cap_holds_including_overlap_and_overlap_repeats_lines():
    text = "\n".join(f"line {i:03d} " + "word " * 20 for i in range(200))
    chunks = chunk_markdown(text, tokens=100, overlap=40)  # lines of ~28 tokens
    assert len(chunks) > 5
    assert _cap_holds(chunks, 100)
    for a, b in zip(chunks, chunks[1:]):
        assert b.start_line <= a.end_line  # overlap shares lines
        assert b.end_line > a.end_line  # but always moves forward
    _lines_match(text, chunks)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 200


def test_5000_character_line_is_split_without_duplicates():
    line = "".join(f"token{i} " for i in range(700))[:5000]
    text = f"before\n{line}\nafter\n"
    chunks = chunk_markdown(text, tokens=400, overlap=80)
    assert _cap_holds(chunks, 400)
    long_parts = [c for c in chunks if c.start_line <= 2 <= c.end_line]
    # Pieces of the long line together hold it exactly once: no duplicate
    # chunks of twice the cap as in the reference.
    joined = "".join(c.text.replace("before\n", "").replace("\nafter", "") for c in long_parts)
    assert joined == line
    assert len({c.text for c in chunks}) == len(chunks)
    assert all(c.start_line >= 1 and c.end_line <= 3 for c in chunks)


def test_crlf_and_cr_line_endings_number_lines_like_editors():
    text = "# A\r\nalpha\r\n\r\n## B\rbeta\r\n"
    assert split_lines(text) == ["# A", "alpha", "", "## B", "beta"]
    chunks = chunk_markdown(text, 400, 80)
    assert chunks[0].start_line == 1 and chunks[0].end_line == 5
    assert "\r" not in chunks[0].text


def test_chunk_ends_before_a_heading_in_the_second_half():
    body = "\n".join("x" * 60 for _ in range(14))  # ~854 chars
    text = f"# One\n{body}\n## Two\n" + "\n".join("y" * 60 for _ in range(14))
    chunks = chunk_markdown(text, tokens=400, overlap=80)
    second = [c for c in chunks if c.text.startswith("## Two")]
    assert second, [c.text[:10] for c in chunks]
    assert second[0].start_line == 16
    assert not any(c.text.rstrip().endswith("## Two") for c in chunks)


def test_heading_inside_code_fence_is_not_a_heading():
    fence = "```bash\n# not a heading\n```"
    text = "\n".join("z" * 60 for _ in range(18)) + "\n" + fence + "\n" + "\n".join("z" * 60 for _ in range(18))
    chunks = chunk_markdown(text, tokens=400, overlap=0)
    assert not any(c.text.startswith("# not a heading") for c in chunks)


def test_cjk_counts_one_token_per_character():
    text = "\n".join("咖啡很好喝" * 20 for _ in range(10))  # 100 CJK chars per line
    chunks = chunk_markdown(text, tokens=400, overlap=80)
    assert _cap_holds(chunks, 400)
    assert all(len(c.text) <= 400 + 10 for c in chunks)  # 1 token each, not chars/4
    assert len(chunks) >= 3


def test_long_cjk_line_split_never_exceeds_cap():
    text = "".join(chr(0x4E00 + (i * 7) % 5000) for i in range(6000))
    chunks = chunk_markdown(text, tokens=100, overlap=20)
    assert _cap_holds(chunks, 100)
    assert "".join(c.text for c in chunks) == text


def test_surrogate_pair_is_never_split():
    # Emoji are outside the BMP: check no chunk ends in half a pair when text
    # was decoded with surrogatepass (lone surrogates in Python strings).
    text = ("a" * 399 + "\U0001f600") * 3
    for c in chunk_markdown(text, tokens=100, overlap=0):
        c.text.encode("utf-8")  # raises on a lone surrogate


def test_whitespace_only_chunks_are_dropped_and_blank_edges_trimmed():
    text = "\n\n   \n\nreal content\n\n\n"
    chunks = chunk_markdown(text, 400, 80)
    assert [(c.start_line, c.end_line, c.text) for c in chunks] == [(5, 5, "real content")]
    assert chunk_markdown("  \n\t\n", 400, 80) == []


def test_numbered_lines_can_share_a_number():
    lines = [(3, "User: hello"), (3, "second line of the same record"), (7, "Assistant: hi")]
    chunks = chunk_lines(lines, 400, 80)
    assert [(c.start_line, c.end_line) for c in chunks] == [(3, 7)]


@pytest.mark.parametrize("tokens,overlap", [(0, 0), (10, 10), (10, 20)])
def test_bad_budgets_are_rejected(tokens, overlap):
    with pytest.raises(ValueError):
        chunk_lines([(1, "x")], tokens, overlap)
