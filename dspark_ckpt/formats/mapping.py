"""Pure: decode the small d2t/t2d tensors from raw bytes and validate them as a vocabulary mapping."""

from __future__ import annotations

import operator
import sys
from array import array
from collections.abc import Sequence
from itertools import compress

from dspark_ckpt.model.findings import Finding, finding

# A d2t/t2d has one entry per vocabulary id: a few hundred thousand for any real vocabulary. Each entry read costs
# a Python int (and more in the checks), so what is read is bounded by entries, not bytes: 2M entries, 0.5 s.
MAX_MAPPING_ENTRIES = 1 << 21
_INT_TYPECODES = {"I64": "q", "I32": "i", "I16": "h", "I8": "b", "U8": "B", "U16": "H", "U32": "I", "U64": "Q"}
_ITEM_BYTES = {"BOOL": 1, "I8": 1, "U8": 1, "I16": 2, "U16": 2, "I32": 4, "U32": 4, "I64": 8, "U64": 8}
MAX_MAPPING_BYTES = MAX_MAPPING_ENTRIES * 8  # the most bytes of any dtype that are read


def mapping_byte_limit(dtype: str) -> int:
    """How many bytes of a d2t/t2d of this dtype are read at most (MAX_MAPPING_ENTRIES entries)."""
    return MAX_MAPPING_ENTRIES * _ITEM_BYTES.get(dtype, 8)


def decode_ints(raw: bytes, dtype: str) -> Sequence[int] | None:
    """Little-endian integer (or bool) tensor bytes -> values; None for a dtype that holds no integers."""
    if dtype == "BOOL":
        return raw  # bytes already index as 0/1 ints
    code = _INT_TYPECODES.get(dtype)
    if code is None:
        return None
    values = array(code)
    if len(raw) % values.itemsize:
        return None
    values.frombytes(raw)
    if sys.byteorder == "big":
        values.byteswap()
    return values


def d2t_targets(d2t: Sequence[int]) -> list[int]:
    """The target id of every draft id: i + d2t[i] (map/operator keep this at C speed for 10^5 ids)."""
    return list(map(operator.add, range(len(d2t)), d2t))


def t2d_ids(t2d: Sequence[int]) -> list[int]:
    """The sorted target ids a t2d marks: nonzero(t2d)."""
    return list(compress(range(len(t2d)), t2d))


def rebuild_d2t(t2d: Sequence[int]) -> list[int]:
    """The exact d2t for a valid t2d: ids - arange(D), with ids the sorted true positions."""
    ids = t2d_ids(t2d)
    return list(map(operator.sub, ids, range(len(ids))))


def maps_validly(targets: Sequence[int], target_vocab_size: int) -> bool:
    """Target ids a d2t maps onto are a vocabulary map: strictly increasing, inside [0, T)."""
    return (not targets or (targets[0] >= 0 and targets[-1] < target_vocab_size)) and \
        all(map(operator.lt, targets, targets[1:]))


def absolute_to_offsets(d2t: Sequence[int], target_vocab_size: int) -> list[int] | None:
    """The offsets (d2t[i] - i) of a d2t written with absolute target ids, where that is what it holds: read as
    offsets it is no vocabulary map, read as ids it is one (a strictly increasing subset of [0, T)). Else None."""
    if not d2t or maps_validly(d2t_targets(d2t), target_vocab_size) or not maps_validly(d2t, target_vocab_size):
        return None
    return list(map(operator.sub, d2t, range(len(d2t))))


def check_d2t(d2t: Sequence[int], *, target_vocab_size: int | None, pruned: bool,
              file: str, tensor: str, targets: list[int] | None = None) -> list[Finding]:
    """Range is checked on the rows a target id can come from: on a padded draft the rows [T, D) are
    illegal by construction, which DSP305 reports once instead of flagging each row here."""
    findings: list[Finding] = []
    if pruned and len(d2t) and not any(d2t):
        findings.append(finding("DSP401", f"{tensor} is all zero: the {len(d2t)} draft ids map onto target ids "
                                          f"0..{len(d2t) - 1}.", file=file, tensor=tensor))
        return findings
    targets = d2t_targets(d2t) if targets is None else targets
    if target_vocab_size is not None and not pruned:
        targets = targets[:target_vocab_size]
    in_range = not targets or (min(targets) >= 0 and max(targets) < (target_vocab_size or 0))
    if target_vocab_size is not None and not in_range:
        bad = [(i, t) for i, t in enumerate(targets) if not 0 <= t < target_vocab_size]
        if bad:
            i, t = bad[0]
            findings.append(finding("DSP402", f"{len(bad)} draft ids map outside [0, {target_vocab_size}); first: "
                                              f"draft id {i} -> {t}.", file=file, tensor=tensor))
    broken = next(compress(range(1, len(targets)), map(operator.le, targets[1:], targets)), None)
    if broken is not None:
        findings.append(finding("DSP403", f"mapped ids stop increasing at draft id {broken}: "
                                          f"{targets[broken - 1]} then {targets[broken]}.", file=file, tensor=tensor))
    return findings


def check_t2d(t2d: Sequence[int], targets: Sequence[int] | None, *, draft_vocab_size: int | None,
              file: str, tensor: str) -> list[Finding]:
    """`targets` is d2t_targets(d2t) when the checkpoint has a d2t, so both tables are compared."""
    findings: list[Finding] = []
    ids = t2d_ids(t2d)
    marked = len(ids)
    if draft_vocab_size is not None and marked != draft_vocab_size:
        findings.append(finding("DSP404", f"{tensor} marks {marked} target ids, draft_vocab_size is "
                                          f"{draft_vocab_size}.", file=file, tensor=tensor))
    if targets is not None and ids != list(targets):
        first = next((i for i, (a, b) in enumerate(zip(ids, targets)) if a != b), min(len(ids), len(targets)))
        findings.append(finding("DSP405", f"nonzero({tensor}) differs from arange(D) + d2t first at draft id "
                                          f"{first}.", file=file, tensor=tensor))
    return findings
