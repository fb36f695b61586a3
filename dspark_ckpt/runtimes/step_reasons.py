"""Why a row that loads has no first-step verdict: the registered reasons (stable keys, as the JSON's
`first_step_not_modelled_why` publishes them) and their words. A row says "not modelled" rather than a green nothing
measured; it is not a failure and changes no exit code (as check/no_verdict.py's rows are reported, not failed)."""

from __future__ import annotations

from dataclasses import dataclass

from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.first_step import recorded
from dspark_ckpt.runtimes.records import FirstStep
from dspark_ckpt.runtimes.release import How, resolve
from dspark_ckpt.runtimes.versions import SGLANG_RELEASES


@dataclass(frozen=True, slots=True)
class Reason:
    """One registered reason a loading row's first step is not modelled: its -v line and its JSON words."""

    short: str  # the text report's line under -v
    words: str  # the JSON's first_step_not_modelled, {family}, {relation}, {step} filled in


# Keys are published (JSON `first_step_not_modelled_why`): never reuse or rename one. The words name no release, so
# consecutive releases with one verdict still share a row (output/runs.py).
REASONS: dict[str, Reason] = {
    "vllm-release-not-run": Reason(
        "this release's first step is not run by the probe",
        "this vLLM release's own first draft step was not executed: before 0.22 it shares the target's head and "
        "embedding inside the running proposer's load_model (v1/spec_decode/; no v1/worker/gpu/spec_decode/eagle/"
        "utils.py _should_share), which tools/probe_vllm_first_step.py does not run"),
    "vllm-family-not-probed": Reason(
        "the probe does not run this class's first step",
        "tools/probe_vllm_first_step.py does not run {family}'s first draft step (it runs EAGLE-3 Llama and Qwen3, "
        "DFlash and Qwen3 DSpark)"),
    "vllm-family-not-run": Reason(
        "this release's recording does not hold this class",
        "this vLLM release's first draft step was recorded without the {family} class: there it shares the target's "
        "head and embedding inside the running proposer (v1/spec_decode/llm_base_proposer.py; no loader of its own "
        "in v1/worker/gpu/spec_decode/, which the probe runs from 0.24 for DFlash, 0.25 for DSpark), which "
        "tools/probe_vllm_first_step.py does not run"),
    "vllm-relation-not-recorded": Reason(
        "no recorded draft has this relation of V, D and T",
        "the release's first draft step was not recorded for a {family} draft of this relation ({relation}): "
        "tools/probe_vllm_first_step.py records other relations of V, D and T"),
    "vllm-cell-refused-at-load": Reason(
        "the release refused the recorded draft of this kind at load",
        "the release refused the recorded {family} draft of this relation and these shipped tensors at load, so no "
        "first step was recorded for it"),
    "sglang-step-not-recorded": Reason(
        "the release's own step was not recorded",
        "this SGLang release's own {step} first draft step was not recorded (tools/probe_first_step.py): what the "
        "row says of the step is dspark-ckpt's reading of the source, or another release's recording"),
    "sglang-no-step": Reason(
        "no first step of this class is recorded",
        "dspark-ckpt records no first draft step of SGLang's {family} class"),
}


def not_modelled(why: str, **words: str) -> FirstStep:
    """The not-modelled answer for a registered reason, in this release's and draft's words."""
    return FirstStep("not_modelled", why=why, text=REASONS[why].words.format_map(words))


# SGLang's load path -> the first draft step tools/probe_first_step.py records for it (runtimes/first_step.py)
SGLANG_STEPS = {"eagle3": "eagle3", "dspark": "dspark", "dflash2": "dflash2"}


def sglang_step(release: str, contract: Contract) -> FirstStep:
    """SGLang: `ran` where the release's own step of this class was recorded (whatever it said: a failure is the
    evaluator's, runtimes/sglang_eval.py), else not modelled and why. The row-level flag only."""
    family = contract.family.value if contract.family is not None else "-"
    loader = contract.sglang.loader.value if contract.sglang is not None else None
    step = SGLANG_STEPS.get(loader or "")
    if step is None:
        return not_modelled("sglang-no-step", family=family)
    found = resolve("sglang", release, SGLANG_RELEASES)  # a post release is judged as the release it follows
    if recorded(found.name if found is not None and found.how in (How.OWN, How.LINE) else release, step) is None:
        return not_modelled("sglang-step-not-recorded", step=step)
    return FirstStep("ran")
