"""What a renderer may know beyond the document: the policy threshold, the tool version, where paths start."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import CheckpointReport


class Sink(Protocol):
    """Where a renderer writes: a rich console for rich text, else any object with a text `file` (write.PlainSink)."""

    @property
    def file(self) -> IO[str]: ...


@dataclass(frozen=True, slots=True)
class RenderContext:
    """What a renderer may know beyond the report: the policy's threshold (to label pass/fail) and where paths start."""

    fail_on: Severity = Severity.ERROR
    tool_version: str = "0"
    root: Path = Path(".")  # relative locations are written relative to this folder (the working directory)
    quiet: bool = False
    verbose: bool = False  # -v: the text report's long form (facts, matrix, whole messages and hints)
    # Findings at or above fail_on that do not fail the run, since they concern only runtimes outside the policy's
    # gate (check/policy.py DEFAULT_GATE), and those runtimes: the verdict line says so instead of implying a failure.
    outside_gate: int = 0
    ungated_runtimes: tuple[str, ...] = ()
    # The findings that decide the exit code, as (checkpoint source, finding); None: every finding at or above
    # fail_on (a renderer called without a run's policy). JUnit failures, `::error` and SARIF `error` follow it.
    gated: frozenset[tuple[str, Finding]] | None = None
    policy: dict[str, Any] | None = None  # the policy that applied, as the JSON and SARIF documents record it
    # The findings, of any severity, that only runtimes outside the gate report: the verdict counts them apart.
    outside: frozenset[tuple[str, Finding]] = frozenset()

    def is_gated(self, c: CheckpointReport, f: Finding) -> bool:
        if self.gated is None:
            return f.severity.rank >= self.fail_on.rank
        return (c.source, f) in self.gated

    def is_outside(self, c: CheckpointReport, f: Finding) -> bool:
        return (c.source, f) in self.outside

    def shown_severity(self, c: CheckpointReport, f: Finding) -> Severity:
        """The severity a CI format gives the finding: an error that does not decide the exit code (a runtime
        outside the gate, --exit-zero) is never shown as a blocking one, so a green job shows no errors."""
        if f.severity is Severity.ERROR and not self.is_gated(c, f):
            return Severity.WARNING
        return f.severity

    def not_gated_note(self, c: CheckpointReport, f: Finding) -> bool:
        """At or above --fail-on, yet not deciding the exit code: the formats say `not gated`."""
        return f.severity.rank >= self.fail_on.rank and not self.is_gated(c, f)
