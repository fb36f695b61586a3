"""Pure: one release's verdict on a draft, from the config it builds (runtimes/config_build.py) and the draft's facts.

In order, first failure wins: the build's own error (conversion, registry, rewrite); the contract's config-time
validation; a target the release refuses; then the load, judged by the one pass over every parameter of the
release's generated record (runtimes/landing.py, runtimes/parameter_pass.py), whose annotated facets the hand-read
evaluators answer (the vocab contract: runtimes/compatibility.py, sglang_eval.py; an EAGLE-3 draft's aux hidden
states: runtimes/eagle3_aux.py); then what load_weights does after its last tensor; then the first draft step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import positive_int
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.runtimes import drafting_token, landing, load_phases
from dspark_ckpt.runtimes.absent_refusal import refused_absence
from dspark_ckpt.runtimes.compatibility import evaluate_contract, startup_error
from dspark_ckpt.runtimes.config_build import as_written, build_config, raised_code
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.messages import E_GEMMA4_FUSED_KV
from dspark_ckpt.runtimes.parameter_pass import (
    VOCAB_SHAPE_CODES,
    unwritten_heads,
    vocab_shape_code,
    vocab_unfilled_code,
)
from dspark_ckpt.runtimes.records import BuiltConfig, DraftFacts, Issue, Verdict
from dspark_ckpt.runtimes.release_model import ArchitectureModel, built_model
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.step_reasons import sglang_step
from dspark_ckpt.runtimes.table import contract_for
from dspark_ckpt.runtimes.vllm_first_step import first_step
from dspark_ckpt.runtimes.vllm_release import nearest_rules, rules_for


def _placeholder(built: BuiltConfig) -> Contract:
    """The row of a release that has no class for the draft: its verdict is the build's error."""
    verbatim = built.error.verbatim if built.error else False
    return Contract(built.runtime, built.version, built.version, built.family, built.architecture or "-",
                    built.source, supported=False, verbatim_errors=verbatim)


def _facts_for(built: BuiltConfig, facts: DraftFacts) -> DraftFacts:
    return replace(facts, family=built.family or facts.family,
                   draft_vocab_size=built.draft_vocab_size or facts.draft_vocab_size,
                   vocab_size=built.vocab_size or facts.vocab_size,
                   parallel_drafting=facts.parallel_drafting if built.parallel_drafting is None else
                   built.parallel_drafting, aux=built.aux)


def target_refusal(built: BuiltConfig, contract: Contract, text_model_type: str | None) -> Verdict | None:
    """vLLM 0.21 and older: _verify_args refuses the method this release serves the draft with (eagle3, dflash) for
    a target whose text model_type names none of its list (ReleaseRules.refuses_target), before any weight is read;
    None elsewhere."""
    if built.runtime != "vllm" or built.error is not None:
        return None
    rules = rules_for(built.version)
    text = rules.refuses_target(built.method, text_model_type) if rules is not None else None
    if rules is None or text is None:
        return None
    source = f"{contract.source}; refused by {rules.citation('spec.aux_targets')}"
    return Verdict(built.runtime, built.version, replace(contract, source=source), Issue("DSP365", text), ())


def built_verdict(built: BuiltConfig, facts: DraftFacts | None, *, config_time: bool = True) -> Verdict | None:
    """The verdict of one release: the build's own error first (conversion, registry, rewrite), then the contract's
    config-time validation, then the model __init__'s attribute reads, then load_weights (`config_time` False: what
    the model's own __init__ and load_weights do, without the speculative config's validation before them, as
    verify's engine runs it)."""
    contract = contract_for(built.runtime, built.version, built.family) if built.family is not None else None
    if contract is not None and contract.supported and not config_time:
        contract = replace(contract, omni_config_check=False, omni_target_validated=False, topk_check=False)
    if built.error is None and built.silent and contract is None:  # loads; the build alone shows what goes wrong
        return Verdict(built.runtime, built.version, replace(_placeholder(built), supported=True), None, built.silent)
    if built.error is not None and (built.before_validation or contract is None):
        return Verdict(built.runtime, built.version, contract or _placeholder(built), built.error, ())
    if contract is None or facts is None:
        return None
    if built.source:  # the row describes the model class; the build says how this release got to it
        contract = replace(contract, source=f"{contract.source}; config built by {built.source}")
    f = _facts_for(built, facts)
    proposer = proposer_refusal(built, f.parallel_drafting) if config_time else None  # before the model is built
    if built.error is not None:
        early = startup_error(contract, draft_vocab=f.draft_vocab_size, vocab=f.vocab_size,
                              target_vocab=f.target_vocab_size, mask_token_id=f.mask_token_id,
                              topk=f.dspark_draft_topk, target_is_omni=f.target_is_omni)
        if early is None and proposer is not None:
            return Verdict(built.runtime, built.version, cited(contract, proposer[1]), proposer[0], ())
        return Verdict(built.runtime, built.version, contract, early or built.error, ())
    if config_time and (refused := target_refusal(built, contract, f.target_text_model_type)) is not None:
        return refused
    verdict = evaluate_contract(contract, built.version, f)
    if proposer is not None and (verdict.loads or verdict.after_init):  # the config's own checks passed
        return replace(verdict, contract=cited(verdict.contract, proposer[1]), error=proposer[0], silent=(),
                       first_step=None, after_init=False)
    if verdict.after_init and built.hf is not None and (refused := init_refusal(built)) is not None:
        return replace(verdict, error=refused, silent=())  # __init__ refuses the config before any of that runs
    if f.aux is not None:
        verdict = _aux_verdict(verdict, f)
    at_tensor = verdict.error is not None and verdict.error.tensor is not None  # the record may raise before it
    if (verdict.loads or at_tensor) and built.hf is not None and built.architecture is not None:
        verdict = landed(verdict, built.architecture, built.hf, built.config_class, f)
    if verdict.loads and verdict.first_step is None and built.family is not None:
        verdict = _stepped(verdict, built, f)
    error = verdict.error
    if f.honoured_draft_vocab is not None and error is not None and error.code in RULES and RULES[error.code].d_sized:
        # The runtime sized the tensors from a draft_vocab_size they do not have: say so, keep its words.
        verdict = replace(verdict, error=replace(error, code="DSP216"))
    return verdict


def cited(contract: Contract, where: str) -> Contract:
    return replace(contract, source=f"{contract.source}; {where}")


def proposer_refusal(built: BuiltConfig, in_config: bool = False) -> tuple[Issue, str] | None:
    """vLLM's proposer, built with the model runner before the model: the masked slots' token id its parallel
    drafting needs (runtimes/drafting_token.py, DSP373). Parallel drafting is on where the deploy or a conversion
    sets it (`built.parallel_drafting`), else where the draft's config does (`in_config`)."""
    if built.runtime != "vllm":
        return None
    parallel = in_config if built.parallel_drafting is None else built.parallel_drafting
    return drafting_token.refusal(built.version, built.method, parallel, built.hf)


def _stepped(verdict: Verdict, built: BuiltConfig, f: DraftFacts) -> Verdict:
    """A loading verdict with what is known of its first draft step: vLLM's recorded execution (vllm_first_step.py:
    it fails, DSP371; it ran; or it is not modelled, and why), SGLang's not-recorded flag (step_reasons.py)."""
    assert built.family is not None
    if built.runtime == "vllm":
        step = first_step(built.version, built.family.value, f)
    elif built.runtime == "sglang":
        step = sglang_step(built.version, verdict.contract)
    else:
        return verdict
    if step.issue is not None:
        return replace(verdict, first_step=step.issue)
    return replace(verdict, step_unmodelled=step) if step.state == "not_modelled" else verdict


def _aux_verdict(verdict: Verdict, f: DraftFacts) -> Verdict:
    """What an EAGLE-3 draft's aux hidden states do to a verdict that loads: fc built from a null width (DSP358),
    a runner handing fc another count (DSP329) or another width (DSP359) at the first draft step."""
    from dspark_ckpt.runtimes import eagle3_aux

    if verdict.loads and verdict.first_step is None and (step := eagle3_aux.first_step(f.aux, f.fc_shape)):
        verdict = replace(verdict, first_step=Issue("DSP329", step, verbatim=False))
    if verdict.loads and (null := eagle3_aux.null_width_text(f.aux)):
        verdict = replace(verdict, error=Issue("DSP358", null))
    if verdict.loads and verdict.first_step is None and (
            step := eagle3_aux.target_width_text(f.aux, f.target_hidden_size)):
        verdict = replace(verdict, first_step=Issue("DSP359", step, verbatim=False))
    return verdict


def all_full_attention(hf: Mapping[str, Any]) -> bool:
    """Whether every layer is a full-attention one as the config class resolves the types (never listed one by one:
    the layer count is the config's): `layer_types` when the config lists one per layer, else transformers'
    default (Gemma4: five sliding layers of every six, the first sliding); Gemma4's config makes the last layer full
    whatever the list says (configuration_gemma4.py). A Qwen3 config without use_sliding_window: all full."""
    n = positive_int(hf.get("num_hidden_layers")) or 1
    given = hf.get("layer_types")
    listed = [str(t) for t in given] if isinstance(given, list) and len(given) == n else None
    if not str(hf.get("model_type", "")).startswith("gemma4"):
        return all(t == "full_attention" for t in listed) if listed else not hf.get("use_sliding_window")
    return all(t == "full_attention" for t in listed[:-1]) if listed else n == 1


def fused_kv_error(runtime: str, version: str, family: Family | None, hf: Mapping[str, Any]) -> Issue | None:
    """vLLM's Gemma4 DSpark load_weights ends in _build_fused_kv_buffers (0.34: the post-load hook
    process_weights_after_loading it inherits from DFlashQwen3ForCausalLM calls it), which asserts that every layer
    uses attention_k_eq_v: a full-attention layer of a config that sets it (lines.json build.gemma4_k_eq_v,
    build.gemma4_fused_kv, build.gemma4_fused_call)."""
    if runtime != "vllm" or family is not Family.GEMMA4_DSPARK:
        return None
    if nearest_rules(version)[0].citation("build.gemma4_fused_call") is None:
        return None
    if hf.get("attention_k_eq_v") is True and all_full_attention(hf):
        return None
    return Issue("DSP364", f"AssertionError: {E_GEMMA4_FUSED_KV}")


def ignored_suffixes(runtime: str, version: str) -> tuple[str, ...]:
    """The name suffixes a release's AutoWeightsLoader skips where it has no parameter for them: `.bias` from vLLM
    0.25.0 (models/utils.py `ignore_unexpected_suffixes.append(".bias")`, lines.json build.ignore_bias)."""
    if runtime != "vllm":
        return ()
    return (".bias",) if nearest_rules(version)[0].citation("build.ignore_bias") is not None else ()


def init_refusal(built: BuiltConfig) -> Issue | None:
    """The class's own __init__ refusal of a key left out or null beside its partners (runtimes/absent_refusal.py),
    from the release's generated record; None where it has none or the record does not build the class."""
    model = built_model(built.runtime, built.version, built.architecture)
    return refused_absence(model, built.hf) if model is not None and built.hf is not None else None


def raised_before(model: ArchitectureModel, raised: landing.Landing, tensor: str | None) -> bool:
    """Whether the record's raise comes before a load error the contract ties to `tensor`: __init__'s refusal of
    a key does; a tensor's comes first in load order (the sorted names, within the loader's passes:
    load_phases.py); the check of what load_weights left unfilled comes after every tensor."""
    if raised.kind == "missing-key":
        return True
    if raised.kind == "missing" or raised.tensor is None or tensor is None:
        return False
    return load_phases.position(model.runtime, model.name, raised.tensor) < \
        load_phases.position(model.runtime, model.name, tensor)


def landed(verdict: Verdict, architecture: str, hf: Mapping[str, Any], config_class: str, f: DraftFacts) -> Verdict:
    """Every tensor against the release's generated model (runtimes/landing.py): the first one its loader raises
    on is the verdict's error (before the contract's own error of one tensor where it comes first in load order:
    raised_before); tensors cut to fit and parameters left unfilled are silent problems. Then what load_weights
    does after the last tensor (fused_kv_error)."""
    model = built_model(verdict.runtime, verdict.version, architecture)
    fused = fused_kv_error(verdict.runtime, verdict.version, verdict.contract.family, hf)
    said = verdict.error  # the contract's error of one tensor (Issue.tensor), or None: the draft loads so far
    if model is not None:
        if (refused := refused_absence(model, hf)) is not None:  # __init__ refuses it before any weight is read
            return replace(verdict, error=refused)
        found = landing.land(model, hf, dict(f.tensor_shapes), target_hidden=f.target_hidden_size,
                             target_vocab=f.target_vocab_size, config_class=config_class,
                             family=verdict.contract.family,
                             ignored=ignored_suffixes(verdict.runtime, verdict.version),
                             dropped=landing.dropped_unshipped(model, verdict.version))
        error, silent = landing_issues(found, model.cls, hf, described=True)
        if said is not None:
            raised = next((p for p in found if p.raises), None)
            first = error is not None and raised is not None and raised_before(model, raised, said.tensor)
            return replace(verdict, error=error, silent=()) if first else verdict
        # the loader's check of what load_weights filled (DSP367) comes after load_weights' own last step
        if error is not None and (fused is None or error.code != landing.REQUIRED):
            # the vocabulary's silent misbehaviours assume its heads load: a head the loader refuses leaves none
            heads = error.code in VOCAB_SHAPE_CODES.values()
            return replace(verdict, error=error, silent=() if heads else verdict.silent)
        verdict = replace(verdict, silent=(*verdict.silent, *silent))
    if said is not None:
        return verdict
    return replace(verdict, error=fused, silent=()) if fused is not None else verdict


def landing_issues(found: Sequence[landing.Landing], cls: str, config: Mapping[str, Any] | None = None, *,
                   described: bool = False) -> tuple[Issue | None, tuple[Issue, ...]]:
    """The landing problems as a verdict's parts: the first one the loader raises on is the error (a described
    draft's vocabulary head by its own code: parameter_pass.vocab_shape_code); tensors cut or padded to fit (DSP362) and
    parameters left unfilled (DSP363; a described draft's Markov head DSP345: vocab_unfilled_code) are silent
    problems."""
    raised = next((p for p in found if p.raises), None)
    if raised is not None:
        code = raised_code(raised, config)
        head = vocab_shape_code(raised.parameter) if described and raised.kind == "shape" else None
        return Issue(head or code, raised.text), ()
    silent: list[Issue] = []
    cut = [p.text for p in found if p.kind in landing.SILENT_SHAPES]
    if cut:
        silent.append(Issue(landing.CUT, "; ".join(cut), verbatim=False))
    left: list[landing.Landing] = []
    heads: dict[FindingCode, list[str]] = {}  # a described draft's vocabulary heads, under their own codes
    for p in found:
        if p.kind != "unfilled" or not p.parameter:
            continue
        if described and (code := vocab_unfilled_code(p.parameter)) is not None:
            heads.setdefault(code, []).append(p.parameter)
        else:
            left.append(p)
    silent.extend(Issue(code, unwritten_heads(parameters)) for code, parameters in heads.items())
    unfilled = [p.parameter + (f" ({p.filled[0]} of {p.filled[1]} rows filled)" if p.filled else "") for p in left]
    if unfilled:
        count = sum(p.count for p in left)  # a landing for every layer past the named ones stands for each of them
        shown = ", ".join(unfilled[:6]) + (f" and {count - 6} more" if count > 6 else "")
        silent.append(Issue(landing.UNFILLED, f"{count} parameter{'s' if count != 1 else ''} of its "
                                      f"{cls.rsplit('.', 1)[-1]} no tensor fills (or fills only in part) keep "
                                      f"their initial values: {shown}", verbatim=False))
    return None, tuple(silent)


def build_for(facts: DraftFacts, runtime: str, version: str) -> BuiltConfig:
    """The config this release builds from the draft's (the one check built, else built now)."""
    built = next((b for b in facts.builds if (b.runtime, b.version) == (runtime, version)), None)
    if built is None:
        built = build_config(facts.raw_config, runtime, version) if facts.raw_config is not None else \
            as_written({}, runtime, version)
        built = replace(built, family=built.family or facts.family) if facts.raw_config is None else built
    return built


def verdicts_for(facts: DraftFacts, runtimes: Sequence[RuntimeVersion]) -> tuple[Verdict, ...]:
    """One verdict per release that describes this draft; each release judged on the config it builds."""
    found = []
    for rv in runtimes:
        verdict = built_verdict(build_for(facts, rv.runtime, rv.version), facts)
        if verdict is not None:
            found.append(verdict)
    return tuple(found)

