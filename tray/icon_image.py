"""The tray icon's pictures: a coloured disc per state, or a monochrome
(symbolic) glyph where the desktop expects one, chosen automatically.

Each state has its own mark, so the monochrome variants tell the states
apart by shape alone: a dot (up to date), an open ring (syncing), a "!"
(error), two bars (paused). When watching is paused while an agent is in
error both show: the error picture with a small pause badge.

Which variant (:func:`icon_style`):

- ``color``: a coloured disc (green, blue, red, grey) with a white mark;
  most trays (KDE, XFCE, Windows, tint2...).
- ``symbolic``: a light monochrome glyph for GNOME's top bar (and Unity),
  whose guidelines want symbolic icons there and whose bar is dark.
- ``template``: a black glyph that macOS treats as a template image and
  tints for the light or dark menu bar.

``MEMEXT_TRAY_ICON=color|symbolic|template`` overrides the choice.
"""

from __future__ import annotations

import os
import sys
from typing import Mapping

from PIL import Image, ImageDraw

from .daemon import AgentState

STATE_COLOURS = {
    AgentState.IDLE: (46, 160, 67),
    AgentState.SYNCING: (47, 129, 247),
    AgentState.ERROR: (218, 54, 51),
    AgentState.PAUSED: (139, 148, 158),
}
STYLES = ("color", "symbolic", "template")
#: GNOME's top bar text colour (light on its dark bar).
SYMBOLIC_INK = (242, 242, 242, 255)
#: A template image's colour is ignored by macOS; only its alpha counts.
TEMPLATE_INK = (0, 0, 0, 255)
#: Desktops (``XDG_CURRENT_DESKTOP`` entries) whose top bar wants symbolic icons.
SYMBOLIC_DESKTOPS = {"gnome", "unity", "gnome-classic", "gnome-flashback"}


def icon_style(platform: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """``"color"``, ``"symbolic"`` or ``"template"`` for this desktop (see the module doc)."""
    platform = sys.platform if platform is None else platform
    env = os.environ if env is None else env
    chosen = env.get("MEMEXT_TRAY_ICON", "").strip().lower()
    if chosen in STYLES:
        return chosen
    if platform == "darwin":
        return "template"
    desktops = {d.strip().lower() for d in env.get("XDG_CURRENT_DESKTOP", "").split(":") if d.strip()}
    if platform.startswith("linux") and desktops & SYMBOLIC_DESKTOPS:
        return "symbolic"
    return "color"


def icon_image(state: AgentState, size: int = 64, *, style: str = "color", paused: bool = False) -> Image.Image:
    """The picture for ``state``; ``paused`` adds a pause badge to a state
    that is not itself "paused" (watching is paused while an agent fails)."""
    if style not in STYLES:
        raise ValueError(f"unknown icon style {style!r}; use one of {', '.join(STYLES)}")
    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    s = size / 64
    if style == "color":
        d.ellipse((2 * s, 2 * s, 62 * s, 62 * s), fill=STATE_COLOURS[state] + (255,))
        _mark(d, state, s, (255, 255, 255, 255))
    else:
        ink = SYMBOLIC_INK if style == "symbolic" else TEMPLATE_INK
        if state != AgentState.SYNCING:  # the syncing mark is itself a ring
            d.ellipse((4 * s, 4 * s, 60 * s, 60 * s), outline=ink, width=max(1, round(5 * s)))
        _mark(d, state, s, ink)
    if paused and state != AgentState.PAUSED:
        _pause_badge(d, s, style)
    return img


def _mark(d: ImageDraw.ImageDraw, state: AgentState, s: float, ink: tuple[int, int, int, int]) -> None:
    if state == AgentState.SYNCING:
        d.arc((14 * s, 14 * s, 50 * s, 50 * s), 30, 330, fill=ink, width=max(1, round(7 * s)))
    elif state == AgentState.ERROR:
        d.rectangle((28 * s, 14 * s, 36 * s, 38 * s), fill=ink)
        d.rectangle((28 * s, 44 * s, 36 * s, 51 * s), fill=ink)
    elif state == AgentState.PAUSED:
        d.rectangle((21 * s, 18 * s, 29 * s, 46 * s), fill=ink)
        d.rectangle((35 * s, 18 * s, 43 * s, 46 * s), fill=ink)
    else:
        d.ellipse((23 * s, 23 * s, 41 * s, 41 * s), fill=ink)


def _pause_badge(d: ImageDraw.ImageDraw, s: float, style: str) -> None:
    """Two small bars in a disc at the bottom right, cut out of the icon."""
    box = (38 * s, 38 * s, 64 * s, 64 * s)
    if style == "color":
        d.ellipse(box, fill=STATE_COLOURS[AgentState.PAUSED] + (255,), outline=(255, 255, 255, 255), width=max(1, round(2 * s)))
        ink = (255, 255, 255, 255)
    else:
        # Clear the corner so the badge reads against the glyph, then draw it.
        d.ellipse(box, fill=(0, 0, 0, 0))
        ink = SYMBOLIC_INK if style == "symbolic" else TEMPLATE_INK
        d.ellipse((40 * s, 40 * s, 62 * s, 62 * s), outline=ink, width=max(1, round(3 * s)))
    d.rectangle((46 * s, 45 * s, 49 * s, 57 * s), fill=ink)
    d.rectangle((53 * s, 45 * s, 56 * s, 57 * s), fill=ink)
