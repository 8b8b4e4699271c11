"""What a person sees in JupyterLab, light and dark: search results (the
lines around the best match, numbered), --explain as a table, %memstatus,
the widget. Real Lab, real kernel, Debian's chromium (see lab_helpers).

For each theme the test measures, in the page, the contrast of every piece
of memext text against what is behind it (WCAG AA: 4.5:1), checks that the
status's short facts do not wrap inside, copies a citation with its button,
and saves screenshots to ``test-artifacts/notebook-<theme>-*.png``; then
the same at 760 px wide (``notebook-<theme>-760-*.png``): nothing cut off or
scrolled sideways (the widget's toolbar wraps, the status stacks), and a
long note line wraps under its text, not under the line numbers.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import MODEL_PATH
from lab_helpers import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    CONTRAST_JS,
    THEMES,
    WRAPPED_CELLS_JS,
    jupyter_lab,
    notebook_url,
    write_notebook,
)
from playwright.sync_api import expect, sync_playwright

CELLS = [
    "%load_ext memext\nimport memext",
    "%memsearch -n 3 on-call rotation",
    "%memsearch --explain -n 1 when is the Berlin trip?",
    "%memsearch -a notes --all green tea",
    "%memstatus",
    'w = memext.search_widget(agent="example")\nw.search("vet Biscuit")\nw.results_box.children[0].set_expanded(True)\nw',
    "%memget memory/2026-11-21.md",
]
#: A note line far longer than a cell is wide: it must wrap under its text.
LONG_LINE = (
    "- Packing list for the long weekend in the hills: boots, two warm layers, the blue rain shell, "
    "a thermos, maps of the northern ridge walks, the spare headlamp batteries, plasters, sun cream, "
    "and the paper bus timetable because the valley has no signal after the second bridge."
)
#: A narrow notebook (a laptop with the file browser open, or a side-by-side split).
NARROW = 760

#: In the page: numbered lines under ``selector`` whose text wraps, with
#: where each wrapped line starts and where the line-number gutter ends.
HANGING_JS = r"""
(selector) => {
  const out = [];
  for (const row of document.querySelectorAll(selector)) {
    const text = row.querySelector('.memext-text');
    const gutter = row.querySelector('.memext-lineno');
    if (!text || !gutter) continue;
    const range = document.createRange();
    range.selectNodeContents(text);
    const rects = [...range.getClientRects()].filter(r => r.width > 0);
    const tops = new Set(rects.map(r => Math.round(r.top)));
    if (tops.size < 2) continue;
    out.push({lines: tops.size, left: Math.min(...rects.map(r => r.left)), gutterRight: gutter.getBoundingClientRect().right});
  }
  return out;
}
"""

#: In the page: elements under ``selector`` that stick out of their output
#: area on the right (cut off or scrolled sideways), or are not shown.
OUTSIDE_JS = r"""
(selector) => {
  const out = [];
  for (const el of document.querySelectorAll(selector)) {
    const area = el.closest('.jp-OutputArea-output');
    const r = el.getBoundingClientRect();
    if (!area) continue;
    const limit = area.getBoundingClientRect().right;
    if (r.width === 0 || r.right > limit + 1 || el.scrollWidth > el.clientWidth + 1)
      out.push({cls: String(el.className).slice(0, 60), right: Math.round(r.right), limit: Math.round(limit),
                scroll: el.scrollWidth, client: el.clientWidth});
  }
  return out;
}
"""
MEMEXT_TEXT = ".memext-results, .memext-status, .memext-search-widget, .memext-get, .memext-sync"
AA = 4.5


@pytest.fixture
def lab(tmp_path, example_workspace, workspace):
    """Lab with two agents: ``example`` on the local model (hybrid) and
    ``notes`` keyword-only (so a notice shows)."""
    (example_workspace / "memory" / "2026-11-21.md").write_text(f"# 2026-11-21\n\n{LONG_LINE}\n", encoding="utf-8")
    # A forgotten entry, shown by --all with its label (its contrast is measured with the rest).
    memory = (workspace / "MEMORY.md").read_text(encoding="utf-8")
    memory = memory.replace("- Bob prefers green tea.", '- Bob prefers green tea. <!-- memext forgotten=2026-01-02 reason="coffee now" -->')
    (workspace / "MEMORY.md").write_text(memory, encoding="utf-8")
    config = tmp_path / "memext" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        "[memory_search]\n"
        f'provider = "local"\n[memory_search.local]\nmodel_path = {json.dumps(str(MODEL_PATH))}\n'
        f"[memory_search.store]\npath = {json.dumps(str(tmp_path / 'index' / '{agent_id}.sqlite'))}\n"
        f'[[agents]]\nid = "example"\nworkspace = {json.dumps(str(example_workspace))}\n'
        f'[[agents]]\nid = "notes"\nworkspace = {json.dumps(str(workspace))}\n[agents.memory_search]\nprovider = "none"\n',
        encoding="utf-8",
    )
    root = tmp_path / "lab-root"
    root.mkdir()
    write_notebook(root / "look.ipynb", CELLS)
    with jupyter_lab(tmp_path, root, {"MEMEXT_CONFIG": str(config)}) as server:
        yield server


def _output(panel, i):
    return panel.locator(".jp-Cell").nth(i).locator(".jp-OutputArea-output")


@pytest.mark.timeout(400)
def test_results_status_and_widget_in_light_and_dark(lab):
    ARTIFACTS.mkdir(exist_ok=True)
    for old in ARTIFACTS.glob("notebook-*"):
        old.unlink()
    console: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1300, "height": 1000}, permissions=["clipboard-read", "clipboard-write"])
            page = context.new_page()
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            page.goto(notebook_url(lab, "look.ipynb"), timeout=60_000)
            panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
            expect(page.locator("#jp-main-statusbar")).to_contain_text("Idle", timeout=60_000)
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            widget = panel.locator(".memext-search-widget")
            expect(widget.locator(".memext-full-lines .memext-best")).to_be_visible(timeout=120_000)
            expect(_output(panel, 6).locator(".memext-get")).to_be_visible(timeout=60_000)
            # The widget's count line quotes the query.
            expect(widget.locator(".memext-count")).to_contain_text("for 'vet Biscuit'")

            # Results: the matching line is on screen, numbered and marked.
            results = _output(panel, 1)
            first = results.locator(".memext-result").first
            expect(first.locator(".memext-citation")).to_have_text("MEMORY.md:3-18")
            expect(first.locator(".memext-best")).to_contain_text("On-call rotation: every fourth week")
            expect(first.locator(".memext-best .memext-lineno")).to_have_text("›17")
            expect(results.locator(".memext-header")).to_contain_text("hybrid · local")
            # The README's question, ? and all; --explain as a table.
            explain = _output(panel, 2)
            expect(explain.locator(".memext-header")).to_contain_text("for 'when is the Berlin trip?'")
            expect(explain.locator("table.memext-explain tr")).to_have_count(5)  # head + 4 parts
            notice = _output(panel, 3).locator(".memext-notice")
            expect(notice).to_contain_text("keyword-only")
            expect(_output(panel, 3).locator(".memext-mark-forgotten")).to_have_text("forgotten")

            # The citation's copy button puts it on the clipboard.
            first.locator("button.memext-copy").click()
            expect(first.locator("button.memext-copy")).to_have_text("copied")
            assert page.evaluate("navigator.clipboard.readText()") == "MEMORY.md:3-18"
            widget.locator(".memext-result-row").nth(1).locator("button.memext-copy").click()
            assert page.evaluate("navigator.clipboard.readText()") == "MEMORY.md:3-18"  # Biscuit's vet, line 10

            for theme, name in THEMES.items():
                page.evaluate(f"window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{name}'}})")
                expect(page.locator("body")).to_have_attribute("data-jp-theme-name", name, timeout=30_000)
                page.wait_for_timeout(500)  # the theme's CSS variables apply
                for width in (1300, NARROW):
                    page.set_viewport_size({"width": width, "height": 1000})
                    page.wait_for_timeout(500)  # Lab lays the notebook out again
                    size = "" if width == 1300 else f"-{width}"
                    for i, what in ((1, "results"), (2, "explain"), (3, "notice"), (4, "status"), (6, "long-line")):
                        _output(panel, i).screenshot(path=str(ARTIFACTS / f"notebook-{theme}{size}-{what}.png"))
                    widget.screenshot(path=str(ARTIFACTS / f"notebook-{theme}{size}-widget.png"))
                    page.screenshot(path=str(ARTIFACTS / f"notebook-{theme}{size}-page.png"))
                    # Status: each short fact on one line (the facts wrap between them;
                    # how search runs may be wider than a narrow cell, and wraps then).
                    wrapped = page.evaluate(WRAPPED_CELLS_JS, ".memext-status span.memext-fact:not(.memext-wraps)")
                    assert wrapped == [], f"{theme} {width}px: status facts wrap inside: {wrapped}"
                    # Nothing wider than the cell: the status, the results, the widget and its toolbar.
                    outside = page.evaluate(
                        OUTSIDE_JS, ".memext-status, .memext-results, .memext-search-widget, .memext-toolbar > *, .memext-get"
                    )
                    assert outside == [], f"{theme} {width}px: cut off or scrolled sideways: {outside}"
                    # A long note line wraps under its text, not under the line numbers.
                    hanging = page.evaluate(HANGING_JS, ".memext-get .memext-line")
                    assert hanging, f"{theme} {width}px: the long line did not wrap"
                    assert all(h["left"] >= h["gutterRight"] for h in hanging), hanging
                    low = [t for t in page.evaluate(CONTRAST_JS, MEMEXT_TEXT) if t["ratio"] < AA]
                    assert low == [], f"{theme} {width}px: text below {AA}:1: {low[:8]}"
                page.set_viewport_size({"width": 1300, "height": 1000})
        except Exception:
            shutil.copy(lab["log"], ARTIFACTS / "notebook-lab.log")
            (ARTIFACTS / "notebook-console.log").write_text("\n".join(console), encoding="utf-8")
            try:
                page.screenshot(path=str(ARTIFACTS / "notebook-failure.png"))
            except Exception:
                pass
            raise
        finally:
            browser.close()
    for theme in THEMES:
        for size in ("", f"-{NARROW}"):
            assert (ARTIFACTS / f"notebook-{theme}{size}-widget.png").stat().st_size > 10_000
