"""Pure: consecutive releases with the same verdict shown as one row (`sglang 0.5.1-0.5.15`, `vllm 0.20.0-0.24.0`).

JSON, SARIF and JUnit keep one entry per release; the human listings fold them (24 SGLang, 20 vLLM releases): check's
compatibility table, fix's before/after lines and verify's "loaded with torch" table all go through `fold`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from dspark_ckpt.model import runtime_label
from dspark_ckpt.model.report import Compatibility
from dspark_ckpt.runtimes.selectors import LISTED
from dspark_ckpt.runtimes.step_reasons import REASONS

FOLDED = frozenset({"sglang", "vllm"})
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Folded(Generic[T]):
    """A run of consecutive releases with the same outcome, shown as one row."""

    label: str  # `vllm 0.29.0`, `sglang 0.5.16`, or `sglang 0.5.16-0.5.21`
    entry: T  # the first of the run (every member has the same outcome)
    count: int = 1


def fold(items: Sequence[T], release: Callable[[T], tuple[str, str]],
         outcome: Callable[[T], Hashable]) -> list[Folded[T]]:
    """Consecutive items of a folded runtime with the same `outcome` as one, labelled by their release range;
    `release(item)` is its (runtime, version)."""
    out: list[Folded[T]] = []
    group: list[T] = []

    def flush() -> None:
        if group:
            (runtime, first), (_, last) = release(group[0]), release(group[-1])
            label = runtime_label.display(runtime, first) + (f"-{last}" if len(group) > 1 else "")
            out.append(Folded(label, group[0], len(group)))
            group.clear()

    for item in items:
        runtime = release(item)[0]
        if group and (runtime != release(group[0])[0] or runtime not in FOLDED or outcome(item) != outcome(group[0])
                      or not _next(release(group[-1]), release(item))):
            flush()
        group.append(item)
        if runtime not in FOLDED:
            flush()
    flush()
    return out


def _next(before: tuple[str, str], after: tuple[str, str]) -> bool:
    """`after` is the listed release right after `before`: a run never spans a release left out of the items (fix
    `--for 'vllm>=0.25.0,<=0.28.0' --for 'vllm>=0.30.0'` is two runs, not `vllm 0.25.0-0.34.0`)."""
    listed = LISTED.get(before[0], ())
    if before[1] not in listed or after[1] not in listed:
        return False
    return listed.index(after[1]) == listed.index(before[1]) + 1


def split_selector(name: str) -> tuple[str, str]:
    """`vllm==0.29.0` -> (`vllm`, `0.29.0`); a bare runtime name is every version of it."""
    runtime, _, version = name.partition("==")
    return runtime, version or runtime_label.ANY_VERSION


ReleaseRun = Folded[Compatibility]


def _verdict(e: Compatibility) -> tuple[object, ...]:
    return (e.runtime, e.loads, e.error, e.error_code, e.first_step_error, e.first_step_error_code, e.silent,
            e.silent_codes, e.first_step_not_modelled_why, e.first_step_not_modelled)


def step_note(e: Compatibility) -> str | None:
    """The row's one line where it loads and nothing executed its first draft step (runtimes/step_reasons.py);
    None elsewhere. Not a failure: the JSON's `first_step` says `not_modelled`."""
    if e.first_step != "not_modelled" or e.first_step_not_modelled_why is None:
        return None
    reason = REASONS.get(e.first_step_not_modelled_why)
    return f"first step not modelled: {reason.short if reason else e.first_step_not_modelled_why} " \
           f"({e.first_step_not_modelled_why})"


def runs(entries: Sequence[Compatibility]) -> list[ReleaseRun]:
    return fold(entries, lambda e: (e.runtime, e.version), _verdict)
