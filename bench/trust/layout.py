"""Entries laid out into Markdown files, and the labels that point at them.

An :class:`Entry` is what a person wrote as one thing (a list item, a
paragraph, a dialogue turn, an entry memext appended under its own
heading). A :class:`FileBuilder` puts entries and the lines between them
(headings, blank lines) into a file and records where each entry landed,
so a question's :class:`Label` can name the entry's lines and the line
that holds the answer. Metadata comments (DESIGN.md §17) go at the end of
an entry's first line once every entry has its place, so a supersede mark
can cite the entry that replaced it.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

_KEEP = "\x00"  # stands for a space inside an answer, so wrapping never splits it


@dataclass(frozen=True)
class Label:
    """The entry that answers a question: ``path`` lines ``start``..``end``,
    and ``line``, the one of them that holds ``text``."""

    path: str
    start: int
    end: int
    line: int
    text: str

    def to_json(self) -> dict:
        return {"path": self.path, "start": self.start, "end": self.end, "line": self.line, "text": self.text}

    @classmethod
    def from_json(cls, d: dict) -> "Label":
        return cls(d["path"], d["start"], d["end"], d["line"], d["text"])


@dataclass(eq=False)
class Entry:
    """One entry; ``answer`` is the text its answer line holds, if any."""

    text: str
    answer: str | None = None
    prefix: str = "- "  # "- " a list item, "" a paragraph
    wrap: int = 0  # hard-wrap width, 0: one line
    heading: str | None = None  # memext's appended form: a "## ..." line, then the text
    comment: str = ""  # "key=value ..." written as <!-- memext ... --> on the first line
    path: str = ""
    start: int = 0
    lines: list[str] = field(default_factory=list)

    def render(self) -> list[str]:
        out = [self.heading] if self.heading is not None else []
        if not self.wrap:
            return out + [self.prefix + self.text]
        text = self.text.replace(self.answer, self.answer.replace(" ", _KEEP)) if self.answer else self.text
        indent = " " * len(self.prefix)
        wrapped = textwrap.wrap(text, self.wrap, initial_indent=self.prefix, subsequent_indent=indent, break_long_words=False)
        return out + [w.replace(_KEEP, " ") for w in wrapped]

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1

    @property
    def citation(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"

    def label(self, answer: str | None = None) -> Label:
        text = answer if answer is not None else self.answer
        assert text is not None, self.text
        for i, line in enumerate(self.lines):
            if text in line:
                return Label(self.path, self.start, self.end, self.start + i, text)
        raise AssertionError(f"{self.path}:{self.start}: no line holds {text!r}")


class FileBuilder:
    """The lines of one Markdown file and the entries among them."""

    def __init__(self, path: str):
        self.path = path
        self.lines: list[str] = []
        self.entries: list[Entry] = []

    def line(self, text: str = "") -> None:
        self.lines.append(text)

    def blank(self) -> None:
        """A blank line, unless the file is empty or already ends with one."""
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    def entry(self, e: Entry) -> None:
        e.path = self.path
        e.start = len(self.lines) + 1
        e.lines = e.render()
        self.lines.extend(e.lines)
        self.entries.append(e)

    def text(self) -> str:
        lines = list(self.lines)
        for e in self.entries:
            if e.comment:
                lines[e.start - 1] += f" <!-- memext {e.comment} -->"
        while lines and lines[-1] == "":
            lines.pop()
        return "\n".join(lines) + "\n"
