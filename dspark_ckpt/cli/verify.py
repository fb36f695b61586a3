"""The `dspark-ckpt verify` command (registered on the app by cli.py); torch is imported only when it runs."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from dspark_ckpt.model.findings import Severity


class VerifyFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


def _run(checkpoints: list[str], *, target: str | None, target_vocab_size: int | None, runtime: list[str] | None,
         config: Path | None, output_format: VerifyFormat, options: Any, fail_on: Severity) -> int:
    from dspark_ckpt.cli.app import exit_code, stdout_console
    from dspark_ckpt.model.report import Report
    from dspark_ckpt.output.render import render_text, report_json
    from dspark_ckpt.runtimes.selectors import parse_selectors
    from dspark_ckpt.sources.resolve import open_source
    from dspark_ckpt.sources.target import resolve_target
    from dspark_ckpt.verify import torch_loader
    from dspark_ckpt.verify.render import render_verify
    from dspark_ckpt.verify.result import verify_json

    runtimes = parse_selectors(runtime)
    target_vocab = resolve_target(target, target_vocab_size)
    device = torch_loader.resolve_device(options.device)
    pairs = [torch_loader.verify_checkpoint(open_source(spec, config=config), target=target_vocab,
                                            runtimes=runtimes, options=options, device=device)
             for spec in checkpoints]
    report = Report(tuple(p[0] for p in pairs), runtimes=tuple(str(r) for r in runtimes))
    console = stdout_console()
    if output_format is VerifyFormat.JSON:
        doc = report_json(report)
        for entry, (_, result) in zip(doc["checkpoints"], pairs):
            entry["verify"] = verify_json(result)
        console.file.write(json.dumps(doc, indent=2) + "\n")
    else:
        render_text(report, console)
        for _, result in pairs:
            render_verify(result, console)
    return exit_code(report, fail_on)


def register(app: typer.Typer) -> None:
    """Attach `verify` to the app. Nothing here imports torch; the command does, when it runs."""

    @app.command()
    def verify(
        checkpoints: Annotated[list[str], typer.Argument(help="Local draft folder or .safetensors file.")],
        target: Annotated[str | None, typer.Option("--target", help="Target model folder (or its config.json).")]
        = None,
        target_vocab_size: Annotated[int | None, typer.Option("--target-vocab-size",
                                                                 help="Target vocab T, if no --target.")] = None,
        runtime: Annotated[list[str] | None, typer.Option(
            "--runtime", help="vllm==X.Y.Z, vllm, sglang or all (repeatable; default: every known version).")] = None,
        config: Annotated[Path | None, typer.Option("--config", help="config.json for a single .safetensors file.")]
        = None,
        output_format: Annotated[VerifyFormat, typer.Option("--format", help="Output format.")] = VerifyFormat.TEXT,
        device: Annotated[str, typer.Option("--device", help="auto (cuda if present), cpu, cuda or cuda:N.")] = "auto",
        probe: Annotated[int, typer.Option("--probe", min=0, help="Probe vectors for the padded-row risk "
                                                                 "(half embedding rows, half Gaussian).")] = 4096,
        seed: Annotated[int, typer.Option("--seed", help="Seed of the probe vectors.")] = 0,
        top_k: Annotated[int, typer.Option("--top-k", min=1, help="k of the top-k illegal-row count.")] = 8,
        fail_on: Annotated[Severity, typer.Option("--fail-on", help="Exit 1 at or above this severity.")]
        = Severity.ERROR,
    ) -> None:
        """Load the draft with torch as each runtime would: exact load errors, mappings, padded-row risk."""
        from dspark_ckpt.verify.torch_loader import VerifyOptions

        options = VerifyOptions(device=device, probes=probe, seed=seed, top_k=top_k)
        raise typer.Exit(_run(checkpoints, target=target, target_vocab_size=target_vocab_size, runtime=runtime,
                              config=config, output_format=output_format, options=options, fail_on=fail_on))
