"""The options every command shares, declared once: each command lists the ones it takes."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from dspark_ckpt.model.findings import Severity


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"
    GITHUB = "github"
    JUNIT = "junit"
    MARKDOWN = "markdown"


class ColorChoice(StrEnum):
    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


Target = Annotated[str | None, typer.Option("--target", help="Target model folder, its config.json, or org/repo.")]
TargetSize = Annotated[int | None, typer.Option("--target-vocab-size", help="Target vocab T, if no --target.")]
Runtime = Annotated[list[str] | None, typer.Option(
    "--runtime", help="vllm==X.Y.Z, vllm, sglang or all (repeatable; default: the settings file's `runtime`, "
                      "else every known version).")]
Config = Annotated[Path | None, typer.Option(
    "--config", help="config.json for a single .safetensors file; a *.toml file here is read as --settings.")]
Output = Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here, not stdout.")]
FailOn = Annotated[Severity | None, typer.Option("--fail-on", help="Exit 1 at or above this severity "
                                                                    "[default: error].")]
Codes = Annotated[list[str] | None, typer.Option(help="Finding codes or prefixes (repeatable, or comma-separated).")]
ExitZero = Annotated[bool | None, typer.Option(
    "--exit-zero/--no-exit-zero", help="Exit 0 even with failing findings (errors still exit 2).")]
SettingsFile = Annotated[Path | None, typer.Option(
    "--settings", help="A dspark-ckpt.toml or pyproject.toml to use instead of the one found upward.")]
Isolated = Annotated[bool, typer.Option("--isolated", help="Ignore every settings file.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Text: only findings; no stderr notes.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Say which settings and policy applied.")]
Color = Annotated[ColorChoice, typer.Option("--color", help="Colour the text output.")]
CheckpointFolders = Annotated[bool, typer.Option(
    "--checkpoint-folders", help="Use the folder of each file given (for pre-commit).")]
Token = Annotated[str | None, typer.Option(
    "--token", help="Hugging Face token (default: HF_TOKEN or the login file); never printed.")]
