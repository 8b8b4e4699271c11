"""The search widget in a real browser: JupyterLab on 127.0.0.1, Debian's
chromium driven by Playwright, a real kernel running this venv's Python.

Nothing here needs the network: Lab runs with a token and private
config/runtime/data folders, chromium with background networking off. The
screenshot is kept in ``test-artifacts/`` (git-ignored).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect, sync_playwright

from conftest import ROOT
from memext_helpers import install_kernelspec, write_config

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARTIFACTS = ROOT / "test-artifacts"
KERNEL_NAME = "memext-test"
# A note that would run script if the widget put note text into HTML unescaped.
HOSTILE_NOTE = '- Biscuit note: <img src=x onerror="window.__memext_pwned=1"> <b>bold?</b>\n'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext memext\nw = %memsearch --widget\nw"),
        nbformat.v4.new_code_cell('print(f"searches={w.searches_run}")'),
    ]
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "memext test", "language": "python"}
    nbformat.write(nb, path)


def _wait_for_server(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"jupyter lab did not answer at {url}:\n{log.read_text()[-3000:]}")


@pytest.fixture
def lab(tmp_path, example_workspace):
    """JupyterLab serving a notebook that opens the widget; yields its URL."""
    (example_workspace / "memory" / "2026-11-19.md").write_text("# 2026-11-19\n\n" + HOSTILE_NOTE, encoding="utf-8")
    config = write_config(tmp_path / "memext", {"example": example_workspace})
    root = tmp_path / "lab-root"
    root.mkdir()
    _write_notebook(root / "widget-test.ipynb")
    jupyter = {name: tmp_path / "jupyter" / name for name in ("config", "runtime", "data")}
    for d in jupyter.values():
        d.mkdir(parents=True)
    install_kernelspec(jupyter["data"], KERNEL_NAME)
    # The news prompt would pop up over the notebook; nothing else is needed.
    (jupyter["config"] / "labconfig").mkdir()
    (jupyter["config"] / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}), encoding="utf-8"
    )
    token = secrets.token_hex(16)
    port = _free_port()
    env = dict(os.environ)
    env.update(
        MEMEXT_CONFIG=str(config),
        JUPYTER_CONFIG_DIR=str(jupyter["config"]),
        JUPYTER_RUNTIME_DIR=str(jupyter["runtime"]),
        JUPYTER_DATA_DIR=str(jupyter["data"]),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONUNBUFFERED="1",
    )
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "jupyter", "lab", "--no-browser",
                "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LabApp.extension_manager=readonly",  # no PyPI queries
                "--allow-root",  # CI containers often run as root
            ],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(f"{base}/api/status?token={token}", proc, log)
        yield {"base": base, "token": token, "log": log}
    finally:
        try:  # shuts down the kernels too
            req = urllib.request.Request(f"{base}/api/shutdown?token={token}", method="POST")
            urllib.request.urlopen(req, timeout=10).close()
            proc.wait(timeout=20)
        except Exception:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.timeout(240)
def test_widget_searches_and_expands_in_jupyterlab(lab):
    url = f"{lab['base']}/lab/workspaces/memext-test/tree/widget-test.ipynb?reset&token={lab['token']}"
    ARTIFACTS.mkdir(exist_ok=True)
    for old in ARTIFACTS.glob("widget-browser*"):  # a stale failure shot would mislead
        old.unlink()
    console: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            page.goto(url, timeout=60_000)
            panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
            # The kernel must be idle before the cell is run.
            expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=60_000)
            panel.locator(".jp-Cell .jp-InputArea-editor").first.click()
            page.keyboard.press("Shift+Enter")

            widget = panel.locator(".memext-search-widget")
            expect(widget).to_be_visible(timeout=60_000)
            expect(widget.locator(".memext-status-line")).to_contain_text("agent example", timeout=30_000)

            # Type like a person; the debounced search runs while typing.
            box = widget.locator(".memext-query input")
            box.click()
            box.press_sequentially("vet Biscuit", delay=40)
            citation = widget.locator(".memext-citation", has_text="memory/2026-10-05.md:")
            expect(citation.first).to_be_visible(timeout=30_000)
            expect(widget.locator(".memext-status-line")).to_contain_text("16 files")  # MEMORY.md, 14 logs, the hostile note
            # Eleven keystrokes, but the search waited for a pause in typing.
            panel.locator(".jp-Cell .jp-InputArea-editor").nth(1).click()
            page.keyboard.press("Shift+Enter")
            counted = panel.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output")
            expect(counted).to_contain_text("searches=", timeout=30_000)
            searches = int(counted.inner_text().strip().split("=")[1])
            assert 1 <= searches <= 4, f"{searches} searches for 11 keystrokes"

            # Enter searches at once; a hostile note renders as text.
            box.fill("onerror bold")
            box.press("Enter")
            hostile = widget.locator(".memext-result", has_text="2026-11-19.md")
            expect(hostile.first).to_be_visible(timeout=30_000)
            expect(hostile.first.locator(".memext-snippet")).to_contain_text('<img src=x onerror="window.__memext_pwned=1">')
            assert page.evaluate("window.__memext_pwned") is None
            assert hostile.first.locator(".memext-snippet img, .memext-snippet b").count() == 0

            # Back to the vet; expand the first result to its full lines.
            box.fill("vet Biscuit")
            box.press("Enter")
            first = widget.locator(".memext-result-row").first
            expect(first.locator(".memext-citation")).to_contain_text("memory/2026-10-05.md:1-10", timeout=30_000)
            first.locator("button.memext-expand").click()
            lines = first.locator(".memext-full-lines pre.memext-lines")
            expect(lines).to_be_visible(timeout=30_000)
            expect(lines).to_contain_text("9  - Booked the vet for Biscuit: Thursday 9 October")
            expect(first.locator("button.memext-expand")).to_contain_text("hide lines")
            expect(lines.locator("mark.memext-hit").first).to_have_text("vet")
            widget.screenshot(path=str(ARTIFACTS / "widget-browser.png"))
            page.screenshot(path=str(ARTIFACTS / "widget-browser-page.png"))
        except Exception:
            shutil.copy(lab["log"], ARTIFACTS / "widget-browser-lab.log")
            (ARTIFACTS / "widget-browser-console.log").write_text("\n".join(console), encoding="utf-8")
            try:
                page.screenshot(path=str(ARTIFACTS / "widget-browser-failure.png"))
            except Exception:
                pass
            raise
        finally:
            browser.close()
    assert (ARTIFACTS / "widget-browser.png").stat().st_size > 10_000
