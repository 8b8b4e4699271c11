"""memext tray app: keeps every agent's memory index fresh in the background.

``memext-tray`` (or ``python -m tray``) shows a tray icon whose menu lists
each agent's state; ``--headless`` runs the same daemon without an icon.
The daemon (:mod:`tray.daemon`) has no GUI dependency; :mod:`tray.icon`
renders it with pystray.
"""

from .daemon import AgentSnapshot, AgentState, DaemonOptions, DaemonSnapshot, TrayDaemon

__all__ = ["AgentSnapshot", "AgentState", "DaemonOptions", "DaemonSnapshot", "TrayDaemon"]
