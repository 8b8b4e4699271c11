"""Characters that act on a display instead of showing: made visible.

A note can hold anything. Printed raw, C0 and C1 control characters drive
a terminal (ESC starts CSI and OSC sequences: clear the screen, retitle
the window, write the clipboard with OSC 52; BEL ends OSC; U+009B is a
one-character CSI; CR overwrites the line), and the bidirectional-text
controls (embeddings, overrides, isolates and marks: U+202A-U+202E,
U+2066-U+2069, U+200E, U+200F, U+061C) reorder what follows them, so a
line can read reversed or hide part of itself ("Trojan Source"). Every
face shows them as escapes instead: ``\\x1b``, ``\\u202e``. Tab and
newline pass. So do lone surrogates' escapes (``\\udcff``: what Python
makes of bytes that are not UTF-8), which no output could encode.
"""

from __future__ import annotations

import re

#: What is made visible: C0 controls but tab and newline, DEL, C1 controls,
#: the bidirectional controls, and lone surrogates.
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
#: The same in JSON text, where the standard library escapes C0 already
#: (compiled on first use: about 1 ms, which text output never needs).
_HIDDEN_IN_JSON = "[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with its control, bidirectional-control and surrogate
    characters shown as ``\\xNN`` or ``\\uNNNN`` (tab and newline pass)."""
    return HIDDEN.sub(_escape, text)


def json_safe(json_text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it)
    with the same characters as JSON ``\\uNNNN`` escapes: the same data,
    which no terminal acts on. They occur only inside strings, where an
    escape stands for the character itself."""
    return re.sub(_HIDDEN_IN_JSON, lambda m: f"\\u{ord(m.group()):04x}", json_text)
