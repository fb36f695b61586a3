"""Pure results of a verify run (no torch types): runtime states, mapping checks, probe statistics; verify/ fills
them, output/ renders them (documents.py, verify_text.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.report import CheckpointReport


@dataclass(frozen=True, slots=True)
class RuntimeState:
    """What one runtime version's emulated load left behind."""

    runtime: str
    version: str
    loads: bool
    error: str | None
    error_code: FindingCode | None
    d2t_param: bool  # __init__ created draft_id_to_target_id
    d2t_loaded: bool
    lm_head: str  # own | target | uninitialised | none (load failed)
    embed_tokens: str
    first_step_code: FindingCode | None = None  # it loaded, then the first draft step's ops failed (SGLang)


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
    """How often the illegal padded rows won among one kind of probe vectors."""

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
    tied: int = 0  # probes whose logits all tie (every row the same logit): they cannot tell the rows apart


@dataclass(frozen=True, slots=True)
class ProbeReport:
    """The padded-row probe of one loaded lm_head: whether it ran, its settings and its statistics."""

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
    """A tensor verify read with torch."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int


@dataclass(frozen=True, slots=True)
class LandingRun:
    """What verify's torch loader did with every tensor on one release's generated model of the class
    (verify/landing_load.py)."""

    runtime: str
    version: str
    architecture: str
    tensors: int  # how many tensors were fed
    refused: tuple[str, ...]  # tensors the release raises on, in load order
    cut: tuple[str, ...]  # tensors loaded only in part (cut to fit, or leaving part of their parameter unwritten)
    unfilled: tuple[str, ...]  # backbone parameters (layer index concrete) with a row no tensor wrote
    parameters: int  # backbone parameters made
    rows: int  # their rows in all
    missing: tuple[str, ...] = ()  # backbone parameters no tensor fills that the release refuses to leave so


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """What verify observed with torch: device, tensors read, each runtime's load, mappings, probes."""

    device: str
    torch_version: str
    skipped: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    tensors_read: tuple[TensorRead, ...] = ()
    runtimes: tuple[RuntimeState, ...] = ()
    mappings: tuple[MappingCheck, ...] = ()
    probe: ProbeReport = ProbeReport(ran=False, reason="not run")
    check_disagreements: tuple[str, ...] = ()
    landing: tuple[LandingRun, ...] = ()  # every tensor against each release's generated model, with torch


@dataclass(frozen=True, slots=True)
class VerifiedCheckpoint:
    """One checkpoint of a verify run: check's report as torch corrected it, what torch observed, and the
    `--engine` step's answer (None: no engine step ran), kept together from the run to the document."""

    report: CheckpointReport
    result: VerifyResult
    engine: dict[str, Any] | None = None
