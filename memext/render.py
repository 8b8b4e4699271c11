"""HTML and text building blocks shared by the result views and the widget.

Every piece of note text goes through :func:`html.escape` before it reaches
HTML, so a note that contains markup is shown as text, never run; its
control and bidirectional-control characters are shown as escapes
(``\u202e``), in HTML and in text alike, so no line displays reordered. Styles are
inline because notebook front ends drop ``<style>`` from untrusted output.

Colours and fonts are JupyterLab's theme variables (``--jp-*``), so the
output follows the light and the dark theme; each has a fallback that
inherits the front end's own colours (``inherit``, ``currentColor``) where
the variable is missing (VS Code, classic Notebook), never a fixed grey
that could vanish on a dark background.
"""

from __future__ import annotations

import html
import time
from typing import Iterable

from memext.engine import Excerpt, ExplainRow
from memext.engine.for_faces import term_spans, terminal_safe

#: Main text, secondary text (line numbers, scores, headers): AA contrast in
#: Lab's light (rgba(0,0,0,.54) on white: 4.6:1) and dark themes.
TEXT = "color:var(--jp-content-font-color1,inherit)"
MUTED = "color:var(--jp-content-font-color2,inherit)"
FONT = "font-family:var(--jp-ui-font-family,inherit)"
CODE_FONT = "font-family:var(--jp-code-font-family,monospace)"
#: A panel a little off the page (code, the best line of an excerpt).
PANEL_BG = "background:var(--jp-layout-color2,rgba(127,127,127,0.12))"
BORDER = "var(--jp-border-color1,rgba(127,127,127,0.5))"
NOTICE_STYLE = f"margin:4px 0;padding:4px 8px;border-left:3px solid var(--jp-warn-color1,currentColor);{PANEL_BG};{TEXT}"
ERROR_STYLE = f"margin:4px 0;padding:4px 8px;border-left:3px solid var(--jp-error-color1,currentColor);{PANEL_BG};{TEXT}"
#: Lab's own colours for a search match: dark text on yellow in both themes.
MARK_STYLE = (
    "background:var(--jp-search-selected-match-background-color,#ffe100);"
    "color:var(--jp-search-selected-match-color,black);padding:0 1px;border-radius:2px"
)
#: Marks lines of a chunk left out of an excerpt (the CLI uses the same).
GAP = "⋮"
#: Shown before the best-matching line of an excerpt.
BEST_MARK = "›"

#: The copy button's handler: a constant (the citation comes from the
#: escaped ``data-cite`` attribute, never from note text), so the HTML holds
#: no code built from data. It works where the front end runs inline
#: handlers (trusted output in JupyterLab, Notebook, the widget); elsewhere
#: the citation itself selects with one click (``user-select: all``).
COPY_HANDLER = (
    "navigator.clipboard.writeText(this.dataset.cite).then("
    "()=>{this.textContent='copied';setTimeout(()=>{this.textContent='copy'},1500)},"
    "()=>{this.textContent='select it'})"
)


def esc(text: object) -> str:
    """Escape text for HTML (quotes too, so it is safe in attributes), its
    control characters made visible."""
    return html.escape(terminal_safe(str(text)), quote=True)


def highlight_html(text: str, query: str) -> str:
    """``text`` escaped for HTML with the terms that carried the match
    (no stop words, no single letters) wrapped in ``<mark>``."""
    out, pos = [], 0
    for start, end in term_spans(text, query):
        out.append(esc(text[pos:start]))
        out.append(f'<mark class="memext-hit" style="{MARK_STYLE}">{esc(text[start:end])}</mark>')
        pos = end
    out.append(esc(text[pos:]))
    return "".join(out)


def highlight_text(text: str, query: str, style: tuple[str, str] = ("\033[1;33m", "\033[0m")) -> str:
    """``text`` with the query terms wrapped in terminal colour codes."""
    on, off = style
    out, pos = [], 0
    for start, end in term_spans(text, query):
        out += [text[pos:start], on, text[start:end], off]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def score_bar_html(score: float, width_px: int = 80) -> str:
    """A small horizontal bar, filled in proportion to a 0..1 score."""
    pct = max(0.0, min(1.0, score)) * 100
    return (
        f'<span class="memext-score-bar" title="score {score:.3f}" style="display:inline-block;vertical-align:middle;'
        f"width:{width_px}px;height:8px;border-radius:4px;background:var(--jp-layout-color3,rgba(127,127,127,0.35));"
        f'overflow:hidden"><span style="display:block;height:100%;width:{pct:.1f}%;'
        'background:var(--jp-brand-color1,currentColor)"></span></span>'
    )


def score_bar_text(score: float, width: int = 10) -> str:
    filled = round(max(0.0, min(1.0, score)) * width)
    return "█" * filled + "░" * (width - filled)


def citation_html(citation: str) -> str:
    """The citation (selected whole by one click) and a button that copies it."""
    cite = esc(citation)
    return (
        f'<code class="memext-citation" style="font-weight:600;{TEXT};background:transparent;user-select:all" '
        f'title="the citation: paste it into a note or a prompt; %memget {cite} reads the lines">{cite}</code>'
        f' <button class="memext-copy" type="button" data-cite="{cite}" onclick="{esc(COPY_HANDLER)}" '
        f'title="Copy {cite}" style="font-size:80%;padding:0 6px;cursor:pointer;{MUTED};background:transparent;'
        f'border:1px solid {BORDER};border-radius:3px">copy</button>'
    )


# -- excerpts and numbered lines ---------------------------------------------------------


def excerpt_text(ex: Excerpt, query: str, *, color: bool = False) -> list[str]:
    """An excerpt as terminal lines, as the CLI prints it: file line numbers,
    ``>`` at the best line, GAP where lines of the chunk are left out."""
    width = len(str(ex.lines[-1].number)) if ex.lines else 1
    out = [f"   {GAP:>{width}}"] if ex.omitted_before else []
    for ln in ex.lines:
        mark = ">" if ln.number == ex.best_line and ln.hit else " "
        shown = terminal_safe(ln.shown)
        text = highlight_text(shown, query) if color else shown
        out.append(f" {mark} {ln.number:>{width}}  {text}".rstrip())
    if ex.omitted_after:
        out.append(f"   {GAP:>{width}}")
    return out


def _row(number: str, body: str, *, best: bool = False, width: int = 2, dim: bool = False) -> str:
    """One line of a numbered block: a gutter that copying skips, then the
    text. The two are grid columns, so a long line wraps under its text (a
    hanging indent), never back under the line numbers."""
    mark = BEST_MARK if best else ""
    gutter_ch = width + 1 + len(BEST_MARK)
    style = f"display:grid;grid-template-columns:{gutter_ch}ch minmax(0,1fr);column-gap:1.5ch;padding:0 6px 0 0"
    if best:
        style += f";{PANEL_BG}"
    if dim:
        style += f";{MUTED}"
    # The best line's number is emphasised (main text colour, bold): muted
    # text on the shaded row would fall below AA contrast in Lab's light theme.
    number_style = f"{TEXT};font-weight:600" if best else MUTED
    gutter = (
        f'<span class="memext-lineno" style="{number_style};user-select:none;white-space:nowrap;'
        f'text-align:right">{esc(mark)}{esc(number)}</span>'
    )
    text = f'<span class="memext-text" style="white-space:pre-wrap;overflow-wrap:anywhere">{body}</span>'
    cls = "memext-line memext-best" if best else "memext-line"
    return f'<div class="{cls}" style="{style}">{gutter}{text}</div>'


def _block(rows: Iterable[str], cls: str) -> str:
    return (
        f'<div class="{cls}" style="margin:2px 0 0 0;padding:4px 0;{CODE_FONT};font-size:var(--jp-code-font-size,90%);'
        f'line-height:1.45;{TEXT};border-left:2px solid {BORDER}">' + "".join(rows) + "</div>"
    )


def excerpt_html(ex: Excerpt, query: str) -> str:
    """An excerpt: file line numbers in a gutter, the best-matching line
    marked and shaded, GAP rows where lines of the chunk are left out."""
    width = len(str(ex.lines[-1].number)) if ex.lines else 1
    rows = [_row(GAP, "", width=width)] if ex.omitted_before else []
    for ln in ex.lines:
        best = ln.number == ex.best_line and ln.hit
        rows.append(_row(str(ln.number), highlight_html(ln.shown, query), best=best, width=width))
    if ex.omitted_after:
        rows.append(_row(GAP, "", width=width))
    return _block(rows, "memext-snippet memext-excerpt")


def snippet_html(text: str, query: str) -> str:
    """A result's snippet, for a search made without excerpts: its lines
    highlighted, without numbers (a snippet need not start at a line)."""
    rows = [
        f'<div class="memext-line" style="white-space:pre-wrap;overflow-wrap:anywhere;padding:0 6px">{highlight_html(line, query)}</div>'
        for line in text.split("\n")
    ]
    return _block(rows, "memext-snippet")


def numbered_lines_text(text: str, first: int) -> str:
    lines = text.split("\n")
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"{n:>{width}}  {terminal_safe(line)}" for n, line in enumerate(lines, start=first))


def numbered_lines_html(
    text: str, first: int, query: str | None = None, *, best: int | None = None, inside: tuple[int, int] | None = None
) -> str:
    """Lines with their numbers in a gutter; ``best`` is marked and shaded,
    lines outside ``inside`` (context around a result) are dimmed."""
    lines = text.split("\n")
    width = len(str(first + len(lines) - 1))
    rows = []
    for n, line in enumerate(lines, start=first):
        body = highlight_html(line, query) if query else esc(line)
        dim = inside is not None and not inside[0] <= n <= inside[1]
        rows.append(_row(str(n), body, best=n == best, width=width, dim=dim))
    return _block(rows, "memext-lines")


# -- explain ----------------------------------------------------------------------------------


def explain_html(rows: list[ExplainRow]) -> str:
    """How a score was made as a small table (the engine's ``explain_rows``)."""
    cell = f"padding:1px 10px 1px 0;text-align:left;white-space:nowrap;border:none;{MUTED};background:transparent"
    num = cell.replace("text-align:left", "text-align:right")
    # The note is the one long cell: it wraps, so the table fits a narrow notebook.
    note = cell.replace("white-space:nowrap", "white-space:normal;overflow-wrap:anywhere")
    head = "".join(f'<th style="{c}">{h}</th>' for c, h in ((cell, "how it scored"), (num, "rank"), (num, "value"), (note, "")))
    body = "".join(
        f'<tr style="background:transparent"><td style="{cell}">{esc(r.part)}</td><td style="{num}">{esc(r.rank)}</td>'
        f'<td style="{num}">{esc(r.value)}</td><td style="{note}">{esc(r.note)}</td></tr>'
        for r in rows
    )
    return (
        '<table class="memext-explain" style="table-layout:auto;width:auto;max-width:100%;margin:4px 0 0 0;border-collapse:collapse;'
        f'font-size:85%"><thead><tr style="background:transparent">{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def duration(seconds: float) -> str:
    """``6 ms``, ``2.4 s``, ``3 min 5 s``."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{seconds // 60:.0f} min {seconds % 60:.0f} s"


def ago(ts: float | None, now: float | None = None) -> str:
    """'12 s ago', '3 min ago', ... or 'never'."""
    if not ts:
        return "never"
    secs = max(0.0, (now or time.time()) - ts)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if secs >= size:
            return f"{secs / size:.0f} {unit} ago"
    return f"{secs:.0f} s ago"
