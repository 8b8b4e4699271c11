"""A randomized path fuzz of get() (DESIGN.md §8): >= 10,000 seeded cases, with a
thread swapping a memory file and a memory folder for symlinks to outside
content while they are read. Every answer is a ReadResult or a MemextError,
and no answer ever holds text from outside the agent's memory."""

from __future__ import annotations

import os
import random
import threading
from dataclasses import dataclass, field
from pathlib import Path

from memext.engine.errors import MemextError
from memext.engine.memory.read import read_lines

SECRET = "SECRET-outside-memory"
CASES = 12_000
SEED = 1313

PIECES = [
    "memory",
    "sub",
    "a.md",
    "b.md",
    "..",
    ".",
    "",
    "MEMORY.md",
    "memory.md",
    "README.md",
    "leak.md",
    "leakdir",
    "x.md",
    ".hidden.md",
    "notes.txt",
    "race.md",
    "racedir",
    "fifo.md",
    "secret.md",
    "outside",
    "dir",
    "extra",
    "e.md",
    "~",
    "x" * 300 + ".md",
    "\0",
    "a\0.md",
    "é.md",
    "\udc80.md",
    " ",
    "memory\\a.md",
    "%2e%2e",
    "*?.md",
    "a" * 5000,
    "MEMORY.MD",
    "sub/",
    "/",
    "//",
    "\n.md",
]


@dataclass
class Tally:
    cases: int = 0
    race_reads: int = 0
    read: int = 0
    refused: int = 0
    escapes: list = field(default_factory=list)
    crashes: list = field(default_factory=list)


def build(tmp_path: Path) -> tuple[Path, list[Path], Path]:
    ws = tmp_path / "ws"
    mem = ws / "memory"
    (mem / "sub").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# root\nsafe\n")
    (mem / "a.md").write_text("a safe\n")
    (mem / "sub" / "b.md").write_text("b safe\n")
    (ws / "README.md").write_text(SECRET)  # in the workspace, not memory
    (mem / ".hidden.md").write_text(SECRET)
    (mem / "notes.txt").write_text(SECRET)
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.md").write_text(SECRET)
    (outside / "dir" / "x.md").write_text(SECRET)
    os.symlink(outside / "secret.md", mem / "leak.md")
    os.symlink(outside / "dir", mem / "leakdir")
    (mem / "race.md").write_text("race safe\n")
    (mem / "racedir").mkdir()
    (mem / "racedir" / "x.md").write_text("racedir safe\n")
    os.mkfifo(mem / "fifo.md")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "e.md").write_text("extra safe\n")
    return ws, [extra], outside


def swapper(mem: Path, outside: Path, stop: threading.Event) -> None:
    """Swap race.md (atomically) and racedir for symlinks to outside and back."""
    n = 0
    while not stop.is_set():
        n += 1
        link = mem / f".link{n}"
        os.symlink(outside / "secret.md", link)
        os.replace(link, mem / "race.md")
        os.rename(mem / "racedir", mem / ".racedir-held")
        os.symlink(outside / "dir", mem / "racedir")
        plain = mem / f".plain{n}"
        plain.write_text("race safe\n")
        os.replace(plain, mem / "race.md")
        os.unlink(mem / "racedir")
        os.rename(mem / ".racedir-held", mem / "racedir")


def random_path(rng: random.Random, ws: Path, tmp: Path) -> object:
    roll = rng.random()
    if roll < 0.01:
        return rng.choice([None, 5, b"MEMORY.md", 3.5, ["MEMORY.md"]])
    parts = [rng.choice(PIECES) for _ in range(rng.randint(1, 6))]
    sep = rng.choice(["/", "/", "/", "//", os.sep, "/./"])
    path = sep.join(parts)
    prefix = rng.random()
    if prefix < 0.25:
        path = str(ws) + "/" + path
    elif prefix < 0.35:
        path = str(tmp) + "/" + path
    elif prefix < 0.4:
        path = "/" + path
    elif prefix < 0.45:
        path = "~/" + path
    if rng.random() < 0.5 and not path.endswith(".md"):
        path += ".md"
    if rng.random() < 0.1:
        i = rng.randrange(len(path) + 1)
        path = path[:i] + chr(rng.choice([0, 1, 0x7F, 0xA0, 0x2028, 0xDC80, 0xFEFF, 0x10FFFF, rng.randrange(0x20, 0xD7FF)])) + path[i:]
    return path


def one_read(raw, ws, extras, tally: Tally, from_line=None, lines=None) -> None:
    try:
        result = read_lines(raw, ws, extras, from_line, lines)
    except MemextError:
        tally.refused += 1
        return
    except Exception as exc:  # noqa: BLE001 - counting them is the point
        tally.crashes.append((raw, f"{type(exc).__name__}: {exc}"))
        return
    tally.read += 1
    if SECRET in result.text:
        tally.escapes.append(raw)


def test_fuzzed_paths_never_escape_and_never_crash(tmp_path):
    ws, extras, outside = build(tmp_path)
    rng = random.Random(SEED)
    tally = Tally()
    stop = threading.Event()
    swap = threading.Thread(target=swapper, args=(ws / "memory", outside, stop), daemon=True)
    swap.start()
    try:
        while tally.cases < CASES:
            tally.cases += 1
            if rng.random() < 0.3:
                tally.race_reads += 1
                raw = rng.choice(["memory/race.md", "memory/racedir/x.md", str(ws / "memory" / "race.md")])
                one_read(raw, ws, extras, tally)
                continue
            window = rng.choice([(None, None), (None, None), (1, 5), (0, 1), (3, -2), (10**12, 10**12), ("1", None), (True, 2)])
            one_read(random_path(rng, ws, tmp_path), ws, extras, tally, *window)
    finally:
        stop.set()
        swap.join(10)
    print(
        f"\nget() fuzz: {tally.cases} cases ({tally.race_reads} during the symlink-swap race): "
        f"{tally.read} read, {tally.refused} refused with a MemextError, "
        f"{len(tally.escapes)} escapes, {len(tally.crashes)} non-memext exceptions"
    )
    assert tally.cases >= 10_000 and tally.race_reads >= 3_000
    assert tally.escapes == []
    assert tally.crashes == [], tally.crashes[:5]
    # The race really ran both ways: some reads saw the file, some the symlink.
    assert tally.read > 0 and tally.refused > 0
