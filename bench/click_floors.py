"""The floor commands ``bench/cold_start.py`` times beside a one-shot
``memext search``: bare click programs (run with ``python -c``) that do
the least a command of that kind must do, and the list of modules a
search loads, which one of them imports."""

from __future__ import annotations

import subprocess
import sys

#: The floor of any click command that answers from the index (argv: the
#: DB-API module memext uses, the index, an FTS5 MATCH expression): the
#: interpreter, click, the SQLite binding, one FTS5 query and the six best
#: texts printed. Nothing of memext: no config, no change check, no term
#: counts (the kept terms are worked out before timing), no snippets or
#: citations.
CLICK_FLOOR = """
import importlib, click
@click.command()
@click.argument("binding")
@click.argument("db")
@click.argument("match")
def main(binding, db, match):
    conn = importlib.import_module(binding).connect(db)
    ids = [r for (r,) in conn.execute(
        "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT 6", (match,))]
    marks = ",".join("?" * len(ids))
    for (text,) in conn.execute(f"SELECT text FROM chunks WHERE rowid IN ({marks})", ids):
        click.echo(text)
main()
"""


#: The floor of any click command that checks the memory files before it
#: answers (argv: as :data:`CLICK_FLOOR`, then the workspace): the same
#: command with a bare scandir + stat walk of the workspace first, nothing
#: compared, so a default search's check can cost no less.
CLICK_WALK_FLOOR = CLICK_FLOOR.replace(
    '@click.argument("match")\ndef main(binding, db, match):\n',
    '@click.argument("match")\n@click.argument("folder")\ndef main(binding, db, match, folder):\n'
    "    import os\n"
    "    stack = [folder]\n"
    "    while stack:\n"
    "        with os.scandir(stack.pop()) as it:\n"
    "            for e in it:\n"
    "                stack.append(e.path) if e.is_dir(follow_symlinks=False) else e.stat(follow_symlinks=False)\n",
)


#: The floor of a command that loads the code a search runs (argv: as
#: :data:`CLICK_FLOOR`; the module names are filled in): every module a
#: ``memext search --no-sync`` loads, imported in the order it loads them
#: and nothing of them called, then :data:`CLICK_FLOOR`. What a search
#: costs above it is its own work; what this costs above the bare command
#: is the code itself, read and defined.
CODE_FLOOR = (
    """
import importlib
for _name in MODULES:
    try:
        importlib.import_module(_name)
    except ImportError:  # a name listed that cannot be imported again (an alias some Python versions keep)
        pass
"""
    + CLICK_FLOOR
)


#: Runs ``memext`` with argv[1:] and prints the modules loaded by its end.
_MODULES_AT_EXIT = """
import atexit, sys
atexit.register(lambda: print("MODULES", *sorted(sys.modules), file=sys.stderr))
sys.argv[0] = "memext"
from memext.cli import main
sys.exit(main())
"""


def search_modules(args: list[str], env: dict[str, str]) -> list[str]:
    """The modules ``memext *args`` has loaded when it exits (the entry
    script and the interpreter's own left out)."""
    proc = subprocess.run(
        [sys.executable, "-c", _MODULES_AT_EXIT, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    said, found, names = proc.stderr.rpartition("MODULES ")
    if not found or "memext: " in said:  # memext's error line: the search did not run
        raise SystemExit(f"memext {' '.join(args)} did not run to its end: {said.strip() or proc.stderr.strip()}")
    return [n for n in names.split() if n != "__main__" and n not in sys.builtin_module_names]
