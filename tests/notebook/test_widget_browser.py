"""The search widget in a real browser: JupyterLab on 127.0.0.1, Debian's
chromium driven by Playwright, a real kernel running this venv's Python.

Nothing here needs the network: Lab runs with a token and private
config/runtime/data folders, chromium with background networking off. The
screenshot is kept in ``test-artifacts/`` (git-ignored).
"""

from __future__ import annotations

import shutil

import pytest
from lab_helpers import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, jupyter_lab, notebook_url, write_notebook
from memext_helpers import write_config
from playwright.sync_api import expect, sync_playwright

# A note that would run script if the widget put note text into HTML unescaped.
HOSTILE_NOTE = '- Biscuit note: <img src=x onerror="window.__memext_pwned=1"> <b>bold?</b>\n'


@pytest.fixture
def lab(tmp_path, example_workspace):
    """JupyterLab serving a notebook that opens the widget; yields its URL."""
    (example_workspace / "memory" / "2026-11-19.md").write_text("# 2026-11-19\n\n" + HOSTILE_NOTE, encoding="utf-8")
    config = write_config(tmp_path / "memext", {"example": example_workspace})
    root = tmp_path / "lab-root"
    root.mkdir()
    write_notebook(root / "widget-test.ipynb", ["%load_ext memext\nw = %memsearch --widget\nw", 'print(f"searches={w.searches_run}")'])
    with jupyter_lab(tmp_path, root, {"MEMEXT_CONFIG": str(config)}) as server:
        yield server


@pytest.mark.timeout(240)
def test_widget_searches_and_expands_in_jupyterlab(lab):
    url = notebook_url(lab, "widget-test.ipynb")
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
            expect(first.locator(".memext-citation")).to_contain_text("memory/2026-10-05.md:4-10", timeout=30_000)
            first.locator("button.memext-expand").click()
            lines = first.locator(".memext-full-lines .memext-lines")
            expect(lines).to_be_visible(timeout=30_000)
            best = lines.locator(".memext-best")
            expect(best.locator(".memext-lineno")).to_have_text("›9")
            expect(best).to_contain_text("- Booked the vet for Biscuit: Thursday 9 October")
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
