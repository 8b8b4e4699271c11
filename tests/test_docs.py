"""The documentation (README.md and docs/*.md) documents every config key
and every command: a key or a command added without a line in either fails
here."""

from __future__ import annotations

import re
from pathlib import Path

import click

from memext.cli import cli
from memext.engine.config import is_settings_class, setting_fields
from memext.engine.settings import AgentConfig, MemorySearchSettings

ROOT = Path(__file__).resolve().parent.parent
#: The README, then the reference pages under docs/.
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOCS = "\n".join(path.read_text(encoding="utf-8") for path in DOC_FILES)
#: AgentConfig fields that are not keys of an ``[[agents]]`` table.
NOT_AGENT_KEYS = {"settings": "the [agents.memory_search] table", "adhoc": "set when there is no config file"}


def config_keys(cls: type = MemorySearchSettings, prefix: str = "") -> set[str]:
    """The dotted TOML keys of a settings class and the ones inside it."""
    keys = set()
    for key, f in setting_fields(cls).items():
        if is_settings_class(f.type):
            keys |= config_keys(f.type, prefix + key + ".")
        else:
            keys.add(prefix + key)
    return keys


def agent_keys() -> set[str]:
    return {name for name in AgentConfig._fields if name not in NOT_AGENT_KEYS}


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets (defaults such as ``[["memory"]]``)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "[{(" and 1 or 0
        depth -= ch in "]})" and 1 or 0
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def documented_keys(text: str) -> set[str]:
    """Keys a document names in backticks: ``a.b`` or ``a.{b [default], c}``."""
    keys = set()
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)  # code blocks
    for span in re.findall(r"`([^`]+)`", prose):
        span = " ".join(span.split())
        grouped = re.fullmatch(r"([\w.]+)\.\{(.*)\}", span)
        if grouped:
            for item in _split_top_level(grouped.group(2)):
                word = re.match(r"\s*(\w+)", item)
                if word:
                    keys.add(f"{grouped.group(1)}.{word.group(1)}")
        elif re.fullmatch(r"[\w.]+", span):
            keys.add(span)
    return keys


def command_paths(group: click.Group, prefix: str) -> list[str]:
    out = []
    ctx = click.Context(group)
    for name in sorted(group.list_commands(ctx)):  # lazy commands included
        command = group.get_command(ctx, name)
        path = f"{prefix} {name}"
        out.append(path)
        if isinstance(command, click.Group):
            out += command_paths(command, path)
    return out


def test_the_walkers_find_keys_and_commands():
    assert {"provider", "chunking.tokens", "query.hybrid.mmr.lambda", "remote.batch.enabled"} <= config_keys()
    assert documented_keys('`x.{a [1], b [["m"]], c}` and `y.z` `not a key`') == {"x.a", "x.b", "x.c", "y.z"}
    assert {"memext search", "memext agents add", "memext model install", "memext tray"} <= set(command_paths(cli, "memext"))


def test_the_docs_folder_is_read():
    assert ROOT / "docs" / "configuration.md" in DOC_FILES


def test_every_config_key_is_documented():
    missing = sorted((config_keys() | agent_keys()) - documented_keys(DOCS))
    assert missing == [], "document these keys in docs/configuration.md"


def test_a_key_documented_nowhere_is_reported():
    # Leave the configuration page out and its keys are documented nowhere.
    others = "\n".join(p.read_text(encoding="utf-8") for p in DOC_FILES if p.name != "configuration.md")
    assert "query.hybrid.mmr.lambda" in config_keys() - documented_keys(others)


def test_every_command_is_documented():
    missing = [path for path in command_paths(cli, "memext") if path not in DOCS]
    assert missing == [], "document these commands in README.md (Using it) or docs/"


def test_every_command_is_named_in_the_readme_and_in_docs_cli():
    readme, reference = (ROOT / "README.md").read_text(encoding="utf-8"), (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    paths = command_paths(cli, "memext")
    assert [p for p in paths if p.count(" ") == 1 and p not in readme] == [], "name these commands in README.md"
    assert [p for p in paths if f"`{p}" not in reference] == [], "give these commands a line in docs/cli.md"


def test_every_tool_and_the_prompt_are_named_in_the_readme_and_in_docs_agents():
    from memext.engine import TOOLS
    from memext.engine.faces.mcp_server import RECALL_PROMPT

    for doc in ("README.md", "docs/agents.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        named = [f"`{name}`" for name in [*(t.name for t in TOOLS), RECALL_PROMPT, "message"]]
        assert [n for n in named if n not in text] == [], f"name these tools, the prompt or its argument in {doc}"


def _project_texts() -> dict[str, str]:
    """Python files and Markdown of the repository (not its venv or build)."""
    out = {}
    for folder in ("engine", "memext", "tray", "tests", "bench", "scripts"):
        for path in (ROOT / folder).rglob("*.py"):
            out[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    for path in [*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md")]:
        out[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    return out


def test_design_references_name_existing_sections():
    sections = set(re.findall(r"^## (\d+)\. ", (ROOT / "DESIGN.md").read_text(encoding="utf-8"), flags=re.MULTILINE))
    assert {"1", "7", "12"} <= sections
    wrong = []
    for name, text in _project_texts().items():
        wrong += [f"{name}: SPEC §{n} (the shared spec is not in the repository)" for n in re.findall(r"SPEC §(\d+)", text)]
        for first, last in re.findall(r"DESIGN\.md §(\d+)(?:-(\d+))?", text):
            wrong += [f"{name}: DESIGN.md §{n}" for n in (first, last) if n and n not in sections]
    assert wrong == []


def test_every_where_is_x_path_exists():
    """DESIGN.md's "Where is X" table answers each question with one path
    that exists (a move without updating it fails here)."""
    design = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
    table = design.split("Where is X", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    paths = [re.findall(r"`((?:engine|memext|tray)/[^`]*)`", row)[0] for row in rows]
    assert len(paths) >= 8
    assert [p for p in paths if not (ROOT / p).exists()] == []
