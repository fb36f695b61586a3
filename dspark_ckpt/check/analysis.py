"""Orchestrate one check: source -> config, headers, index -> facts -> findings and compatibility -> report."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.formats.layout import ShardIndex, index_findings, parse_index, shard_status_findings
from dspark_ckpt.formats.mapping import MAX_MAPPING_BYTES, check_d2t, check_t2d, d2t_targets, decode_ints
from dspark_ckpt.formats.safetensors_header import SafetensorsHeader, read_header
from dspark_ckpt.formats.vocab_tensors import TensorInfo, VocabTensors, find_vocab_tensors, shape_findings
from dspark_ckpt.model.classify import VocabKind, input_kind, vocab_kind
from dspark_ckpt.model.draft_config import DraftConfig, parse_draft_config
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.model.report import CheckpointReport, Compatibility
from dspark_ckpt.runtimes.compatibility import DraftFacts, Verdict, evaluate
from dspark_ckpt.runtimes.contracts import contract_for
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.base import CONFIG_NAME, INDEX_NAME, CheckpointSource, PathStatus

METHOD_PATH_MARKERS = (("eagle-", "eagle"), ("eagle3", "eagle3"), ("dflash", "dflash"))


@dataclass(frozen=True, slots=True)
class TargetVocab:
    size: int
    source: str  # where T came from, for the report
    omni: bool = False  # a Qwen3-Omni target: vLLM 0.29+ validates the draft against it at start-up


@dataclass(frozen=True, slots=True)
class Loaded:
    """What was read from the source: everything later steps reason about, with no I/O left."""

    config: DraftConfig | None
    tensors: dict[str, TensorInfo]
    headers: dict[str, SafetensorsHeader]
    findings: list[Finding]


def read_config(source: CheckpointSource) -> tuple[DraftConfig | None, list[Finding]]:
    try:
        raw = source.read_text_file(CONFIG_NAME)
    except OSError as exc:
        return None, [finding("DSP202", f"config.json cannot be read: {exc.strerror or exc}.", file=CONFIG_NAME)]
    if raw is None:
        return None, [finding("DSP201", "no config.json: vocab sizes and architecture are unknown.", file=CONFIG_NAME)]
    try:
        doc: Any = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # ValueError also covers ints over Python's 4300-digit limit
        return None, [finding("DSP202", f"config.json is not valid JSON ({exc.__class__.__name__}).", file=CONFIG_NAME)]
    if not isinstance(doc, dict):
        return None, [finding("DSP202", f"config.json is a JSON {type(doc).__name__}, not an object.",
                              file=CONFIG_NAME)]
    return parse_draft_config(doc)


def read_index(source: CheckpointSource) -> tuple[ShardIndex | None, list[Finding]]:
    try:
        raw = source.read_text_file(INDEX_NAME)
    except OSError as exc:
        return None, [finding("DSP102", f"{INDEX_NAME} cannot be read: {exc.strerror or exc}.", file=INDEX_NAME)]
    return parse_index(raw) if raw is not None else (None, [])


def read_shard_header(source: CheckpointSource, name: str) -> tuple[SafetensorsHeader | None, list[Finding]]:
    try:
        with source.open(name) as stream:
            result = read_header(stream, source.size(name))
    except OSError as exc:
        return None, [finding("DSP018", f"{name} cannot be read: {exc.strerror or exc}.", file=name)]
    problems = [finding(p.code, p.message, file=name, tensor=p.tensor) for p in result.problems]
    return result.header, problems


def load(source: CheckpointSource) -> Loaded:
    config, findings = read_config(source)
    index, index_problems = read_index(source)
    findings += index_problems
    on_disk = source.safetensors_files()
    names = sorted(set(index.weight_map.values()) | set(on_disk)) if index else on_disk
    statuses = {name: source.status(name) for name in names}
    findings += shard_status_findings(statuses, set(index.weight_map.values()) if index else set())
    headers: dict[str, SafetensorsHeader] = {}
    for name in (n for n, s in statuses.items() if s is PathStatus.OK):
        header, problems = read_shard_header(source, name)
        findings += problems
        if header is not None:
            headers[name] = header
    if not names:
        findings.append(finding("DSP101", "no *.safetensors file and no index in the checkpoint."))
    if index is not None:
        findings += index_findings(index, headers, on_disk)
    tensors = {
        e.name: TensorInfo(e.name, e.dtype, e.shape, shard, h.data_start + e.begin, e.nbytes)
        for shard, h in headers.items() for e in h.entries
    }
    return Loaded(config, tensors, headers, findings)


def read_mapping(source: CheckpointSource, info: TensorInfo) -> tuple[Any, list[Finding]]:
    """The only tensor data check ever reads: the small d2t/t2d tables."""
    def unreadable(why: str) -> tuple[None, list[Finding]]:
        return None, [finding("DSP406", f"{info.name} {why}; its contents were not validated.",
                              file=info.file, tensor=info.name)]

    if info.nbytes > MAX_MAPPING_BYTES:
        return unreadable(f"is {info.nbytes} bytes, above the {MAX_MAPPING_BYTES}-byte read limit")
    try:
        with source.open(info.file) as stream:
            stream.seek(info.begin)
            raw = stream.read(info.nbytes)
    except OSError as exc:
        return unreadable(f"cannot be read ({exc.strerror or exc})")
    if len(raw) != info.nbytes:
        return unreadable("is truncated")
    values = decode_ints(raw, info.dtype)
    return (values, []) if values is not None else unreadable(f"has dtype {info.dtype}")


def mapping_findings(source: CheckpointSource, v: VocabTensors, cfg: DraftConfig | None,
                     target: int | None) -> list[Finding]:
    findings: list[Finding] = []
    targets = None
    draft_vocab = cfg.draft_vocab_size if cfg else None
    if v.d2t is not None and len(v.d2t.shape) == 1 and v.d2t.dtype != "BOOL":
        d2t_values, problems = read_mapping(source, v.d2t)
        findings += problems
        if d2t_values is not None:
            targets = d2t_targets(d2t_values)
            pruned = vocab_kind(draft_vocab, target) is VocabKind.PRUNED
            findings += check_d2t(d2t_values, target_vocab_size=target, pruned=pruned, file=v.d2t.file,
                                  tensor=v.d2t.name, targets=targets)
    if v.t2d is not None and len(v.t2d.shape) == 1 and v.t2d.dtype == "BOOL":
        t2d_values, problems = read_mapping(source, v.t2d)
        findings += problems
        if t2d_values is not None:
            findings += check_t2d(t2d_values, targets, draft_vocab_size=draft_vocab, file=v.t2d.file,
                                  tensor=v.t2d.name)
    return findings


def _dim(info: TensorInfo | None, axis: int) -> int | None:
    return info.shape[axis] if info is not None and len(info.shape) > axis else None


# File-level problems that make every loader fail before any model code runs.
UNREADABLE_CODES = frozenset({f"DSP0{n:02d}" for n in range(1, 20)} | {"DSP101", "DSP102", "DSP103", "DSP104"})


def first_unreadable(findings: list[Finding]) -> tuple[str, str] | None:
    problem = next((f for f in findings if f.code in UNREADABLE_CODES), None)
    return (problem.code, f"{problem.file}: {problem.message}" if problem.file else problem.message) if problem else None


def draft_facts(cfg: DraftConfig, v: VocabTensors, target: int, unreadable: tuple[str, str] | None = None,
                target_is_omni: bool = False) -> DraftFacts | None:
    if cfg.family is None or cfg.vocab_size is None or cfg.draft_vocab_size is None:
        return None
    return DraftFacts(
        family=cfg.family, draft_vocab_size=cfg.draft_vocab_size, vocab_size=cfg.vocab_size,
        target_vocab_size=target, has_lm_head=v.lm_head is not None, has_embed=v.embed_tokens is not None,
        has_d2t=v.d2t is not None, has_t2d=v.t2d is not None, has_mask_hidden=v.has_mask_hidden,
        model_prefixed=bool(v.model_prefixed), lm_head_rows=_dim(v.lm_head, 0), lm_head_cols=_dim(v.lm_head, 1),
        hidden_size=cfg.hidden_size, embed_rows=_dim(v.embed_tokens, 0), markov_w1_rows=_dim(v.markov_w1, 0),
        markov_w2_rows=_dim(v.markov_w2, 0), d2t_length=_dim(v.d2t, 0) if v.d2t and len(v.d2t.shape) == 1 else None,
        dspark_draft_topk=cfg.dspark_draft_topk, has_own_lm_head_flag=cfg.has_own_lm_head_flag,
        parallel_drafting=cfg.parallel_drafting, mask_token_id=cfg.mask_token_id, unreadable=unreadable,
        target_is_omni=target_is_omni,
    )


def verdicts(facts: DraftFacts, runtimes: Sequence[RuntimeVersion]) -> list[Verdict]:
    found = []
    for rv in runtimes:
        contract = contract_for(rv.runtime, rv.version, facts.family)
        if contract is not None:
            found.append(evaluate(contract, rv.version, facts))
    return found


def _versions(vs: list[Verdict]) -> str:
    return ", ".join(str(RuntimeVersion(v.runtime, v.version)) for v in vs)


# Where the right repair depends on the vocab kind, the registry's generic hint is replaced.
KIND_HINTS: dict[tuple[str, str], str] = {
    ("DSP302", "padded"): "Trim lm_head/markov_w2 to T rows and set draft_vocab_size = T (`dspark-ckpt fix "
                          "--strategy trim`, loads everywhere); an explicit zero d2t loads on vLLM 0.27-0.29 only.",
    ("DSP303", "padded"): "Trim to T rows (`dspark-ckpt fix --strategy trim`), or drop the d2t for vLLM 0.30+ only.",
    ("DSP303", "equal"): "Drop the d2t: an equal-vocab draft maps by identity (`dspark-ckpt fix --strategy drop-d2t`).",
}


def verdict_findings(vs: list[Verdict], already: set[str], kind: str | None = None) -> list[Finding]:
    """One finding per problem code, naming every runtime that fails or misbehaves because of it."""
    by_code: dict[str, tuple[list[Verdict], list[tuple[Verdict, str]]]] = {}
    for v in vs:
        if v.error is not None:
            by_code.setdefault(v.error.code, ([], []))[0].append(v)
        for issue in v.silent:
            by_code.setdefault(issue.code, ([], []))[1].append((v, issue.text))
    findings = []
    for code, (failing, silent) in sorted(by_code.items()):
        if code in already:
            continue
        parts = []
        if failing:
            parts.append(f"fails to load on {_versions(failing)}: {failing[0].error.text}")  # type: ignore[union-attr]
        for text in dict.fromkeys(t for _, t in silent):
            parts.append(f"loads on {_versions([v for v, t in silent if t == text])} but {text}")
        findings.append(finding(code, "; ".join(parts), hint=KIND_HINTS.get((code, kind or ""))))
    return findings


def compatibility(vs: list[Verdict]) -> tuple[Compatibility, ...]:
    return tuple(
        Compatibility(
            runtime=v.runtime, version=v.version, loads=v.loads, error=v.error.text if v.error else None,
            error_code=v.error.code if v.error else None, silent=tuple(i.text for i in v.silent),
            silent_codes=tuple(i.code for i in v.silent),
            verbatim=v.contract.verbatim_errors and (v.error is None or v.error.verbatim),
            source=v.contract.source,
        )
        for v in vs
    )


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


def inspect_checkpoint(source: CheckpointSource, *, target: TargetVocab | None,
                       runtimes: Sequence[RuntimeVersion]) -> CheckpointReport:
    return inspect_loaded(source, load(source), target=target, runtimes=runtimes)


def inspect_loaded(source: CheckpointSource, loaded: Loaded, *, target: TargetVocab | None,
                   runtimes: Sequence[RuntimeVersion]) -> CheckpointReport:
    """The report for headers already read: callers that also need `loaded` (fix, verify) read them once."""
    cfg = loaded.config
    vocab = find_vocab_tensors(loaded.tensors)
    t = target.size if target else None
    findings = list(loaded.findings)
    if cfg is not None:
        findings += shape_findings(vocab, cfg, t)
        findings += method_findings(source.display, cfg)
    findings += mapping_findings(source, vocab, cfg, t)
    vs: list[Verdict] = []
    if target is None:
        findings.append(finding("DSP206", "pass --target DIR or --target-vocab-size N to classify the draft and "
                                          "evaluate the runtime contracts; structural checks ran."))
    elif cfg is not None:
        facts = draft_facts(cfg, vocab, target.size, first_unreadable(findings), target.omni)
        vs = verdicts(facts, runtimes) if facts is not None else []
    kind = vocab_kind(cfg.draft_vocab_size if cfg else None, t)
    findings += verdict_findings(vs, {f.code for f in findings}, kind.value if kind else None)
    return CheckpointReport(
        source=source.display, revision=source.revision,
        family=cfg.family.value if cfg and cfg.family else None,
        architecture=cfg.architecture if cfg else None,
        draft_vocab_size=cfg.draft_vocab_size if cfg else None,
        input_vocab_size=cfg.vocab_size if cfg else None,
        target_vocab_size=t, target_vocab_source=target.source if target else None,
        vocab_kind=kind.value if kind else None,
        input_kind=(k.value if (k := input_kind(cfg.vocab_size if cfg else None, t)) else None),
        hidden_size=cfg.hidden_size if cfg else None,
        tensors=vocab.present(), compatibility=compatibility(vs), findings=tuple(findings),
        shards=len(loaded.headers),
    )
