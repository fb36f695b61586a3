"""Progress of long work on stderr (rich): shown only on a terminal and never with -q, so logs and pipes stay clean."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Self

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)


def wanted(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


class PhaseBar:
    """One transient line: the phase of the current item (`[2/5] draft: probing padded rows ━━━ 512/4096 0:03`).

    Implements verify's ProgressSink (phase, advance); disabled, every call is a no-op.
    """

    def __init__(self, *, enabled: bool) -> None:
        self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeElapsedColumn(), console=Console(stderr=True), transient=True, disable=not enabled)
        self._task: TaskID | None = None
        self._prefix = ""

    def __enter__(self) -> Self:
        self._bar.start()
        self._task = self._bar.add_task("", total=None)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._bar.stop()

    def item(self, index: int, count: int, label: str) -> None:
        """The next checkpoint of a run over several (no prefix for a single one)."""
        self._prefix = f"[{index}/{count}] {label}: " if count > 1 else f"{label}: "

    def phase(self, name: str, total: int | None = None) -> None:
        if self._task is not None:
            self._bar.update(self._task, description=self._prefix + name, total=total, completed=0)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._bar.advance(self._task, n)
