"""Turn what a runtime's emulated load left (and its mapping) into a Verdict, with silent issues as observed."""

from __future__ import annotations

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.families import traits
from dspark_ckpt.output.verify_records import MappingCheck, RuntimeState
from dspark_ckpt.runtimes.compatibility import embed_left_as_initialised
from dspark_ckpt.runtimes.records import DraftFacts, Issue, Verdict
from dspark_ckpt.verify.load_state import EMBED, LM_HEAD, LoadState


def _head_issues(out: LoadState, d: int, t: int) -> list[Issue]:
    code: FindingCode = "DSP301" if d < t else "DSP306" if d > t else "DSP315"
    issues = []
    if out.lm_head == "target" and LM_HEAD in out.params:
        issues.append(Issue("DSP307", "the draft's own lm_head was loaded, then replaced by the target's"))
    if out.lm_head == "target" and out.head_rows != t:
        issues.append(Issue(code, f"the target lm_head ({t} rows) replaced a draft head of {out.head_rows} rows: "
                                  "shape mismatch or out-of-range scatter at run time"))
    elif out.lm_head == "uninitialised":
        issues.append(Issue(code, "lm_head was neither loaded nor replaced by the target's: it stays uninitialised"))
    return issues


def _embed_issues(out: LoadState, v: int, t: int) -> list[Issue]:
    issues = []
    if out.embed_tokens == "target" and EMBED in out.params:
        issues.append(Issue("DSP307", "the draft's own embed_tokens was loaded, then replaced by the target's"))
    if out.embed_tokens == "target" and v > t:
        issues.append(Issue("DSP304", f"the target embedding ({t} rows) replaced the draft's, but input ids go up "
                                      f"to {v - 1}: out of range at run time"))
    elif out.embed_tokens == "uninitialised" and v > t and embed_left_as_initialised(out.contract):
        issues.append(Issue("DSP304", "embed_tokens was neither loaded nor replaced by the target's (V > T): it "
                                      "stays as initialised"))
    return issues


def _mapping_issues(out: LoadState, mapping: MappingCheck, d: int, t: int) -> list[Issue]:
    issues = []
    if not traits(out.contract.family).d2t_applied and out.head_rows != d:
        issues.append(Issue("DSP311", f"lm_head was built with {out.head_rows} rows (vocab_size) but the draft "
                                      f"vocab is {d}; no d2t is ever applied"))
    elif d < t and not out.contract.candidates_mapped:
        issues.append(Issue("DSP332", "the speculator takes its candidates from lm_head without the d2t: draft ids "
                                      "are proposed as target ids"))
    elif d < t and mapping.source != "d2t":
        issues.append(Issue("DSP302", f"no d2t was loaded: map_draft_to_target is the identity, so draft ids "
                                      f"0..{mapping.width - 1} are proposed as the first {mapping.width} target ids"))
    padded_rows = mapping.first_out_of_range is not None and mapping.first_out_of_range[0] == t
    if out.lm_head == "own" and d > t and padded_rows:
        issues.append(Issue("DSP305", f"map_draft_to_target sends the {mapping.out_of_range} rows [{t}, "
                                      f"{mapping.width}) of the loaded lm_head to ids >= {t}; nothing masks them"))
    return issues


def _content_issues(out: LoadState, mapping: MappingCheck, d: int, t: int, facts: DraftFacts | None) -> list[Issue]:
    """What the loaded d2t's contents do where the runtime applies them, and a t2d recorded for another target
    (a header fact check's analysis holds; torch adds nothing to it)."""
    issues = []
    applied = mapping.source == "d2t" and traits(out.contract.family).d2t_applied and out.contract.candidates_mapped
    t_rows = mapping.first_out_of_range is not None and mapping.first_out_of_range[0] == t \
        and mapping.out_of_range == mapping.width - t
    if applied and d < t and mapping.all_zero_identity_on_pruned:
        issues.append(Issue("DSP401", "the loaded d2t is all zero: draft id i is proposed as target id i"))
    elif applied and mapping.out_of_range and not t_rows:
        issues.append(Issue("DSP402", f"map_draft_to_target sends {mapping.out_of_range} draft ids outside [0, {t})"))
    if facts is not None and facts.t2d_length is not None and facts.t2d_length != t:
        issues.append(Issue("DSP327", f"the draft's t2d records a target vocab of {facts.t2d_length}, not T = {t}"))
    return issues


def verdict_for(out: LoadState, mapping: MappingCheck | None, dims_dvt: tuple[int, int, int],
                facts: DraftFacts | None = None) -> Verdict:
    d, v, t = dims_dvt
    if out.error is not None or mapping is None:
        return Verdict(out.contract.runtime, out.version, out.contract, out.error, ())
    if out.first_step is not None:
        return Verdict(out.contract.runtime, out.version, out.contract, None, (), out.first_step)
    if out.silent is not None:  # the runtime's own model observed them (SGLang: the head is the target's, ...)
        return Verdict(out.contract.runtime, out.version, out.contract, None, tuple(out.silent))
    silent = _head_issues(out, d, t) + _embed_issues(out, v, t) + _mapping_issues(out, mapping, d, t) + \
        _content_issues(out, mapping, d, t, facts)
    return Verdict(out.contract.runtime, out.version, out.contract, None, tuple(silent))


def state_for(out: LoadState) -> RuntimeState:
    err = out.error
    return RuntimeState(out.contract.runtime, out.version, err is None, err.text if err else None,
                        err.code if err else None, out.d2t is not None, out.d2t_loaded, out.lm_head,
                        out.embed_tokens, out.first_step.code if out.first_step else None)
