"""Pure: consecutive SGLang releases with the same verdict shown as one row (`sglang 0.5.1-0.5.15`) in tables.

JSON, SARIF and JUnit keep one entry per release; only the human tables fold them (24 SGLang releases are known).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dspark_ckpt.model import runtime_label
from dspark_ckpt.model.report import Compatibility

FOLDED = frozenset({"sglang"})


@dataclass(frozen=True, slots=True)
class Run:
    label: str  # `vllm 0.29.0`, `sglang 0.5.16`, or `sglang 0.5.16-0.5.21`
    entry: Compatibility  # the first of the run (every member has the same verdict)


def _verdict(e: Compatibility) -> tuple[object, ...]:
    return (e.runtime, e.loads, e.error, e.error_code, e.first_step_error, e.first_step_error_code, e.silent,
            e.silent_codes)


def runs(entries: Sequence[Compatibility]) -> list[Run]:
    out: list[Run] = []
    group: list[Compatibility] = []

    def flush() -> None:
        if group:
            first, last = group[0], group[-1]
            label = runtime_label.display(first.runtime, first.version)
            if len(group) > 1:
                label = f"{label}-{last.version}"
            out.append(Run(label, first))
            group.clear()

    for e in entries:
        if group and (e.runtime not in FOLDED or _verdict(e) != _verdict(group[0])):
            flush()
        group.append(e)
        if e.runtime not in FOLDED:
            flush()
    flush()
    return out
