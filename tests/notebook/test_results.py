"""The result views: HTML escaping, term highlighting, text, JSON, pandas."""

from __future__ import annotations

import copy
import json
import pickle
import re
from html.parser import HTMLParser

import pytest
from conftest import make_agent

from memext import FileLines, SearchResults, StatusTable
from memext.engine import MemoryIndex, ReadResult, SearchResponse, SearchResult
from memext.render import COPY_HANDLER, MARK_STYLE, highlight_html, score_bar_html, term_spans

HOSTILE = (
    "# Notes\n\n"
    '- The intern pasted <script>alert("pwned")</script> into the wiki.\n'
    '- Also <img src=x onerror="alert(1)"> and a <b>bold</b> claim & more.\n'
)
ALLOWED_TAGS = {"div", "span", "code", "pre", "mark", "button", "table", "thead", "tbody", "tr", "th", "td"}
HIT = '<mark class="memext-hit" style="' + MARK_STYLE + '">'


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


@pytest.fixture
def hostile_results(tmp_path) -> SearchResults:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-01-01.md").write_text(HOSTILE, encoding="utf-8")
    with MemoryIndex(make_agent(ws, provider="none"), provider=None) as idx:
        idx.sync()
        return SearchResults(idx.search("script intern onerror"), "test")


def test_note_markup_renders_as_text(hostile_results):
    html = hostile_results.to_html()
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    hit = f"{HIT}script</mark>"
    assert f"&lt;{hit}&gt;alert(&quot;pwned&quot;)&lt;/{hit}&gt;" in html
    assert "&lt;img src=x <mark" in html and "&amp; more" in html
    tags = _tags(html)
    assert {t for t, _ in tags} <= ALLOWED_TAGS
    # The only handler is the copy button's, a constant that reads the
    # (escaped) citation from data-cite: no code is built from note text.
    handlers = [(t, k, v) for t, attrs in tags for k, v in attrs.items() if k.startswith("on")]
    assert handlers and all((t, k, v) == ("button", "onclick", COPY_HANDLER) for t, k, v in handlers)


def test_query_and_errors_are_escaped_too():
    resp = SearchResponse(
        query='<img src=x onerror="1">',
        results=[],
        mode="keyword",
        provider="none",
        model="",
        notice="<i>notice</i>",
        error="<b>down</b>",
    )
    html = SearchResults(resp, "a<b").to_html()
    assert {t for t, _ in _tags(html)} <= ALLOWED_TAGS
    assert "&lt;i&gt;notice&lt;/i&gt;" in html and "&lt;b&gt;down&lt;/b&gt;" in html and "no memory matches" in html


def test_highlighting_marks_whole_words_case_insensitively():
    assert term_spans("Vet visit; velvet; VET.", "vet") == [(0, 3), (19, 22)]
    assert highlight_html("a & amp <x>", "amp") == f"a &amp; {HIT}amp</mark> &lt;x&gt;"
    # Terms inside what becomes an entity are not broken apart.
    assert highlight_html("<lt>", "lt") == f"&lt;{HIT}lt</mark>&gt;"
    assert highlight_html("no match here", "zebra") == "no match here"
    assert highlight_html("anything", "") == "anything"


def test_highlighting_cjk_grams():
    html = highlight_html("今天和同事喝咖啡。", "咖啡")
    assert f"{HIT}咖啡</mark>" in html


def test_score_bar_clamps():
    assert "width:100.0%" in score_bar_html(1.7)
    assert "width:0.0%" in score_bar_html(-1)
    assert "width:42.0%" in score_bar_html(0.42)


def _response(**kw) -> SearchResponse:
    hits = [
        SearchResult("MEMORY.md", 3, 9, 0.91, "- Dana likes green tea.\n- Bob likes coffee.", "memory"),
        SearchResult(
            "sessions/a.jsonl",
            1,
            4,
            0.40,
            "User: tea?",
            "sessions",
            explain={
                "vector": {"rank": 3, "similarity": 0.41234567},
                "keyword": {"rank": 2, "score": 0.5, "bm25": -1.5},
                "fusion": {"method": "weighted", "vector": 0.2, "text": 0.2},
                "decay": 1.0,
            },
        ),
    ]
    base = dict(query="green tea", results=hits, mode="hybrid", provider="openai", model="text-embedding-3-small")
    base.update(kw)
    return SearchResponse(**base)


def test_list_behaviour_and_conversions():
    r = SearchResults(_response(), "work")
    assert len(r) == 2 and r[0].path == "MEMORY.md" and [h.score for h in r] == [0.91, 0.40]
    assert r[-1].source == "sessions" and len(r[:1]) == 1 and r[0] in r
    assert r.citations == ["MEMORY.md:3-9", "sessions/a.jsonl:1-4"]
    data = json.loads(r.to_json())
    assert data["agent"] == "work" and data["provider"] == "openai"
    assert data["results"][1]["explain"]["keyword"]["rank"] == 2 and data["results"][0]["citation"] == "MEMORY.md:3-9"
    df = r.to_dataframe()
    assert df.shape == (2, 7) and df.loc[1, "source"] == "sessions"


def test_text_view():
    text = repr(SearchResults(_response(), "work"))
    lines = text.splitlines()
    assert lines[0] == "2 results for 'green tea' in work [hybrid · openai text-embedding-3-small]"
    assert lines[1].startswith("1. MEMORY.md:3-9  █████████░ 0.910")
    assert "   - Dana likes green tea." in lines
    assert "2. sessions/a.jsonl:1-4  ████░░░░░░ 0.400  [sessions]" in lines
    # --explain: a small table with rounded numbers, not a JSON line.
    assert "   how it scored:" in lines and "{" not in text
    assert "     vector   #3  0.412  cosine similarity" in lines
    assert "     fusion       0.400  weighted: vector 0.200 + text 0.200" in lines
    assert "note:" not in text  # healthy hybrid search: nothing to warn about


def test_notices_for_keyword_only_fallback_and_errors():
    kw = SearchResults(_response(mode="keyword", provider="none", model="", notice="auto: no provider"), "w")
    assert kw.notices() == ["auto: no provider"]
    assert "[keyword-only]" in repr(kw) and "note: auto: no provider" in repr(kw)
    fb = SearchResults(_response(provider="local", fallback={"from": "openai", "reason": "HTTP 401"}), "w")
    assert fb.notices() == ["fallback in force: openai failed (HTTP 401), using local"]
    assert "fallback in force" in fb.to_html()
    err = SearchResults(_response(mode="keyword", error="openai: timeout", notice="embedding the query failed"), "w", syncing=True)
    html = err.to_html()
    assert 'class="memext-error"' in html and "openai: timeout" in html
    assert any("syncing" in n for n in err.notices())


def test_json_view_mimebundle():
    r = SearchResults(_response(), "w", as_json=True)
    bundle = r._repr_mimebundle_()
    assert set(bundle) == {"application/json", "text/plain"}
    assert r._repr_html_() is None and json.loads(repr(r))["query"] == "green tea"


def test_file_lines_is_the_text():
    read = ReadResult("MEMORY.md", "a\nb <b>\nc", 8, 10, 12, truncated=True)
    text = FileLines(read)
    assert text == "a\nb <b>\nc" and text.upper() == "A\nB <B>\nC" and text.citation == "MEMORY.md:8-10"
    assert text.to_text().splitlines() == [
        "MEMORY.md:8-10 (of 12 lines)",
        " 8  a",
        " 9  b <b>",
        "10  c",
        "stopped at line 10 of 12; continue with %memget MEMORY.md:11-",
    ]
    assert "b &lt;b&gt;" in text._repr_html_() and "<b>" not in text._repr_html_()
    for clone in (pickle.loads(pickle.dumps(text)), copy.copy(text)):
        assert clone == text


def test_status_table_escapes_and_reports_problems(tmp_path):
    ws = tmp_path / "odd <b>name</b>"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# hi\n", encoding="utf-8")
    with MemoryIndex(make_agent(ws, "odd", provider="none"), provider=None) as idx:
        idx.sync()
        table = StatusTable([idx.status()], errors={"broken": "config <x> is bad"})
    html = table._repr_html_()
    assert "odd &lt;b&gt;name&lt;/b&gt;" in html and "config &lt;x&gt; is bad" in html
    assert {t for t, _ in _tags(html)} <= {"div", "span"}  # stacked, no table to overflow a narrow cell
    row = table.rows()[0]
    assert (row["agent"], row["files"], row["chunks"], row["state"]) == ("odd", 1, 1, "up to date")
    text = repr(table)
    assert "broken: error: config <x> is bad" in text
    assert json.loads(table.to_json())[0]["agent"] == "odd"


def test_only_the_words_that_carried_the_match_are_marked(tmp_path):
    # Not every "when", "is", "the": only the words that matched.
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-10-24.md").write_text(
        "# 2026-10-24\n\n- The Berlin trip is booked: when is the flight? At 07:05.\n", encoding="utf-8"
    )
    with MemoryIndex(make_agent(ws, provider="none"), provider=None) as idx:
        idx.sync()
        r = SearchResults(idx.search("when is the Berlin trip?"), "w")
    marked = re.findall(r'<mark class="memext-hit"[^>]*>([^<]*)</mark>', r.to_html())
    assert sorted(set(marked)) == ["Berlin", "trip"]
    assert "\x1b[1;33mBerlin\x1b[0m \x1b[1;33mtrip\x1b[0m is booked: when is the" in r.to_text(color=True)


def test_status_says_plain_words_and_one_line_per_shared_reason(tmp_path):
    agents = []
    for name in ("one", "two"):
        ws = tmp_path / name
        (ws / "memory").mkdir(parents=True)
        (ws / "MEMORY.md").write_text("# hi\n", encoding="utf-8")
        agents.append(make_agent(ws, name, provider="none"))
    with MemoryIndex(agents[0], provider=None) as one, MemoryIndex(agents[1], provider=None) as two:
        one.sync()
        (tmp_path / "one" / "MEMORY.md").write_text("# hi again\n", encoding="utf-8")
        table = StatusTable([one.status(), two.status()])
    rows = {r["agent"]: r for r in table.rows()}
    assert rows["one"]["state"] == "files changed since the last sync"  # not "dirty"
    assert rows["two"]["state"] == "not indexed yet" and rows["two"]["last sync"] == "never"
    assert rows["one"]["search"] == "keyword-only"
    text = repr(table)
    assert "dirty" not in text and "None" not in text
    assert text.count("keyword-only search") == 1 and "one, two: no provider given: keyword-only search" in text
    html = table._repr_html_()
    # One block per agent, whose short facts wrap between items (never
    # inside one) and whose folder wraps anywhere: nothing wider than the cell.
    assert html.count('class="memext-status-agent"') == 2 and "<table" not in html
    assert "flex-wrap:wrap" in html and 'style="white-space:nowrap;flex:none;max-width:100%;margin-right:1.5em"><span' in html
    assert '<div class="memext-fact" style="overflow-wrap:anywhere">' in html


#: Terminal control sequences and bidirectional controls (U+202E displays
#: what follows reversed; the isolates and marks reorder too).
CONTROLS = "\x1b[2J\x1b]0;owned\x07 \u009b2J"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
RAW = ["\x1b", "\x07", "\u009b", *BIDI]


def test_control_and_bidi_characters_are_shown_escaped_in_every_form(tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    note = f"- the walrus payment: pay \u202e100 to alice\u202c now {CONTROLS} {BIDI}\n"
    (ws / "memory" / "2026-01-01.md").write_text(note, encoding="utf-8")
    with MemoryIndex(make_agent(ws, provider="none"), provider=None) as idx:
        idx.sync()
        results = SearchResults(idx.search("walrus payment"), "test")
        lines = FileLines(idx.get("memory/2026-01-01.md"))
    assert len(results) == 1
    forms = {
        "text": results.to_text(),
        "colour": results.to_text(color=True).replace("\x1b[1;33m", "").replace("\x1b[0m", ""),
        "repr": repr(results),
        "html": results.to_html(),
        "json": results.to_json(),
        "get text": lines.to_text(),
        "get html": lines._repr_html_(),
    }
    for name, shown in forms.items():
        assert not [c for c in RAW if c in shown], (name, shown)
        assert r"\u202e100 to alice\u202c" in shown, (name, shown)
    for name in ("text", "repr", "get text"):
        assert r"\x1b[2J\x1b]0;owned\x07 \x9b2J" in forms[name]
    # JSON keeps the data: the same text once read back.
    assert note.strip() in json.loads(forms["json"])["results"][0]["snippet"]
    assert str(lines) == note.rstrip("\n")  # the str itself is the text read, unescaped
