"""What ``%memconsolidate`` shows: the engine's consolidation proposal (the
daily-note facts searches keep returning, as a diff of MEMORY.md) and an
"Apply" button that appends them (DESIGN.md §17).

The widget holds no consolidation logic: it shows a
:class:`~memext.engine.Proposal` and hands it back to
:func:`~memext.engine.apply_proposal` on a click, so what is appended is
exactly what was shown. Its state (``HTML.value``, the button's
``disabled``) is what tests check.
"""

from __future__ import annotations

from typing import Callable

import ipywidgets as w

from memext.engine import MemextError, Proposal

from .render import CODE_FONT, ERROR_STYLE, FONT, MUTED, NOTICE_STYLE, PANEL_BG, TEXT, esc

#: Added and removed lines of the diff: the theme's own colours, with fallbacks that follow the text colour.
_ADDED = "color:var(--jp-success-color0,var(--jp-content-font-color1,inherit))"
_NOTHING = "nothing to consolidate: no daily-note fact was returned by searches on two days or more"


def proposal_text(p: Proposal) -> str:
    """The proposal as plain text: the diff, what was left out and why."""
    lines = [p.diff.rstrip("\n")] if p.facts else [_NOTHING]
    lines += [f"left out  {x.source}  {x.text}  ({x.reason})" for x in p.left_out]
    if p.applied:
        lines.append(f"appended {len(p.facts)} line(s) to {p.citation}")
    return "\n".join(lines)


def diff_html(diff: str) -> str:
    """A unified diff, escaped, the lines it adds marked."""
    rows = []
    for line in diff.splitlines():
        added = line.startswith("+") and not line.startswith("+++")
        style = f"{_ADDED};font-weight:600" if added else (MUTED if line.startswith(("---", "+++", "@@")) else TEXT)
        rows.append(f'<div class="memext-diff-line" style="white-space:pre-wrap;overflow-wrap:anywhere;{style}">{esc(line) or " "}</div>')
    return (
        f'<div class="memext-diff" style="{CODE_FONT};font-size:var(--jp-code-font-size,90%);{PANEL_BG};'
        f'padding:4px 8px;margin:4px 0">{"".join(rows)}</div>'
    )


def proposal_html(p: Proposal) -> str:
    """The proposal as HTML: each fact with its uses, the diff, what was left out."""
    if not p.facts:
        body = f'<div class="memext-empty" style="{MUTED}">{esc(_NOTHING)}</div>'
    else:
        facts = "".join(
            f'<li><span style="{TEXT}">{esc(f.text)}</span> <span style="{MUTED};font-size:90%">'
            f"{esc(f.source)} · used {f.uses}× on {f.days} days, last {esc(f.last_used)}</span></li>"
            for f in p.facts
        )
        body = f'<ul class="memext-facts" style="margin:2px 0;padding-left:1.5em">{facts}</ul>{diff_html(p.diff)}'
    left = "".join(
        f'<div class="memext-left-out" style="{MUTED};font-size:90%">left out {esc(x.source)}: {esc(x.text)} ({esc(x.reason)})</div>'
        for x in p.left_out
    )
    return f'<div class="memext-proposal" style="{FONT};{TEXT}">{body}{left}</div>'


class ConsolidationView(w.VBox):
    """A proposal, and an "Apply" button that appends it to MEMORY.md
    (``apply``: the engine call, given the proposal; it returns it applied)."""

    def __init__(self, proposal: Proposal, apply: Callable[[Proposal], Proposal]):
        self.proposal = proposal
        self._apply = apply
        self.body = w.HTML(value=proposal_html(proposal))
        self.apply_button = w.Button(
            description=f"Apply: append {len(proposal.facts)} line(s) to {proposal.file}",
            icon="check",
            button_style="primary",
            disabled=not proposal.facts,
            layout=w.Layout(width="auto", display="" if proposal.facts else "none"),
        )
        self.apply_button.add_class("memext-apply")
        self.outcome = w.HTML()
        self.outcome.add_class("memext-outcome")
        self.apply_button.on_click(lambda _b: self.apply())
        super().__init__([self.body, self.apply_button, self.outcome])
        self.add_class("memext-consolidation")

    def apply(self) -> None:
        """Append the proposal (once); the outcome line says where, or why not."""
        if self.proposal.applied or not self.proposal.facts:
            return
        self.apply_button.disabled = True
        try:
            self.proposal = self._apply(self.proposal)
        except MemextError as exc:
            self.apply_button.disabled = False
            self.outcome.value = f'<div style="{ERROR_STYLE}">{esc(exc)}</div>'
            return
        self.apply_button.description = "Applied"
        said = f"appended {len(self.proposal.facts)} line(s) to {self.proposal.citation}"
        notice = f'<div style="{NOTICE_STYLE}">{esc(self.proposal.notice)}</div>' if self.proposal.notice else ""
        self.outcome.value = f'<div class="memext-applied" style="{TEXT}">{esc(said)}</div>{notice}'

    def __repr__(self) -> str:
        return proposal_text(self.proposal)
