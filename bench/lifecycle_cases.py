"""The cases bench/lifecycle.py prints beside its labelled sessions:
capture on conversations written the way people talk (bench/capture_talk.py,
a development half and a held-out half), sentences cut by the segmenter
in several languages (and captured), and consolidation's provenance
(dates, forgotten sources); the marks and dates of what search shows are
bench/lifecycle_marks.py's. DESIGN.md §17.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from capture_talk import ABBREVIATIONS_DEV, ABBREVIATIONS_HELD_OUT, DEV, HELD_OUT, Conversation, S, Turn

from memext.engine import MemoryIndex, apply_proposal, consolidate, recall
from memext.engine.agents.capture import capture
from memext.engine.config import parse_config
from memext.engine.memory.sentences import sentences


def agent(root: Path, ws: Path, agent_id: str = "bench", model: Path | None = None):
    """The bench agent, keyword-only, or with ``model`` (a GGUF file) as its local provider."""
    search: dict = {"provider": "none", "store": {"path": str(root / "{agent_id}.sqlite")}}
    if model is not None:
        search.update(provider="local", local={"model_path": str(model)})
    raw = {"memory_search": search, "agents": [{"id": agent_id, "workspace": str(ws)}]}
    return parse_config(raw, path=root / "config.toml").agents[0]


# -- capture on talk -------------------------------------------------------------------


@dataclass
class TalkFigures:
    """Capture on one half of the labelled conversations."""

    half: str
    turns: int = 0
    labelled: int = 0  # sentences worth storing (not restatements)
    written: int = 0
    correct: int = 0  # entries from a sentence worth storing
    found: int = 0  # sentences worth storing that gave an entry
    duplicates: int = 0  # entries for a restatement
    cut: int = 0  # entries that start or end inside a sentence
    changes: int = 0
    changes_captured: int = 0
    changes_superseded: int = 0  # ... and superseded the entry they replace
    wrong_supersedes: int = 0
    named: int = 0  # sentences about someone said with a pronoun
    named_right: int = 0  # ... stored naming that person
    wrong_category: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.correct / self.written if self.written else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.labelled if self.labelled else 1.0

    @property
    def change_share(self) -> float:
        return self.changes_captured / self.changes if self.changes else 1.0

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "notes"}
        out.update(precision=round(self.precision, 3), recall=round(self.recall, 3), change_share=round(self.change_share, 3))
        return out


def run_talk(half: str, conversations: tuple[Conversation, ...]) -> TalkFigures:
    """Capture each conversation (one run, as ``memext capture FILE`` does)
    into a fresh workspace holding its seed, and score the entries."""
    fig = TalkFigures(half)
    with tempfile.TemporaryDirectory(prefix="memext-talk-") as tmp:
        for conv in conversations:
            _score(fig, conv, Path(tmp) / conv.name)
    return fig


def _score(fig: TalkFigures, conv: Conversation, root: Path) -> None:
    ws = root / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(conv.seed, encoding="utf-8")
    fig.turns += len(conv.turns)
    with MemoryIndex(agent(root, ws), provider=None) as idx:
        idx.sync()
        report = capture([{"role": t.role, "content": t.text} for t in conv.turns], index=idx, now=datetime(2026, 11, 28, 22, 28))
    files = {p.relative_to(ws).as_posix(): p.read_text(encoding="utf-8").split("\n") for p in ws.rglob("*.md")}
    labelled = [(n, s) for n, t in enumerate(conv.turns) if t.role == "user" for s in t.sentences if isinstance(s, S) and s.category]
    fig.labelled += len(labelled)
    fig.changes += sum(1 for _, s in labelled if s.replaces)
    fig.named += sum(1 for _, s in labelled if s.named)
    got: set[tuple[int, str]] = set()
    for c in report.written:
        fig.written += 1
        turn = conv.turns[c.candidate.turn]
        said = c.candidate.sentence
        inside = [s for s in turn.sentences if (s.text if isinstance(s, S) else s) in said]
        if not _whole(turn, said):
            fig.cut += 1
            fig.notes.append(f"{conv.name}: cut mid-sentence: {said}")
        label = next((s for s in inside if isinstance(s, S)), None)
        if label is None:
            fig.notes.append(f"{conv.name}: stored unlabelled: {said}")
        elif label.dup:
            fig.duplicates += 1
            fig.notes.append(f"{conv.name}: stored a restatement: {said}")
        else:
            fig.correct += 1
            got.add((c.candidate.turn, label.text))
            if label.category != c.candidate.category:
                fig.wrong_category += 1
                fig.notes.append(f"{conv.name}: stored as {c.candidate.category}, labelled {label.category}: {said}")
            if label.named:
                if label.named.casefold() in c.candidate.text.casefold():
                    fig.named_right += 1
                else:
                    fig.notes.append(f"{conv.name}: stored without naming {label.named}: {c.candidate.text}")
        if c.supersedes:
            old = _cited_text(files, c.supersedes)
            if label is not None and label.replaces and label.replaces.casefold() in old.casefold():
                fig.changes_superseded += 1
            else:
                fig.wrong_supersedes += 1
                fig.notes.append(f"{conv.name}: {said!r} superseded {old!r}")
        elif label is not None and label.replaces:
            fig.notes.append(f"{conv.name}: change did not supersede: {said}")
    for n, s in labelled:
        if (n, s.text) in got:
            fig.found += 1
            fig.changes_captured += bool(s.replaces)
        else:
            fig.notes.append(f"{conv.name}: missed: {s.text}")
    for s in report.skipped:
        fig.notes.append(f"{conv.name}: skipped ({s.reason}): {s.candidate.text}")


def _whole(turn: Turn, said: str) -> bool:
    """Whether ``said`` is one of the turn's sentences or several of them
    in a row (a boundary missed), never part of one."""
    pieces = [s.text if isinstance(s, S) else s for s in turn.sentences]
    for i in range(len(pieces)):
        for j in range(i + 1, len(pieces) + 1):
            joined = Turn(turn.role, tuple(pieces[i:j])).text
            if joined == said:
                return True
    return False


def _cited_text(files: dict[str, list[str]], citation: str) -> str:
    path, lines = citation.rsplit(":", 1)
    a, _, b = lines.partition("-")
    return " ".join(files.get(path, [])[int(a) - 1 : int(b or a)])


# -- sentences cut ---------------------------------------------------------------------


@dataclass(frozen=True)
class CutFigures:
    half: str
    messages: int
    sentences: int
    cut: int  # sentences the segmenter cut in two (the target is 0)
    joined: int  # boundaries it missed (two sentences left as one)
    languages: tuple[str, ...]
    notes: tuple[str, ...]
    #: The messages captured (each a user's turn): entries written, and
    #: those holding part of a sentence (the target is 0).
    captured: int = 0
    captured_cut: int = 0


def run_cuts(half: str, messages: tuple[tuple[str, tuple[str, ...]], ...]) -> CutFigures:
    cut = joined = total = 0
    notes: list[str] = []
    for _language, said in messages:
        text = Turn("user", said).text
        total += len(said)
        got = sentences(text)
        bounds = _ends(text, list(said))
        found = _ends(text, got)
        cut += len(found - bounds)
        joined += len(bounds - found)
        if got != list(said):
            notes.append(" | ".join(got))
    captured, captured_cut = _capture_cuts(messages, notes)
    languages = tuple(sorted({lang for lang, _ in messages}))
    return CutFigures(half, len(messages), total, cut, joined, languages, tuple(notes), captured, captured_cut)


def _capture_cuts(messages: tuple[tuple[str, tuple[str, ...]], ...], notes: list[str]) -> tuple[int, int]:
    """Capture the messages as one conversation of the user's: (entries
    written, entries holding part of a sentence)."""
    turns = [Turn("user", said) for _, said in messages]
    written = cut = 0
    with tempfile.TemporaryDirectory(prefix="memext-cuts-") as tmp:
        root = Path(tmp)
        ws = root / "ws"
        (ws / "memory").mkdir(parents=True)
        (ws / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
        with MemoryIndex(agent(root, ws), provider=None) as idx:
            report = capture([{"role": t.role, "content": t.text} for t in turns], index=idx, now=datetime(2026, 11, 28, 22, 28))
    for c in report.written:
        written += 1
        if not _whole(turns[c.candidate.turn], c.candidate.sentence):
            cut += 1
            notes.append(f"captured part of a sentence: {c.candidate.sentence}")
    return written, cut


def _ends(text: str, pieces: list[str]) -> set[int]:
    """Where each piece but the last ends in ``text``."""
    out, at = set(), 0
    for piece in pieces[:-1]:
        at = text.find(piece, at) + len(piece)
        out.add(at)
    return out


# -- consolidation's provenance ----------------------------------------------------------

#: Daily notes of three days: facts asked for on two days each, one a
#: later note replaced, one an entry of two lines whose second line says
#: nothing alone.
NOTES = {
    "2026-03-01": (
        "# 2026-03-01\n\n## 09:10\nGullwing: store raw tide readings in InfluxDB.\n\n"
        "## 14:02\nFixed the BST offset bug in the tide importer.\nCommit 4e7b19c2 on branch `fix/bst-offset`.\n\n"
        "## 16:30\n- Pepper weighs 11 kg at the last vet visit.\n- The staging database lives on host db7.\n"
    ),
    "2026-03-02": "# 2026-03-02\n\n## 10:00\n- Anna leads the billing team.\n- The VPN password rotates every month.\n",
    "2026-03-05": "# 2026-03-05\n\n## 11:00\n- We switched Gullwing from InfluxDB to TimescaleDB, not InfluxDB any more.\n",
}
#: (question asked on two days, words of the line it finds)
ASKED = (
    ("Gullwing tide readings InfluxDB", "InfluxDB"),
    ("BST offset commit branch", "4e7b19c2"),
    ("Pepper weight vet", "Pepper"),
    ("staging database host", "db7"),
    ("who leads the billing team", "Anna"),
    ("VPN password rotation", "VPN"),
)


@dataclass(frozen=True)
class ConsolidationFigures:
    proposed: int
    dated: int  # proposed lines whose date is their source's
    cited: int  # proposed lines citing their source (from=)
    whole: int  # proposed lines holding their whole entry
    replaced_proposed: int  # the older side of a changed fact proposed (target 0)
    forgotten: int  # sources forgotten after applying
    copy_answers: int  # searches answered by the copy of a forgotten source (target 0)
    copy_recalled: int  # recalls handing on such a copy (target 0)
    listed_twice: int  # recalls listing one line twice (target 0)

    @property
    def date_share(self) -> float:
        return self.dated / self.proposed if self.proposed else 0.0


def run_consolidation() -> ConsolidationFigures:
    with tempfile.TemporaryDirectory(prefix="memext-consolidate-") as tmp:
        root = Path(tmp)
        ws = root / "ws"
        (ws / "memory").mkdir(parents=True)
        (ws / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
        for day, text in NOTES.items():
            (ws / "memory" / f"{day}.md").write_text(text, encoding="utf-8")
        with MemoryIndex(agent(root, ws), provider=None) as idx:
            idx.sync()
            for day in (datetime(2026, 3, 6, 9), datetime(2026, 3, 7, 9)):
                for question, _ in ASKED:
                    idx.search(question, now=day)
            proposal = consolidate(index=idx, now=datetime(2026, 3, 8, 12))
            texts = [f.text for f in proposal.facts]
            dated = sum(1 for f in proposal.facts if f.date == _source_day(f.source))
            cited = sum(1 for f in proposal.facts if f"from={f.source}" in f.line)
            whole = sum(1 for t in texts if "4e7b19c2" not in t or "BST offset" in t)
            replaced = sum(1 for t in texts if "store raw tide readings in InfluxDB" in t)
            apply_proposal(proposal, index=idx, now=datetime(2026, 3, 8, 12))
            answers = recalled = twice = forgotten = 0
            for question, _ in ASKED:
                r = recall(question, index=idx)
                texts_recalled = [re.sub(r"\W+", " ", x.snippet.lower()).strip(" -") for x in r.results]
                twice += len(set(texts_recalled)) != len(texts_recalled)
            for fact in proposal.facts:
                idx.forget(fact.source, "no longer true")
                forgotten += 1
                question = next(q for q, w in ASKED if w in fact.text)
                hits = idx.search(question).results
                answers += sum(1 for h in hits if h.path == "MEMORY.md")
                recalled += sum(1 for x in recall(question, index=idx).results if x.path == "MEMORY.md")
    return ConsolidationFigures(len(proposal.facts), dated, cited, whole, replaced, forgotten, answers, recalled, twice)


def _source_day(source: str) -> str | None:
    m = re.search(r"(\d{4}-\d{2}-\d{2})\.md", source)
    return m.group(1) if m else None


HALVES = (("dev", DEV, ABBREVIATIONS_DEV), ("held-out", HELD_OUT, ABBREVIATIONS_HELD_OUT))
