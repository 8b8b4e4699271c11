"""`make demo` and scripts/demo.py."""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_make_demo_says_what_it_does_before_the_long_build(tmp_path):
    if shutil.which("make") is None:
        pytest.fail("make is needed (scripts/install-system-deps.sh installs it)")
    # -n: print the recipe without running it; an empty VENV has no llama_cpp,
    # so the notice's guard is printed as it would run.
    out = subprocess.run(
        ["make", "-n", "demo", f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    install = next(i for i, line in enumerate(out) if "pip install" in line and ".[local]" in line)
    notice = next(i for i, line in enumerate(out) if "echo" in line and "llama-cpp-python" in line)
    assert notice < install and "minutes" in out[notice]


def _demo_module():
    spec = importlib.util.spec_from_file_location("memext_demo", ROOT / "scripts" / "demo.py")
    assert spec and spec.loader
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    return demo


def test_the_demo_prints_commands_a_shell_reads_back_as_run(tmp_path, workspace, monkeypatch, capfd):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "example"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    demo = _demo_module()
    args = ("search", "when is the Berlin trip?", "-n", "3")
    demo.memext(*args, check=False)
    shown = capfd.readouterr().out.splitlines()[1]
    # Pasted into a shell, the ? is not a glob and the query stays one argument.
    assert shown == "$ memext search 'when is the Berlin trip?' -n 3"
    assert shlex.split(shown.removeprefix("$ ")) == ["memext", *args]
    assert demo.command_line("search", "a828e60", "-n", "3") == "memext search a828e60 -n 3"  # plain words stay plain


def test_the_demo_reports_the_provider_from_status(tmp_path, workspace, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "example"\nworkspace = "{workspace}"\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    spec = importlib.util.spec_from_file_location("memext_demo", ROOT / "scripts" / "demo.py")
    assert spec and spec.loader
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    assert demo.provider_in_use() == 'keyword-only search with provider none: provider = "none": keyword-only search'
