"""FixPlan / FixResult -> output's FixRecord: the data fix's text and JSON are rendered from (output/), no printing."""

from __future__ import annotations

from collections.abc import Sequence

from dspark_ckpt.model.report import FixState
from dspark_ckpt.output.fix_records import (
    FixAction,
    FixChanges,
    FixRecord,
    FixRefusal,
    FixRuntime,
    FixShard,
    FixText,
    FixWritten,
)
from dspark_ckpt.repair.actions import FileChanges, FixPlan, Predicted, action_json, describe
from dspark_ckpt.repair.apply import FixResult
from dspark_ckpt.repair.files import write_steps
from dspark_ckpt.repair.hints import command
from dspark_ckpt.repair.safety import skip_message


def _state(o: Predicted) -> FixState:
    return FixState(o.loads, o.error_code, o.silent_codes)


def _changes(c: FileChanges | None) -> FixChanges | None:
    if c is None:
        return None
    return FixChanges(tuple(FixShard(s.file, s.new, len(s.tensors), sum(t.nbytes for t in s.tensors))
                            for s in c.shards), c.removed, tuple(FixText(t.file, t.old, t.new) for t in c.texts))


def _written(result: FixResult) -> FixWritten:
    return FixWritten(result.destination, result.in_place, result.atomic, tuple(result.written),
                      tuple(result.copied), result.linked, result.removed, result.bytes_written, result.report,
                      tuple(result.errors), result.via_link, result.recovered)


def fix_record(plan: FixPlan, result: FixResult | None, *, in_place: bool, dry_run: bool,
               skipped: Sequence[str] = (), stays_broken: Sequence[str] = ()) -> FixRecord:
    """`skipped`: why --safe-only left a planned repair alone (status `skipped`, nothing written)."""
    status = ("refused" if plan.refusal else "nothing-to-do" if not plan.actions else "skipped" if skipped
              else "planned" if dry_run else "applied")
    refusal = plan.refusal
    return FixRecord(
        source=plan.source, status=status, target_vocab_size=plan.target_vocab_size, runtimes=plan.runtimes,
        strategy=plan.strategy,
        actions=tuple(FixAction(x.reason, describe(x), action_json(x)) for x in plan.actions),
        changes=_changes(plan.changes),
        refusal=FixRefusal(refusal.code, refusal.message, refusal.hint) if refusal is not None else None,
        note=plan.note,
        compatibility=tuple(FixRuntime(b.runtime, _state(b), _state(a)) for b, a in zip(plan.before, plan.after)),
        steps=write_steps(plan.changes, in_place) if plan.changes and plan.actions else (),
        skipped=tuple(skipped),
        skip_message=skip_message(plan, list(skipped)) if skipped else None,
        skip_command=command("fix", plan.named, plan.runtimes) if skipped else None,
        warnings=plan.warnings, not_repaired_for=plan.not_repaired_for, recovered=plan.recovered,
        result=_written(result) if result is not None else None, stays_broken=tuple(stays_broken),
        replanned=plan.replanned,
        serving_method=(plan.method.name, plan.method.given_by) if plan.method is not None else None)
