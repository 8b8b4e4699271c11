"""The per-shell Session: config reloads, one index per agent, background work."""

from __future__ import annotations

import pytest
from memext_helpers import write_config

from memext import Session
from memext.engine import MemextError, MemoryIndex, Supervisor
from memext.engine.errors import UnknownAgentError


@pytest.fixture
def config(tmp_path, example_workspace, workspace, monkeypatch):
    path = write_config(tmp_path / "memext", {"example": example_workspace, "small": workspace})
    monkeypatch.setenv("MEMEXT_CONFIG", str(path))
    return path


def test_one_index_per_agent(config):
    s = Session()
    try:
        assert s.agent_ids() == ["example", "small"]
        assert s.index() is s.index("example") is not s.index("small")
        with pytest.raises(UnknownAgentError, match="known: example, small"):
            s.index("nope")
    finally:
        s.close()


def test_config_changes_are_picked_up(config, tmp_path, workspace):
    s = Session()
    try:
        old = s.index("small")
        write_config(config.parent, {"small": workspace}, extra='[agents.memory_search]\nextra_paths = ["notes"]\n')
        assert s.agent_ids() == ["small"]
        new = s.index("small")
        assert new is not old and new.agent.settings.extra_paths == ["notes"]
    finally:
        s.close()


def test_warm_up_is_the_keepers_startup_sync(config):
    s = Session()
    try:
        keeper = s.warm_up()
        assert keeper is s.keeper("example")
        assert keeper.before_search()  # the first search of a session waits for the first build
        assert s.index("example").status().total_files == 15 and keeper.snapshot().syncs == 1
        assert not s.keeper("small").busy()  # only the warmed-up agent synced
    finally:
        s.close()
    assert keeper.snapshot().syncs == 1 and not keeper.busy()


def test_warm_up_respects_the_setting(tmp_path, workspace, monkeypatch):
    path = write_config(tmp_path, {"small": workspace}, extra="")
    path.write_text(
        path.read_text().replace("[memory_search.store]", "[memory_search.sync]\non_session_start = false\n[memory_search.store]")
    )
    monkeypatch.setenv("MEMEXT_CONFIG", str(path))
    s = Session()
    try:
        assert s.warm_up() is None and s.index().status().last_sync is None and not s.keeper().busy()
    finally:
        s.close()


def test_refresh_after_a_write_is_seen_by_the_next_search(config, example_workspace):
    s = Session()
    try:
        idx = s.index("example")
        idx.sync()
        (example_workspace / "memory" / "2026-12-01.md").write_text("# x\n\n- Zanzibar trip booked.\n")
        keeper = s.keeper("example")
        keeper.request("note")  # as %%memnote does
        assert keeper.before_search()  # waits for the note's sync
        assert idx.search("Zanzibar")[0].path == "memory/2026-12-01.md"
    finally:
        s.close()


def test_close_is_idempotent_and_final(config):
    s = Session(index_factory=lambda agent: MemoryIndex(agent, provider=None))
    s.index()
    s.close()
    s.close()
    assert s.closed and s.open_indexes() == []
    with pytest.raises(MemextError, match="session is closed"):
        s.index()


def test_the_keepers_are_a_supervisors_set_up_for_a_shell(config, workspace):
    """The session holds its keepers through the engine's Supervisor (as the
    tray and the MCP server do): no watching, no timed syncs, no sync until
    an agent is used; the config is followed on use."""
    s = Session()
    try:
        assert isinstance(s.supervisor, Supervisor) and s.supervisor.agent_ids() == ["example", "small"]
        small = s.keeper("small")
        assert small is s.supervisor.keeper("small") and [k.agent.id for k in s.keepers()] == ["example", "small"]
        assert small.watcher is None and small.snapshot().watch_mode == "off"
        assert not small.busy() and small.snapshot().syncs == 0 and s.open_indexes() == []  # nothing opened yet
        assert s.index("small") in s.open_indexes() and len(s.open_indexes()) == 1
        write_config(config.parent, {"small": workspace}, extra='[agents.memory_search]\nextra_paths = ["notes"]\n')
        assert s.keeper("small") is s.supervisor.keeper("small") is not small  # restarted by the Supervisor
        assert s.supervisor.agent_ids() == ["small"] and not small.running
        assert s.supervisor.ticks == 0  # no scheduler: the config is reloaded as the session is used
    finally:
        s.close()
    assert s.supervisor.keepers() == [] and not s.supervisor.running and s.keepers() == []


EXIT_DURING_SYNC = """
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
for cell in ("%load_ext memext", "%memsearch Berlin trip", "%%memnote\\nThe kayak club meets on Sundays."):
    assert shell.run_cell(cell).success
# The process ends here, while the note's background sync embeds with the model.
"""


@pytest.mark.model
def test_exiting_while_a_sync_embeds_with_the_local_model_is_clean(tmp_path, example_workspace):
    # The README's cells, then exit: the keeper's sync must not call into
    # the llama.cpp model the engine has just freed at exit (that was a
    # segfault, 5 runs in 6).
    import json
    import os
    import subprocess
    import sys

    from conftest import MODEL_PATH

    extra = f"[memory_search.local]\nmodel_path = {json.dumps(str(MODEL_PATH))}\n"
    config = write_config(tmp_path / "memext", {"example": example_workspace}, provider="local", extra=extra)
    env = dict(os.environ, MEMEXT_CONFIG=str(config))
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-X", "faulthandler", "-c", EXIT_DURING_SYNC], env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr[-3000:]
        assert "Fatal Python error" not in out.stderr and "Traceback" not in out.stderr
