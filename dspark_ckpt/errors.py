"""Operational failures (not findings): a usage error, an unreadable target, a failed write."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: --help and --version load nothing of model/
    from dspark_ckpt.model.codes import ErrorCode

# The test suite sets this (tests/conftest.py): every error raised is checked against the registries, so a code
# missing from model/error_catalog.py fails the test that raised it. Unset, nothing is imported or looked up.
CHECK_CODES_ENV = "DSPARK_CKPT_CHECK_CODES"
_CHECK_CODES = os.environ.get(CHECK_CODES_ENV) == "1"


class UnregisteredCode(AssertionError):
    """A bug: an operational error carries a code no registry documents (raised only with DSPARK_CKPT_CHECK_CODES)."""


def check_code(code: str) -> None:
    """Raise UnregisteredCode unless `code` is a live DSP-Exxx code (a finding code is never an operational error)."""
    from dspark_ckpt.model.error_catalog import ERRORS

    doc = ERRORS.get(code)
    if doc is None or doc.retired:
        raise UnregisteredCode(f"operational error code {code} is not in dspark_ckpt/model/error_catalog.py"
                               + (" (retired)" if doc is not None else ""))


class DsparkCkptError(Exception):
    """Root of every operational error; `exit_code` is what the CLI returns for it."""

    exit_code = 2

    def __init__(self, message: str, *, code: ErrorCode, hint: str | None = None) -> None:
        if _CHECK_CODES:
            check_code(code)
        super().__init__(message)
        self.code = code
        self.hint = hint


class UsageError(DsparkCkptError):
    """The command line or the configuration asks for something impossible."""


class SourceError(DsparkCkptError):
    """A checkpoint or target could not be reached or read at all."""


class RepairError(DsparkCkptError):
    """A repair could not be planned or applied; the original checkpoint is untouched."""
