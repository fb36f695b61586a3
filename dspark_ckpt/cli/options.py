"""The options every command shares, declared once: each command lists the ones it takes."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.findings import Severity
from dspark_ckpt.output.table import DOCUMENT_FORMATS, FORMATS
from dspark_ckpt.sources.target import parse_vocab_size

# --format's choices are the renderer table's names (output/table.py): a new format is one entry there.
OutputFormat = StrEnum("OutputFormat", {name.upper().replace("-", "_"): name for name in FORMATS})  # type: ignore[misc]
TEXT = OutputFormat("text")


# The formats of the commands that print one document, not a report (fix, rules, explain, version): the same table.
DocFormat = StrEnum("DocFormat", {name.upper(): name for name in DOCUMENT_FORMATS})  # type: ignore[misc]
DOC_TEXT, DOC_JSON = DocFormat("text"), DocFormat("json")


class ColorChoice(StrEnum):
    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


FORMAT_NAMES = ("--format", "--output-format")  # ruff's and pre-commit's spelling beside ours


Format = Annotated[OutputFormat, typer.Option(*FORMAT_NAMES, metavar="FORMAT", help=(
    f"Output format: {', '.join(FORMATS[:-1])} or {FORMATS[-1]}."))]
Statistics = Annotated[bool, typer.Option(
    "--statistics", help="Print one line per code with its count, most frequent first, instead of the report "
                         "(with --format json: a JSON list).")]
Doc = Annotated[DocFormat, typer.Option(*FORMAT_NAMES, metavar="FORMAT", help=(
    f"Output format: {' or '.join(DOCUMENT_FORMATS)}."))]
Target = Annotated[str | None, typer.Option(
    "--target", metavar="PATH|ORG/REPO", help="Target model folder, its config.json, or org/repo.")]
TargetSize = Annotated[int | None, typer.Option(
    "--target-vocab-size", metavar="N", parser=parse_vocab_size, help="Target vocab T, if no --target.")]
Runtime = Annotated[list[str] | None, typer.Option(
    "--runtime", metavar="SELECTOR", help="vllm==X.Y.Z, 'vllm>=X.Y', vllm, sglang, installed or all (repeatable; "
                                          "default: the settings file's `runtime`, else every known version).")]
Revision = Annotated[str | None, typer.Option(
    "--revision", metavar="REV", help="Hub revision (branch, tag, commit) for each org/repo given without @REV.")]
Config = Annotated[Path | None, typer.Option(
    "--config", metavar="FILE", help="config.json for a single .safetensors file; a *.toml file here is read as "
                                     "--settings.")]
Output = Annotated[Path | None, typer.Option("--output", "-o", metavar="FILE",
                                             help="Write the report here, not stdout.")]
Reports = Annotated[list[str] | None, typer.Option(
    "--report", metavar="FORMAT=FILE", help="Also write the report in FORMAT to FILE, from this same run "
                                            "(repeatable): e.g. --report sarif=out.sarif --report junit=out.xml.")]


def parse_reports(values: list[str] | None, output: Path | None = None) -> list[tuple[str, Path]]:
    """--report FORMAT=FILE values, each format one of --format's and each file named once, --output's included
    (else DSP-E039)."""
    from dspark_ckpt.errors import UsageError

    out: list[tuple[str, Path]] = []
    for value in values or []:
        fmt, eq, file = value.partition("=")
        if not eq or not file or fmt not in FORMATS:
            shown = value if len(value) <= 200 else value[:200] + "..."
            raise UsageError(f"--report {shown!r}: expected FORMAT=FILE with FORMAT one of {', '.join(FORMATS)}",
                             code="DSP-E039", hint="e.g. --report sarif=results/draft.sarif")
        if any(Path(file) == seen for _, seen in out) or Path(file) == output:
            raise UsageError(f"{file} is named twice (--report, --output)", code="DSP-E039",
                             hint="give each report its own file")
        out.append((fmt, Path(file)))
    return out
FailOn = Annotated[Severity | None, typer.Option(
    "--fail-on", metavar="SEVERITY", help="Exit 1 at or above this severity: info, warning or error "
                                          "[default: error].")]
Select = Annotated[list[str] | None, typer.Option(
    "--select", metavar="CODES", help="Report only these codes or prefixes, replacing the settings file's "
                                      "selection (repeatable or comma-separated; ALL for every code).")]
ExtendSelect = Annotated[list[str] | None, typer.Option(
    "--extend-select", metavar="CODES", help="Report these codes or prefixes too, on top of the selection "
                                             "(repeatable or comma-separated).")]
Ignore = Annotated[list[str] | None, typer.Option(
    "--ignore", metavar="CODES", help="Never report these codes or prefixes, whatever is selected "
                                      "(repeatable or comma-separated).")]
Codes = Select  # the former name of --select's type; --extend-select and --ignore have their own
ExitZero = Annotated[bool | None, typer.Option(
    "--exit-zero/--no-exit-zero", "-e", help="Exit 0 even with failing findings (errors still exit 2).")]
AllowNoTarget = Annotated[bool | None, typer.Option(
    "--allow-no-target/--no-allow-no-target", help="Let a check without a target vocabulary T pass (structural "
                                                   "checks only; by default it exits 2).")]
AllowNoVerdict = Annotated[bool | None, typer.Option(
    "--allow-no-verdict/--no-allow-no-verdict", help="Let a requested release dspark-ckpt could not judge pass: its "
                                                     "row still says no verdict (DSP368), shown but not gated.")]
SettingsFile = Annotated[Path | None, typer.Option(
    "--settings", metavar="FILE", help="A dspark-ckpt.toml or pyproject.toml to use instead of the one found "
                                       "upward.")]
Isolated = Annotated[bool, typer.Option("--isolated", help="Ignore every settings file.")]
Quiet = Annotated[bool, typer.Option(
    "--quiet", "-q", help="Print less: only findings; no stderr notes, except the policy announcements (a settings "
                          "file or flag hiding findings or changing the exit code), which still print on stderr.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Print more: which settings and policy applied.")]
Color = Annotated[ColorChoice, typer.Option(
    "--color", metavar="WHEN", help="Colour the text output: auto (on a terminal, unless NO_COLOR), always or "
                                    "never.")]
NoColor = Annotated[bool, typer.Option("--no-color", help="Same as --color never.")]
CheckpointFolders = Annotated[bool, typer.Option(
    "--checkpoint-folders", help="Use the folder of each file given (for pre-commit).")]
SpeculativeConfig = Annotated[str | None, typer.Option(
    "--speculative-config", metavar="JSON|FILE", help="The deploy's vLLM --speculative-config (inline JSON or a .json "
    "file; default: the settings file's `speculative-config`): its method is the serving method of the checkpoint "
    "its `model` names (check: which may then be omitted, and the config is checked with it).")]
MaxModelLen = Annotated[int | None, typer.Option(
    "--max-model-len", metavar="N", min=1, help="The deploy's `vllm serve --max-model-len`, the served context the "
    "--speculative-config draft's max_position_embeddings is checked against (default: the settings file's "
    "`max-model-len`, else vLLM's default: the local --target config's max_position_embeddings).")]
Token = Annotated[str | None, typer.Option(
    "--token", metavar="TOKEN", help="Hugging Face token (default: HF_TOKEN or the login file); never printed.")]


def color_choice(color: ColorChoice, no_color: bool) -> ColorChoice:
    """--no-color is --color never; beside --color always the two contradict each other."""
    if no_color and color is ColorChoice.ALWAYS:
        raise UsageError("--no-color and --color always contradict each other", code="DSP-E103")
    return ColorChoice.NEVER if no_color else color


def check_loudness(quiet: bool, verbose: bool) -> None:
    """-q with -v: the same error as cli/run.py's, for the commands that resolve no run (rules, explain, version)."""
    if quiet and verbose:
        raise UsageError("--quiet and --verbose contradict each other", code="DSP-E025")


def with_revision(specs: list[str], revision: str | None) -> list[str]:
    """`--revision REV` applies to each org/repo given without `@REV`; local paths are left as they are."""
    if revision is None:
        return specs
    if not revision.strip() or "@" in revision or revision != revision.strip():
        raise UsageError(f"--revision {revision!r} is not a revision", code="DSP-E100",
                         hint="give a branch, tag, refs/pr/N or commit")
    out, hub = [], False
    for spec in specs:
        repo, at, given = spec.partition("@")
        if Path(spec).exists() or repo.removeprefix("hf://").count("/") != 1:
            out.append(spec)
            continue
        if at and given != revision:
            raise UsageError(f"{spec} names revision {given!r} and --revision says {revision!r}", code="DSP-E101",
                             hint="give the revision once: org/repo@REV or --revision REV")
        out.append(f"{repo}@{revision}")
        hub = True
    if not hub:
        raise UsageError("--revision applies to Hub repos (org/repo), and no checkpoint given is one",
                         code="DSP-E102", hint="drop --revision for local folders")
    return out
