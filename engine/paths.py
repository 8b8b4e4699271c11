"""Where memext keeps its config, indexes, models and logs (platformdirs)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "memext"


@dataclass(frozen=True)
class AppPaths:
    """The per-user folders memext uses. Nothing is created until needed."""

    config_file: Path
    state_dir: Path
    cache_dir: Path
    log_dir: Path

    @property
    def index_dir(self) -> Path:
        """Folder holding one ``<agent_id>.sqlite`` per agent."""
        return self.state_dir / "memory"

    @property
    def models_dir(self) -> Path:
        return self.cache_dir / "models"


def app_paths() -> AppPaths:
    """Resolve the folders now (so tests and users can move them with env vars).

    ``MEMEXT_CONFIG`` overrides the config file location.
    """
    # appauthor=False keeps Windows from nesting the folder under an author name.
    dirs = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
    config_env = os.environ.get("MEMEXT_CONFIG")
    config_file = Path(config_env).expanduser() if config_env else Path(dirs.user_config_dir) / "config.toml"
    return AppPaths(
        config_file=config_file,
        state_dir=Path(dirs.user_state_dir),
        cache_dir=Path(dirs.user_cache_dir),
        log_dir=Path(dirs.user_log_dir),
    )
