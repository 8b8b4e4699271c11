"""The faces on a postgres agent, end to end: the `memext` command on two
"machines" (processes with separate state folders) sharing one agent, and
the real MCP server process driven by the mcp SDK's client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import anyio
from conftest import ROOT
from pg_server import PASSWORD

from faces.test_mcp_server import _scenario, connect

TODAY = f"memory/{datetime.now():%Y-%m-%d}.md"


def write_pg_config(folder: Path, agents: dict[str, Path], url: str, provider: str = "none") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        "[memory_search]",
        f"provider = {json.dumps(provider)}",
        "[memory_search.store]",
        'driver = "postgres"',
        f"url = {json.dumps(url)}",
    ]
    for agent_id, ws in agents.items():
        lines += ["", "[[agents]]", f"id = {json.dumps(agent_id)}", f"workspace = {json.dumps(str(ws))}"]
    path = folder / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.chmod(0o600)  # as memext wants a config file that may hold keys
    return path


class Machine:
    """A `memext` user with a state folder of its own."""

    def __init__(self, root: Path, config: Path):
        self.root = root
        self.env = {
            **os.environ,
            "MEMEXT_CONFIG": str(config),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_CACHE_HOME": str(root / "cache"),
            "XDG_CONFIG_HOME": str(root / "config"),
        }

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "memext", *args], env=self.env, capture_output=True, text=True, timeout=120)
        if ok:
            assert done.returncode == 0, done.stderr
        return done

    def search(self, query: str) -> list[dict]:
        return json.loads(self.run("search", query, "--no-sync", "--json").stdout)["results"]


def test_two_machines_share_one_agent(example_workspace, tmp_path, pg_url):
    config = write_pg_config(tmp_path / "cfg", {"team": example_workspace}, pg_url)
    laptop, server = Machine(tmp_path / "laptop", config), Machine(tmp_path / "server", config)
    indexed = json.loads(server.run("index", "--json").stdout)
    assert indexed["files_indexed"] > 5
    # The laptop never indexed, yet finds what the server indexed.
    assert laptop.search("How much food does Biscuit get per day?")[0]["path"].startswith("memory/")
    # A note written on the laptop is indexed by its sync (the laptop is the
    # writer then, holding the agent's lock on the server) and found from the server.
    laptop.run("note", "The lighthouse keeper is called Ottoline.")
    found = server.search("Ottoline lighthouse")
    assert found and found[0]["path"] == TODAY
    server.run("note", "Ottoline prefers the night shift.")
    assert laptop.search("night shift")[0]["path"] == TODAY
    # Nothing of the index is kept on either machine.
    assert not list((tmp_path / "laptop").rglob("*.sqlite")) and not list((tmp_path / "server").rglob("*.sqlite"))

    status = laptop.run("status").stdout
    assert f"index      {pg_url} (schema memext_team)" in status and "postgres   PostgreSQL 16." in status and "(psycopg 3." in status
    assert "searched with" not in status and "keyword    BM25 over FTS5's terms, in PostgreSQL" in status
    st = json.loads(laptop.run("status", "--json").stdout)[0]
    assert (
        st["storage"]["backend"] == "postgres" and st["vector"]["extension"] and st["files"]["memory"] == indexed["files_seen"] + 1
    )  # + today's log


def test_the_command_says_which_server_is_down_without_its_password(example_workspace, tmp_path, pg_server):
    import socket

    with socket.socket() as s:  # a port where no server listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://memext:{PASSWORD}@127.0.0.1:{port}/team"
    config = write_pg_config(tmp_path / "cfg", {"team": example_workspace}, url)
    machine = Machine(tmp_path / "m", config)
    for args in (["search", "Biscuit"], ["status"], ["index"]):
        done = machine.run(*args, ok=False)
        assert done.returncode == 2 and done.stdout == ""  # status: a health check
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and PASSWORD not in done.stderr, done.stderr
        assert f"cannot connect to the PostgreSQL server at postgresql://memext@127.0.0.1:{port}/team" in lines[0]


def test_mcp_server_on_a_postgres_agent(example_workspace, tmp_path, pg_url, monkeypatch):
    config = write_pg_config(tmp_path / "cfg", {"example": example_workspace}, pg_url)
    # This time the password comes from a pgpass file, as libpq reads it.
    port = pg_url.split(":")[-1].split("/")[0]
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{port}:*:postgres:{PASSWORD}\n")
    pgpass.chmod(0o600)
    monkeypatch.delenv("PGPASSWORD")
    monkeypatch.setenv("PGPASSFILE", str(pgpass))

    async def main():
        async with connect("http", config) as client:
            await _scenario(client, example_workspace)

    anyio.run(main)


def test_the_documented_config_is_the_two_lines_it_shows(example_workspace, tmp_path, pg_url):
    import re

    import tomllib

    from memext.engine import MemoryIndex
    from memext.engine.config import parse_config

    page = (ROOT / "docs" / "postgres.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(.*?)```", page, re.S).group(1)
    raw = tomllib.loads(block)
    assert raw["memory_search"] == {"store": {"driver": "postgres", "url": "postgresql://memext@db.example.org:5432/memext"}}
    # The same two lines, pointed at this test's server, give a working agent.
    raw["memory_search"]["store"]["url"] = pg_url
    raw["agents"] = [{"id": "readme", "workspace": str(example_workspace)}]
    agent = parse_config(raw).agents[0]
    with MemoryIndex(agent, provider=None) as idx:
        idx.sync()
        assert idx.search("Biscuit").results and idx.status().storage.backend == "postgres"


# -- the notebook ----------------------------------------------------------------------------


def test_the_notebook_on_a_postgres_agent(example_workspace, tmp_path, pg_url, monkeypatch, capsys):
    from memext_helpers import display_html, ipython_shell

    import memext

    # The password written in the URL this time: it must show nowhere.
    secret_url = pg_url.replace("postgres@", f"postgres:{PASSWORD}@", 1)
    assert PASSWORD in secret_url
    monkeypatch.delenv("PGPASSWORD")
    monkeypatch.setenv("MEMEXT_CONFIG", str(write_pg_config(tmp_path / "cfg", {"team": example_workspace}, secret_url)))
    with ipython_shell() as ip:
        ip.run_line_magic("load_ext", "memext")
        hits = ip.run_line_magic("memsearch", "vet Biscuit")
        assert hits[0].citation == "memory/2026-10-05.md:4-10" and hits.agent == "team"
        ip.run_cell_magic("memnote", "", "The lighthouse keeper is called Ottoline.\n")
        assert f"noted in {TODAY}:4 (new file)" in capsys.readouterr().out
        found = ip.run_line_magic("memsearch", "Ottoline lighthouse")
        assert [h.path for h in found] == [TODAY]
        # The plain function shares the magics' session.
        assert memext.search("Who keeps the lighthouse?")[0].path == TODAY

        table = ip.run_line_magic("memstatus", "")
        text, html = repr(table), display_html(ip, table)
        where = f"{pg_url} (schema memext_team)"
        assert table[0].total_files == 16 and table[0].storage.server == pg_url
        assert where in text and "PostgreSQL 16." in text and PASSWORD not in text, text
        assert where in html and PASSWORD not in html
        assert PASSWORD not in json.dumps(table.to_dict())
    # Nothing of the index is kept on this machine.
    assert not list(tmp_path.rglob("*.sqlite*"))


# -- the tray ----------------------------------------------------------------------------------


def tray_config(tmp_path: Path, url: str) -> tuple[Path, Path]:
    """A tray user's config (tests/tray_helpers.py settings) with one agent on ``url``."""
    from tray_helpers import make_workspace, write_config as write_tray_config

    ws = make_workspace(tmp_path, "team", {"memory/2026-01-01.md": "# Jan 1\n- Planted tomatoes.\n"})
    cfg = write_tray_config(tmp_path / "config.toml", {"team": ws}, team={"store": {"driver": "postgres", "url": url}})
    cfg.chmod(0o600)
    return cfg, ws


def test_the_tray_daemon_on_a_postgres_agent(tmp_path, pg_url):
    from tray.test_daemon import settled, start_daemon
    from tray.test_menu import NoActions
    from tray_helpers import atomic_save, search_paths, wait_for

    from memext.tray.menu import build_menu, find, render_text

    cfg, ws = tray_config(tmp_path, pg_url)
    with start_daemon(cfg) as d:
        snap = settled(d, "team")
        assert snap.error is None and snap.files == 2 and snap.watch_mode == "native"
        assert snap.server is not None and snap.server.startswith(f"{pg_url} (schema memext_team), PostgreSQL 16.")
        menu = build_menu(d.snapshot(), NoActions(), autostart=False)
        assert find(menu, "team").find("Index:").text == f"Index: {snap.server}", render_text(menu)
        assert search_paths(cfg, "team", "tomatoes") == ["memory/2026-01-01.md"]
        # An edit is picked up by the watcher and lands on the server, where
        # another process (here: this one, as a notebook would) finds it.
        atomic_save(ws / "memory" / "2026-01-01.md", "# Jan 1\n- Planted tomatoes.\n- The walrus came back.\n")
        wait_for(lambda: search_paths(cfg, "team", "walrus"), what="the edit on the server")
        atomic_save(ws / "memory" / "2026-01-02.md", "# Jan 2\n- Fed the walrus herring.\n")
        wait_for(lambda: search_paths(cfg, "team", "herring") == ["memory/2026-01-02.md"], what="the new file on the server")
        assert settled(d, "team", min_syncs=2).files == 3
    assert not list(tmp_path.rglob("*.sqlite*"))


def test_the_headless_tray_process_on_a_postgres_agent(tmp_path, pg_url):
    import signal

    from tray_helpers import atomic_save, search_paths, wait_for

    # The password in the URL: the log must not show it.
    secret_url = pg_url.replace("postgres@", f"postgres:{PASSWORD}@", 1)
    cfg, ws = tray_config(tmp_path / "user", secret_url)
    machine = Machine(tmp_path / "server", cfg)
    tray = subprocess.Popen(
        [sys.executable, "-m", "memext.tray", "--headless", "--config", str(cfg)],
        env={k: v for k, v in machine.env.items() if k != "PGPASSWORD"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def log() -> str:
            found = list((tmp_path / "server").rglob("tray.log"))
            return found[0].read_text(encoding="utf-8") if found else ""

        wait_for(lambda: "team: synced (startup)" in log(), timeout=60, what="the tray's first sync")
        assert f"agent team added ({ws}; index {pg_url} (schema memext_team))" in log()
        assert search_paths(cfg, "team", "tomatoes") == ["memory/2026-01-01.md"]
        atomic_save(ws / "memory" / "2026-01-01.md", "# Jan 1\n- Planted tomatoes.\n- The walrus came back.\n")
        wait_for(lambda: search_paths(cfg, "team", "walrus"), timeout=60, what="the edit on the server")
        assert tray.poll() is None
    finally:
        tray.send_signal(signal.SIGTERM)
        out, _ = tray.communicate(timeout=60)
    assert tray.returncode == 0, out
    text = log()
    assert "memext-tray exiting" in text and PASSWORD not in text + out
    assert not list(tmp_path.rglob("*.sqlite*"))
