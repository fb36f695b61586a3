"""Pure: a draft's config.json -> the config one runtime release really builds from it, before any weight is read.

vLLM first converts a speculators-format config (runtimes/speculators.py), resolves the architecture in its registry
and rewrites it per speculative method (runtimes/vllm_hf_config.py: the steps the deploy preflight replays too, from
the same release record, runtimes/vllm_release.py), then runs the model class's __init__, which reads some keys as
plain attributes. Each step can fail with its own error; the contract rows (vllm_rows.py) describe only what happens
after it. SGLang's builder is runtimes/sglang_build.py; a runtime with no builder gets its config as written.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import nested_settings, positive_int
from dspark_ckpt.model.families import Family, family_for
from dspark_ckpt.model.findings import shown_name
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.runtimes import landing, speculators, vllm_hf_config
from dspark_ckpt.runtimes import vllm_rows as rows
from dspark_ckpt.runtimes.compatibility import evaluate_contract, startup_error
from dspark_ckpt.runtimes.config_classes import config_class
from dspark_ckpt.runtimes.contracts import Contract
from dspark_ckpt.runtimes.messages import E_GEMMA4_FUSED_KV
from dspark_ckpt.runtimes.records import AUX_FAMILIES, BuiltConfig, DraftFacts, Issue, Verdict
from dspark_ckpt.runtimes.release_model import architecture_model, modelled_release
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.sglang_build import build_sglang
from dspark_ckpt.runtimes.table import contract_for
from dspark_ckpt.runtimes.step_reasons import sglang_step
from dspark_ckpt.runtimes.vllm_first_step import first_step
from dspark_ckpt.runtimes.vllm_release import SPEC_FILE, ReleaseRules, nearest_rules, rules_for


def _arch(cfg: Mapping[str, Any]) -> str | None:
    archs = cfg.get("architectures")
    return archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None


def _archs(cfg: Mapping[str, Any]) -> tuple[str, ...]:
    archs = cfg.get("architectures")
    return tuple(a for a in archs if isinstance(a, str)) if isinstance(archs, list) else ()


is_speculators = speculators.is_speculators_format  # one detection, shared with the deploy preflight


@functools.cache  # one message per list, shared by every release that refuses it (a hostile name may be megabytes)
def _unsupported(archs: tuple[str, ...]) -> Issue:
    # registry.py _raise_for_unsupported; the list of every supported architecture follows in the real message
    return Issue("DSP309", f"Model architectures {[shown_name(a) for a in archs]!r} are not supported for now.")


def build_vllm(raw: Mapping[str, Any], version: str, method: str | None = None, model: str | None = None,
               target_vocab: int | None = None) -> BuiltConfig:
    """`method`: the one the draft is served with (runtimes/serving_method.py), None for the one its name implies;
    a speculators config's own conversion locks it (speculative.py, speculators_override). `model`: the path vLLM
    reads the draft from, whose words a release's method detection may serve a named method otherwise
    (vllm_hf_config.served_method); `target_vocab`: T, which a Medusa draft's vocab_size is set to."""
    r, exact = nearest_rules(version)
    cites: list[str] = []
    if is_speculators(raw):
        step = speculators.convert(raw, r)
        cites.append(step.source(r.version))
        if step.error is not None:
            return _built(version, step.hf, None, step.method or None, None, "SpeculatorsConfig", cites, exact,
                          error=step.error)
        hf, method, parallel, cls = step.hf, step.method, step.parallel, "SpeculatorsConfig"
    else:
        hf, parallel = vllm_hf_config.overridden(r, raw, cites, method, target_vocab), None
        if method is not None:
            model_type = hf.get("model_type")
            method = vllm_hf_config.served_method(r, method, model, _archs(hf),
                                                  model_type if isinstance(model_type, str) else None)
        method = method or vllm_hf_config.implied_method(_arch(raw))  # named for the class as written
        cls = config_class("vllm", raw.get("model_type")) or "PretrainedConfig"
    arch = _arch(hf)
    if arch is None:
        return _built(version, hf, None, method, parallel, cls, cites, exact)
    # The draft ModelConfig resolves its architectures in the registry before any method rewrite.
    if exact and vllm_hf_config.unsupported(r, [arch]):
        cites.append(f"{r.registry_line(arch)} (not registered)")
        return _built(version, hf, arch, method, parallel, cls, cites, exact, error=_unsupported(_archs(hf) or (arch,)))
    if method == "dspark" and "dspark" in r.methods:  # no such method, no rewrite (before 0.25)
        arch, hf = _dspark_rewrite(arch, hf, r, cites)
    elif vllm_hf_config.wraps(method, "speculators" if cls == "SpeculatorsConfig" else hf.get("model_type")):
        (renamed,) = vllm_hf_config.renamed(r, [arch], method)
        cites.append(f"{vllm_hf_config.eagle_where(r)} via {SPEC_FILE} @ v{r.version} L{r.eagle_config_line}")
        cls = "EAGLEConfig"
        if renamed != arch and exact and vllm_hf_config.unsupported(r, [renamed]):
            return _built(version, hf, renamed, method, parallel, cls, cites, exact, error=_unsupported((renamed,)))
        arch = renamed
    cites.append(r.registry_line(arch))
    error = _init_error(arch, hf, raw, cls, r, cites, version)
    built = _built(version, hf, arch, method, parallel, cls, cites, exact, error=error, before_validation=False)
    family = built.family
    if family not in AUX_FAMILIES or error is not None:
        return built
    from dspark_ckpt.runtimes import eagle3_aux  # here: only an EAGLE-3 draft has aux facts (~3 ms to import)

    aux = eagle3_aux.read_aux(hf, raw, family, version)
    return replace(built, aux=aux) if aux is not None else built


def _dspark_rewrite(arch: str, hf: dict[str, Any], r: ReleaseRules,
                    cites: list[str]) -> tuple[str, dict[str, Any]]:
    model_type = hf.get("model_type")
    built = vllm_hf_config.dspark(r, (arch,), model_type if isinstance(model_type, str) else None, hf)
    if built.rule in ("qwen3_rename", "qwen3_override"):
        cites.append(f"{SPEC_FILE} @ v{r.version} L{r.qwen3_rename_line} (DSparkDraftModel + qwen3 -> "
                     "Qwen3DSparkModel)")
    elif built.rule in ("deepseek_rewrite", "undeclared_rewrite"):
        cites.append(f"{r.citation('build.dspark_rewrite')} (model_type = \"deepseek_v4\")")
    return built.architectures[0], dict(built.values)


def _init_error(arch: str, hf: Mapping[str, Any], raw: Mapping[str, Any], cls: str, r: ReleaseRules,
                cites: list[str], version: str) -> Issue | None:
    """The first plain-attribute read of the model's __init__ that the built config cannot answer: for a class the
    contract rows describe, the key its generated record requires (release_model `required`, e.g. Qwen3 and Gemma 4
    DSpark's markov_rank), judged here, before the rows' load checks, because __init__ runs before load_weights; the
    rest is judged with every tensor (landed). Two reads the records cannot show stay hand-read: the DeepSeek-V4
    draft's hc_mult (its class is not built on CPU: the record keeps only the raise) and DFlash2's dflash_config
    entries (every sample ships dflash_config, so no record sees one missing)."""
    family = _family_of(arch)
    hc_mult = r.citation("build.hc_mult")  # 0.25+
    if arch == "DSparkDraftModel" and "hc_mult" not in hf and hc_mult:  # the DeepSeek-V4 draft's own keys
        cites.append(f"{hc_mult} (config.hc_mult)")
        return Issue("DSP309", f"AttributeError: '{cls}' object has no attribute 'hc_mult'")
    release = modelled_release("vllm", version) if family is not None else None
    model = architecture_model("vllm", release, arch) if release is not None else None
    if model is not None and model.not_built is None and (
            missing := landing.missing_key(model, hf, landing.config_class_of(model, hf, cls))) is not None:
        file, _, line = missing.where.rpartition(":")
        cites.append(f"{file} @ v{release} L{line} (config.{missing.key})" if file else f"config.{missing.key}")
        return Issue(raised_code(missing, raw), missing.text)
    if family is Family.DFLASH2:
        cites.extend(c for key in ("build.dflash2_conv", "build.dflash2_selector") if (c := r.citation(key)))
        section = hf.get("dflash_config")
        if not isinstance(section, Mapping):
            return Issue("DSP333", f"AttributeError: '{cls}' object has no attribute 'dflash_config'")
        missing_entry = next((k for k in rows.DFLASH2_KEYS if k not in section), None)
        return Issue("DSP333", f"KeyError: '{missing_entry}'") if missing_entry else None
    return None


def _family_of(arch: str | None) -> Family | None:
    if arch == "Qwen3OmniDSparkModel":
        return Family.QWEN3_OMNI_DSPARK
    cls = rows.DRAFT_CLASSES.get(arch or "")
    return rows.CLASS_FAMILY.get(cls) if cls else None


def _built(version: str, hf: Mapping[str, Any], arch: str | None, method: str | None, parallel: bool | None,
           cls: str, cites: list[str], exact: bool, *, error: Issue | None = None,
           before_validation: bool = True) -> BuiltConfig:
    family = _family_of(arch) if error is None or not before_validation else None
    vocab = positive_int(hf.get("vocab_size"))
    model_type = hf.get("model_type")
    return BuiltConfig(
        runtime="vllm", version=version, architecture=arch,
        model_type=model_type if isinstance(model_type, str) else None, config_class=cls, method=method,
        family=family, vocab_size=vocab, draft_vocab_size=positive_int(hf.get("draft_vocab_size")) or vocab,
        parallel_drafting=parallel, error=error,
        before_validation=before_validation, source="; ".join(cites) + ("" if exact else f"; assumed for v{version}"),
        hf=dict(hf))


def as_written(raw: Mapping[str, Any], runtime: str, version: str) -> BuiltConfig:
    """A runtime with no builder here: the family the config names, as written."""
    model_type = raw.get("model_type")
    family = family_for(_arch(raw), model_type if isinstance(model_type, str) else None)
    vocab = positive_int(raw.get("vocab_size"))
    return BuiltConfig(runtime, version, _arch(raw), model_type if isinstance(model_type, str) else None,
                       config_class(runtime, model_type) or "PretrainedConfig", None, family, vocab,
                       positive_int(raw.get("draft_vocab_size")) or vocab)


BUILDERS: dict[str, Callable[[Mapping[str, Any], str, str | None], BuiltConfig]] = {
    "vllm": build_vllm, "sglang": build_sglang}


def build_config(raw: Mapping[str, Any], runtime: str, version: str, method: str | None = None,
                 model: str | None = None, target_vocab: int | None = None) -> BuiltConfig:
    """`method`: a serving method the deploy or the producer named (runtimes/serving_method.py), else None;
    `model`: the path vLLM reads the draft from (its method detection reads it); `target_vocab`: T."""
    if runtime == "vllm":
        return build_vllm(raw, version, method, model, target_vocab)
    builder = BUILDERS.get(runtime)
    return builder(raw, version, method) if builder is not None else as_written(raw, runtime, version)


def build_all(raw: Mapping[str, Any] | None, runtimes: Sequence[RuntimeVersion],
              method: str | None = None, model: str | None = None,
              target_vocab: int | None = None) -> tuple[BuiltConfig, ...]:
    return tuple(build_config(raw, rv.runtime, rv.version, method, model, target_vocab) for rv in runtimes) \
        if raw is not None else ()


# --- the contract, evaluated on what each release built ---

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


def built_verdict(built: BuiltConfig, facts: DraftFacts | None) -> Verdict | None:
    """The verdict of one release: the build's own error first (conversion, registry, rewrite), then the contract's
    config-time validation, then the model __init__'s attribute reads, then load_weights."""
    contract = contract_for(built.runtime, built.version, built.family) if built.family is not None else None
    if built.error is None and built.silent and contract is None:  # loads; the build alone shows what goes wrong
        return Verdict(built.runtime, built.version, replace(_placeholder(built), supported=True), None, built.silent)
    if built.error is not None and (built.before_validation or contract is None):
        return Verdict(built.runtime, built.version, contract or _placeholder(built), built.error, ())
    if contract is None or facts is None:
        return None
    if built.source:  # the row describes the model class; the build says how this release got to it
        contract = replace(contract, source=f"{contract.source}; config built by {built.source}")
    f = _facts_for(built, facts)
    if built.error is not None:
        early = startup_error(contract, draft_vocab=f.draft_vocab_size, vocab=f.vocab_size,
                              target_vocab=f.target_vocab_size, mask_token_id=f.mask_token_id,
                              topk=f.dspark_draft_topk, target_is_omni=f.target_is_omni)
        return Verdict(built.runtime, built.version, contract, early or built.error, ())
    if (refused := target_refusal(built, contract, f.target_text_model_type)) is not None:
        return refused
    verdict = evaluate_contract(contract, built.version, f)
    if f.aux is not None:
        verdict = _aux_verdict(verdict, f)
    if verdict.loads and built.hf is not None and built.architecture is not None:
        verdict = landed(verdict, built.architecture, built.hf, built.config_class, f)
    if verdict.loads and verdict.first_step is None and built.family is not None:
        verdict = _stepped(verdict, built, f)
    error = verdict.error
    if f.honoured_draft_vocab is not None and error is not None and error.code in RULES and RULES[error.code].d_sized:
        # The runtime sized the tensors from a draft_vocab_size they do not have: say so, keep its words.
        verdict = replace(verdict, error=replace(error, code="DSP216"))
    return verdict


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


def layer_types(hf: Mapping[str, Any]) -> list[str]:
    """The attention type of each layer as the config class resolves it: `layer_types` when the config lists one per
    layer, else transformers' default (Gemma4: five sliding layers of every six); Gemma4's config makes the last
    layer full whatever the list says (configuration_gemma4.py). A Qwen3 config without use_sliding_window: all
    full."""
    n = positive_int(hf.get("num_hidden_layers")) or 1
    given = hf.get("layer_types")
    listed = [str(t) for t in given] if isinstance(given, list) and len(given) == n else None
    if not str(hf.get("model_type", "")).startswith("gemma4"):
        return listed or ["sliding_attention" if hf.get("use_sliding_window") else "full_attention"] * n
    types = listed or ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(n)]
    return [*types[:-1], "full_attention"]


def fused_kv_error(runtime: str, version: str, family: Family | None, hf: Mapping[str, Any]) -> Issue | None:
    """vLLM's Gemma4 DSpark load_weights ends in _build_fused_kv_buffers (0.34: the post-load hook
    process_weights_after_loading it inherits from DFlashQwen3ForCausalLM calls it), which asserts that every layer
    uses attention_k_eq_v: a full-attention layer of a config that sets it (lines.json build.gemma4_k_eq_v,
    build.gemma4_fused_kv, build.gemma4_fused_call)."""
    if runtime != "vllm" or family is not Family.GEMMA4_DSPARK:
        return None
    if nearest_rules(version)[0].citation("build.gemma4_fused_call") is None:
        return None
    if hf.get("attention_k_eq_v") is True and all(t == "full_attention" for t in layer_types(hf)):
        return None
    return Issue("DSP364", f"AssertionError: {E_GEMMA4_FUSED_KV}")


# The finding a raising landing problem becomes, by its kind (a shape problem otherwise).
_RAISED_AS: dict[str, FindingCode] = {"no-parameter": landing.NO_PARAMETER, "missing-key": "DSP333",
                                       "missing": landing.REQUIRED}


def ignored_suffixes(runtime: str, version: str) -> tuple[str, ...]:
    """The name suffixes a release's AutoWeightsLoader skips where it has no parameter for them: `.bias` from vLLM
    0.25.0 (models/utils.py `ignore_unexpected_suffixes.append(".bias")`, lines.json build.ignore_bias)."""
    if runtime != "vllm":
        return ()
    return (".bias",) if nearest_rules(version)[0].citation("build.ignore_bias") is not None else ()


def landed(verdict: Verdict, architecture: str, hf: Mapping[str, Any], config_class: str, f: DraftFacts) -> Verdict:
    """Every tensor against the release's generated model (runtimes/landing.py): the first one its loader raises
    on is the verdict's error; tensors cut to fit and parameters left unfilled are silent problems. Then what
    load_weights does after the last tensor (fused_kv_error)."""
    release = modelled_release(verdict.runtime, verdict.version)
    model = architecture_model(verdict.runtime, release, architecture) if release is not None else None
    fused = fused_kv_error(verdict.runtime, verdict.version, verdict.contract.family, hf)
    if model is not None and model.not_built is None:
        found = landing.land(model, hf, dict(f.tensor_shapes), target_hidden=f.target_hidden_size,
                             target_vocab=f.target_vocab_size, config_class=config_class,
                             family=verdict.contract.family,
                             ignored=ignored_suffixes(verdict.runtime, verdict.version),
                             dropped=landing.dropped_unshipped(model, verdict.version))
        error, silent = landing_issues(found, model.cls, hf)
        # the loader's check of what load_weights filled (DSP367) comes after load_weights' own last step
        if error is not None and (fused is None or error.code != landing.REQUIRED):
            return replace(verdict, error=error)
        verdict = replace(verdict, silent=(*verdict.silent, *silent))
    return replace(verdict, error=fused, silent=()) if fused is not None else verdict


def raised_code(problem: landing.Landing, config: Mapping[str, Any] | None) -> FindingCode:
    """The finding a raising landing problem becomes: by its kind; a key __init__ reads that the draft holds only
    in a nested section is DSP215 (fix hoists it), whichever path (the hand-read build, _init_error, or the
    generated record) saw the raise: one cause, one finding."""
    if problem.kind == "missing-key" and config is not None and \
            any(key == problem.key for key, _, _ in nested_settings(dict(config))):
        return "DSP215"
    return _RAISED_AS.get(problem.kind, landing.SHAPE)


def landing_issues(found: Sequence[landing.Landing], cls: str,
                   config: Mapping[str, Any] | None = None) -> tuple[Issue | None, tuple[Issue, ...]]:
    """The landing problems as a verdict's parts: the first one the loader raises on is the error; tensors cut to
    fit (DSP362) and parameters left unfilled (DSP363) are silent problems."""
    raised = next((p for p in found if p.raises), None)
    if raised is not None:
        return Issue(raised_code(raised, config), raised.text), ()
    silent: list[Issue] = []
    cut = [p.text for p in found if p.kind in ("cut", "partly-unwritten")]
    if cut:
        silent.append(Issue(landing.CUT, "; ".join(cut), verbatim=False))
    unfilled = [p.parameter + (f" ({p.filled[0]} of {p.filled[1]} rows filled)" if p.filled else "")
                for p in found if p.kind == "unfilled" and p.parameter]
    if unfilled:
        shown = ", ".join(unfilled[:6]) + (f" and {len(unfilled) - 6} more" if len(unfilled) > 6 else "")
        silent.append(Issue(landing.UNFILLED, f"{len(unfilled)} parameter{'s' if len(unfilled) != 1 else ''} of its "
                                      f"{cls.rsplit('.', 1)[-1]} no tensor fills (or fills only in part) keep "
                                      f"their initial values: {shown}", verbatim=False))
    return None, tuple(silent)


def verdicts_for(facts: DraftFacts, runtimes: Sequence[RuntimeVersion]) -> tuple[Verdict, ...]:
    """One verdict per release that describes this draft; each release judged on the config it builds."""
    found = []
    for rv in runtimes:
        built = next((b for b in facts.builds if (b.runtime, b.version) == (rv.runtime, rv.version)), None)
        if built is None:
            built = build_config(facts.raw_config, rv.runtime, rv.version) if facts.raw_config is not None else \
                as_written({}, rv.runtime, rv.version)
            built = replace(built, family=built.family or facts.family) if facts.raw_config is None else built
        verdict = built_verdict(built, facts)
        if verdict is not None:
            found.append(verdict)
    return tuple(found)

