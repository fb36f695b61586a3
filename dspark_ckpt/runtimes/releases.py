"""Versions no contract row describes: newer ones take the newest row (assumed), older ones ask the registry."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.messages import VLLM
from dspark_ckpt.runtimes.release_model import modelled_release
from dspark_ckpt.runtimes.release import Release, ordered, parse
from dspark_ckpt.runtimes.rows import CONTRACTS, covers
from dspark_ckpt.runtimes.sglang_rows import assumed_row, assumption_text, nearest_row

ASSUMED: Final[FindingCode] = "DSP220"  # the warning for verdicts no contract row describes


@dataclass(frozen=True, slots=True)
class FirstRegistration:
    """The first vLLM release whose `_SPECULATIVE_DECODING_MODELS` maps the family's architecture to a class."""

    first: str
    architecture: str
    source: str  # file, version and line read (docs/upstream-notes.md section 7)


_REGISTRY = "vllm/model_executor/models/registry.py"

# Bisected over every vLLM release 0.8.0 ... 0.33.0 (`pip download --no-deps vllm==V`, registry.py read).
# A family with two names (EAGLE-3 Llama) is registered from its first name; the alias `LlamaForCausalLMEagle3`
# only from 0.10.2 (0.10.1 has it commented out, L265).
FIRST_REGISTERED: dict[Family, FirstRegistration] = {
    Family.EAGLE3_LLAMA: FirstRegistration("0.8.5", "Eagle3LlamaForCausalLM", f"{_REGISTRY} @ v0.8.5 L218"),
    Family.DFLASH: FirstRegistration("0.20.0", "DFlashDraftModel", f"{_REGISTRY} @ v0.20.0 L576"),
    Family.EAGLE3_QWEN3: FirstRegistration("0.24.0", "Eagle3Qwen3ForCausalLM", f"{_REGISTRY} @ v0.24.0 L614"),
    Family.QWEN3_DSPARK: FirstRegistration("0.25.0", "Qwen3DSparkModel", f"{_REGISTRY} @ v0.25.0 L597"),
    Family.GEMMA4_DSPARK: FirstRegistration("0.26.0", "Gemma4DSparkModel", f"{_REGISTRY} @ v0.26.0 L612"),
    Family.QWEN3_OMNI_DSPARK: FirstRegistration("0.29.0", "Qwen3OmniDSparkModel", f"{_REGISTRY} @ v0.29.0 L626"),
    Family.DFLASH2: FirstRegistration("0.28.0", "DFlash2DraftModel", f"{_REGISTRY} @ v0.28.0 L628"),
}


def _rows(runtime: str, family: Family) -> list[Contract]:
    return [c for c in CONTRACTS if c.runtime == runtime and c.family == family and c.first != "*"]


def _v(text: str) -> Release:
    return parse("vllm", text)


def _unregistered(version: str, family: Family, reg: FirstRegistration) -> Contract:
    text = (f"{reg.architecture} is not registered in vLLM {version}: its _SPECULATIVE_DECODING_MODELS first maps "
            f"it in {reg.first} ({reg.source}), so this version cannot load the draft.")
    return Contract("vllm", version, version, family, "-", f"{reg.source} (not registered before v{reg.first})",
                    supported=False, verbatim_errors=False, messages=replace(VLLM, omni_unregistered=text))


def beyond_table(runtime: str, version: str, family: Family) -> Contract | None:
    """The contract for a vLLM version outside every row: None only for a family vLLM never had."""
    if runtime == "sglang":
        return nearest_row(version, family)
    rows = _rows(runtime, family)
    if runtime != "vllm" or not rows:
        return None
    asked = _v(version)
    newest = max(rows, key=lambda c: _v(c.last))
    if asked.line > _v(newest.last).line:
        return replace(newest, verbatim_errors=False, source=f"{newest.source}; assumed for v{version}")
    oldest = min(rows, key=lambda c: _v(c.first))
    reg = FIRST_REGISTERED.get(family)
    if reg is not None and asked < _v(reg.first):
        return _unregistered(version, family, reg)
    return replace(oldest, verbatim_errors=False, source=f"{oldest.source}; assumed for v{version}")


def assumed_from(contract: Contract, version: str) -> str | None:
    """The row version a verdict was taken from when no row covers `version` (None: a row describes it)."""
    if contract.runtime == "sglang":  # SGLang rows cite every release read; any other release is an assumption
        return assumed_row(contract, version)
    if contract.runtime != "vllm" or not contract.supported or covers(contract, version):
        return None
    return contract.last if _v(version).line > _v(contract.last).line else contract.first


def assumption_findings(assumed: Sequence[tuple[str, str]], sglang: Sequence[tuple[str, str]] = ()) -> list[Finding]:
    """One DSP220 warning for the (version, row version) pairs whose verdict no contract row describes (vLLM's, then
    SGLang's)."""
    pairs = sorted(set(assumed), key=lambda p: _v(p[0]))
    sglang_text = assumption_text(sorted(set(sglang)))
    if not pairs:
        return [finding(ASSUMED, sglang_text + ".")] if sglang_text else []
    parts = []
    for row in ordered("vllm", list({r for _, r in pairs})):
        versions = ", ".join(f"vllm=={v}" for v, r in pairs if r == row)
        newer = all(_v(v) > _v(row) for v, r in pairs if r == row)
        why = ("newer than every release dspark-ckpt has read; its loader may differ" if newer else
               "older than every release whose vocabulary contract dspark-ckpt has read, though the family is "
               "registered there")
        modelled = {modelled_release("vllm", v) for v, r in pairs if r == row}
        own = ordered("vllm", [m for m in modelled if m is not None and m != row])
        if own:  # runtimes/release_data holds the release's own model: the tensors outside the vocab are not assumed
            why += f"; the other tensors are judged on each release's own generated model (vLLM {', '.join(own)})"
        parts.append(f"{versions}: verdict assumed from vLLM {row} ({why})")
    parts += [sglang_text] if sglang_text else []
    named = ", ".join(f"vLLM {v}" for v, _ in pairs)
    return [finding(ASSUMED, "; ".join(parts) + ".", template=(
        f"Where {named} is installed, {{verify --engine installed}} shows what its own loader does; otherwise "
        f"upgrade dspark-ckpt (a newer one may have read {named}) or report {named} to dspark-ckpt's maintainers, "
        "who generate each release's table from its wheel."))]
