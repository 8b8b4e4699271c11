"""``memext-tray``: the tray icon, or ``--headless`` the daemon alone."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from memext.engine import app_paths

from .autostart import autostart_entry, tray_command
from .daemon import DEFAULT_RECONCILE_S, DaemonOptions, TrayDaemon
from .instance import SingleInstance, instance_lock_path
from .logs import setup_logging

log = logging.getLogger("memext.tray")

#: The exit status of a tray that cannot run, as every memext command's
#: error (grep's 2).
ERROR_STATUS = 2


def _utf8_path(value: str) -> Path:
    """``--config``'s path; one whose name is not UTF-8 is a usage error
    (exit 2), as for every memext command: the config and the index keep
    file names as UTF-8 text."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(f"not valid UTF-8: {os.fsencode(value)!r} (memext reads file names as UTF-8)") from None
    return Path(value)


def parse_args(argv: list[str] | None, prog: str = "memext-tray") -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Keep every memext agent's memory index fresh: watch the memory files, sync on changes and on an interval.",
        # As every memext command's help does: its exit statuses, then two
        # examples, laid out as written.
        epilog=(
            "Exit status: 0 stopped (or another tray runs already), 2 an error (no tray\n"
            f"icon can be shown, the tray extra missing).\n\nExamples:\n  {prog}\n  {prog} --headless --polling -v"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--headless", action="store_true", help="run without a tray icon (servers, tests); stop with SIGTERM or Ctrl+C")
    p.add_argument("--config", type=_utf8_path, help="config file (default: $MEMEXT_CONFIG or the user config folder)")
    p.add_argument("--polling", action="store_true", help="poll for file changes instead of native events (network file systems)")
    p.add_argument(
        "--reconcile-seconds",
        type=float,
        default=DEFAULT_RECONCILE_S,
        metavar="S",
        help=f"rescan every agent's files this often, in case a change was missed (default {DEFAULT_RECONCILE_S:g})",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return p.parse_args(argv)


def run_headless(daemon: TrayDaemon) -> int:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *a: stop.set())
    daemon.start()
    log.info("running headless with %d agent(s)", len(daemon.snapshot().agents))
    while not stop.wait(3600):
        pass
    log.info("stopping")
    daemon.stop()
    return 0


def main(argv: list[str] | None = None, prog: str = "memext-tray") -> int:
    """Run the tray (``memext-tray``, ``memext tray``, ``python -m memext.tray``)."""
    args = parse_args(argv, prog)
    if args.config is not None:
        args.config = args.config.expanduser().resolve()
        # The engine reads it from there too.
        os.environ["MEMEXT_CONFIG"] = str(args.config)
    paths = app_paths()
    log_file = setup_logging(paths.log_dir, verbose=args.verbose, stderr=args.headless and sys.stderr.isatty())
    instance = SingleInstance(instance_lock_path(paths))
    if not instance.acquire():
        pid = instance.holder_pid()
        print(f"memext-tray is already running{f' (pid {pid})' if pid else ''}; not starting another.")
        return 0
    try:
        log.info("memext-tray starting (pid %d, %s), log %s", os.getpid(), "headless" if args.headless else "icon", log_file)
        command = tray_command()
        if os.environ.get("MEMEXT_CONFIG"):
            command += ["--config", os.environ["MEMEXT_CONFIG"]]  # the login session may not set it
        entry = autostart_entry(command=command)
        if entry.refresh():
            log.info("start-at-login entry %s rewritten for this version", entry.path)
        options = DaemonOptions(config_path=args.config, polling=args.polling, reconcile_s=args.reconcile_seconds, paths=paths)
        daemon = TrayDaemon(options)
        if args.headless:
            return run_headless(daemon)
        try:
            from .icon import TrayApp
        except ImportError as exc:
            print(f"memext-tray: the tray icon needs the tray extra ({exc}): pip install 'memext[tray]'", file=sys.stderr)
            return ERROR_STATUS
        app = TrayApp(daemon, entry, log_file=log_file)
        daemon.notifier = app.notify
        try:
            return app.run()
        except Exception as exc:
            if type(exc).__module__.startswith("Xlib") or isinstance(exc, ImportError) or "display" in str(exc).lower():
                print(f"memext-tray: cannot show a tray icon ({exc}); use --headless where there is no desktop.", file=sys.stderr)
                log.error("no tray icon: %s", exc)
                return ERROR_STATUS
            raise
    finally:
        log.info("memext-tray exiting")
        instance.release()


if __name__ == "__main__":
    sys.exit(main())
