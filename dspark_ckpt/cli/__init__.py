"""The command-line edge: the typer app, shared options, and one module per command."""

from dspark_ckpt.cli.method_cache import install

install()  # before the CLI's modules define their record classes (dspark_ckpt/cli/method_cache.py)
