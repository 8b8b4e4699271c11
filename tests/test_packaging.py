"""The wheel and the one import namespace (DESIGN.md §12): the only top-level
name installed is ``memext``; a user's own ``engine``/``tray`` modules do
not get in the way of ``%load_ext memext``, ``python -m memext`` or
``python -m memext.tray``; ``import memext`` stays light; the repository's
folders cannot be imported as top-level packages."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: What the wheel is built from (the rest of the repository is not packaged).
SOURCES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "engine", "memext", "tray")
#: Printed by the user's look-alike modules if anything imports them.
USER_MARKER = "USER MODULE IMPORTED"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """memext's wheel, built by pip from a copy of the sources (so the build
    leaves nothing in the checkout)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, src / name)
    out = tmp / "out"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("memext-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel installed into a folder of its own; subprocesses put it
    first on PYTHONPATH so they import it, not the editable checkout (the
    other dependencies come from the test environment)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target


def test_the_wheels_only_top_level_name_is_memext(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"memext", wheel.name.split("-py3")[0] + ".dist-info"}
    for needed in (
        "memext/py.typed",
        "memext/engine/providers/local/data/minilm_reference.json",
        "memext/engine/providers/nulls.json",
        "memext/engine/search/confidence.json",
        "memext/engine/__init__.py",
        "memext/engine/providers/local/model.py",
        "memext/tray/__main__.py",
        "memext/__main__.py",
        "memext/cli.py",
    ):
        assert needed in names
    # Every module of every engine subpackage ships (setup.py finds the packages).
    modules = {f"memext/engine/{p.relative_to(ROOT / 'engine').as_posix()}" for p in (ROOT / "engine").rglob("*.py")}
    assert sorted(modules - set(names)) == []
    entry_points = zipfile.ZipFile(wheel).read(f"{wheel.name.split('-py3')[0]}.dist-info/entry_points.txt").decode()
    assert "memext = memext.cli:main" in entry_points and "memext-tray = memext.tray.__main__:main" in entry_points


def test_the_wheel_and_the_sdist_carry_the_license(wheel, tmp_path):
    info = wheel.name.split("-py3")[0] + ".dist-info"
    with zipfile.ZipFile(wheel) as whl:
        assert whl.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
        assert "License-Expression: Apache-2.0" in whl.read(f"{info}/METADATA").decode()
    src = wheel.parent.parent / "src"  # the copy the wheel was built from
    subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(tmp_path)!r})"],
        cwd=src,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (sdist,) = tmp_path.glob("memext-*.tar.gz")
    with tarfile.open(sdist) as tar:
        assert any(name.endswith("/LICENSE") and name.count("/") == 1 for name in tar.getnames())


@pytest.fixture
def user_folder(tmp_path, workspace) -> Path:
    """A folder holding the user's own ``engine.py`` and ``tray/`` package,
    and a config with one agent."""
    folder = tmp_path / "project"
    (folder / "tray").mkdir(parents=True)
    for module in (folder / "engine.py", folder / "tray" / "__init__.py", folder / "tray" / "__main__.py"):
        module.write_text(f"import sys\nprint({USER_MARKER!r}, {str(module)!r}, file=sys.stderr)\n")
    (folder / "config.toml").write_text(
        f'[memory_search]\nprovider = "none"\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n', encoding="utf-8"
    )
    return folder


def run_in(folder: Path, site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site), "MEMEXT_CONFIG": str(folder / "config.toml")}
    return subprocess.run([sys.executable, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=180)


def test_load_ext_memext_beside_a_users_engine_and_tray(user_folder, installed):
    script = user_folder / "check.ipy"
    script.write_text(
        textwrap.dedent(
            """\
            %load_ext memext
            import memext, memext.engine
            print("FROM", memext.__file__, memext.engine.__file__)
            report = %memindex -a w
            st = %memstatus
            print("STATUS", [(s.agent, s.total_files) for s in st])
            hits = %memsearch -a w a828e60
            print("SEARCH", [h.citation for h in hits])
            text = %memget -a w memory/2026-01-05.md:3
            print("GET", str(text))
            """
        )
    )
    r = run_in(user_folder, installed, "-m", "IPython", "--quick", "--no-banner", "--HistoryManager.enabled=False", str(script))
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert USER_MARKER not in out and "Error" not in out, out
    assert f"FROM {installed / 'memext' / '__init__.py'} {installed / 'memext' / 'engine' / '__init__.py'}" in out
    assert "STATUS [('w', 3)]" in out
    assert "SEARCH ['memory/2026-01-05.md:" in out, out
    assert "GET - Fixed the cache invalidation bug in commit a828e60." in out


def test_python_m_memext_and_memext_tray_run_ours(user_folder, installed):
    outputs = []
    r = run_in(user_folder, installed, "-m", "memext", "--help")
    outputs.append(r.stdout + r.stderr)
    assert r.returncode == 0 and r.stdout.startswith("Usage: memext") and "tray" in r.stdout, outputs[-1]
    r = run_in(user_folder, installed, "-m", "memext", "agents")
    outputs.append(r.stdout + r.stderr)
    assert r.returncode == 0 and r.stdout.startswith("w  "), outputs[-1]
    r = run_in(user_folder, installed, "-m", "memext.tray", "--help")
    outputs.append(r.stdout + r.stderr)
    assert r.returncode == 0 and r.stdout.startswith("usage: memext-tray") and "--headless" in r.stdout, outputs[-1]
    assert not any(USER_MARKER in out for out in outputs)


def test_import_memext_does_not_import_ipython(tmp_path):
    code = "import sys, memext, memext.engine; print(sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'ipywidgets')))"
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr


@pytest.mark.parametrize("name, package", [("engine", "memext.engine"), ("tray", "memext.tray")])
def test_the_folders_are_not_importable_from_the_repository_root(name, package):
    r = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: this folder is the package") and f"import `{package}` instead of `{name}`" in last
