"""The `dspark-ckpt verify` command (registered on the app by cli.py)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Attach the command to the app; filled in by the verify issue."""
