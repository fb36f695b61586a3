"""The deploy preflight's edges: read `--speculative-config` (inline JSON or a .json file), evaluate it with the
checkpoint it names for each selected vLLM release, and publish the outcomes as findings and a `Deploy` record."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from dspark_ckpt.errors import SourceError, UsageError
from dspark_ckpt.formats.json_doc import Document, ProblemKind, RefusedFile, decode_document, read_bounded
from dspark_ckpt.model import runtime_label
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.deploy import Deploy, DeployRuntime
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.model.target_config import text_config
from dspark_ckpt.runtimes import draft_context, vllm_release
from dspark_ckpt.runtimes import speculative_config as sc
from dspark_ckpt.runtimes.release import parse

if TYPE_CHECKING:
    from dspark_ckpt.check.analysis import Analysis

MAX_SPEC_BYTES = 1 << 20  # a speculative config is a few hundred bytes
INLINE = "--speculative-config"


@dataclass(frozen=True, slots=True)
class DeployRequest:
    """A `--speculative-config` as read: the object, or the finding that says why it is not one."""

    source: str  # the file it came from, or INLINE
    spec: Mapping[str, Any] | None
    problem: Finding | None = None

    @property
    def model(self) -> str | None:
        model = self.spec.get("model") if self.spec is not None else None
        return model if isinstance(model, str) and model else None


def _looks_like_path(text: str) -> bool:
    return text.endswith(".json") or "/" in text or "\\" in text


def read_request(text: str) -> DeployRequest:
    """Inline JSON (it starts with `{` or `[`), else the path of a JSON file; a file that cannot be read at all is an
    operational error (DSP-E027), content that is not a JSON object is a finding (DSP801, DSP802)."""
    stripped = text.strip()
    if not stripped:
        raise UsageError("--speculative-config is empty", code="DSP-E028",
                         hint="give the JSON object vLLM gets, or the path of a .json file holding it")
    if stripped.startswith(("{", "[")):
        return _decode(stripped.encode("utf-8", "surrogatepass"), INLINE)
    path = Path(text)
    if path.exists() or _looks_like_path(stripped):
        try:
            raw = read_bounded(path, MAX_SPEC_BYTES)
        except FileNotFoundError:
            raise SourceError(f"speculative config {text}: no such file", code="DSP-E027",
                              hint="give the path of the .json file, or the JSON object itself") from None
        except RefusedFile as exc:
            raise SourceError(f"speculative config {text} {exc}", code="DSP-E027",
                              hint=f"a speculative config is a small JSON file (at most {MAX_SPEC_BYTES:,} bytes)"
                              if exc.kind is ProblemKind.TOO_LARGE else None) from None
        except OSError as exc:
            raise SourceError(f"speculative config {text} cannot be read: {exc.strerror or exc}",
                              code="DSP-E027") from None
        return _decode(raw, text)
    return _decode(stripped.encode("utf-8", "surrogatepass"), INLINE)


def _decode(raw: bytes, source: str) -> DeployRequest:
    doc = decode_document(raw)
    if isinstance(doc, Document):
        return DeployRequest(source, doc.data)
    code: FindingCode = "DSP802" if doc.kind is ProblemKind.NOT_OBJECT else "DSP801"
    where = "the --speculative-config given" if source == INLINE else source
    return DeployRequest(source, None, finding(code, f"{where} {doc.message}; vLLM parses it with json.loads and "
                                                     "builds SpeculativeConfig(**object) from it."))


# --- which checkpoint the config names ---
def _hub_name(spec: str) -> str:
    return spec.removeprefix("hf://").split("@", 1)[0].strip("/").lower()


def same_checkpoint(a: str, b: str) -> bool:
    """Two command-line checkpoint specs that name the same draft: one folder on disk, or one Hub repo."""
    pa, pb = Path(a), Path(b)
    if pa.exists() or pb.exists():
        try:
            return pa.resolve() == pb.resolve()
        except OSError:
            return False
    return _hub_name(a) == _hub_name(b)


def verifier_matches(verifier: str, target: str) -> bool:
    """The verifier a speculators draft records names the target given: the same string, folder or repo, a local
    copy whose folder is named like the repo, or the repo's HF cache snapshot (`models--org--name/snapshots/...`)."""
    if same_checkpoint(verifier, target):
        return True
    name = _hub_name(verifier)
    parts = [p.lower() for p in PurePosixPath(Path(target).absolute().as_posix()).parts]
    cached = next((p for p in parts if p.startswith("models--")), None)
    if cached is not None:
        return cached.removeprefix("models--").replace("--", "/", 1) == name
    return bool(parts) and parts[-1] == name.rsplit("/", 1)[-1]


# --- the target as the speculative config sees it ---
DEFAULT_LEN = "vLLM's default without --max-model-len: the target config's max_position_embeddings"


def target_view(target: TargetVocab | None, target_spec: str | None, max_model_len: int | None = None) -> sc.TargetView:
    """T and the Omni flag from the resolved target; the text config and model_type only from a local target; the
    served max_model_len as given, else vLLM's default where the local target's config alone decides it."""
    view = sc.TargetView(vocab_size=target.size if target else None, omni=bool(target and target.omni),
                         max_model_len=max_model_len, text_model_type=target.text_model_type if target else None)
    cfg = _local_target_config(target_spec) if target_spec is not None else None
    if cfg is None:
        return view
    model_type = cfg.get("model_type")
    node, _ = text_config(cfg)
    thinker = cfg.get("thinker_config")
    text = thinker.get("text_config") if isinstance(thinker, dict) else None
    view = replace(view, model_type=model_type if isinstance(model_type, str) else None,
                   text_config=text if isinstance(text, dict) else node)
    if max_model_len is None and not view.omni and isinstance(node, dict):  # Omni: its own length convertor
        view = replace(view, max_model_len=draft_context.positions(node), max_model_len_from=DEFAULT_LEN)
    return view


def _local_target_config(spec: str) -> dict[str, Any] | None:
    path = Path(spec)
    config = path / "config.json" if path.is_dir() else path
    if not config.is_file():
        return None
    try:
        doc = decode_document(read_bounded(config))
    except OSError:
        return None
    return doc.data if isinstance(doc, Document) else None


# --- evaluation and publication ---
@dataclass(frozen=True, slots=True)
class DeployDraft:
    """The checkpoint a speculative config deploys, as the deploy preflight takes it from that checkpoint's analysis
    (not runtimes/records.DraftFacts, the vocabulary facts a runtime contract is evaluated on)."""

    checkpoint: str  # the spec checked, as given
    config: Mapping[str, Any] | None  # config.json, None when it could not be read
    family: Family | None
    findings: frozenset[str]  # the codes the checkpoint's own analysis already reports


def assess(request: DeployRequest, draft: DeployDraft, *, versions: Sequence[str], target: sc.TargetView,
           target_spec: str | None) -> tuple[Deploy, tuple[Finding, ...]]:
    """The deploy record and the findings of one checkpoint under one speculative config."""
    if request.spec is None:
        problem = (request.problem,) if request.problem else ()
        return Deploy(request.source, None, None), problem
    found: list[Finding] = []
    model = request.model
    if model is not None and not same_checkpoint(model, draft.checkpoint):
        found.append(finding("DSP806", f"{_where(request)} names model {model!r}, but the checkpoint checked is "
                                       f"{draft.checkpoint!r}: vLLM loads {model!r}."))
    found += _verifier_findings(draft, target_spec)
    inp = sc.DeployInput(request.spec, draft.checkpoint, draft.config, draft.family, target,
                         verifier_exists=_verifier_exists(draft.config))
    outcomes = [(v, sc.evaluate(rules, inp)) for v in versions if (rules := vllm_release.rules_for(v)) is not None]
    runtimes = tuple(_published(v, o) for v, o in outcomes)
    found += outcome_findings(outcomes, draft.findings, draft.family)
    return Deploy(request.source, dict(request.spec), model, runtimes), tuple(found)


def _where(request: DeployRequest) -> str:
    return "the --speculative-config given" if request.source == INLINE else request.source


def _verifier(config: Mapping[str, Any] | None) -> str | None:
    spec = config.get("speculators_config") if config is not None else None
    verifier = spec.get("verifier") if isinstance(spec, dict) else None
    name = verifier.get("name_or_path") if isinstance(verifier, dict) else None
    return name if isinstance(name, str) else None


def _verifier_exists(config: Mapping[str, Any] | None) -> bool:
    name = _verifier(config)
    return name is not None and (Path(name).exists() or Path(name).is_symlink())


def _verifier_findings(draft: DeployDraft, target_spec: str | None) -> list[Finding]:
    name = _verifier(draft.config)
    if name is None or target_spec is None or verifier_matches(name, target_spec):
        return []
    return [finding("DSP821", f"speculators_config.verifier.name_or_path is {name!r}, but the target given is "
                              f"{target_spec!r}: the draft was trained against another model's hidden states, and "
                              f"`vllm serve {draft.checkpoint}` serves {name!r}, not the target given.")]


def _published(version: str, o: sc.Outcome) -> DeployRuntime:
    error = o.error
    where = error.where if error is not None else (sc.Cite(sc.SPEC, o.version, "SpeculativeConfig.__post_init__"),)
    return DeployRuntime(
        runtime="vllm", version=version, method=o.method, method_from=o.method_from, architecture=o.architecture,
        model_class=o.model_class, num_speculative_tokens=o.num_speculative_tokens,
        num_speculative_tokens_from=o.num_speculative_tokens_from, draft_vocab_size=o.draft_vocab_size,
        error=error.text if error else None, error_code=error.code if error else None,
        notes=tuple(n.text for n in o.notes), note_codes=tuple(n.code for n in o.notes),
        source=_cites(where) + ("" if parse("vllm", o.version).line == parse("vllm", version).line
                                else f"; assumed for v{version}"))


def _cites(where: Iterable[sc.Cite]) -> str:
    """`file @ v0.27.0 L1, v0.28.0 L2; other @ ...`: each file once, its versions in order."""
    by_file: dict[str, list[str]] = {}
    for c in where:
        entry = f"v{c.version} {c.lines}"
        if entry not in by_file.setdefault(c.file, []):
            by_file[c.file].append(entry)
    return "; ".join(f"{file} @ {', '.join(entries)}" for file, entries in by_file.items())


def outcome_findings(outcomes: Sequence[tuple[str, sc.Outcome]], already: frozenset[str],
                     family: Family | None = None) -> list[Finding]:
    """One finding per code, naming the releases it applies to, the exact message, and the lines it was read from;
    its hint the draft family's own where the rule has one (Rule.family_fix)."""
    by_code: dict[FindingCode, dict[str, tuple[list[str], list[sc.Cite], bool]]] = {}
    for version, o in outcomes:
        problems = ([(o.error, True)] if o.error is not None else []) + [(n, False) for n in o.notes]
        for problem, raised in problems:
            texts = by_code.setdefault(problem.code, {})
            versions, cites, _ = texts.setdefault(problem.text, ([], [], raised))
            versions.append(runtime_label.selector("vllm", version))
            cites += problem.where
    found = []
    for code in sorted(by_code):
        if RULES[code].also_a_verdict and code in already:
            continue
        parts = [f"{'start-up fails on ' if raised else 'on '}{', '.join(versions)}: {text} ({_cites(cites)})"
                 for text, (versions, cites, raised) in by_code[code].items()]
        found.append(finding(code, "; ".join(parts), template=RULES[code].fix_for(family.value if family else None)))
    return found


def attach(report: CheckpointReport, deploy: Deploy, findings: Sequence[Finding]) -> CheckpointReport:
    return replace(report, deploy=deploy, findings=report.findings + tuple(findings))


# --- the run: which checkpoints the config goes with ---
@dataclass(frozen=True, slots=True)
class DeployPlan:
    """One run's speculative config, and the facts every checkpoint's evaluation shares."""

    request: DeployRequest
    target: sc.TargetView
    target_spec: str | None  # --target (or the settings file's `target`) as given
    versions: tuple[str, ...]  # the vLLM releases selected
    paired: str | None = None  # the one checkpoint given on the command line: it goes with the config

    def checkpoints(self, given: Sequence[str], *, hook: bool) -> list[str]:
        """The checkpoints to check: those given, plus the one the config names when it is not among them (hooks and
        several checkpoints); only the config's when none is given."""
        model = self.request.model
        if not given and not hook:
            if model is None:
                why = (f" ({self.request.problem.message})" if self.request.problem is not None
                       else " names no `model`")
                raise UsageError(f"no checkpoint given, and the speculative config{why}", code="DSP-E026",
                                 hint="name the checkpoint, or put its path in the config's \"model\"")
            return [model]
        if model is not None and (hook or len(given) > 1) and not any(same_checkpoint(model, g) for g in given):
            return [*given, model]
        return list(given)

    def pair(self, given: Sequence[str], *, hook: bool) -> DeployPlan:
        return replace(self, paired=given[0] if len(given) == 1 and not hook else None)

    def applies(self, spec: str) -> bool:
        model = self.request.model
        return model is None or spec == self.paired or same_checkpoint(model, spec)

    def request_for(self, spec: str) -> DeployRequest | None:
        """The speculative config as read, where it goes with `spec` (check's, fix's and verify's one rule)."""
        return self.request if self.applies(spec) else None

    def speculative_for(self, spec: str) -> Mapping[str, Any] | None:
        """The speculative config every analysis of `spec` is handed (check's, fix's plan and re-check, verify's),
        from which it derives the serving method (runtimes/serving_method.py); None where it does not go with
        `spec`, or is no JSON object."""
        request = self.request_for(spec)
        return request.spec if request is not None else None

    def bound(self, spec: str) -> BoundDeploy:
        return BoundDeploy(self, spec)

    def apply(self, report: CheckpointReport, spec: str, config: Mapping[str, Any] | None,
              family: Family | None) -> CheckpointReport:
        draft = DeployDraft(spec, config, family, frozenset(f.code for f in report.findings))
        deploy, found = assess(self.request, draft, versions=self.versions, target=self.target,
                               target_spec=self.target_spec)
        return attach(report, deploy, found)


@dataclass(frozen=True, slots=True)
class BoundDeploy:
    """The run's deploy with one checkpoint as given: what its analysis is handed (check's, verify's), and what its
    report gets after (the deploy record and the preflight's findings), each only where the config goes with it."""

    plan: DeployPlan
    spec: str

    @property
    def speculative(self) -> Mapping[str, Any] | None:
        return self.plan.speculative_for(self.spec)

    def publish(self, report: CheckpointReport, analysis: Analysis) -> CheckpointReport:
        if not self.plan.applies(self.spec):
            return report
        return self.plan.apply(report, self.spec, analysis.raw_config,
                               analysis.config.family if analysis.config else None)


def plan_deploy(text: str | None, *, target: TargetVocab | None, target_spec: str | None,
                runtimes: Iterable[tuple[str, str]], max_model_len: int | None = None) -> DeployPlan | None:
    """None without a speculative config; `runtimes` are (runtime, version) pairs, of which vLLM's are evaluated;
    `max_model_len` the served one (`vllm serve --max-model-len`), None for vLLM's default."""
    if text is None:
        return None
    versions = tuple(v for runtime, v in runtimes if runtime == "vllm" and vllm_release.rules_for(v) is not None)
    return DeployPlan(read_request(text), target_view(target, target_spec, max_model_len), target_spec, versions)
