"""The TOML configuration: defaults, per-agent overrides, validation.

The file has a top-level ``[memory_search]`` table with defaults for every
agent and an ``[[agents]]`` array; each agent may override settings in
``[agents.memory_search]``. Merge rule: an agent's scalar replaces the
default, ``extra_paths`` concatenates (defaults first, de-duplicated) and
tables such as ``remote`` merge field by field.

Every problem is a :class:`~engine.errors.ConfigError` naming the file and
the dotted key, e.g. ``config.toml: agents[work].memory_search.chunking.tokens:
expected an integer, got "many"``.

The settings classes it fills in are the schema in :mod:`.settings`. The
names ``provider``, ``fallback`` and ``store.driver`` accept are the rows
of the provider table (engine/providers/registry.py) and the store driver
table (engine/store/drivers.py), and each driver row checks the ``store``
settings its backend needs: the tables validate the settings, which import
neither.
"""

import collections.abc
import functools
import json
import math
import os
import re
import sys
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Mapping, NamedTuple, Union

from .errors import ConfigError
from .paths import app_paths, own_config_dir, private_dir, private_file, write_private_text
from .providers.registry import NAMES as PROVIDER_NAMES, remote_names
from .settings import SOURCES, AgentConfig, Check, Config, MemorySearchSettings, StoreSettings
from .store.drivers import DRIVERS, store_driver

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

# The embedding providers are the registry's rows (DESIGN.md §6).
PROVIDERS = ("auto", *PROVIDER_NAMES, "none")
FALLBACKS = ("none", *PROVIDER_NAMES)
#: The backends of the driver table (engine/store/drivers.py).
STORE_DRIVERS = tuple(DRIVERS)
#: Settings whose values are the names of an extension table's rows: the
#: tables give their choices (the settings types import neither table).
TABLE_CHOICES: Mapping[tuple[type, str], tuple[str, ...]] = {
    (MemorySearchSettings, "provider"): PROVIDERS,
    (MemorySearchSettings, "fallback"): FALLBACKS,
    (StoreSettings, "driver"): STORE_DRIVERS,
}
AGENT_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


# ---------------------------------------------------------------------------
# Loading


def load_config(path: str | os.PathLike | None = None, *, env: Mapping[str, str] | None = None) -> Config:
    """Load the config file, or make the ad-hoc agent when there is none.

    ``path`` defaults to ``$MEMEXT_CONFIG`` or the platformdirs config file.
    With no file, the single agent's workspace is ``$MEMEXT_WORKSPACE`` or the
    current directory.
    """
    env = os.environ if env is None else env
    cfg_path = Path(path).expanduser() if path is not None else app_paths().config_file
    if not cfg_path.exists():
        if path is not None or env.get("MEMEXT_CONFIG"):
            raise ConfigError("config file not found", path=str(cfg_path))
        return Config(path=None, agents=[adhoc_agent(env=env)])
    _keep_private(cfg_path)
    try:
        raw = tomllib.loads(cfg_path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", path=str(cfg_path)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", path=str(cfg_path)) from exc
    return parse_config(raw, path=cfg_path, env=env)


def parse_config(raw: dict, *, path: Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Validate and merge an already-parsed TOML document."""
    env = os.environ if env is None else env
    file = str(path) if path else None
    _unknown_keys(raw, {"memory_search", "agents"}, "", file)
    defaults = raw.get("memory_search", {})
    if not isinstance(defaults, dict):
        raise ConfigError("expected a table", key="memory_search", path=file)
    # Validate the defaults on their own so errors name the right key.
    build_settings(defaults, prefix="memory_search", file=file)
    agents_raw = raw.get("agents", [])
    if not isinstance(agents_raw, list):
        raise ConfigError("expected an array of tables ([[agents]])", key="agents", path=file)
    base = path.parent if path else Path.cwd()
    agents: list[AgentConfig] = []
    seen: set[str] = set()
    for i, entry in enumerate(agents_raw):
        agents.append(_parse_agent(entry, i, defaults, base, file, seen))
    if not agents:
        agents.append(adhoc_agent(defaults=defaults, file=file, env=env))
    return Config(path=path, agents=agents)


def _parse_agent(entry: Any, index: int, defaults: dict, base: Path, file: str | None, seen: set[str]) -> AgentConfig:
    where = f"agents[{index}]"
    if not isinstance(entry, dict):
        raise ConfigError("expected a table", key=where, path=file)
    agent_id = entry.get("id")
    if not isinstance(agent_id, str) or not AGENT_ID_RE.match(agent_id):
        raise ConfigError("needs an id of letters, digits, '.', '_' or '-' (at most 64)", key=f"{where}.id", path=file)
    where = f"agents[{agent_id}]"
    if agent_id in seen:
        raise ConfigError("duplicate agent id", key=f"{where}.id", path=file)
    seen.add(agent_id)
    _unknown_keys(entry, {"id", "workspace", "sessions_dir", "memory_search"}, where + ".", file)
    workspace = entry.get("workspace")
    if not isinstance(workspace, str) or not workspace:
        raise ConfigError("needs a workspace folder (a string)", key=f"{where}.workspace", path=file)
    override = entry.get("memory_search", {})
    if not isinstance(override, dict):
        raise ConfigError("expected a table", key=f"{where}.memory_search", path=file)
    # The override alone: key names and single values (types, ranges,
    # choices). How values relate to each other (overlap < tokens, ...) is
    # checked on the merged settings, which is what the agent really gets.
    _check_values(_build(MemorySearchSettings, override, f"{where}.memory_search", file), f"{where}.memory_search", file)
    settings = _build(MemorySearchSettings, merge_settings(defaults, override), f"{where}.memory_search", file)
    _cross_checks(settings, f"{where}.memory_search", file, override=override, defaults=defaults)
    sessions_dir = entry.get("sessions_dir")
    if sessions_dir is not None and not isinstance(sessions_dir, str):
        raise ConfigError("expected a string", key=f"{where}.sessions_dir", path=file)
    return AgentConfig(
        id=agent_id,
        workspace=_resolve(workspace, base),
        settings=settings,
        sessions_dir=_resolve(sessions_dir, base) if sessions_dir else None,
    )


def adhoc_agent(*, defaults: dict | None = None, file: str | None = None, env: Mapping[str, str] | None = None) -> AgentConfig:
    """The agent used when no ``[[agents]]`` are configured.

    Its workspace is ``$MEMEXT_WORKSPACE`` or the current directory, and its
    id is derived from the workspace's real path so two folders never share
    an index.
    """
    env = os.environ if env is None else env
    workspace = Path(env.get("MEMEXT_WORKSPACE") or os.getcwd()).expanduser().resolve()
    settings = build_settings(defaults or {}, prefix="memory_search", file=file)
    return AgentConfig(id=adhoc_agent_id(workspace), workspace=workspace, settings=settings, adhoc=True)


def adhoc_agent_id(workspace: Path) -> str:
    """``<folder-name>-<hash of real path>``: readable and unique per folder."""
    real = os.path.realpath(workspace)
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", Path(real).name).strip("-").lower()[:40] or "workspace"
    import hashlib  # only ad-hoc agents need it

    digest = hashlib.sha256(real.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{slug}-{digest}"


def _resolve(raw: str, base: Path) -> Path:
    p = Path(os.path.expanduser(raw))
    return (p if p.is_absolute() else base / p).resolve()


def merge_settings(defaults: dict, override: dict) -> dict:
    """Merge an agent's ``memory_search`` table over the defaults (DESIGN.md §2)."""
    out = dict(defaults)
    for key, value in override.items():
        if key == "extra_paths" and isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_settings(out[key], value)
        else:
            out[key] = value
    return out


# ---------------------------------------------------------------------------
# Turning tables into settings with checked types


def build_settings(raw: dict, *, prefix: str = "memory_search", file: str | None = None) -> MemorySearchSettings:
    """Validate a ``memory_search`` table and fill in the defaults."""
    settings = _build(MemorySearchSettings, raw, prefix, file)
    _check_values(settings, prefix, file)
    _cross_checks(settings, prefix, file)
    return settings


class SettingField(NamedTuple):
    """One key of a settings class (see :func:`setting_fields`)."""

    #: The Python name (``lambda_``).
    name: str
    #: The TOML key (``lambda``).
    key: str
    #: The type without its checks (``Optional[int]``, ``QuerySettings``).
    type: Any
    check: Check


@functools.cache
def setting_fields(cls: type) -> dict[str, SettingField]:
    """The keys of a settings class by TOML key, in schema order."""
    hints = typing.get_type_hints(cls, include_extras=True)
    out: dict[str, SettingField] = {}
    for name in cls._fields:  # type: ignore[attr-defined]
        tp, check = hints[name], Check()
        if typing.get_origin(tp) is Annotated:
            tp, check = typing.get_args(tp)[:2]
        if (cls, name) in TABLE_CHOICES:
            check = check._replace(choices=TABLE_CHOICES[cls, name])
        key = check.key or name
        out[key] = SettingField(name, key, tp, check)
    return out


def is_settings_class(tp: Any) -> bool:
    """True for a table of settings (a named tuple of the schema)."""
    return isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields")


def _build(cls: type, raw: dict, prefix: str, file: str | None) -> Any:
    if not isinstance(raw, dict):
        raise ConfigError("expected a table", key=prefix, path=file)
    fields = setting_fields(cls)
    _unknown_keys(raw, set(fields), prefix + ".", file)
    kwargs = {}
    for key, f in fields.items():
        if key not in raw:
            continue
        full = f"{prefix}.{key}"
        value = _convert(f.type, raw[key], full, file)
        _check_field(f.check, value, full, file)
        kwargs[f.name] = value
    return cls(**kwargs)


def _convert(tp: Any, value: Any, key: str, file: str | None) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, getattr(types, "UnionType", Union)):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return _convert(inner[0], value, key, file)
    if is_settings_class(tp):
        return _build(tp, value, key, file)
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"expected true or false, got {_show(value)}", key=key, path=file)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"expected an integer, got {_show(value)}", key=key, path=file)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"expected a number, got {_show(value)}", key=key, path=file)
        if not math.isfinite(value):
            # TOML allows nan and inf; no setting means anything with them
            # (min_score = nan would drop every hit, an infinite weight
            # makes NaN scores).
            raise ConfigError(f"expected a finite number, got {value!r}", key=key, path=file)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"expected a string, got {_show(value)}", key=key, path=file)
        return value
    if origin in (list, collections.abc.Sequence):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"expected a list of strings, got {_show(value)}", key=key, path=file)
        return list(value)
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ConfigError(f"expected a table of strings, got {_show(value)}", key=key, path=file)
        return dict(value)
    raise TypeError(f"unsupported config type {tp!r} for {key}")  # a bug in this module


def _check_field(check: Check, value: Any, key: str, file: str | None) -> None:
    if check.choices and value not in check.choices:
        options = ", ".join(f'"{c}"' for c in check.choices)
        raise ConfigError(f"must be one of {options}, got {_show(value)}", key=key, path=file)
    if check.min is not None and value is not None and value < check.min:
        raise ConfigError(f"must be at least {check.min}, got {_show(value)}", key=key, path=file)
    if check.max is not None and value is not None and value > check.max:
        raise ConfigError(f"must be at most {check.max}, got {_show(value)}", key=key, path=file)


def _check_values(s: MemorySearchSettings, prefix: str, file: str | None) -> None:
    """Checks of single values that field metadata cannot express."""
    for src in s.sources:
        if src not in SOURCES:
            raise ConfigError(f'unknown source {_show(src)} (use "memory" or "sessions")', key=f"{prefix}.sources", path=file)
    if not s.sources:
        raise ConfigError('needs at least one source ("memory")', key=f"{prefix}.sources", path=file)
    remote = remote_names()
    for name in s.allow_remote:
        if name not in remote:
            options = ", ".join(f'"{r}"' for r in remote)
            raise ConfigError(f"{_show(name)} is not a remote provider (use {options})", key=f"{prefix}.allow_remote", path=file)


def _cross_checks(
    s: MemorySearchSettings,
    prefix: str,
    file: str | None,
    *,
    override: dict | None = None,
    defaults: dict | None = None,
) -> None:
    """Checks of values against each other, on complete (merged) settings.

    For an agent, ``override`` is its own ``memory_search`` table and
    ``defaults`` the file's: the error names the key that the agent set
    (the defaults were checked on their own already, so a conflict always
    involves one), and says where the other value comes from.
    """

    def blame(*keys: str) -> str:
        """Of the keys in a conflict, the first one the agent's table sets."""
        if override is None:
            return keys[0]
        return next((k for k in keys if _has_key(override, k)), keys[0])

    def other(key: str, value: Any) -> str:
        """``key`` (and value) as the message quotes it, with its origin when
        it is not the table the error names."""
        if override is None or _has_key(override, key):
            return f"{key} ({value})"
        if defaults is not None and _has_key(defaults, key):
            return f"{key} ({value}, from memory_search.{key})"
        return f"{key} ({value}, the built-in default)"

    c = s.chunking
    if c.overlap >= c.tokens:
        if blame("chunking.overlap", "chunking.tokens") == "chunking.overlap":
            raise ConfigError(
                f"must be smaller than {other('chunking.tokens', c.tokens)}, got {c.overlap}",
                key=f"{prefix}.chunking.overlap",
                path=file,
            )
        raise ConfigError(
            f"must be larger than {other('chunking.overlap', c.overlap)}, got {c.tokens}",
            key=f"{prefix}.chunking.tokens",
            path=file,
        )
    if "sessions" in s.sources and not s.experimental.session_memory:
        if blame("sources", "experimental.session_memory") == "sources":
            raise ConfigError('"sessions" needs experimental.session_memory = true', key=f"{prefix}.sources", path=file)
        raise ConfigError(
            f'must be true while {other("sources", _show(s.sources))} includes "sessions"',
            key=f"{prefix}.experimental.session_memory",
            path=file,
        )
    _store_checks(s, prefix, file)
    h = s.query.hybrid
    if h.vector_weight + h.text_weight <= 0:
        raise ConfigError("vector_weight and text_weight cannot both be 0", key=f"{prefix}.query.hybrid", path=file)


def _store_checks(s: MemorySearchSettings, prefix: str, file: str | None) -> None:
    """What the agent's store driver asks of the ``store`` settings (for
    postgres: a PostgreSQL ``store.url``, and no SQLite vector backend)."""
    store_driver(s.store.driver).check_settings(s.store, f"{prefix}.store", file)


def _has_key(raw: dict, dotted: str) -> bool:
    """True when the TOML table ``raw`` sets the dotted key."""
    node: Any = raw
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _unknown_keys(raw: dict, allowed: set[str], prefix: str, file: str | None) -> None:
    for key in raw:
        if key not in allowed:
            hint = ", ".join(sorted(allowed))
            raise ConfigError(f"unknown key (allowed here: {hint})", key=f"{prefix}{key}", path=file)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


# ---------------------------------------------------------------------------
# Writing (``memext agents add``)


def add_agent(config_path: Path, agent_id: str, workspace: Path, extra_paths: list[str] | None = None) -> None:
    """Append an ``[[agents]]`` entry to the config file, creating it if needed.

    The file is validated before and after, so a mistake never leaves a
    config that no longer loads; the text already there is kept as it is.
    """
    if not AGENT_ID_RE.match(agent_id):
        raise ConfigError("needs letters, digits, '.', '_' or '-' (at most 64)", key="agents.id", path=str(config_path))
    existing = ""
    if config_path.exists():
        existing = config_path.read_text(encoding="utf-8")
        current = load_config(config_path)
        if any(a.id == agent_id for a in current.agents if not a.adhoc):
            raise ConfigError(f"agent {agent_id!r} already exists", key="agents.id", path=str(config_path))
    # json.dumps yields valid TOML basic strings (same escapes).
    lines = ["", "[[agents]]", f"id = {json.dumps(agent_id)}", f"workspace = {json.dumps(str(workspace), ensure_ascii=False)}"]
    if extra_paths:
        lines += ["[agents.memory_search]", f"extra_paths = {json.dumps(extra_paths, ensure_ascii=False)}"]
    text = existing.rstrip("\n") + "\n" + "\n".join(lines) + "\n"
    parse_config(tomllib.loads(text), path=config_path)  # refuse to write something that won't load
    private_dir(config_path.parent, tighten=_is_default_config(config_path))
    write_private_text(config_path, text.lstrip("\n"))


def _is_default_config(path: Path) -> bool:
    """True for the config file in memext's own config folder (whose folder
    memext may make private; a folder the user chose is left as it is)."""
    return os.path.realpath(path.parent) == os.path.realpath(own_config_dir())


def _keep_private(path: Path) -> None:
    """The config may hold API keys: tighten a config file (and memext's own
    config folder) that others can read, saying so once (engine/paths.py)."""
    try:
        if _is_default_config(path):
            private_dir(path.parent)
        private_file(path)
    except OSError:
        pass  # reading it says what is wrong, if anything
