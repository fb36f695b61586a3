"""The `dspark-ckpt fix` command (registered on the app by cli.py)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from dspark_ckpt.errors import UsageError
from dspark_ckpt.repair.actions import STRATEGIES

EXIT_OK, EXIT_NOT_FIXED = 0, 1

Strategy = StrEnum("Strategy", {s.upper().replace("-", "_"): s for s in STRATEGIES})  # type: ignore[misc]


class Format(StrEnum):
    TEXT = "text"
    JSON = "json"


def fix(
    checkpoint: Annotated[str, typer.Argument(help="Draft checkpoint folder.")],
    target: Annotated[Optional[str], typer.Option("--target", help="Target model folder (or its config.json).")] = None,
    target_vocab_size: Annotated[Optional[int], typer.Option("--target-vocab-size", help="Target vocab T.")] = None,
    for_: Annotated[Optional[list[str]], typer.Option(
        "--for", help="Runtime the result must load on: vllm==X.Y.Z (repeatable), vllm, sglang, or all "
                      "(default: every known vLLM version).")] = None,
    strategy: Annotated[Optional[Strategy], typer.Option("--strategy", help="Force one repair.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Write the complete fixed checkpoint here.")] = None,
    in_place: Annotated[bool, typer.Option("--in-place", help="Rewrite only the files that change.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan and JSON diffs; write nothing.")] = False,
    output_format: Annotated[Format, typer.Option("--format", help="Output format.")] = Format.TEXT,
    push: Annotated[bool, typer.Option("--push", help="Hub repo: open a pull request with the fix.")] = False,
    token: Annotated[Optional[str], typer.Option(
        "--token", help="Hugging Face token for --push; never printed.")] = None,
) -> None:
    """Repair a draft for the runtimes it will run on: plan, write atomically, then re-check the result."""
    if push:  # Hub repos: the repair goes to a pull request (dspark_ckpt/hub_push.py)
        from dspark_ckpt.hub_push import push_command

        raise typer.Exit(push_command(checkpoint, target=target, target_vocab_size=target_vocab_size, runtimes=for_,
                                      strategy=strategy.value if strategy else None, token=token,
                                      output_format=output_format.value, out=out, in_place=in_place, dry_run=dry_run))
    from dspark_ckpt.repair import apply_fix, plan_fix
    from dspark_ckpt.repair.render import fix_json, render_plan_text, render_result_text

    if out is not None and in_place:
        raise UsageError("give --out DIR or --in-place, not both", code="DSP-E027")
    if out is None and not in_place and not dry_run:
        raise UsageError("say where the fix goes", code="DSP-E027",
                         hint="--out DIR (a new folder), --in-place, or --dry-run to only see the plan")
    plan = plan_fix(checkpoint, target=target, target_vocab_size=target_vocab_size, runtimes=for_,
                    strategy=strategy.value if strategy else None)
    console = Console(soft_wrap=False, highlight=False)
    result = None
    if plan.changes_anything and not dry_run:
        result = apply_fix(plan, out=out, in_place=in_place, console=Console(stderr=True))
    if output_format is Format.JSON:
        console.file.write(json.dumps(fix_json(plan, result, in_place=in_place, dry_run=dry_run), indent=2) + "\n")
    else:
        render_plan_text(plan, console, diff=dry_run)
        if result is not None:
            render_result_text(result, console)
        elif dry_run and plan.changes_anything:
            console.print("dry run: nothing was written", style="dim")
    raise typer.Exit(_exit_code(plan, result, dry_run))


def _exit_code(plan: object, result: object, dry_run: bool) -> int:
    from dspark_ckpt.repair import FixPlan, FixResult

    assert isinstance(plan, FixPlan)
    if plan.refusal is not None or (dry_run and plan.changes_anything):
        return EXIT_NOT_FIXED
    if isinstance(result, FixResult):
        return EXIT_NOT_FIXED if result.errors else EXIT_OK
    return EXIT_OK


def register(app: typer.Typer) -> None:
    """Attach the `fix` command to the app."""
    app.command("fix")(fix)
