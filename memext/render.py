"""HTML and text building blocks shared by the result views and the widget.

Every piece of note text goes through :func:`html.escape` before it reaches
HTML, so a note that contains markup is shown as text, never run. Styles are
inline because notebook front ends drop ``<style>`` from untrusted output.
"""

from __future__ import annotations

import html
import time

from memext.engine import term_spans

ACCENT = "#3b82c4"
MUTED = "color:#6b7280"
NOTICE_STYLE = "margin:4px 0;padding:4px 8px;border-left:3px solid #d97706;background:rgba(217,119,6,0.08)"
ERROR_STYLE = "margin:4px 0;padding:4px 8px;border-left:3px solid #dc2626;background:rgba(220,38,38,0.08)"


def esc(text: object) -> str:
    """Escape text for HTML (quotes too, so it is safe in attributes)."""
    return html.escape(str(text), quote=True)


def highlight_html(text: str, query: str) -> str:
    """``text`` escaped for HTML with the query terms wrapped in ``<mark>``."""
    out, pos = [], 0
    for start, end in term_spans(text, query):
        out.append(esc(text[pos:start]))
        out.append(f'<mark class="memext-hit">{esc(text[start:end])}</mark>')
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
        f'width:{width_px}px;height:8px;border-radius:4px;background:rgba(127,127,127,0.25);overflow:hidden">'
        f'<span style="display:block;height:100%;width:{pct:.1f}%;background:{ACCENT}"></span></span>'
    )


def score_bar_text(score: float, width: int = 10) -> str:
    filled = round(max(0.0, min(1.0, score)) * width)
    return "█" * filled + "░" * (width - filled)


def numbered_lines_text(text: str, first: int) -> str:
    lines = text.split("\n")
    width = len(str(first + len(lines) - 1))
    return "\n".join(f"{n:>{width}}  {line}" for n, line in enumerate(lines, start=first))


def numbered_lines_html(text: str, first: int, query: str | None = None) -> str:
    """Lines in a ``<pre>`` with their numbers in a muted gutter."""
    lines = text.split("\n")
    width = len(str(first + len(lines) - 1))
    rows = []
    for n, line in enumerate(lines, start=first):
        body = highlight_html(line, query) if query else esc(line)
        rows.append(f'<span style="{MUTED};user-select:none">{n:>{width}}  </span>{body}')
    return (
        '<pre class="memext-lines" style="margin:4px 0;padding:6px 8px;background:rgba(127,127,127,0.08);'
        'border-radius:4px;white-space:pre-wrap;overflow-wrap:anywhere">' + "\n".join(rows) + "</pre>"
    )


def ago(ts: float | None, now: float | None = None) -> str:
    """'12 s ago', '3 min ago', ... or 'never'."""
    if not ts:
        return "never"
    secs = max(0.0, (now or time.time()) - ts)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if secs >= size:
            return f"{secs / size:.0f} {unit} ago"
    return f"{secs:.0f} s ago"
