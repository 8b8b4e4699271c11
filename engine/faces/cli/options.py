"""What every ``memext`` command shares: the ``-a``/``--json`` options, the
examples that end each ``--help``, the config of the invocation and JSON
output."""

from __future__ import annotations

import json
from typing import Any

import click

from ...config import Config, load_config

agent_option = click.option("-a", "--agent", help="Agent id (default: the first configured agent).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def examples(*lines: str) -> str:
    """A command's ``epilog``: its examples, one a line. ``\b`` keeps click
    from rewrapping them into one paragraph."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def ctx_config(ctx: click.Context) -> Config:
    """The config named by ``--config`` (or $MEMEXT_CONFIG, or the user's)."""
    return load_config((ctx.obj or {}).get("config_path"))


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
