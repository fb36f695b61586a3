"""What a renderer may know beyond the document: the policy threshold, the tool version, where paths start."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dspark_ckpt.model.findings import Severity


@dataclass(frozen=True, slots=True)
class RenderContext:
    """What a renderer may know beyond the report: the policy's threshold (to label pass/fail) and where paths start."""

    fail_on: Severity = Severity.ERROR
    tool_version: str = "0"
    root: Path = Path(".")  # relative locations are written relative to this folder (the working directory)
    quiet: bool = False
    # Findings at or above fail_on that do not fail the run, since they concern only runtimes outside the policy's
    # gate (check/policy.py DEFAULT_GATE), and those runtimes: the verdict line says so instead of implying a failure.
    outside_gate: int = 0
    ungated_runtimes: tuple[str, ...] = ()
