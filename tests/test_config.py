"""Config file loading, merging and validation (DESIGN.md §2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memext.engine.config import add_agent, adhoc_agent, load_config, setting_fields
from memext.engine.errors import ConfigError, UnknownAgentError
from memext.engine.settings import MemorySearchSettings, MMRSettings


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "config.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_defaults_and_agent_overrides_merge(tmp_path):
    cfg = load_config(
        write(
            tmp_path,
            """
[memory_search]
extra_paths = ["notes", "shared.md"]
provider = "openai"
[memory_search.remote]
base_url = "http://127.0.0.1:9/v1"
headers = { "X-Team" = "a" }
[memory_search.query]
max_results = 9

[[agents]]
id = "work"
workspace = "ws-work"
[agents.memory_search]
extra_paths = ["shared.md", "more"]
provider = "local"
[agents.memory_search.remote]
api_key = "k"
headers = { "X-Agent" = "b" }
[agents.memory_search.query]
min_score = 0.5

[[agents]]
id = "home"
workspace = "/tmp/home-ws"
""",
        )
    )
    work, home = cfg.agents
    s = work.settings
    assert s.provider == "local"  # scalar overrides
    assert s.extra_paths == ["notes", "shared.md", "more"]  # concatenated, de-duplicated
    assert s.remote.base_url == "http://127.0.0.1:9/v1" and s.remote.api_key == "k"  # field by field
    assert s.remote.headers == {"X-Team": "a", "X-Agent": "b"}
    assert s.query.max_results == 9 and s.query.min_score == 0.5
    assert work.workspace == (tmp_path / "ws-work").resolve()  # relative to the config file
    assert home.settings.provider == "openai" and home.settings.extra_paths == ["notes", "shared.md"]
    assert cfg.agent("home") is home
    with pytest.raises(UnknownAgentError, match="no agent 'nope'.*work, home"):
        cfg.agent("nope")


@pytest.mark.parametrize(
    "body,key,message",
    [
        ('[memory_search.chunking]\ntokens = "many"', "memory_search.chunking.tokens", "expected an integer"),
        ('[memory_search]\nprovider = "bert"', "memory_search.provider", "must be one of"),
        ("[memory_search]\nbogus = 1", "memory_search.bogus", "unknown key"),
        ("[memory_search.query]\nmin_score = 1.5", "memory_search.query.min_score", "at most 1"),
        ("[memory_search.chunking]\ntokens = 100\noverlap = 100", "memory_search.chunking.overlap", "smaller than"),
        ('[memory_search]\nsources = ["memory", "sessions"]', "memory_search.sources", "session_memory"),
        ('[memory_search.sync]\nwatch = "yes"', "memory_search.sync.watch", "true or false"),
        ('[memory_search.query.hybrid]\nfusion = "max"', "memory_search.query.hybrid.fusion", "weighted"),
        ("[memory_search.query.hybrid.mmr]\nlambda = 2", "memory_search.query.hybrid.mmr.lambda", "at most 1"),
        (
            '[[agents]]\nid = "w"\nworkspace = "x"\n[agents.memory_search.chunking]\ntokens = -1',
            "agents[w].memory_search.chunking.tokens",
            "at least",
        ),
        ('[[agents]]\nid = "w"\n', "agents[w].workspace", "workspace"),
        ('[[agents]]\nid = "bad id!"\nworkspace = "x"', "agents[0].id", "letters"),
        ('[[agents]]\nid = "w"\nworkspace = "x"\ncolour = 1', "agents[w].colour", "unknown key"),
    ],
)
def test_bad_values_name_the_key_and_the_file(tmp_path, body, key, message):
    path = write(tmp_path, body)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert str(path) in text and key in text and message in text, text
    assert err.value.key == key


def test_invalid_toml_names_the_file(tmp_path):
    path = write(tmp_path, "[memory_search\n")
    with pytest.raises(ConfigError, match="not valid TOML") as err:
        load_config(path)
    assert str(path) in str(err.value)


def test_missing_explicit_config_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")


def test_no_config_gives_an_adhoc_agent_per_folder(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    monkeypatch.chdir(a)
    cfg = load_config()
    assert cfg.path is None and len(cfg.agents) == 1
    agent = cfg.agents[0]
    assert agent.adhoc and agent.workspace == a.resolve() and agent.id.startswith("a-")
    other = adhoc_agent(env={"MEMEXT_WORKSPACE": str(b)})
    assert other.workspace == b.resolve() and other.id != agent.id
    # platformdirs state folder (XDG_STATE_HOME is isolated by conftest)
    assert agent.db_path().name == f"{agent.id}.sqlite"
    assert "memext" in str(agent.db_path().parent)


def test_store_path_expands_agent_id_and_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    cfg = load_config(write(tmp_path, '[memory_search.store]\npath = "~/idx/{agent_id}.db"\n[[agents]]\nid = "w"\nworkspace = "."\n'))
    assert cfg.agent("w").db_path() == tmp_path / "idx" / "w.db"


def test_memext_config_env_var(tmp_path, monkeypatch):
    path = write(tmp_path, '[[agents]]\nid = "envagent"\nworkspace = "."\n')
    monkeypatch.setenv("MEMEXT_CONFIG", str(path))
    assert load_config().agents[0].id == "envagent"


def test_add_agent_appends_and_keeps_the_file_valid(tmp_path):
    path = write(tmp_path, '# my settings\n[memory_search]\nprovider = "none"\n')
    add_agent(path, "notes", tmp_path, ["extra"])
    text = path.read_text()
    assert text.startswith("# my settings")  # user's text kept
    cfg = load_config(path)
    assert cfg.agent("notes").settings.extra_paths == ["extra"]
    with pytest.raises(ConfigError, match="already exists"):
        add_agent(path, "notes", tmp_path)
    with pytest.raises(ConfigError, match="letters"):
        add_agent(path, "no spaces", tmp_path)
    assert load_config(path).agents[0].id == "notes"  # unchanged by the failures


def test_weights_are_normalised(tmp_path):
    cfg = load_config(write(tmp_path, "[memory_search.query.hybrid]\nvector_weight = 3\ntext_weight = 1\n"))
    assert cfg.agents[0].settings.query.hybrid.weights == (0.75, 0.25)


def test_settings_are_immutable_and_share_no_mutable_default(tmp_path):
    # Named tuples share their defaults between instances: a default that
    # could be changed in place would leak into every other agent.
    a, b = MemorySearchSettings(), MemorySearchSettings()
    assert a.sources == ("memory",) and a.extra_paths == ()
    with pytest.raises(TypeError):
        a.remote.headers["X-Key"] = "leak"  # type: ignore[index]
    assert dict(b.remote.headers) == {}
    with pytest.raises(AttributeError):
        a.query.max_results = 3  # type: ignore[misc]
    changed = a._replace(query=a.query._replace(max_results=3))
    assert changed.query.max_results == 3 and a.query.max_results == 6
    # A loaded config is the same schema: values from the file, defaults elsewhere.
    cfg = load_config(write(tmp_path, '[memory_search]\nextra_paths = ["notes"]\n[memory_search.query.hybrid.mmr]\nlambda = 0.5\n'))
    s = cfg.agents[0].settings
    assert list(s.extra_paths) == ["notes"] and s.query.hybrid.mmr.lambda_ == 0.5 and s.sources == ("memory",)


def test_setting_fields_give_toml_keys_and_checks():
    fields = setting_fields(MMRSettings)
    assert list(fields) == ["enabled", "lambda"]
    assert fields["lambda"].name == "lambda_" and fields["lambda"].type is float
    assert (fields["lambda"].check.min, fields["lambda"].check.max) == (0.0, 1.0)


def test_agent_override_is_checked_against_the_merged_settings(tmp_path):
    # Each override is valid together with the defaults, although it would
    # not be on top of the built-in defaults alone.
    cfg = load_config(
        write(
            tmp_path,
            """
[memory_search.chunking]
tokens = 1000
[memory_search.experimental]
session_memory = true

[[agents]]
id = "w"
workspace = "."
[agents.memory_search]
sources = ["memory", "sessions"]
[agents.memory_search.chunking]
overlap = 500
""",
        )
    )
    s = cfg.agent("w").settings
    assert (s.chunking.tokens, s.chunking.overlap) == (1000, 500)
    assert s.sources == ["memory", "sessions"] and s.experimental.session_memory


@pytest.mark.parametrize(
    "defaults,override,key,message",
    [
        # the agent's own value conflicts with an inherited one: the merged
        # value is quoted, with where it comes from
        (
            "[memory_search.chunking]\ntokens = 1000",
            "[agents.memory_search.chunking]\noverlap = 1000",
            "agents[w].memory_search.chunking.overlap",
            "must be smaller than chunking.tokens (1000, from memory_search.chunking.tokens), got 1000",
        ),
        (
            "[memory_search.chunking]\ntokens = 1000\noverlap = 300",
            "[agents.memory_search.chunking]\ntokens = 200",
            "agents[w].memory_search.chunking.tokens",
            "must be larger than chunking.overlap (300, from memory_search.chunking.overlap), got 200",
        ),
        (
            "",
            "[agents.memory_search.chunking]\noverlap = 500",
            "agents[w].memory_search.chunking.overlap",
            "must be smaller than chunking.tokens (240, the built-in default), got 500",
        ),
        (
            "",
            '[agents.memory_search]\nsources = ["memory", "sessions"]',
            "agents[w].memory_search.sources",
            "needs experimental.session_memory = true",
        ),
        (
            '[memory_search]\nsources = ["memory", "sessions"]\n[memory_search.experimental]\nsession_memory = true',
            "[agents.memory_search.experimental]\nsession_memory = false",
            "agents[w].memory_search.experimental.session_memory",
            "must be true while sources",
        ),
        (
            "[memory_search.query.hybrid]\nvector_weight = 0",
            "[agents.memory_search.query.hybrid]\ntext_weight = 0",
            "agents[w].memory_search.query.hybrid",
            "cannot both be 0",
        ),
        # single values of an override are still checked on their own
        ("", "[agents.memory_search]\nsources = []", "agents[w].memory_search.sources", "at least one source"),
        ("", '[agents.memory_search]\nsources = ["chats"]', "agents[w].memory_search.sources", "unknown source"),
    ],
)
def test_merged_conflicts_name_the_agent_key_and_file(tmp_path, defaults, override, key, message):
    path = write(tmp_path, f'{defaults}\n\n[[agents]]\nid = "w"\nworkspace = "."\n{override}\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert err.value.key == key and err.value.path == str(path), text
    assert str(path) in text and key in text and message in text, text


def test_a_conflict_in_the_defaults_names_the_defaults(tmp_path):
    path = write(tmp_path, '[memory_search.chunking]\noverlap = 500\n\n[[agents]]\nid = "w"\nworkspace = "."\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert err.value.key == "memory_search.chunking.overlap" and str(path) in str(err.value)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "+nan"])
@pytest.mark.parametrize(
    "table,key",
    [
        ("memory_search.query", "min_score"),
        ("memory_search.query.hybrid", "vector_weight"),
        ("memory_search.query.hybrid", "text_weight"),
        ("memory_search.query.hybrid.mmr", "lambda"),
        ("memory_search.query.hybrid.temporal_decay", "half_life_days"),
        ("memory_search.sync", "interval_minutes"),
        ("memory_search.remote.batch", "timeout_minutes"),
        ("agents.memory_search.query", "min_score"),
    ],
)
def test_non_finite_floats_are_rejected(tmp_path, table, key, value):
    agent = '[[agents]]\nid = "w"\nworkspace = "."\n'
    path = write(tmp_path, (agent if table.startswith("agents") else "") + f"[{table}]\n{key} = {value}\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    full = table.replace("agents.", "agents[w].") + "." + key
    assert err.value.key == full and str(path) in str(err.value), str(err.value)
    assert "finite number" in str(err.value)
