"""What `memext search` and `memext status` print (engine/faces/cli/output.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memext.engine.faces.cli.commands import cli
from memext.engine.faces.cli.output import human_size


@pytest.fixture
def config(tmp_path, workspace, monkeypatch) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    return cfg


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_the_matching_line_is_shown_with_its_number_and_gaps_are_marked(config, workspace):
    # `memext search PAYMENTS_API_KEY` must show line 16 of MEMORY.md:1-17, the one that matched.
    lines = [f"- filler line {i} about nothing in particular" for i in range(1, 18)]
    lines[15] = "- PAYMENTS_API_KEY lives in the team vault, not in .env"
    (workspace / "MEMORY.md").write_text("\n".join(lines) + "\n")
    r = run("search", "PAYMENTS_API_KEY")
    assert r.exit_code == 0, r.stdout
    out = r.stdout.splitlines()
    assert out[0].startswith("1. MEMORY.md:1-17")
    assert " > 16  - PAYMENTS_API_KEY lives in the team vault, not in .env" in out
    assert out[1].strip() == "⋮"  # lines 1-13 left out
    assert not any("filler line 1 " in line for line in out)
    data = json.loads(run("search", "PAYMENTS_API_KEY", "--json").output)["results"][0]
    assert data["best_line"] == 16 and data["excerpt"]["best_line"] == 16
    assert [ln["number"] for ln in data["excerpt"]["lines"]] == [14, 15, 16, 17]


def test_cjk_query_shows_the_sentence_not_the_heading(config, workspace):
    (workspace / "memory" / "2026-01-07.md").write_text(
        "# 2026-01-07\n\n## 早上\n" + "".join(f"- 第{i}项工作记录。\n" for i in range(12)) + "- 下午和同事喝咖啡。\n"
    )
    r = run("search", "咖啡")
    assert "下午和同事喝咖啡" in r.stdout and " > 16  - 下午和同事喝咖啡。" in r.stdout


def test_explain_is_a_small_table_not_json(config):
    r = run("search", "green", "tea", "--explain")
    assert r.exit_code == 0 and "{" not in r.stdout
    table = [line.split() for line in r.stdout.splitlines() if line.strip().split(" ")[0] in ("vector", "keyword", "fusion", "decay")]
    assert [row[0] for row in table[:4]] == ["vector", "keyword", "fusion", "decay"]
    keyword = table[1]
    assert keyword[1] == "#1" and keyword[2] == "1.000"  # rank and a 3-decimal score
    assert not any(len(tok.split(".")[-1]) > 3 for row in table for tok in row if tok.replace(".", "").replace("-", "").isdigit())


def test_highlights_are_only_the_terms_that_matched(config, workspace):
    r = CliRunner().invoke(cli, ["search", "when", "is", "the", "tea"], color=True, catch_exceptions=False)
    lines = r.stdout.splitlines()
    # "tea" carried the match and is bold; "is", "the", "when" (stop words) are not.
    assert " > 5  - Bob prefers green \x1b[33m\x1b[1mtea\x1b[0m." in lines
    assert "   4  - Anna is the tech lead of the billing team." in lines


@pytest.mark.parametrize("query", ["?!...;;", "*", '"'])
def test_a_query_without_words_is_refused(config, query):
    r = run("search", query)
    assert r.exit_code == 2 and "has no searchable words" in r.stderr and r.stdout == ""


def test_a_short_hash_finds_the_full_id(config, workspace):
    (workspace / "memory" / "2026-01-08.md").write_text("# 2026-01-08\n\n- Reverted commit 9f3c2ab1e7 after the outage.\n")
    hits = json.loads(run("search", "9f3c2ab", "--json").output)["results"]
    assert hits and hits[0]["path"] == "memory/2026-01-08.md" and hits[0]["best_line"] == 3


def test_search_in_a_folder_without_memory_says_so(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.delenv("MEMEXT_CONFIG", raising=False)
    monkeypatch.setenv("MEMEXT_WORKSPACE", str(empty))
    r = run("search", "anything")
    assert r.exit_code == 2 and "no memory files found in" in r.stderr and "memext agents add" in r.stderr
    assert r.stdout == "" and not list(
        Path(os.environ["XDG_STATE_HOME"] if "XDG_STATE_HOME" in os.environ else tmp_path).rglob("empty-*.sqlite")
    )


def test_a_closed_pipe_ends_the_search_quietly(config, workspace):
    # `memext search x | head -1` with a real pipe: enough output to fill it.
    for i in range(150):
        (workspace / "memory" / f"n{i}.md").write_text("".join(f"- deploy note {i}.{j} " + "word " * 40 + "\n" for j in range(10)))
    run("index")
    proc = subprocess.Popen(
        [sys.executable, "-m", "memext", "search", "-n", "200", "deploy", "note"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0  # as ripgrep's: the reader stopped, nothing failed
    assert first.startswith(b"1. ")
    assert "Broken pipe" not in err and "Traceback" not in err and "Exception ignored" not in err


def test_status_is_plain_words_and_fails_on_an_agent_in_error(config, workspace, tmp_path, monkeypatch):
    (workspace / "memory" / "big.md").write_text("x" * 20000)
    cfg = tmp_path / "small.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\nmax_file_bytes = 10240\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    run("index")
    r = run("status")
    assert r.exit_code == 0, r.stdout
    assert "None" not in r.stdout and "[keyword-only" not in r.stdout and "dims" not in r.stdout
    assert "w: keyword-only search" in r.stdout and "vectors    none stored yet" in r.stdout
    assert "memory/big.md: larger than the 10 KB limit (19.5 KB; max_file_bytes)" in r.stdout
    r = run("index")
    assert "[keyword-only]" in r.stdout and "[keyword-only: none" not in r.stdout
    # The workspace disappears: status shows the error line and exits 2.
    workspace.rename(tmp_path / "moved")
    run("index")
    r = run("status")
    assert r.exit_code == 2 and "error" in r.stdout and "does not exist" in r.stdout and "does not exist" in r.stderr


def test_a_binary_file_is_skipped_once_with_one_reason(config, workspace):
    (workspace / "memory" / "photo.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 40)
    r = run("index", "--json")
    report = json.loads(r.stdout)
    assert report["files_indexed"] == 3 and report["skipped"] == [
        {"path": "memory/photo.md", "reason": "binary content, not text: not indexed"}
    ]
    st = json.loads(run("status", "--json").output)[0]
    assert st["files"] == {"memory": 3} and len(st["skipped"]) == 1
    r = run("status")
    assert r.stdout.count("photo.md") == 1 and "(indexed)" not in r.stdout
    assert "changes" not in r.stdout and st["dirty"] is False  # not a pending change forever
    assert json.loads(run("search", "PNG", "IHDR", "--json").output)["results"] == []
    # A note that turns binary (overwritten by an image) leaves the index.
    note = workspace / "memory" / "2026-01-05.md"
    note.write_bytes(b"GIF89a\x00\x01" + bytes(range(256)) * 8)
    report = json.loads(run("index", "--json").output)
    assert report["files_deleted"] == 1 and len(report["skipped"]) == 2
    assert json.loads(run("search", "a828e60", "--json").output)["results"] == []


def test_human_sizes():
    assert [human_size(n) for n in (0, 512, 1024, 1536, 10 * 1024 * 1024)] == ["0 bytes", "512 bytes", "1 KB", "1.5 KB", "10 MB"]


def on_a_terminal(args: list[str]) -> str:
    """What `memext ARGS` writes to a real terminal (a pseudo-terminal, so
    click keeps what it would send to one; into a pipe it strips CSI)."""
    import pty

    main, sub = pty.openpty()
    # Wide enough that no note line wraps: the test reads sequences whole.
    env = {**os.environ, "COLUMNS": "300"}
    proc = subprocess.Popen([sys.executable, "-m", "memext", *args], stdin=sub, stdout=sub, stderr=sub, env=env)
    os.close(sub)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(60) == 0, b"".join(chunks)
    os.close(main)
    return b"".join(chunks).decode("utf-8")


#: Clear the screen (CSI 2J, and its one-character C1 form), retitle the
#: window (OSC 0) and write the clipboard (OSC 52), each ended by BEL.
HOSTILE = "\x1b[2J\x1b]0;owned\x07 \u009b2J \x1b]52;c;cm0gLXJmIH4=\x07"
RAW = ["\x1b[2J", "\x1b]0;", "\x1b]52;", "\x07", "\u009b"]
#: Every bidirectional-text control: embeddings, overrides, isolates and
#: marks (a line holding U+202E displays reversed from there on).
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
#: A note that reads "pay 100 to alice" but displays "pay ecila ot 001".
REVERSED = "pay \u202e100 to alice\u202c ok"


def test_control_sequences_in_a_note_are_shown_escaped_not_sent_to_the_terminal(config, workspace):
    note = f"# 2026-01-08\n\n- the walrus checklist {HOSTILE} ends here\n\tindented\n- walrus payment {REVERSED} {BIDI}\n"
    (workspace / "memory" / "2026-01-08.md").write_text(note)
    assert run("index").exit_code == 0
    found = on_a_terminal(["search", "walrus", "checklist"])
    got = on_a_terminal(["get", "memory/2026-01-08.md"])
    numbered = on_a_terminal(["get", "memory/2026-01-08.md", "-N"])
    as_json = [on_a_terminal(["get", "memory/2026-01-08.md", "--json"]), on_a_terminal(["search", "walrus", "--json"])]
    for out in (found, got, numbered, *as_json):
        assert not [seq for seq in [*RAW, *BIDI] if seq in out], repr(out)
    for out in (found, got, numbered):
        assert r"\x1b[2J\x1b]0;owned\x07 \x9b2J \x1b]52;c;cm0gLXJmIH4=\x07" in out, repr(out)
        assert r"pay \u202e100 to alice\u202c ok \u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c" in out
    assert "memory/2026-01-08.md:" in found and "\tindented" in got  # tab and newline pass as they are
    # --json keeps the text as it is, written with JSON's own escapes.
    assert r"\u009b2J" in as_json[0] and r"\u202e100" in as_json[0]
    data = json.loads(run("get", "memory/2026-01-08.md", "--json").output)
    assert HOSTILE in data["text"] and REVERSED in data["text"] and BIDI in data["text"]
    snippets = " ".join(r["snippet"] for r in json.loads(run("search", "walrus", "--json").output)["results"])
    assert HOSTILE in snippets and REVERSED in snippets


def _notes(r) -> list[str]:
    return [line for line in r.stderr.splitlines() if line.startswith("note: ")]


def test_keyword_only_is_said_once_per_workspace_and_reason_in_one_line(config, workspace, tmp_path, monkeypatch):
    first = run("search", "Anna")
    assert first.exit_code == 0 and _notes(first) == ['note: keyword-only search (provider = "none")']
    again = run("search", "green", "tea")
    assert again.exit_code == 0 and "Bob prefers green tea" in again.stdout and _notes(again) == []
    assert "keyword-only" in json.loads(run("search", "Anna", "--json").stdout)["notice"]  # JSON always carries it
    # Another workspace hears it too, once.
    other = tmp_path / "other"
    (other / "memory").mkdir(parents=True)
    (other / "MEMORY.md").write_text("- Anna has a cat.\n")
    config.write_text(config.read_text() + f'[[agents]]\nid = "o"\nworkspace = "{other}"\n')
    assert _notes(run("search", "Anna", "-a", "o")) == ['note: keyword-only search (provider = "none")']
    assert _notes(run("search", "Anna", "-a", "o")) == []
    # A new reason is said again: auto finding no model and no key. Its
    # cause is too long for one line, so the line points at `memext status`.
    config.write_text(config.read_text().replace('provider = "none"', 'provider = "auto"'))
    changed = _notes(run("search", "Anna", "-a", "w"))
    assert changed == ["note: keyword-only search; `memext status` says why and what to do"]
    assert _notes(run("search", "Anna", "-a", "w")) == []
    assert all(len(line) <= 79 for line in first.stderr.splitlines() + changed)
    assert "auto: no local model" in run("status", "-a", "w").stdout  # where the reason is said in full


def test_a_notice_remembered_by_an_earlier_install_is_not_said_again(tmp_path):
    # The file holds the first 32 hex digits of SHA-256 of the key, as
    # earlier installs wrote them with hashlib.
    import hashlib

    from memext.engine.faces.cli.one_time_notices import SaidOnce

    path = tmp_path / "said-once.json"
    path.write_text(json.dumps([hashlib.sha256("/ws\0keyword-only".encode()).hexdigest()[:32]]))
    said = SaidOnce(path)
    assert not said.first_time("/ws", "keyword-only")
    assert said.first_time("/ws", "another reason") and not said.first_time("/ws", "another reason")


def test_the_keyword_only_notice_is_said_when_its_memory_cannot_be_kept(config, tmp_path, monkeypatch):
    state = tmp_path / "state-file"
    state.write_text("")  # a file where the state folder should be: nothing can be written there
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    config.write_text(config.read_text() + f'[memory_search.store]\npath = "{tmp_path}/idx/{{agent_id}}.sqlite"\n')
    for _ in range(2):
        r = run("search", "Anna")
        assert r.exit_code == 0 and _notes(r) == ['note: keyword-only search (provider = "none")']


# -- long lines in an 80-column terminal ----------------------------------------------------

LONG_NOTE = (
    "- Berlin: the conference venue moved from the old brewery in Prenzlauer Berg to the Kulturforum near "
    "Potsdamer Platz; bring the printed badge, the PDF one is not accepted at the door."
)
URL_NOTE = "- https://example.com/a/very/long/url/without/any/spaces/that/cannot/be/broken/at/a/space/anywhere/at/all"
CJK_NOTE = "- 柏林会议的场地从普伦茨劳贝格的旧啤酒厂搬到了波茨坦广场附近的文化广场，请带上打印的胸牌，晚宴在周四晚上七点半。"


def _cells(line: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def _unwrapped(lines: list[str], gutter: int) -> list[str]:
    """The note lines put back together, spaces left out (a cut drops the
    space it was made at): a line starting with ``gutter`` spaces goes on
    the line above it (the hanging indent)."""
    out: list[str] = []
    for line in lines:
        if out and line.startswith(" " * gutter) and line[gutter] != " ":
            out[-1] += line[gutter:].replace(" ", "")
        else:
            out.append(line.replace(" ", ""))
    return out


def _search_output(args: list[str], config: Path, columns: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {"MEMEXT_CONFIG": str(config)}
    if columns:
        env["COLUMNS"] = columns
    r = subprocess.run([sys.executable, "-m", "memext", *args], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_long_note_lines_wrap_under_their_text_in_80_columns(config, workspace):
    (workspace / "memory" / "2026-11-20.md").write_text(f"# 2026-11-20\n\n{LONG_NOTE}\n- A short line.\n{URL_NOTE}\n{CJK_NOTE}\n")
    out = _search_output(["search", "brewery", "Berlin"], config, "80")
    assert out[0].startswith("1. memory/2026-11-20.md:3-6")
    assert all(_cells(line) <= 80 for line in out), out
    body = out[1 : out.index("")]
    gutter = len(" > 3  ")
    assert body[0] == " > 3  - Berlin: the conference venue moved from the old brewery in Prenzlauer"
    assert body[1] == " " * gutter + "Berg to the Kulturforum near Potsdamer Platz; bring the printed badge, the"
    # Every wrapped line hangs under the text, none under the line numbers.
    whole = [f" > 3  {LONG_NOTE}", "   4  - A short line.", f"   5  {URL_NOTE}", f"   6  {CJK_NOTE}"]
    assert _unwrapped(body, gutter) == [line.replace(" ", "") for line in whole]
    url = next(i for i, line in enumerate(body) if "https://" in line)
    assert body[url].startswith("   5  - https://example.com/") and _cells(body[url]) == 80  # a long word fills the line
    cjk = next(i for i, line in enumerate(body) if "柏林" in line)
    assert body[cjk + 1].startswith(" " * gutter) and _cells(body[cjk]) in (79, 80)  # wide characters count twice
    # Into a pipe without $COLUMNS nothing is wrapped: a line is a line.
    assert f" > 3  {LONG_NOTE}" in _search_output(["search", "brewery", "Berlin"], config, None)


def test_a_real_80_column_terminal_wraps_the_same(config, workspace):
    import fcntl
    import pty
    import struct
    import termios

    (workspace / "memory" / "2026-11-20.md").write_text(f"# 2026-11-20\n\n{LONG_NOTE}\n")
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")} | {"MEMEXT_CONFIG": str(config)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memext", "search", "brewery"], stdout=child, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env
    )
    os.close(child)
    raw = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        raw += chunk
    os.close(main)
    assert proc.wait(timeout=60) == 0
    import click

    lines = click.unstyle(raw.decode()).replace("\r\n", "\n").splitlines()
    assert lines[1] == " > 3  - Berlin: the conference venue moved from the old brewery in Prenzlauer"
    assert lines[2].startswith(" " * 6 + "Berg to the Kulturforum") and all(len(line) <= 80 for line in lines)
    assert "\x1b[" in raw.decode()  # a terminal: the matched word is highlighted, and wrapping kept it whole


def test_wrap_spans_cut_at_spaces_and_fill_lines_with_long_words():
    from memext.engine.faces.cli.output import wrap_spans

    text = "alpha beta gamma delta"
    assert [text[a:b] for a, b in wrap_spans(text, 11)] == ["alpha beta", "gamma delta"]
    word = "- abcdefghijkl"
    assert [word[a:b] for a, b in wrap_spans(word, 6)] == ["- abcd", "efghij", "kl"]
    assert [text[a:b] for a, b in wrap_spans(text, 80)] == [text]
    wide = "一二三四五"
    assert [wide[a:b] for a, b in wrap_spans(wide, 5)] == ["一二", "三四", "五"]
