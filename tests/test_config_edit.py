"""Setting memory_search keys in the config file without losing the user's text."""

from __future__ import annotations

import pytest

from memext.engine.config import load_config
from memext.engine.config_edit import set_memory_search_value
from memext.engine.errors import ConfigError, UnknownAgentError

USER_TEXT = """# my memext config
[memory_search]
provider = "auto"  # keep this comment

[[agents]]
id = "work"
workspace = "/tmp/work"

[[agents]]
id = "home"
workspace = "/tmp/home"
[agents.memory_search]
extra_paths = ["notes"]
"""


def test_creates_the_file_when_missing(tmp_path):
    cfg = tmp_path / "sub" / "config.toml"
    key = set_memory_search_value(cfg, ["local", "model_path"], "/m/a.gguf")
    assert key == "memory_search.local.model_path"
    assert cfg.read_text() == '[memory_search.local]\nmodel_path = "/m/a.gguf"\n'
    assert load_config(cfg).agent().settings.local.model_path == "/m/a.gguf"


def test_sets_the_defaults_and_keeps_comments_and_order(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(USER_TEXT)
    set_memory_search_value(cfg, ["local", "model_path"], "/m/a.gguf")
    text = cfg.read_text()
    assert text.startswith('# my memext config\n[memory_search]\nprovider = "auto"  # keep this comment\n')
    assert 'extra_paths = ["notes"]' in text
    loaded = load_config(cfg)
    assert [a.settings.local.model_path for a in loaded.agents] == ["/m/a.gguf", "/m/a.gguf"]
    # Setting it again replaces the value rather than adding a second one.
    set_memory_search_value(cfg, ["local", "model_path"], "/m/b.gguf")
    assert cfg.read_text().count("model_path") == 1
    assert load_config(cfg).agent("home").settings.local.model_path == "/m/b.gguf"


def test_sets_one_agent_only(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(USER_TEXT)
    key = set_memory_search_value(cfg, ["local", "model_path"], "/m/a.gguf", agent_id="home")
    assert key == "agents[home].memory_search.local.model_path"
    loaded = load_config(cfg)
    assert loaded.agent("home").settings.local.model_path == "/m/a.gguf"
    assert loaded.agent("home").settings.extra_paths == ["notes"]
    assert loaded.agent("work").settings.local.model_path == ""


def test_dotted_and_inline_tables_are_edited_in_place(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('memory_search.local.model_path = "/old.gguf"\n')
    set_memory_search_value(cfg, ["local", "model_path"], "/new.gguf")
    assert cfg.read_text() == 'memory_search.local.model_path = "/new.gguf"\n'
    cfg.write_text('[memory_search]\nlocal = { model_path = "/old.gguf" }\n')
    set_memory_search_value(cfg, ["local", "model_path"], "/new.gguf")
    assert load_config(cfg).agent().settings.local.model_path == "/new.gguf"


def test_unknown_agent_and_broken_file_change_nothing(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(USER_TEXT)
    with pytest.raises(UnknownAgentError, match="no agent 'nope'"):
        set_memory_search_value(cfg, ["local", "model_path"], "/m.gguf", agent_id="nope")
    assert cfg.read_text() == USER_TEXT
    broken = "[memory_search\nprovider = 1\n"
    cfg.write_text(broken)
    with pytest.raises(ConfigError, match="not valid TOML"):
        set_memory_search_value(cfg, ["local", "model_path"], "/m.gguf")
    assert cfg.read_text() == broken


def test_a_value_the_config_rejects_is_never_written(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text(USER_TEXT)
    with pytest.raises(ConfigError, match="memory_search.chunking.tokens"):
        set_memory_search_value(cfg, ["chunking", "tokens"], "many")
    assert cfg.read_text() == USER_TEXT
    assert not list(tmp_path.glob("*.tmp"))
