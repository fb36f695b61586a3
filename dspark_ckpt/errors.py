"""Operational failures (not findings): a usage error, an unreadable target, a failed write."""

from __future__ import annotations


class DsparkCkptError(Exception):
    """Root of every operational error; `exit_code` is what the CLI returns for it."""

    exit_code = 2

    def __init__(self, message: str, *, code: str = "DSP-E000", hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint


class UsageError(DsparkCkptError):
    """The command line or the configuration asks for something impossible."""


class SourceError(DsparkCkptError):
    """A checkpoint or target could not be reached or read at all."""


class RepairError(DsparkCkptError):
    """A repair could not be planned or applied; the original checkpoint is untouched."""
