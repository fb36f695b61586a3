"""Pure: is a plan metadata-only (safe for `--safe-only` and the pre-commit hook), and if not, why not."""

from __future__ import annotations

from dspark_ckpt.repair import actions as a

# "Small": a shard rewritten only to drop a tensor, or a new shard (a d2t of a 200k vocab is 1.6 MB), copies at most
# this much. Above it the rewrite is real tensor I/O, which a commit hook must not do behind the user's back.
SAFE_SHARD_MAX_BYTES = 16 * 2**20


def _data_bytes(shard: a.ShardWrite) -> int:
    return sum(t.nbytes for t in shard.tensors)


def unsafe_reasons(plan: a.FixPlan, max_bytes: int = SAFE_SHARD_MAX_BYTES) -> list[str]:
    """Why applying `plan` is not metadata-only; empty when it only edits JSON, adds small shards, or drops tensors
    from (or deletes) shards small enough to rewrite. Trimming or replacing tensor data is never metadata-only."""
    if plan.changes is None or not plan.changes_anything:
        return []
    reasons = [f"trims {x.tensor} to {x.rows} rows (rewrites its data in {x.file})"
               for x in plan.actions if isinstance(x, a.TrimRows)]
    new_shards = {s.file for s in plan.changes.shards if s.new}
    reasons += [f"replaces the data of {x.tensor} in the existing shard {x.file}"
                for x in plan.actions if isinstance(x, a.PutTensor) and x.file not in new_shards]
    for shard in plan.changes.shards:
        size = _data_bytes(shard)
        if size > max_bytes:
            what = "writes a new shard" if shard.new else "rewrites the shard"
            reasons.append(f"{what} {shard.file} with {size} bytes of tensor data (over {max_bytes})")
    return reasons


def skip_message(plan: a.FixPlan, reasons: list[str]) -> str:
    return (f"skipped (--safe-only): {plan.strategy} is not a metadata-only repair: it " + "; it ".join(reasons)
            + ". Nothing was written")
