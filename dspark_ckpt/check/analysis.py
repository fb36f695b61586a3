"""The analysis stage: one source read once -> one frozen record of every fact, finding and per-runtime verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dspark_ckpt.check.aux_findings import aux_findings
from dspark_ckpt.check.built import (
    contradiction,
    contradiction_findings,
    recorded_target,
    recorded_target_finding,
    with_build,
)
from dspark_ckpt.check.ignored_keys import ignored_key_findings
from dspark_ckpt.check.load import Loaded, load, read_mapping
from dspark_ckpt.check.no_verdict import NO_VERDICT, every_release
from dspark_ckpt.check.registration import registration_findings
from dspark_ckpt.check.served import served_config
from dspark_ckpt.check.verdict_findings import method_findings, verdict_findings
from dspark_ckpt.formats.mapping import check_d2t, check_t2d, d2t_targets, decode_ints
from dspark_ckpt.formats.vocab_tensors import VocabTensors, find_vocab_tensors, shape_findings
from dspark_ckpt.model.classify import InputKind, VocabKind, input_kind, vocab_kind
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import DraftConfig
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.model.report import CheckpointReport, Compatibility
from dspark_ckpt.model.rule_catalog import unreadable_code
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.model.tensors import TensorInfo
from dspark_ckpt.runtimes.config_build import build_all
from dspark_ckpt.runtimes.generated_verdict import unmodelled_verdicts
from dspark_ckpt.runtimes.records import BuiltConfig, DraftFacts, Verdict
from dspark_ckpt.runtimes.release_verdict import verdicts_for
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.serving_method import ServingMethod, serving_method
from dspark_ckpt.runtimes.sglang_config import draft_vocab_config, sglang_config
from dspark_ckpt.sources.base import CheckpointSource


@dataclass(frozen=True, slots=True)
class Mappings:
    """The decoded d2t/t2d tables (None where absent or unreadable) and the target ids d2t maps onto."""

    d2t: Sequence[int] | None = None
    t2d: Sequence[int] | None = None
    d2t_targets: list[int] | None = None

    @property
    def d2t_all_zero(self) -> bool:
        return self.d2t is not None and len(self.d2t) > 0 and not any(self.d2t)


@dataclass(frozen=True, slots=True)
class Analysis:
    """Everything check, fix and verify know about one draft; each fact here is derived exactly once."""

    source: str
    revision: str | None
    loaded: Loaded
    vocab: VocabTensors
    target: TargetVocab | None
    kind: VocabKind | None
    input_kind: InputKind | None
    facts: DraftFacts | None  # what the runtimes' load paths look at; None without T, family or vocab sizes
    mappings: Mappings
    runtimes: tuple[RuntimeVersion, ...]
    verdicts: tuple[Verdict, ...]
    findings: tuple[Finding, ...]  # every finding: the structural ones, then one per problem the verdicts name
    structural_findings: tuple[Finding, ...]  # what the headers, config and mappings show before any verdict
    builds: tuple[BuiltConfig, ...] = ()  # what each runtime release builds from config.json (config_build.py)
    method: ServingMethod | None = None  # the serving method, derived once (runtimes/serving_method.py)

    @property
    def config(self) -> DraftConfig | None:
        return self.loaded.config

    @property
    def raw_config(self) -> dict[str, Any] | None:
        return self.loaded.config_doc.raw if self.loaded.config_doc else None

    @property
    def tensors(self) -> dict[str, TensorInfo]:
        return self.loaded.tensors

    def with_findings(self, extra: Sequence[Finding]) -> Analysis:
        return replace(self, findings=self.findings + tuple(extra)) if extra else self

    @property
    def report(self) -> CheckpointReport:
        cfg = self.config
        t = self.target
        return CheckpointReport(
            source=self.source, revision=self.revision,
            family=cfg.family.value if cfg and cfg.family else None,
            architecture=cfg.architecture if cfg else None,
            draft_vocab_size=cfg.draft_vocab_size if cfg else None,
            input_vocab_size=cfg.vocab_size if cfg else None,
            target_vocab_size=t.size if t else None, target_vocab_source=t.source if t else None,
            vocab_kind=self.kind.value if self.kind else None,
            input_kind=self.input_kind.value if self.input_kind else None,
            hidden_size=cfg.hidden_size if cfg else None,
            tensors=self.vocab.present(), compatibility=compatibility(self.verdicts), findings=self.findings,
            shards=len(self.loaded.headers), is_checkpoint=not self.loaded.empty,
        )


def first_unreadable(findings: Sequence[Finding]) -> tuple[FindingCode, str] | None:
    problem = next((f for f in findings if unreadable_code(f.code)), None)
    return (problem.code, f"{problem.file}: {problem.message}" if problem.file else problem.message) if problem else None


def _dim(info: TensorInfo | None, axis: int) -> int | None:
    return info.shape[axis] if info is not None and len(info.shape) > axis else None


def draft_facts(cfg: DraftConfig, v: VocabTensors, target: TargetVocab,
                unreadable: tuple[FindingCode, str] | None = None, *, raw: dict[str, Any] | None = None,
                tensors: dict[str, TensorInfo] | None = None) -> DraftFacts | None:
    if cfg.family is None or cfg.vocab_size is None or cfg.draft_vocab_size is None:
        return None
    raw = raw or {}
    return DraftFacts(
        family=cfg.family, draft_vocab_size=cfg.draft_vocab_size, vocab_size=cfg.vocab_size,
        target_vocab_size=target.size, has_lm_head=v.lm_head is not None, has_embed=v.embed_tokens is not None,
        has_d2t=v.d2t is not None, has_t2d=v.t2d is not None, has_mask_hidden=v.has_mask_hidden,
        model_prefixed=bool(v.model_prefixed), lm_head_rows=_dim(v.lm_head, 0), lm_head_cols=_dim(v.lm_head, 1),
        hidden_size=cfg.hidden_size, embed_rows=_dim(v.embed_tokens, 0), markov_w1_rows=_dim(v.markov_w1, 0),
        markov_w1_cols=_dim(v.markov_w1, 1), markov_rank=cfg.markov_rank,
        markov_w2_rows=_dim(v.markov_w2, 0), d2t_length=_dim(v.d2t, 0) if v.d2t and len(v.d2t.shape) == 1 else None,
        dspark_draft_topk=cfg.dspark_draft_topk, has_own_lm_head_flag=cfg.has_own_lm_head_flag,
        parallel_drafting=cfg.parallel_drafting, mask_token_id=cfg.mask_token_id, unreadable=unreadable,
        target_is_omni=target.omni, draft_vocab_config=draft_vocab_config(raw), target_head_rows=target.head_rows,
        target_hidden_size=target.hidden, target_text_model_type=target.text_model_type,
        sglang=sglang_config(raw, {n: t.shape for n, t in (tensors or {}).items()}),
    )


def verdicts(facts: DraftFacts, runtimes: Sequence[RuntimeVersion]) -> tuple[Verdict, ...]:
    """Each release judged on the config it builds (facts.builds; rebuilt from facts.raw_config where absent)."""
    return verdicts_for(facts, runtimes)


def _in_order(vs: Sequence[Verdict], runtimes: Sequence[RuntimeVersion]) -> tuple[Verdict, ...]:
    """The verdicts in the order the releases were asked for."""
    at = {(rv.runtime, rv.version): i for i, rv in enumerate(runtimes)}
    return tuple(sorted(vs, key=lambda v: at.get((v.runtime, v.version), len(at))))


def compatibility(vs: Sequence[Verdict]) -> tuple[Compatibility, ...]:
    return tuple(
        Compatibility(
            runtime=v.runtime, version=v.version, loads=v.loads, error=v.error.text if v.error else None,
            error_code=v.error.code if v.error else None, silent=tuple(i.text for i in v.silent),
            silent_codes=tuple(i.code for i in v.silent),
            verbatim=v.contract.verbatim_errors and (v.error is None or v.error.verbatim),
            source=v.contract.source,
            first_step_error=v.first_step.text if v.first_step else None,
            first_step_error_code=v.first_step.code if v.first_step else None,
            first_step_verbatim=v.contract.verbatim_errors and (v.first_step is None or v.first_step.verbatim),
            first_step_not_modelled_why=v.step_unmodelled.why if v.step_unmodelled and v.loads else None,
            first_step_not_modelled=v.step_unmodelled.text if v.step_unmodelled and v.loads else None,
        )
        for v in vs
    )


def read_mappings(source: CheckpointSource, v: VocabTensors) -> tuple[dict[str, bytes], list[Finding]]:
    """The raw d2t (1-D, integer) and t2d (1-D, BOOL) bytes; other shapes and dtypes are shape findings instead."""
    found: dict[str, bytes] = {}
    problems: list[Finding] = []
    for info, want_bool in ((v.d2t, False), (v.t2d, True)):
        if info is not None and len(info.shape) == 1 and (info.dtype == "BOOL") == want_bool:
            raw, why = read_mapping(source, info)
            problems += why
            if raw is not None:
                found[info.name] = raw
    return found, problems


def decode_mappings(v: VocabTensors, raw: dict[str, bytes]) -> Mappings:
    d2t = decode_ints(raw[v.d2t.name], v.d2t.dtype) if v.d2t is not None and v.d2t.name in raw else None
    t2d = decode_ints(raw[v.t2d.name], v.t2d.dtype) if v.t2d is not None and v.t2d.name in raw else None
    return Mappings(d2t, t2d, d2t_targets(d2t) if d2t is not None else None)


def mapping_findings(v: VocabTensors, m: Mappings, cfg: DraftConfig | None, target: int | None,
                     kind: VocabKind | None) -> list[Finding]:
    findings: list[Finding] = []
    draft_vocab = cfg.draft_vocab_size if cfg else None
    if m.d2t is not None and v.d2t is not None:
        findings += check_d2t(m.d2t, target_vocab_size=target, pruned=kind is VocabKind.PRUNED, file=v.d2t.file, tensor=v.d2t.name,
                              targets=m.d2t_targets)
    if m.t2d is not None and v.t2d is not None:
        findings += check_t2d(m.t2d, m.d2t_targets, draft_vocab_size=draft_vocab, file=v.t2d.file, tensor=v.t2d.name)
    return findings


def analyze(source: CheckpointSource, *, target: TargetVocab | None,
            runtimes: Sequence[RuntimeVersion], speculative: Mapping[str, Any] | None = None) -> Analysis:
    """`speculative`: the deploy's --speculative-config for this checkpoint, where one goes with it."""
    return analyze_loaded(source, load(source), target=target, runtimes=runtimes, speculative=speculative)


def analyze_loaded(source: CheckpointSource, loaded: Loaded, *, target: TargetVocab | None,
                   runtimes: Sequence[RuntimeVersion], speculative: Mapping[str, Any] | None = None) -> Analysis:
    raw = loaded.config_doc.raw if loaded.config_doc else None
    method = serving_method(speculative, raw, source.display)  # the one place the serving method is derived
    loaded = served_config(loaded, method)  # a base class served with a named method is routed as that draft
    cfg = loaded.config
    vocab = find_vocab_tensors(loaded.tensors)
    recorded = recorded_target(vocab) if target is None else None  # without --target, T as the draft's t2d records it
    target = target or recorded
    t = target.size if target else None
    kind = vocab_kind(cfg.draft_vocab_size if cfg else None, t)  # the one place the vocab kind is derived
    findings = list(loaded.findings)
    if cfg is not None:
        findings += shape_findings(vocab, cfg, t)
        findings += method_findings(source.display, cfg)
    honoured = contradiction(cfg, vocab)
    if cfg is not None and honoured is not None:
        findings = contradiction_findings(cfg, vocab, honoured, findings)
    raw_mappings, problems = read_mappings(source, vocab)
    findings += problems
    loaded = replace(loaded, mapping_bytes=raw_mappings)
    mappings = decode_mappings(vocab, raw_mappings)
    findings += mapping_findings(vocab, mappings, cfg, t, kind)
    facts = None
    named = method.name if method.named else None
    model = method.model if method.named else None
    tokens = method.tokens if method.named else None
    builds = build_all(raw, runtimes, named, model, t, tokens, method.parallel) if target is not None else ()
    if recorded is not None:
        findings.append(recorded_target_finding(recorded))
    if target is None:
        findings.append(finding("DSP206", "pass --target DIR or --target-vocab-size N to classify the draft and "
                                          "evaluate the runtime contracts; structural checks ran."))
    elif cfg is not None:
        facts = draft_facts(cfg, vocab, target, first_unreadable(findings),
                            raw=loaded.config_doc.raw if loaded.config_doc else None, tensors=loaded.tensors)
        facts = with_build(facts, builds, raw, vocab, loaded.tensors, mappings.d2t_targets, mappings.d2t_all_zero,
                           kind, honoured) if facts is not None else None
    vs = verdicts(facts, runtimes) if facts is not None else ()
    # a release whose build no contract row describes (no family: a draft of no modelled family, or one a release's
    # own config rewrite took to another class, vLLM 0.34's Ricursive DFlash2) is judged by its generated model
    judged = {(v.runtime, v.version) for v in vs}
    vs = _in_order((*vs, *unmodelled_verdicts(
        [b for b in builds if (b.runtime, b.version) not in judged and (facts is None or b.family is None)],
        {n: tuple(info.shape) for n, info in loaded.tensors.items()},
        target_hidden=target.hidden if target is not None else None, target_vocab=t,
        target_model_type=target.text_model_type if target is not None else None)), runtimes)
    built = builds or (build_all(raw, runtimes, named, model, t, tokens, method.parallel) if cfg is not None else ())
    findings += aux_findings(built)  # T plays no part
    findings += ignored_key_findings(built)
    findings, vs = registration_findings(raw, cfg, vocab, runtimes, findings, vs, method)
    if target is not None:  # without T no release is evaluated: DSP206 says so (and DSP-E038 gates it)
        vs = every_release(vs, runtimes, built, raw, cfg, facts, method)
    structural = tuple(findings)
    already = {f.code for f in findings}
    if "DSP231" in already:  # not a draft: that error is the whole story, each row says so
        already.add(NO_VERDICT)
    findings += verdict_findings(vs, already, kind.value if kind else None,
                                 cfg.family.value if cfg is not None and cfg.family is not None else None,
                                 cfg.architecture if cfg is not None else None)
    return Analysis(
        source=source.display, revision=source.revision, loaded=loaded, vocab=vocab, target=target, kind=kind,
        input_kind=input_kind(cfg.vocab_size if cfg else None, t), facts=facts, mappings=mappings,
        runtimes=tuple(runtimes), verdicts=vs, findings=tuple(findings), structural_findings=structural,
        builds=builds, method=method,
    )


def inspect_checkpoint(source: CheckpointSource, *, target: TargetVocab | None,
                       runtimes: Sequence[RuntimeVersion]) -> CheckpointReport:
    """The check report of one source (library convenience: `analyze(...).report`)."""
    return analyze(source, target=target, runtimes=runtimes).report
