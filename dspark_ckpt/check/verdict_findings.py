"""Pure: per-runtime verdicts -> one finding per problem code, and the method-detection finding for a path."""

from __future__ import annotations

from collections.abc import Sequence

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import DraftConfig
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.runtimes.records import Verdict
from dspark_ckpt.runtimes.releases import ASSUMED, assumed_from, assumption_findings
from dspark_ckpt.runtimes.selectors import folded

METHOD_PATH_MARKERS = (("eagle-", "eagle"), ("eagle3", "eagle3"), ("dflash", "dflash"))

# Where the right repair depends on the vocab kind, the registry's generic hint is replaced (command markers as in
# model/hint_template.py: check fills them in for the checkpoint).
KIND_HINTS: dict[tuple[FindingCode, str], str] = {
    ("DSP302", "padded"): "Trim lm_head/markov_w2 to T rows and set draft_vocab_size = T ({fix --strategy trim}); "
                          "an explicit zero d2t loads on vLLM 0.25-0.29 only.",
    ("DSP303", "padded"): "Trim to T rows ({fix --strategy trim}), or drop the d2t for vLLM 0.30+ only.",
    ("DSP303", "equal"): "Drop the d2t: an equal-vocab draft maps by identity ({fix --strategy drop-d2t}).",
}


def verdict_findings(vs: Sequence[Verdict], already: set[FindingCode], kind: str | None = None,
                     family: str | None = None, architecture: str | None = None) -> list[Finding]:
    """One finding per problem code, naming every runtime that fails or misbehaves because of it; `family` (else
    the verdicts' rows') picks a rule's per-family hint."""
    # code -> (how, text) -> the verdicts: how is "fails" (load error), "first" (first draft step) or "silent"
    by_code: dict[FindingCode, dict[tuple[str, str], list[Verdict]]] = {}
    for v in vs:
        if v.error is not None:
            how = "none" if v.error.code == "DSP368" else "fails"  # check/no_verdict.py: not judged, not refused
            by_code.setdefault(v.error.code, {}).setdefault((how, v.error.text), []).append(v)
        if v.first_step is not None:
            by_code.setdefault(v.first_step.code, {}).setdefault(("first", v.first_step.text), []).append(v)
        for issue in v.silent:
            by_code.setdefault(issue.code, {}).setdefault(("silent", issue.text), []).append(v)
    findings = []
    order = {"fails": 0, "none": 0, "first": 1, "silent": 2}
    family = family or next((v.contract.family.value for v in vs if v.contract.family is not None), None)
    for code, groups in sorted(by_code.items()):
        if code in already:
            continue
        parts = []
        for (how, text), group in sorted(groups.items(), key=lambda g: order[g[0][0]]):
            where = folded(group)
            text = _first_sentence(text) if len(groups) > 1 else text  # each group's whole words are in the table
            parts.append(f"fails to load on {where}: {text}" if how == "fails" else
                         f"{text.replace('no verdict: ', f'no verdict on {where}: ', 1)}" if how == "none" else
                         f"loads on {where}, then fails at the first draft step: {text}" if how == "first" else
                         f"loads on {where} but {text}")
        template = KIND_HINTS.get((code, kind or "")) or RULES[code].fix_for(family)  # the family's own, if any
        if code == "DSP309" and (named := _registered_hint(architecture)) is not None:
            template = named
        findings.append(finding(code, "; ".join(parts), template=template))
    assumed = [(v.runtime, v.version, row) for v in vs if (row := assumed_from(v.contract, v.version)) is not None]
    vllm = [(version, row) for runtime, version, row in assumed if runtime != "sglang"]
    sglang = [(version, row) for runtime, version, row in assumed if runtime == "sglang"]
    return findings + ([] if ASSUMED in already else assumption_findings(vllm, sglang))


def _registered_hint(architecture: str | None) -> str | None:
    """DSP309 for an EAGLE-3 draft already named as SGLang names it: where that name is registered, never "name it
    LlamaForCausalLMEagle3" to a draft that has that name (issue 41)."""
    if architecture != "LlamaForCausalLMEagle3":
        return None
    from dspark_ckpt.runtimes.registered import registrations

    first: dict[str, str] = {}
    for r in registrations(architecture):
        first.setdefault(r.runtime, r.release)
    where = ", ".join(f"{'vLLM' if rt == 'vllm' else 'SGLang'} from {v}" for rt, v in first.items())
    return f"Deploy on a release that registers {architecture} ({where})."


def _first_sentence(text: str, longer_than: int = 120) -> str:
    """A long runtime message cut after its first sentence, where one finding joins several runtimes' words (the
    compatibility table quotes each whole): a log line stays readable."""
    if len(text) <= longer_than:
        return text
    end = text.find(". ")
    return text[:end + 1] + " ..." if 0 < end < len(text) - 2 else text


def method_findings(display: str, cfg: DraftConfig) -> list[Finding]:
    lowered = display.lower()
    family = cfg.family.value if cfg.family else ""
    for marker, method in METHOD_PATH_MARKERS:
        if marker in lowered:
            if not family.startswith(method) or (method == "eagle" and family.startswith("eagle3")):
                return [finding("DSP207", f"the path contains {marker!r}, so vLLM without an explicit method "
                                          f"loads this {family or 'draft'} as {method}.")]
            return []
    return []
