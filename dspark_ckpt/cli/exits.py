"""The exit codes of every command, and the one rule that maps a report and its policy to 0 or 1."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: `--help` and `--version` import this module, not the policy stage
    from dspark_ckpt.check.policy import Policy
    from dspark_ckpt.model.report import Report

EXIT_OK = 0  # clean (or --exit-zero)
EXIT_FINDINGS = 1  # findings at or above --fail-on; for fix: not fixed, or a repair was written with a hook flag
EXIT_NOT_FIXED = EXIT_FINDINGS  # fix: refused, skipped, (dry run) would change something, or the re-check failed
EXIT_USAGE = 2  # a usage or operational error: the run could not answer
EXIT_INTERNAL = 3  # a bug in dspark-ckpt
EXIT_INTERRUPTED = 130  # Ctrl-C


def findings_exit(report: Report, policy: Policy) -> int:
    if policy.exit_zero:
        return EXIT_OK
    return EXIT_FINDINGS if policy.failing(report) else EXIT_OK
