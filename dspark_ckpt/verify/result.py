"""Pure results of a verify run (no torch types): runtime states, mapping checks, probe statistics, and their JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dspark_ckpt.verify.interval import wilson


@dataclass(frozen=True, slots=True)
class RuntimeState:
    """What one runtime version's emulated load left behind."""

    runtime: str
    version: str
    loads: bool
    error: str | None
    error_code: str | None
    d2t_param: bool  # __init__ created draft_id_to_target_id
    d2t_loaded: bool
    lm_head: str  # own | target | uninitialised | none (load failed)
    embed_tokens: str
    first_step_code: str | None = None  # it loaded, then the first draft step's ops failed (SGLang)


@dataclass(frozen=True, slots=True)
class MappingCheck:
    """map_draft_to_target(arange(width)) as one or more loading runtimes compute it, checked on the device."""

    runtimes: tuple[str, ...]
    source: str  # identity (no parameter) | d2t | all-zero parameter (no d2t loaded)
    width: int
    target_vocab_size: int
    out_of_range: int
    first_out_of_range: tuple[int, int] | None  # (draft id, target id)
    strictly_increasing: bool
    first_not_increasing: int | None  # draft id whose target id is <= its predecessor's
    t2d_consistent: bool | None  # None: the checkpoint has no t2d
    all_zero_identity_on_pruned: bool

    @property
    def failures(self) -> tuple[str, ...]:
        """The invariant violations, not counting the padded rows [T, D) that identity maps out of range."""
        found = []
        t = self.target_vocab_size  # a padded draft's rows [T, D) leaving [0, T) is DSP305, not a broken table
        padded_only = self.first_out_of_range is not None and self.first_out_of_range[0] == t \
            and self.out_of_range == self.width - t
        if self.out_of_range and not padded_only:
            i, t = self.first_out_of_range or (-1, -1)
            found.append(f"{self.out_of_range} ids outside [0, {self.target_vocab_size}) (first: {i} -> {t})")
        if not self.strictly_increasing:
            found.append(f"not strictly increasing at draft id {self.first_not_increasing}")
        if self.t2d_consistent is False:
            found.append("nonzero(t2d) differs from the mapped ids")
        if self.all_zero_identity_on_pruned:
            found.append(f"all-zero identity on a pruned draft (ids 0..{self.width - 1})")
        return tuple(found)


@dataclass(frozen=True, slots=True)
class ProbeStats:
    source: str  # embed_tokens | gaussian
    logits: str  # "lm_head" or "lm_head + markov"
    probes: int
    top_k: int
    argmax_illegal: int
    topk_any_illegal: int
    topk_illegal_slots: int
    max_margin: float | None  # max over probes of (best illegal logit - best legal logit); > 0: an illegal row won
    max_margin_row: int | None
    max_margin_probe: int | None  # the embed row (token id) or the Gaussian probe index


@dataclass(frozen=True, slots=True)
class ProbeReport:
    ran: bool
    reason: str | None = None
    runtime: str | None = None  # whose loaded lm_head and mapping were probed
    illegal_rows: int = 0
    lm_head_dtype: str | None = None
    logit_scale: float = 1.0
    seed: int = 0
    markov_pairing: str | None = None
    stats: tuple[ProbeStats, ...] = ()
    probes: int = 0  # probe vectors run in all (both sources)
    probes_why: str | None = None  # how that count was chosen: --probe N, or what fit the auto/time budget


@dataclass(frozen=True, slots=True)
class TensorRead:
    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int


@dataclass(frozen=True, slots=True)
class VerifyResult:
    device: str
    torch_version: str
    skipped: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    tensors_read: tuple[TensorRead, ...] = ()
    runtimes: tuple[RuntimeState, ...] = ()
    mappings: tuple[MappingCheck, ...] = ()
    probe: ProbeReport = ProbeReport(ran=False, reason="not run")
    check_disagreements: tuple[str, ...] = ()


def _mapping_json(m: MappingCheck) -> dict[str, Any]:
    return {"runtimes": list(m.runtimes), "source": m.source, "width": m.width,
            "target_vocab_size": m.target_vocab_size, "out_of_range": m.out_of_range,
            "first_out_of_range": list(m.first_out_of_range) if m.first_out_of_range else None,
            "strictly_increasing": m.strictly_increasing, "first_not_increasing": m.first_not_increasing,
            "t2d_consistent": m.t2d_consistent, "all_zero_identity_on_pruned": m.all_zero_identity_on_pruned,
            "failures": list(m.failures)}


def _stats_json(s: ProbeStats) -> dict[str, Any]:
    def share(n: int) -> float | None:
        return n / s.probes if s.probes else None

    def interval(n: int) -> list[float] | None:  # the 95% Wilson score interval of share(n)
        return [round(x, 6) for x in wilson(n, s.probes)] if s.probes else None

    return {"source": s.source, "logits": s.logits, "probes": s.probes, "top_k": s.top_k,
            "argmax_illegal": s.argmax_illegal, "argmax_illegal_fraction": share(s.argmax_illegal),
            "argmax_illegal_ci95": interval(s.argmax_illegal),
            "topk_any_illegal": s.topk_any_illegal, "topk_any_illegal_fraction": share(s.topk_any_illegal),
            "topk_any_illegal_ci95": interval(s.topk_any_illegal),
            "topk_illegal_slots": s.topk_illegal_slots, "max_margin": s.max_margin,
            "max_margin_row": s.max_margin_row, "max_margin_probe": s.max_margin_probe}


def probe_json(p: ProbeReport) -> dict[str, Any]:
    return {"ran": p.ran, "reason": p.reason, "runtime": p.runtime, "illegal_rows": p.illegal_rows,
            "lm_head_dtype": p.lm_head_dtype, "logit_scale": p.logit_scale, "seed": p.seed,
            "markov_pairing": p.markov_pairing, "probes": p.probes, "probes_why": p.probes_why,
            "stats": [_stats_json(s) for s in p.stats]}


def verify_json(r: VerifyResult) -> dict[str, Any]:
    return {
        "device": r.device, "torch": r.torch_version, "skipped": r.skipped,
        "timings_ms": {k: round(v, 3) for k, v in r.timings_ms.items()},
        "tensors_read": [{"name": t.name, "dtype": t.dtype, "shape": list(t.shape), "nbytes": t.nbytes}
                         for t in r.tensors_read],
        "runtimes": [{"runtime": s.runtime, "version": s.version, "loads": s.loads, "error": s.error,
                      "error_code": s.error_code, "d2t_param": s.d2t_param, "d2t_loaded": s.d2t_loaded,
                      "lm_head": s.lm_head, "embed_tokens": s.embed_tokens,
                      "first_step_error_code": s.first_step_code} for s in r.runtimes],
        "mapping": [_mapping_json(m) for m in r.mappings],
        "probe": probe_json(r.probe),
        "check_disagreements": list(r.check_disagreements),
    }
