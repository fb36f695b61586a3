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
from dspark_ckpt.model.families import ARCHITECTURE_FAMILY, Family, family_for
from dspark_ckpt.model.findings import shown_names
from dspark_ckpt.runtimes import landing, spec_facts, speculators, vllm_hf_config
from dspark_ckpt.runtimes import vllm_rows as rows
from dspark_ckpt.runtimes.config_classes import config_class
from dspark_ckpt.runtimes.records import AUX_FAMILIES, BuiltConfig, Issue
from dspark_ckpt.runtimes.release_model import built_model, modelled_release
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.sglang_build import build_sglang
from dspark_ckpt.runtimes.vllm_release import SPEC_FILE, ReleaseRules, nearest_rules


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
    return Issue("DSP309", f"Model architectures {shown_names(archs)} are not supported for now.")


def build_vllm(raw: Mapping[str, Any], version: str, method: str | None = None, model: str | None = None,
               target_vocab: int | None = None, tokens: int | None = None, parallel: bool = False) -> BuiltConfig:
    """`method`: the one the draft is served with (runtimes/serving_method.py), None for the one its name implies;
    a speculators config's own conversion locks it (speculative.py, speculators_override). `model`: the path vLLM
    reads the draft from, whose words a release's method detection may serve a named method otherwise
    (vllm_hf_config.served_method); `target_vocab`: T, which a Medusa draft's vocab_size is set to; `tokens`: the
    deploy's num_speculative_tokens, its head count (vllm_hf_config.medusa_completed); `parallel`: the deploy sets
    `parallel_drafting` (the proposer then needs a mask token id: runtimes/drafting_token.py)."""
    r, exact = nearest_rules(version)
    deployed = True if parallel else None
    cites: list[str] = []
    if is_speculators(raw):
        step = speculators.convert(raw, r)
        cites.append(step.source(r.version))
        if step.error is not None:
            return _built(version, step.hf, None, step.method or None, deployed, "SpeculatorsConfig", cites, exact,
                          error=step.error)
        hf, method, cls = step.hf, step.method, "SpeculatorsConfig"
        flag = step.parallel or deployed
    else:
        hf, flag = vllm_hf_config.overridden(r, raw, cites, method, target_vocab, tokens), deployed
        if method is not None:
            model_type = hf.get("model_type")
            method = vllm_hf_config.served_method(r, method, model, _archs(hf),
                                                  model_type if isinstance(model_type, str) else None)
        method = method or vllm_hf_config.implied_method(_arch(raw))  # named for the class as written
        cls = config_class("vllm", raw.get("model_type")) or "PretrainedConfig"
    arch = _arch(hf)
    if arch is None:
        return _built(version, hf, None, method, flag, cls, cites, exact)
    # The draft ModelConfig resolves its architectures in the registry before any method rewrite.
    if exact and vllm_hf_config.unsupported(r, [arch]):
        cites.append(f"{r.registry_line(arch)} (not registered)")
        return _built(version, hf, arch, method, flag, cls, cites, exact, error=_unsupported(_archs(hf) or (arch,)))
    if method == "dspark" and "dspark" in r.methods:  # no such method, no rewrite (before 0.25)
        arch, hf = _dspark_rewrite(arch, hf, r, cites)
    elif vllm_hf_config.wraps(method, "speculators" if cls == "SpeculatorsConfig" else hf.get("model_type")):
        (renamed,) = vllm_hf_config.renamed(r, [arch], method)
        cites.append(f"{vllm_hf_config.eagle_where(r)} via {SPEC_FILE} @ v{r.version} L{r.eagle_config_line}")
        cls = "EAGLEConfig"
        if renamed != arch and exact and vllm_hf_config.unsupported(r, [renamed]):
            return _built(version, hf, renamed, method, flag, cls, cites, exact, error=_unsupported((renamed,)))
        arch = renamed
    cites.append(r.registry_line(arch))
    error = _init_error(arch, hf, raw, cls, r, cites, version)
    built = _built(version, hf, arch, method, flag, cls, cites, exact, error=error, before_validation=False)
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
    entries (no record lists the entries __init__ indexes: vllm_rows.DFLASH2_KEYS says why)."""
    family = family_of(arch)
    hc_mult = r.citation("build.hc_mult")  # 0.25+
    if arch == "DSparkDraftModel" and "hc_mult" not in hf and hc_mult:  # the DeepSeek-V4 draft's own keys
        cites.append(f"{hc_mult} (config.hc_mult)")
        return Issue("DSP309", f"AttributeError: '{cls}' object has no attribute 'hc_mult'")
    model = built_model("vllm", version, arch) if family is not None else None
    if model is not None and (
            missing := landing.missing_key(model, hf, landing.config_class_of(model, hf, cls))) is not None:
        file, _, line = missing.where.rpartition(":")
        release = modelled_release("vllm", version)
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


def family_of(arch: str | None) -> Family | None:
    """The family whose contract rows judge a built architecture: the one the name picks (model/families.py; the
    Omni name its own), where the class the generated registry maps the name to (spec_facts.draft_class) is one
    that family's rows describe (vllm_rows.CLASS_FAMILIES); None otherwise (DSparkDraftModel's DeepSeek-V4 class,
    a registered name dspark-ckpt does not model)."""
    family = ARCHITECTURE_FAMILY.get(arch or "")
    cls = spec_facts.draft_class(arch) if family is not None and arch is not None else None
    return family if cls is not None and family in rows.CLASS_FAMILIES.get(cls, ()) else None


def _built(version: str, hf: Mapping[str, Any], arch: str | None, method: str | None, parallel: bool | None,
           cls: str, cites: list[str], exact: bool, *, error: Issue | None = None,
           before_validation: bool = True) -> BuiltConfig:
    family = family_of(arch) if error is None or not before_validation else None
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
                 model: str | None = None, target_vocab: int | None = None, tokens: int | None = None,
                 parallel: bool = False) -> BuiltConfig:
    """`method`: a serving method the deploy or the producer named (runtimes/serving_method.py), else None;
    `model`: the path vLLM reads the draft from (its method detection reads it); `target_vocab`: T; `parallel`: the
    deploy sets `parallel_drafting`."""
    if runtime == "vllm":
        return build_vllm(raw, version, method, model, target_vocab, tokens, parallel)
    builder = BUILDERS.get(runtime)
    return builder(raw, version, method) if builder is not None else as_written(raw, runtime, version)


def build_all(raw: Mapping[str, Any] | None, runtimes: Sequence[RuntimeVersion],
              method: str | None = None, model: str | None = None,
              target_vocab: int | None = None, tokens: int | None = None,
              parallel: bool = False) -> tuple[BuiltConfig, ...]:
    return tuple(build_config(raw, rv.runtime, rv.version, method, model, target_vocab, tokens, parallel)
                 for rv in runtimes) \
        if raw is not None else ()


# The finding a raising landing problem becomes, by its kind (a shape problem otherwise).
_RAISED_AS: dict[str, FindingCode] = {"no-parameter": landing.NO_PARAMETER, "missing-key": "DSP333",
                                       "missing": landing.REQUIRED}


def raised_code(problem: landing.Landing, config: Mapping[str, Any] | None) -> FindingCode:
    """The finding a raising landing problem becomes: by its kind; a key __init__ reads that the draft holds only
    in a nested section is DSP215 (fix hoists it), whichever path (the hand-read build, _init_error, or the
    generated record) saw the raise: one cause, one finding."""
    if problem.kind == "missing-key" and config is not None and \
            any(key == problem.key for key, _, _ in nested_settings(dict(config))):
        return "DSP215"
    return _RAISED_AS.get(problem.kind, landing.SHAPE)
