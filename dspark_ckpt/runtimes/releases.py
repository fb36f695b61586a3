"""Versions no contract row describes: newer ones take the newest row (assumed), older ones ask the registry."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.runtimes import registered
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.messages import VLLM
from dspark_ckpt.runtimes.release import How, Release, ordered, parse, resolve
from dspark_ckpt.runtimes.release_model import modelled_release
from dspark_ckpt.runtimes.rows import CONTRACTS, covers
from dspark_ckpt.runtimes.sglang_rows import assumed_row, assumption_text, nearest_row
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

ASSUMED: Final[FindingCode] = "DSP220"  # the warning for verdicts no contract row describes


@dataclass(frozen=True, slots=True)
class FirstRegistration:
    """The first vLLM release whose `_SPECULATIVE_DECODING_MODELS` maps the family's architecture to a class."""

    first: str
    architecture: str
    source: str  # file, version and line read (docs/upstream-notes.md section 7)


_REGISTRY = "vllm/model_executor/models/registry.py"

# The vLLM architecture each family is registered under first. A family with two names (EAGLE-3 Llama) is registered
# from its first name; the alias `LlamaForCausalLMEagle3` only from 0.10.2 (0.10.1 has it commented out, L265).
_FIRST_NAME: dict[Family, str] = {
    Family.EAGLE3_LLAMA: "Eagle3LlamaForCausalLM", Family.DFLASH: "DFlashDraftModel",
    Family.EAGLE3_QWEN3: "Eagle3Qwen3ForCausalLM", Family.QWEN3_DSPARK: "Qwen3DSparkModel",
    Family.GEMMA4_DSPARK: "Gemma4DSparkModel", Family.QWEN3_OMNI_DSPARK: "Qwen3OmniDSparkModel",
    Family.DFLASH2: "DFlash2DraftModel",
}
# Registered before the first listed release: bisected over vLLM 0.8.0 ... 0.12.0 (`pip download --no-deps vllm==V`,
# registry.py read). Every other first registration is the generated registry data's (registered_architectures.json).
_BEFORE_THE_LIST = {Family.EAGLE3_LLAMA: FirstRegistration("0.8.5", "Eagle3LlamaForCausalLM", f"{_REGISTRY} @ v0.8.5 L218")}


@functools.cache
def _first_registration(family: Family) -> FirstRegistration:
    name = _FIRST_NAME[family]
    for release in VLLM_RELEASES:
        found = registered.registration("vllm", release, name)
        if found is not None and found.draft:
            if release == VLLM_RELEASES[0]:  # registered before the list: its bisection
                return _BEFORE_THE_LIST[family]
            file, _, line = found.where.rpartition(":")
            return FirstRegistration(release, name, f"{file} @ v{release} L{line}")
    raise KeyError(family)


class _FirstRegistered(Mapping[Family, FirstRegistration]):
    """The first vLLM release registering each family's architecture, read from the generated data on first use."""

    def __getitem__(self, family: Family) -> FirstRegistration:
        if family not in _FIRST_NAME:
            raise KeyError(family)
        return _first_registration(family)

    def __iter__(self) -> Iterator[Family]:
        return iter(_FIRST_NAME)

    def __len__(self) -> int:
        return len(_FIRST_NAME)


FIRST_REGISTERED: Mapping[Family, FirstRegistration] = _FirstRegistered()


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
    """The contract for a release no row covers, as release.resolve answers it (one policy): newer than every listed
    release, the newest row, assumed; else not registered before the family's first registration; else the row
    covering the listed release that answers it (the oldest for an older one), assumed. None only for a family the
    runtime never had, or text that is no version."""
    if runtime == "sglang":
        return nearest_row(version, family)
    rows = _rows(runtime, family)
    found = resolve(runtime, version, VLLM_RELEASES) if runtime == "vllm" and rows else None
    if found is None:
        return None
    newest = max(rows, key=lambda c: _v(c.last))
    if found.how == How.NEWER:
        return replace(newest, verbatim_errors=False, source=f"{newest.source}; assumed for v{version}")
    reg = FIRST_REGISTERED.get(family)
    if reg is not None and found.asked < _v(reg.first):
        return _unregistered(version, family, reg)
    row = next((c for c in rows if covers(c, found.name)), None) or min(rows, key=lambda c: _v(c.first))
    return replace(row, verbatim_errors=False, source=f"{row.source}; assumed for v{version}")


def assumed_from(contract: Contract, version: str) -> str | None:
    """The row version a verdict was taken from when no row covers `version` (None: a row describes it): the row's
    bound on the side release.resolve answers from (its newest for a newer release, else its oldest)."""
    if contract.runtime == "sglang":  # SGLang rows cite every release read; any other release is an assumption
        return assumed_row(contract, version)
    if contract.runtime != "vllm" or not contract.supported or covers(contract, version):
        return None
    found = resolve("vllm", version, VLLM_RELEASES)
    return contract.last if found is not None and found.how == How.NEWER else contract.first


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
        newer = all((found := resolve("vllm", v, VLLM_RELEASES)) is not None and found.how == How.NEWER
                    for v, r in pairs if r == row)
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
