"""Characters that act on a display are shown as escapes (engine/controls.py)."""

from __future__ import annotations

import json

import pytest

from memext.engine.controls import json_safe, terminal_safe


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J clear", "\\x1b[2J clear"),  # CSI: clear the screen
        ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),  # OSC 52 writes the clipboard
        ("\x9b31m", "\\x9b31m"),  # one-character CSI
        ("done\rlie", "done\\x0dlie"),  # CR overwrites the line
        ("x\x7fy", "x\\x7fy"),
        ("admin\u202e\u2066txt.exe", "admin\\u202e\\u2066txt.exe"),  # bidi override, isolate
        ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),
        ("bad \udcff byte", "bad \\udcff byte"),  # what Python makes of non-UTF-8 bytes
    ],
)
def test_terminal_safe_escapes_what_acts_on_a_display(raw: str, shown: str) -> None:
    assert terminal_safe(raw) == shown


def test_terminal_safe_leaves_text_tab_newline_and_other_scripts_alone() -> None:
    text = "- Ines: café\tcoffee\n- Müller فاطمة 東京 🙂"
    assert terminal_safe(text) == text


def test_json_safe_keeps_the_data_and_hides_the_controls() -> None:
    value = {"text": "ok \u202e evil \x9b31m \x1b[0m"}
    raw = json.dumps(value, ensure_ascii=False)
    safe = json_safe(raw)
    assert "\u202e" not in safe and "\x9b" not in safe and "\x1b" not in safe
    assert json.loads(safe) == value
