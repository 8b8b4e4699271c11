"""The tray menu as plain data, built from a :class:`DaemonSnapshot`.

Kept apart from pystray so it can be checked without a display; the icon
turns these entries into ``pystray.MenuItem`` objects one to one. Its words
come from the snapshot's typed fields (states, the :class:`SearchMode`),
never from the engine's sentences.
"""

from __future__ import annotations

import re
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

from memext.engine import SearchKind, SearchMode
from memext.engine.for_faces import human_size

from .daemon import AgentSnapshot, AgentState, DaemonSnapshot

#: Longest error text shown in a menu line (the full text is in the log).
ERROR_CHARS = 90


@dataclass(frozen=True)
class MenuEntry:
    """One menu line: an action, a check item, a submenu, an info line or a separator."""

    text: str
    action: Callable[[], None] | None = None
    checked: bool | None = None
    enabled: bool = True
    submenu: tuple["MenuEntry", ...] | None = None
    separator: bool = False

    def find(self, text: str) -> "MenuEntry":
        """The entry of this submenu whose text starts with ``text``."""
        return find(self.submenu or (), text)


SEPARATOR = MenuEntry("", enabled=False, separator=True)


class MenuActions(Protocol):
    """What the menu's items do (the tray app implements it)."""

    def sync_now(self, agent_id: str) -> None: ...
    def rebuild(self, agent_id: str) -> None: ...
    def open_folder(self, agent_id: str) -> None: ...
    def sync_all(self) -> None: ...
    def toggle_pause(self) -> None: ...
    def open_config(self) -> None: ...
    def open_log(self) -> None: ...
    def toggle_autostart(self) -> None: ...
    def quit(self) -> None: ...


#: The one wording of each state, in the main menu and the submenus.
STATE_WORDS = {
    AgentState.IDLE: "up to date",
    AgentState.SYNCING: "syncing",
    AgentState.ERROR: "error",
    AgentState.PAUSED: "paused",
}
#: How a search runs, in words.
SEARCH_WORDS = {
    SearchKind.HYBRID: "hybrid (semantic + keyword)",
    SearchKind.KEYWORD_ONLY: "keyword-only",
    SearchKind.OFF: "off",
}


def find(entries: tuple[MenuEntry, ...] | list[MenuEntry], text: str) -> MenuEntry:
    """The first entry whose text starts with ``text`` (KeyError if none)."""
    for e in entries:
        if not e.separator and e.text.startswith(text):
            return e
    raise KeyError(f"no menu entry starting with {text!r} in {[e.text for e in entries]}")


#: Said of a paused agent whose memory changed (resuming syncs it): in
#: full in its State line, short where a line names several things.
CHANGED_WORDS = "memory changed since the last sync"
CHANGED_SHORT = "memory changed"
#: A TOML error's position, kept on one menu line.
POSITION = re.compile(r"\(at line \d+, column \d+\)")
#: The longest line of a wrapped config error.
CONFIG_LINE_CHARS = 70
#: A config error longer than this many lines keeps its first and last lines.
CONFIG_LINES = 4


def state_text(a: AgentSnapshot, snap: DaemonSnapshot | None = None, *, short: bool = False) -> str:
    """``up to date``, ``syncing (indexing 3/9 files)``, ``error``, ``paused``
    (``paused, memory changed since the last sync``), ``read-only`` (an index
    that can be searched but not synced), ``folder missing``."""
    if snap is not None and a.id in snap.missing_folders:
        return "folder missing"
    if a.read_only and a.state in (AgentState.ERROR, AgentState.IDLE):
        return "read-only"
    word = STATE_WORDS[a.state]
    if a.state == AgentState.SYNCING and a.progress:
        word += f" ({a.progress})"
    if a.state == AgentState.PAUSED and snap is not None and a.id in snap.changed_while_paused:
        word += f", {CHANGED_SHORT if short else CHANGED_WORDS}"
    return word


def agent_title(a: AgentSnapshot, snap: DaemonSnapshot | None = None) -> str:
    """The agent's line in the main menu, e.g. ``work: syncing (indexing 3/9
    files)``, ``work: up to date, MEMORY.md too big``."""
    big = f", {a.long_term.path} too big" if a.long_term and a.long_term.too_big else ""
    return f"{a.id}: {state_text(a, snap, short=True)}{big}"


def long_term_lines(a: AgentSnapshot) -> list[str]:
    """A MEMORY.md past ``memory_search.memory_file_warn_bytes``: its size,
    and what to do (none when it is not too big)."""
    lt = a.long_term
    if lt is None or not lt.too_big:
        return []
    return [
        f"{lt.path} is {human_size(lt.size)}, over {human_size(lt.warn_bytes)}",
        "Move old facts out of it, or raise memory_search.memory_file_warn_bytes",
    ]


def search_text(mode: SearchMode) -> str:
    """``Search: hybrid (semantic + keyword)`` (and the provider fallen back
    from, if any), or keyword-only or off with what to do about it (the
    engine's advice: ``run `memext model install minilm` ...``) or, when
    there is none, why."""
    text = f"Search: {SEARCH_WORDS[mode.kind]}"
    if mode.kind == SearchKind.HYBRID:
        return f"{text}, fallback from {mode.fallback_from}" if mode.fallback_from else text
    if mode.advice:
        return f"{text}: {shorten(mode.advice)}"
    return f"{text} ({shorten(mode.reason)})" if mode.reason else text


def duration_text(seconds: float) -> str:
    """``85 ms``, ``2.4 s``, ``3 min 5 s``."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{seconds // 60:.0f} min {seconds % 60:.0f} s"


def last_sync_text(a: AgentSnapshot, now: float) -> str:
    """``Last sync: 14:02:11 (took 0.42 s)``; the date too when not today."""
    if a.last_sync_at is None:
        return "Last sync: never"
    at = time.localtime(a.last_sync_at)
    same_day = time.strftime("%Y-%m-%d", at) == time.strftime("%Y-%m-%d", time.localtime(now))
    when = time.strftime("%H:%M:%S" if same_day else "%Y-%m-%d %H:%M", at)
    took = f" (took {duration_text(a.last_sync_duration_s)})" if a.last_sync_duration_s is not None else ""
    return f"Last sync: {when}{took}"


def shorten(text: str, limit: int = ERROR_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def config_error_lines(error: str, config_file: Path) -> list[str]:
    """A config error as menu lines: the config file named by its name
    ("Open config" opens it), wrapped rather than cut, so the position at
    its end (``at line 2, column 12``) stays; a very long one loses lines
    from its middle, never its first or last."""
    text = " ".join(error.split())
    for where in (str(config_file), str(config_file.expanduser())):
        text = text.replace(where, config_file.name)
    # No-break spaces inside the position: wrapping never splits it.
    text = POSITION.sub(lambda m: m.group(0).replace(" ", "\u00a0"), text)
    lines = textwrap.wrap(f"Config: {text}", CONFIG_LINE_CHARS, subsequent_indent="    ", break_on_hyphens=False)
    if len(lines) > CONFIG_LINES:
        lines = [*lines[:1], "    …", *lines[-(CONFIG_LINES - 2) :]]
    return lines


def agent_menu(a: AgentSnapshot, actions: MenuActions, now: float, snap: DaemonSnapshot | None = None) -> tuple[MenuEntry, ...]:
    missing = snap is not None and a.id in snap.missing_folders
    info = [
        MenuEntry(f"State: {state_text(a, snap)}", enabled=False),
        MenuEntry(f"Files: {a.files}, chunks: {a.chunks}", enabled=False),
        MenuEntry(last_sync_text(a, now), enabled=False),
    ]
    if a.search_mode is not None:
        info.append(MenuEntry(search_text(a.search_mode), enabled=False))
    if a.server:
        info.append(MenuEntry(f"Index: {a.server}", enabled=False))
    watching = {"native": "on", "polling": "polling"}.get(a.watch_mode, "off")
    if missing:
        # Nothing to watch, sync or open until the folder is back (or the config names another).
        info.append(MenuEntry("Watcher: off (no folder)", enabled=False))
        info.append(MenuEntry(f"Folder missing: {shorten(str(a.workspace))}", enabled=False))
        info.append(MenuEntry("Create it, or fix the workspace in the config", enabled=False))
    else:
        info.append(MenuEntry(f"Watcher: {watching}", enabled=False))
    if a.state == AgentState.PAUSED and snap is not None and a.id in snap.changed_while_paused:
        info.append(MenuEntry("Resume watching to sync the changes", enabled=False))
    if a.read_only and not missing:
        # Not an error to chase in the log: what it means and why, in words.
        info.append(MenuEntry("Index is read-only: searches work, syncing is off", enabled=False))
        info.append(MenuEntry(f"Why: {shorten(a.read_only)}", enabled=False))
    elif a.error and not missing:  # its error only says what the lines above say
        info.append(MenuEntry(f"Error: {shorten(a.error)}", enabled=False))
    info += [MenuEntry(line, enabled=False) for line in long_term_lines(a)]
    can_sync = a.state != AgentState.SYNCING and not missing
    return (
        *info,
        SEPARATOR,
        MenuEntry("Sync now", lambda: actions.sync_now(a.id), enabled=can_sync),
        MenuEntry("Rebuild index", lambda: actions.rebuild(a.id), enabled=can_sync),
        MenuEntry("Open memory folder", lambda: actions.open_folder(a.id), enabled=not missing),
    )


def header_text(snap: DaemonSnapshot) -> str:
    n = len(snap.agents)
    agents = f"{n} agent{'s' if n != 1 else ''}"
    overall = snap.overall
    if snap.config_error:
        return f"memext: config error ({agents})"
    if not snap.agents:
        return "memext: no agents configured"
    # Paused shows whatever else is going on (an agent failing, a sync
    # finishing): both are said.
    also = ", watching paused" if snap.paused and overall != AgentState.PAUSED else ""
    if snap.paused and snap.changed_while_paused:
        also += f", {CHANGED_SHORT}"
    big = [a for a in snap.agents if a.long_term and a.long_term.too_big]
    if big:
        also += ", MEMORY.md too big" + ("" if n == 1 else f" ({', '.join(a.id for a in big)})")
    if overall == AgentState.ERROR:
        bad = [a for a in snap.agents if a.state == AgentState.ERROR]
        what = "read-only" if all(a.read_only for a in bad) else "failing"
        return f"memext: {len(bad)} of {agents} {what}{also}"
    return f"memext: {agents}, {STATE_WORDS[overall]}{also}"


def tooltip_text(snap: DaemonSnapshot) -> str:
    """What hovering over the icon says: the header, and each agent's
    state when there are several (one line: some tray hosts show one)."""
    head = header_text(snap)
    if len(snap.agents) < 2:
        return head
    return f"{head} ({'; '.join(agent_title(a, snap) for a in snap.agents)})"


def build_menu(snap: DaemonSnapshot, actions: MenuActions, *, autostart: bool, now: float | None = None) -> tuple[MenuEntry, ...]:
    """The whole menu for a snapshot."""
    now = time.time() if now is None else now
    entries: list[MenuEntry] = [MenuEntry(header_text(snap), enabled=False)]
    if snap.config_error:
        entries += [MenuEntry(line, enabled=False) for line in config_error_lines(snap.config_error, snap.config_file)]
    entries.append(SEPARATOR)
    for a in snap.agents:
        entries.append(MenuEntry(agent_title(a, snap), submenu=agent_menu(a, actions, now, snap)))
    if not snap.agents:
        entries.append(MenuEntry("No agents configured", enabled=False))
    entries += [
        SEPARATOR,
        MenuEntry("Sync all now", actions.sync_all, enabled=bool(snap.agents)),
        MenuEntry("Pause watching", actions.toggle_pause, checked=snap.paused),
        MenuEntry("Open config", actions.open_config),
        MenuEntry("Open log", actions.open_log),
        MenuEntry("Start at login", actions.toggle_autostart, checked=autostart),
        SEPARATOR,
        MenuEntry("Quit", actions.quit),
    ]
    return tuple(entries)


def render_text(entries: tuple[MenuEntry, ...], indent: str = "") -> str:
    """The menu as indented text (logs, tests)."""
    lines = []
    for e in entries:
        if e.separator:
            lines.append(indent + "----")
            continue
        mark = "" if e.checked is None else ("[x] " if e.checked else "[ ] ")
        lines.append(f"{indent}{mark}{e.text}{'' if e.enabled else ' (disabled)'}")
        if e.submenu:
            lines.append(render_text(e.submenu, indent + "    "))
    return "\n".join(lines)
