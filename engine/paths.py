"""Where memext keeps its config, indexes, models and logs (platformdirs),
and keeping them private.

Those folders hold the full text of private notes, API keys and logs, so
memext creates its folders 0700 and its files 0600 whatever the umask, and
tightens ones that are looser when it opens them (one log line each time it
does, which is once per path: afterwards they are tight).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

if TYPE_CHECKING:
    import logging

APP_NAME = "memext"
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def _log() -> logging.Logger:
    """The "memext" logger (logging is imported when something is logged:
    a one-shot search never does)."""
    import logging

    return logging.getLogger("memext")


@dataclass(frozen=True)
class AppPaths:
    """The per-user folders memext uses. Nothing is created until needed."""

    config_file: Path
    state_dir: Path
    cache_dir: Path
    log_dir: Path

    @property
    def config_dir(self) -> Path:
        return self.config_file.parent

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


def own_config_dir() -> Path:
    """memext's own config folder (platformdirs), whatever ``MEMEXT_CONFIG``
    says: a folder memext may make private. A config file elsewhere lives in
    a folder the user chose, which memext leaves as it is."""
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def private_dir(path: Path, *, tighten: bool = True) -> Path:
    """Create folder ``path`` mode 0700 (missing parents too: memext made
    them), or tighten an existing one to 0700 (unless ``tighten`` is False,
    for a folder the user chose that may not be memext's alone)."""
    path = Path(path)
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            pass  # made by another process meanwhile
        _restrict(made, PRIVATE_DIR_MODE, folder=True, quiet=True)  # mkdir's mode is masked by the umask
    if tighten and not missing:
        _restrict(path, PRIVATE_DIR_MODE, folder=True)
    return path


def private_file(path: Path, *, create: bool = False, quiet: bool = False) -> Path:
    """Tighten file ``path`` to 0600 when it is looser; with ``create``, a
    missing file is created empty, 0600. ``quiet``: no log line (for a
    companion file whose main file's line said it already)."""
    path = Path(path)
    if create:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))
            _restrict(path, PRIVATE_FILE_MODE, quiet=True)
            return path
        except FileExistsError:
            pass
    if path.exists():
        _restrict(path, PRIVATE_FILE_MODE, quiet=quiet)
    return path


def write_private_text(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text`` (UTF-8) in a 0600 file.

    The temp file beside it is removed when writing fails (a full disk),
    so nothing half-written stays behind. Only a regular file of the user's
    is replaced: a device, a FIFO, a folder or another user's file raises
    :class:`NotOursError` and is left as it is. A symlink to a file of the
    user's (a config kept with dotfiles) is written through: its target is
    replaced and the link stays.
    """
    path = _replaceable(Path(path))
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
        with open(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), PRIVATE_FILE_MODE)  # an old temp file may have been looser
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


class NotOursError(PermissionError):
    """A path memext was asked to write or make private that is not a
    regular file of the user's (a device, a FIFO, another user's file)."""


def _replaceable(path: Path) -> Path:
    """The file to replace for ``path``: itself, or a symlink's target; raises
    :class:`NotOursError` unless that is missing or a regular file owned by
    the user running memext."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    if stat.S_ISLNK(st.st_mode):
        target = Path(os.path.realpath(path))
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            return target
        path = target
    if os.name != "nt" and not _is_ours(st, folder=False):
        kind = "another user's file" if stat.S_ISREG(st.st_mode) else "not a regular file"
        raise NotOursError(f"{path} is {kind}: memext will not replace it (choose a regular file of your own)")
    return path


def _restrict(path: Path, mode: int, *, folder: bool = False, quiet: bool = False) -> None:
    """Make ``path`` ``mode`` when group or others have any access, but only
    when it is memext's to change: a regular file (or, for a folder mode, a
    folder) owned by the user running memext, never a symlink, a device, a
    FIFO or another user's file. The path is opened without following a
    symlink and checked and changed through that descriptor
    (``O_NOFOLLOW`` + ``fstat`` + ``fchmod``), so what is changed is what was
    checked; anything else is left as it is, with a warning when it is
    readable by others."""
    if os.name == "nt":
        return  # modes mean little there; per-user AppData folders are private already
    try:
        st = os.lstat(path)
    except OSError as exc:
        _log().warning("cannot make %s private (%s); it stays readable by others", path, exc.strerror or exc)
        return
    if not _is_ours(st, folder):
        _warn_not_ours(path, st, folder)
        return
    if stat.S_IMODE(st.st_mode) & 0o077 == 0:
        return
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (os.O_DIRECTORY if folder else 0)
    try:
        fd = os.open(path, flags)
        try:
            now = os.fstat(fd)
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or not _is_ours(now, folder):
                _warn_not_ours(path, now, folder)  # swapped since the lstat: leave the new one alone
                return
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
    except OSError as exc:
        _log().warning("cannot make %s private (%s); it stays readable by others", path, exc.strerror or exc)
        return
    if not quiet:
        _log().warning("made %s private (mode %04o -> %04o): it may hold memory text, keys or logs", path, stat.S_IMODE(st.st_mode), mode)


def _is_ours(st: os.stat_result, folder: bool) -> bool:
    """True for a regular file (a folder when ``folder``) owned by the user
    running memext: the only things whose mode memext may change."""
    kind_ok = stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)
    return kind_ok and st.st_uid == os.geteuid()


def _warn_not_ours(path: Path, st: os.stat_result, folder: bool) -> None:
    """Say that ``path`` stays as it is, when others can read it (the only
    case where memext would have changed it)."""
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(path)
        except OSError:
            return
        if stat.S_IMODE(target.st_mode) & 0o077:
            _log().warning(
                "%s is a symbolic link: memext leaves its target's mode as it is, and the target is readable by others (make it private yourself)",
                path,
            )
        return
    if stat.S_IMODE(st.st_mode) & 0o077 == 0:
        return
    if stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode):
        _log().warning("%s belongs to another user: memext leaves its mode as it is, and it is readable by others", path)
    # A device, a FIFO or a socket holds no stored text to protect: said nothing of.
