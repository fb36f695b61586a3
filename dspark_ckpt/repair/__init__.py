"""`dspark-ckpt fix`: plan repairs for the chosen runtimes (pure), then apply them atomically (apply.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dspark_ckpt.errors import UsageError
from dspark_ckpt.repair.actions import STRATEGIES, FixPlan
from dspark_ckpt.repair.apply import FixResult, apply_fix
from dspark_ckpt.runtimes.selectors import RuntimeVersion, parse_selectors
from dspark_ckpt.sources.target import resolve_target

__all__ = ["STRATEGIES", "FixPlan", "FixResult", "apply_fix", "fix_runtimes", "plan_fix"]


def fix_runtimes(selectors: Sequence[str] | None) -> list[RuntimeVersion]:
    """`all` (the default) means what it means for check: every known vLLM version and SGLang."""
    return parse_selectors(list(selectors or ["all"]))


def plan_fix(checkpoint: str | Path, *, target: str | None = None, target_vocab_size: int | None = None,
             runtimes: Sequence[str] | None = None, strategy: str | None = None) -> FixPlan:
    """Read a draft folder and plan its repair for the chosen runtimes; nothing is written."""
    from dspark_ckpt.repair.plan import plan_repair
    from dspark_ckpt.repair.read import read_situation

    if strategy is not None and strategy not in STRATEGIES:
        raise UsageError(f"unknown strategy {strategy!r}", code="DSP-E060", hint=f"one of {', '.join(STRATEGIES)}")
    target_vocab = resolve_target(target, target_vocab_size)
    if target_vocab is None:
        raise UsageError("fix needs the target vocabulary T", code="DSP-E061",
                         hint="pass --target DIR or --target-vocab-size N")
    chosen = fix_runtimes(runtimes)
    situation = read_situation(Path(checkpoint).absolute(), target_vocab, chosen)
    return plan_repair(situation, chosen, strategy)
