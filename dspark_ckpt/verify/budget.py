"""How many padded-row probes verify runs: `--probe auto` (a time budget on CPU, a fixed count on CUDA), N, or Ns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

CPU_SECONDS = 5.0  # auto on CPU: the probe phase is sized to about this many seconds of this machine
CUDA_PROBES = 65_536  # auto on CUDA: a few seconds even for an H = 4096, D = 201024 head
MAX_PROBES = 1 << 20  # a budget never asks for more than this (the statistics stop changing long before)
_SECONDS = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)\s*s$")


@dataclass(frozen=True, slots=True)
class ProbeBudget:
    """An exact probe count, or a time budget in seconds (None and None: auto)."""

    count: int | None = None
    seconds: float | None = None

    @property
    def label(self) -> str:
        if self.count is not None:
            return str(self.count)
        return f"{self.seconds:g}s" if self.seconds is not None else "auto"


AUTO = ProbeBudget()


def parse_probe(text: str) -> ProbeBudget:
    """`auto`, a count (`65536`, 0 turns the probe off) or a time budget (`10s`); ValueError otherwise."""
    value = text.strip().lower()
    if value == "auto":
        return AUTO
    if value.isdigit():
        return ProbeBudget(count=int(value))
    match = _SECONDS.match(value)
    if match is not None and float(match[1]) > 0:
        return ProbeBudget(seconds=float(match[1]))
    raise ValueError(f"{text!r} is not auto, a probe count (e.g. 4096) or a time budget (e.g. 10s)")


def planned_count(budget: ProbeBudget, *, device_type: str, seconds_per_probe: float | None,
                  spent: float = 0.0) -> tuple[int, str]:
    """How many probes to run and why, in words for the report.

    `seconds_per_probe` comes from a timed batch, which took `spent` seconds of the budget already.
    """
    if budget.count is not None:
        return budget.count, f"--probe {budget.count}"
    if budget.seconds is None and device_type == "cuda":
        return CUDA_PROBES, f"--probe auto on CUDA: {CUDA_PROBES:,} probes"
    seconds = budget.seconds if budget.seconds is not None else CPU_SECONDS
    cap = CUDA_PROBES if budget.seconds is None else MAX_PROBES  # auto never runs more on CPU than on CUDA
    cost = max(seconds_per_probe or 0.0, 1e-9)
    fits = int(max(0.0, seconds - spent) / cost)
    n = max(2, min(cap, fits) // 2 * 2)  # even: half embedding rows, half Gaussian
    how = "--probe auto on CPU" if budget.seconds is None else f"--probe {budget.label}"
    capped = f", capped at {cap:,}" if fits > cap else ""
    return n, (f"{how}: a {seconds:g} s budget at {cost * 1000:.3g} ms per probe (timed on this machine){capped}; "
               "--probe N runs exactly N")


class ProgressSink(Protocol):
    """Where long work reports progress (a rich bar on a terminal; nothing otherwise)."""

    def phase(self, name: str, total: int | None = None) -> None:
        """A new phase starts; `total` units of work when known."""

    def advance(self, n: int = 1) -> None:
        """`n` more units of the current phase are done."""


class NoProgress:
    """The default sink: library calls and non-terminals print nothing."""

    def phase(self, name: str, total: int | None = None) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None
