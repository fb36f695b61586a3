"""The command-line edge: the typer app, shared options, and one module per command."""
