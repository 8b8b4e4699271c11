"""Generate the trust benchmark's workspaces and questions (seeded, deterministic).

    python bench/trust/generate.py [--out bench/out/trust] [--check] [--update-digests]

Each workspace of ``manifest.json`` is one person's memory as memext reads
it: ``MEMORY.md`` for durable facts and ``memory/YYYY-MM-DD.md`` daily
logs, in one style (terse bullets, diary prose, a work log with ticket IDs
and hashes, meeting notes, chat transcripts, or bullets with German or
Portuguese entries beside English ones) and of a size counted in entries
(list items, paragraphs, turns). Facts (:mod:`trust.facts`) sit among
everyday entries (:mod:`trust.noise`) that mention the same people and near
topics; some facts change later, by memext's own supersede marks
(DESIGN.md §17) or by a later note saying so.

:mod:`trust.world` draws the cast and facts, :mod:`trust.notebook` writes
them out in the workspace's style, :mod:`trust.questions` asks.

Questions, each labelled (:class:`trust.layout.Label`):

- ``answerable``: a fact, asked in other words than the note's;
- ``absent_person``: a fact's question about someone the workspace never names;
- ``absent_topic``: about a person the notes mention, on a topic none of
  their entries holds;
- ``partial_overlap``: shares words with a note, asks what no note holds;
- ``absent_id``: an incident, ticket or commit ID no note holds (a present
  ID, or a 7+ character prefix of a present hash, is ``answerable``);
- ``superseded``: asks a fact that changed; the answer is the new entry,
  the old one (``stale``) is not.

``manifest.json`` fixes which workspaces form the tune half and which the
check half, chosen before any tuning so that each holds every size and
style: tune on the tune half only; the check half is never tuned on.

The same seed gives byte-identical files and questions; ``--check``
compares them with the digests the manifest recorded when the split was
made, ``--update-digests`` records new ones (after a deliberate change to
the generator, which changes the workspaces of both halves).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Sequence

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trust.notebook import Notebook
from trust.questions import KINDS, Asker, Question
from trust.world import Size, Spec, World, change_of, pick_facts

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.json"


@dataclass
class Workspace:
    spec: Spec
    files: dict[str, str]
    questions: list[Question]
    last_day: date
    entries: int  # what a person wrote as one thing each: items, paragraphs, turns

    def digest(self) -> str:
        h = hashlib.sha256()
        for path in sorted(self.files):
            h.update(path.encode() + b"\0" + self.files[path].encode() + b"\0")
        h.update(json.dumps([q.to_json() for q in self.questions], sort_keys=True).encode())
        return h.hexdigest()[:16]


# ---------------------------------------------------------------------------
# The suite


def load_manifest(path: Path = MANIFEST) -> tuple[int, list[Spec], dict[str, str]]:
    """The suite's seed, its workspaces in order, and their recorded digests."""
    data = json.loads(path.read_text(encoding="utf-8"))
    specs = [Spec(w["id"], w["style"], w["size"], w["lang"], w["half"]) for w in data["workspaces"]]
    return data["seed"], specs, {w["id"]: w.get("digest", "") for w in data["workspaces"]}


def build(spec: Spec, seed: int) -> Workspace:
    """One workspace and its questions, from the suite's seed and its id alone."""
    rng = random.Random(f"{seed}/{spec.id}")
    world = World(spec, rng)
    size = Size(spec.size)
    facts = pick_facts(world, size.facts, size.changes)
    changes = [change_of(world, old, explicit=(i % 2 == 0)) for i, old in enumerate(facts[: size.changes])]
    n_noise = spec.size - len(facts) - len(changes)
    assert n_noise >= 0, spec
    notebook = Notebook(world, facts, changes, n_noise)
    files, last, entries = notebook.write()
    asker = Asker(world, facts, changes, files)
    asker.answerable(size.asked)
    asker.superseded()
    asker.absent_person(size.negatives)
    asker.absent_topic(size.negatives)
    asker.partial_overlap(size.negatives)
    asker.absent_id(size.negatives)
    return Workspace(spec, files, asker.out, last, entries)


def build_suite(specs: Sequence[Spec] | None = None, seed: int | None = None) -> list[Workspace]:
    m_seed, m_specs, _ = load_manifest()
    return [build(s, m_seed if seed is None else seed) for s in (m_specs if specs is None else specs)]


def write_workspace(ws: Workspace, folder: Path) -> bool:
    """Write the files under ``folder`` (MEMORY.md, memory/...), leaving those
    already identical untouched so the index's sync has nothing to do.
    Returns whether anything changed."""
    changed = False
    wanted = {folder / p: text for p, text in ws.files.items()}
    for old in sorted(folder.rglob("*.md")):
        if old not in wanted:
            old.unlink()
            changed = True
    for path, text in wanted.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed = True
    return changed


def write_suite(suite: Sequence[Workspace], out: Path) -> None:
    """``out/<id>/workspace/`` and ``out/<id>/questions.json`` per workspace."""
    for ws in suite:
        write_workspace(ws, out / ws.spec.id / "workspace")
        q = out / ws.spec.id / "questions.json"
        text = json.dumps({"last_day": ws.last_day.isoformat(), "questions": [x.to_json() for x in ws.questions]}, indent=1) + "\n"
        if not q.exists() or q.read_text(encoding="utf-8") != text:
            q.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE.parents[1] / "bench" / "out" / "trust")
    ap.add_argument("--check", action="store_true", help="fail when a workspace differs from the manifest's digest")
    ap.add_argument("--update-digests", action="store_true", help="record the digests in manifest.json (the split stays)")
    args = ap.parse_args(argv)
    seed, specs, digests = load_manifest()
    suite = build_suite(specs, seed)
    write_suite(suite, args.out)
    bad = 0
    for ws in suite:
        counts = {k: sum(1 for q in ws.questions if q.kind == k) for k in KINDS}
        same = ws.digest() == digests.get(ws.spec.id)
        bad += not same
        print(
            f"{ws.spec.id:14} {ws.spec.half:5} {len(ws.files):4} files {ws.entries:5} entries  "
            + " ".join(f"{k}={v}" for k, v in counts.items())
            + ("" if same else "  (differs from the manifest)")
        )
    if args.update_digests:
        data = json.loads(MANIFEST.read_text(encoding="utf-8"))
        for w, ws in zip(data["workspaces"], suite):
            w["digest"] = ws.digest()
        MANIFEST.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 1 if args.check and bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
