"""`memext agents` (list, add, remove, prune), `memext config` and `-a`/`--json`
on every command (engine/faces/cli/agent_commands.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from memext.engine import app_paths
from memext.engine.faces.cli.commands import cli


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def config(tmp_path, workspace, monkeypatch) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        "# my agents\n"
        f'[memory_search]\nprovider = "none"\n\n[[agents]]\nid = "w"\nworkspace = "{workspace}"\n\n'
        f'[[agents]]\nid = "other"  # keep me\nworkspace = "{workspace}"\n'
    )
    monkeypatch.setenv("MEMEXT_CONFIG", str(cfg))
    return cfg


def test_config_and_agents_take_a_and_json(config, workspace):
    data = json.loads(run("config", "--json").stdout)
    assert data["config"] == str(config) and [a["id"] for a in data["agents"]] == ["w", "other"]
    one = json.loads(run("config", "-a", "other", "--json").stdout)
    assert [a["id"] for a in one["agents"]] == ["other"]
    assert "agent    other:" in run("config", "-a", "other").stdout
    assert [a["id"] for a in json.loads(run("agents", "-a", "w", "--json").stdout)] == ["w"]
    models = json.loads(run("model", "list", "-a", "w", "--json").stdout)
    assert models["cache_dir"] and models["models"][0]["model"] == "minilm"
    r = run("config", "-a", "nobody")
    assert r.exit_code == 2 and "nobody" in r.stderr


def test_config_shows_the_folders_the_indexes_are_really_in(config, workspace, tmp_path):
    default = app_paths().index_dir
    data = json.loads(run("config", "--json").stdout)
    assert data["indexes"] == [str(default)]
    assert f"indexes  {default}\n" in run("config").stdout
    # store.path elsewhere, for every agent: the default folder is not where they are.
    elsewhere = tmp_path / "my-indexes"
    config.write_text(
        config.read_text().replace(
            'provider = "none"\n', f'provider = "none"\n[memory_search.store]\npath = "{elsewhere}/{{agent_id}}.sqlite"\n', 1
        )
    )
    data = json.loads(run("config", "--json").stdout)
    assert data["indexes"] == [str(elsewhere)] and data["agents"][0]["index"] == str(elsewhere / "w.sqlite")
    out = run("config").stdout
    assert f"indexes  {elsewhere}\n" in out and str(default) not in out
    # One agent moved back to the default folder: both folders, each naming its agents.
    config.write_text(config.read_text() + f'[agents.memory_search.store]\npath = "{default}/other.sqlite"\n')  # the last agent's
    data = json.loads(run("config", "--json").stdout)
    assert data["indexes"] == [str(elsewhere), str(default)]
    out = run("config").stdout
    assert f"indexes  {elsewhere} (w)\n" in out and f"indexes  {default} (other)\n" in out
    assert json.loads(run("config", "-a", "w", "--json").stdout)["indexes"] == [str(elsewhere)]


def test_agents_remove_keeps_the_rest_of_the_file(config, workspace):
    r = run("agents", "remove", "w", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == {"removed": "w", "config": str(config)}
    text = config.read_text()
    assert "# my agents" in text and '"other"  # keep me' in text and 'id = "w"' not in text
    assert [a["id"] for a in json.loads(run("agents", "--json").stdout)] == ["other"]
    r = run("agents", "remove", "w")
    assert r.exit_code == 2 and "no agent 'w'" in r.stderr
    assert run("agents", "remove", "other").exit_code == 0
    assert "[[agents]]" not in config.read_text() and 'provider = "none"' in config.read_text()


def test_prune_lists_then_deletes_indexes_of_vanished_adhoc_folders(tmp_path, monkeypatch, workspace):
    monkeypatch.delenv("MEMEXT_CONFIG", raising=False)
    gone = tmp_path / "gone"
    shutil.copytree(workspace, gone)
    for folder in (gone, workspace):
        monkeypatch.setenv("MEMEXT_WORKSPACE", str(folder))
        assert run("index").exit_code == 0
    shutil.rmtree(gone)
    monkeypatch.setenv("MEMEXT_WORKSPACE", str(workspace))
    index_dir = app_paths().index_dir
    before = sorted(p.name for p in index_dir.glob("*.sqlite"))
    assert len(before) == 2

    listed = json.loads(run("agents", "prune", "--json").stdout)
    assert listed["deleted"] is False and [i["workspace"] for i in listed["indexes"]] == [str(gone.resolve())]
    assert listed["indexes"][0]["reason"] == "folder no longer exists"
    r = run("agents", "prune")
    assert "unused" in r.stdout and "memext agents prune --yes" in r.stdout
    assert sorted(p.name for p in index_dir.glob("*.sqlite")) == before  # a dry run by default

    r = run("agents", "prune", "--yes")
    assert r.exit_code == 0 and "deleted" in r.stdout
    left = sorted(p.name for p in index_dir.glob("*.sqlite*"))
    assert len(left) >= 1 and all(name.startswith("ws-") for name in left)
    assert run("agents", "prune").stdout.strip() == "no unused ad-hoc indexes"


def test_prune_lists_the_adhoc_index_of_a_folder_added_as_an_agent_since(tmp_path, monkeypatch, workspace):
    monkeypatch.delenv("MEMEXT_CONFIG", raising=False)
    monkeypatch.setenv("MEMEXT_WORKSPACE", str(workspace))
    assert run("index").exit_code == 0  # indexed ad hoc, before any config
    index_dir = app_paths().index_dir
    [adhoc] = [p.name for p in index_dir.glob("*.sqlite")]
    monkeypatch.delenv("MEMEXT_WORKSPACE")
    assert run("agents", "add", "work", str(workspace)).exit_code == 0
    assert run("index", "-a", "work").exit_code == 0  # the agent searches its own index, work.sqlite

    [listed] = json.loads(run("agents", "prune", "--json").stdout)["indexes"]
    assert (Path(listed["path"]).name, listed["workspace"]) == (adhoc, str(workspace.resolve()))
    assert listed["reason"] == "folder is now agent work's workspace, searched with that agent's index"
    assert run("agents", "prune", "--yes").exit_code == 0
    assert sorted(p.name for p in index_dir.glob("*.sqlite")) == ["work.sqlite"]
    assert json.loads(run("search", "-a", "work", "green tea", "--json").stdout)["results"]  # its own index is untouched
    assert run("agents", "prune").stdout.strip() == "no unused ad-hoc indexes"


@pytest.mark.model
def test_remove_with_purge_deletes_every_index_file_of_the_agent(config, workspace):
    from conftest import MODEL_PATH

    # w embeds with the real model (so its index has a vector sidecar); other is keyword-only.
    config.write_text(
        config.read_text().replace(
            f'workspace = "{workspace}"\n\n',
            f'workspace = "{workspace}"\n[agents.memory_search]\nprovider = "local"\nlocal = {{ model_path = "{MODEL_PATH}" }}\n\n',
            1,
        )
    )
    assert run("index").exit_code == 0 and run("index", "-a", "other").exit_code == 0
    index_dir = app_paths().index_dir
    # A damaged index is set aside on the next sync: a copy that --purge deletes too.
    (index_dir / "w.sqlite").write_bytes(b"not a database" * 1000)
    for suffix in ("-wal", "-shm"):
        (index_dir / f"w.sqlite{suffix}").unlink(missing_ok=True)
    assert run("index", "-a", "w").exit_code == 0
    mine = sorted(p.name for p in index_dir.iterdir() if p.name.startswith("w.sqlite"))
    assert any(".vectors-" in n for n in mine) and any(".corrupt-" in n for n in mine)

    r = run("agents", "remove", "w", "--purge", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["removed"] == "w" and {Path(p).name for p in out["deleted"]} >= {n for n in mine if not n.endswith(".lock")}
    assert [p.name for p in index_dir.iterdir() if p.name.startswith("w.sqlite")] == []
    assert (index_dir / "other.sqlite").is_file() and 'id = "w"' not in config.read_text()
    assert (workspace / "MEMORY.md").is_file()  # memory files always stay
    # The other agent still searches its own index.
    assert json.loads(run("search", "-a", "other", "green tea", "--json").stdout)["results"]


def test_purge_refuses_a_foreign_file_and_a_locked_index_changing_nothing(config, workspace, tmp_path):
    import sqlite3

    from memext.engine.store.sqlite.lock import WriterLock

    foreign = tmp_path / "theirs.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE accounts (id INTEGER)")
    config.write_text(
        config.read_text() + f'\n[[agents]]\nid = "x"\nworkspace = "{workspace}"\n[agents.memory_search.store]\npath = "{foreign}"\n'
    )
    before, data = config.read_text(), foreign.read_bytes()
    r = run("agents", "remove", "x", "--purge")
    assert r.exit_code == 2 and f"{foreign} is not an index memext made (tables accounts" in r.stderr
    assert config.read_text() == before and foreign.read_bytes() == data

    assert run("index", "-a", "w").exit_code == 0
    index = app_paths().index_dir / "w.sqlite"
    with WriterLock(index, timeout=0):  # a sync in another process
        r = run("agents", "remove", "w", "--purge")
    assert r.exit_code == 2 and config.read_text() == before and index.is_file()
    r = run("agents", "remove", "w", "--purge")
    assert r.exit_code == 0 and "deleted its index" in r.stdout and not index.exists()
