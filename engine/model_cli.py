"""``memext model ...``: installing and checking local embedding models."""

from __future__ import annotations

import click


@click.group("model")
def model_group() -> None:
    """Install and inspect local embedding models."""
