"""memext tray app: keeps every agent's memory index fresh in the background.

``memext-tray`` (or ``python -m memext.tray``) shows a tray icon whose menu lists
each agent's state; ``--headless`` runs the same daemon without an icon.
The daemon (:mod:`tray.daemon`) has no GUI dependency; :mod:`tray.icon`
renders it with pystray.
"""

if __name__ != "memext.tray":
    # Run from the repository root, `import tray` would find this folder
    # as a second, top-level copy of the package (with its own state).
    raise ImportError(
        "this folder is the package `memext.tray`; install memext (`pip install -e .`) and import `memext.tray` instead of `tray`"
    )


from .daemon import AgentSnapshot, AgentState, DaemonOptions, DaemonSnapshot, TrayDaemon

__all__ = ["AgentSnapshot", "AgentState", "DaemonOptions", "DaemonSnapshot", "TrayDaemon"]
