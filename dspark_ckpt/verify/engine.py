"""`verify --engine installed`: run the installed vLLM's (engine_vllm) or SGLang's (sglang_worker) own draft class,
layers and all, on every tensor of the checkpoint, in a subprocess, and compare what it did with check's verdict for
that version (the vocab contract and the generated release model's landing, DSP360-363); fall back to the modelled
loader, saying so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.findings import finding
from dspark_ckpt.model.report import CheckpointReport, Compatibility
from dspark_ckpt.runtimes import landing, parameter_pass
from dspark_ckpt.runtimes.installed import installed_runtime
from dspark_ckpt.runtimes.records import BuiltConfig, DraftFacts, Issue, Verdict
from dspark_ckpt.runtimes.release_model import (
    ArchitectureModel,
    built_model,
    modelled_release,
    normal,
    release_record,
)
from dspark_ckpt.runtimes.release_verdict import build_for, built_verdict
from dspark_ckpt.runtimes.selectors import selected

WORKER_FILE = Path(__file__).with_name("engine_vllm.py")
WORKER_FILES = {"vllm": WORKER_FILE, "sglang": Path(__file__).with_name("sglang_worker.py")}
LABEL = {"vllm": "vLLM", "sglang": "SGLang"}
_RUN_WORKER = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"
WORKER_TIMEOUT_S = 900.0
# What the installed vLLM's failure is reported as where the table cannot name it: the registry's answer for an
# architecture this release does not register, and the error of a failure no contract row predicts.
UNREGISTERED: Final[FindingCode] = "DSP309"
UNPREDICTED: Final[FindingCode] = "DSP607"
# The first-step codes the engine's step answers for (runtimes/vllm_first_step.py: the sharing, compute_logits or
# the DSpark Markov step, argmax, the embedding's lookup); check's other first-step findings (the aux hidden states'
# fc, DSP329; the target's hidden size, DSP359) concern the layers before the head, which the step does not run.
STEP_CODE: Final[FindingCode] = "DSP371"
STEP_CODES: Final[frozenset[FindingCode]] = frozenset({STEP_CODE})
# SGLang's (verify/sglang_step.py): check's first-step findings from the release's recorded step
# (runtimes/sglang_eval.py): DSpark's Markov step and DFlash2's selector, DSP340; EAGLE-3's crop, DSP342, its head
# and hot_token_id lookup, DSP324. Its step's failures are quoted inside check's words (E_DSPARK_LOOKUP, short_d2t).
SGLANG_STEP_CODES: Final[frozenset[FindingCode]] = frozenset({"DSP340", "DSP342", "DSP324"})
# The anchors in the order check reads them (runtimes/first_step.py first_failure, eagle3_failure): the capture's
# zeros; SGLang's first id without a markov_w1 row where the target can propose it (`outside`, else the last id
# with one, `inside`); the head's last id (`last`), whose next-step embedding alone (`stage` embed) is not a failure.
STEP_ANCHORS = ("capture", "outside", "inside", "last")


def step_codes(runtime: str) -> frozenset[FindingCode]:
    return STEP_CODES if runtime == "vllm" else SGLANG_STEP_CODES


class Engine(StrEnum):
    MODELLED = "modelled"  # the contract table run with torch (verify's own loader)
    INSTALLED = "installed"  # the installed runtime's model class, __init__ and load_weights


@dataclass(frozen=True, slots=True)
class Observed:
    """What the installed runtime's own code did with one checkpoint (vLLM's words, verbatim)."""

    registered: bool
    architecture: str | None
    model_class: str | None  # module.Class resolved through vLLM's registry
    phase: str | None  # init | load_weights, where it raised
    error_type: str | None
    error: str | None  # the exception message verbatim; a bare `assert` is its type name, as check quotes it
    state: Mapping[str, Any]  # d2t_param, d2t_loaded, d2t summary, has_own_lm_head, has_own_embed_tokens, ...
    unwritten: tuple[str, ...] = ()  # parameters no tensor wrote (every one of the class, vocabulary ones included)
    partly: tuple[str, ...] = ()  # parameters the tensors wrote only in part
    cut: tuple[str, ...] = ()  # checkpoint tensors loaded only in part (cut to fit), without an error
    where: str | None = None  # the class's file:line in the release
    runtime: str = "vllm"
    # the release's own first draft step after the load (engine_vllm.run_first_step): {family, capture, last}, or
    # {not_run: why}; None where the worker did not run one (an older worker's recording, SGLang)
    first_step: Mapping[str, Any] | None = None

    @property
    def loads(self) -> bool:
        return self.registered and self.error is None

    @property
    def stepped(self) -> bool:
        """Whether the release's own first draft step ran on the loaded draft."""
        return self.loads and self.first_step is not None and "not_run" not in self.first_step

    @property
    def step_failure(self) -> Mapping[str, Any] | None:
        """The first step's failure (the release's exception: raises, text, where), anchors in check's order; None
        where it ran or was not run."""
        step = self.first_step if self.stepped and self.first_step is not None else {}
        for anchor in STEP_ANCHORS:
            seen = step.get(anchor)
            if anchor == "inside" and step.get("outside") is not None:
                continue  # the first id without a row meets the lookup first (check reads `outside` there)
            if isinstance(seen, Mapping) and (anchor == "capture" or seen.get("stage") != "embed"):
                return seen
        return None

    @property
    def step_error(self) -> str | None:
        """The first step's failure in the release's words; None where it ran or was not run."""
        seen = self.step_failure
        return None if seen is None else f"{seen.get('raises')}: {seen.get('text')}"

    @property
    def step_code(self) -> FindingCode | None:
        """The code of the step's failure where check has no finding that says it: vLLM's DSP371; SGLang's the
        first-step code check gives that step (DSP340; EAGLE-3's crop DSP342, else DSP324)."""
        seen = self.step_failure
        if seen is None:
            return None
        if self.runtime == "vllm":
            return STEP_CODE
        return "DSP342" if seen.get("stage") == "crop" else "DSP324" if seen.get("stage") else "DSP340"

    @property
    def label(self) -> str:
        return LABEL.get(self.runtime, self.runtime)

    @property
    def verbatim(self) -> str | None:
        if not self.registered:
            return f"{self.architecture} is not in this vLLM's _SPECULATIVE_DECODING_MODELS" if self.runtime == \
                "vllm" else f"{self.architecture} is not a draft class of this {self.label}'s models"
        if not self.error_type:
            return None
        return self.error_type if self.error == self.error_type else f"{self.error_type}: {self.error}"


@dataclass(frozen=True, slots=True)
class WorkerRun:
    """What the engine worker returned: whether the runtime imported, its version, each case observed."""

    ok: bool
    reason: str | None  # why the runtime could not be imported or set up
    version: str | None
    location: str | None
    observed: dict[str, Observed]
    adapter_errors: dict[str, str]  # case id -> why the adapter could not build the class


def _observed(result: Mapping[str, Any], runtime: str) -> Observed:
    err = result.get("error") or {}
    text = err.get("message")
    return Observed(bool(result.get("registered")), result.get("architecture"),
                    f"{result['module']}.{result['class']}" if result.get("module") else None,
                    err.get("phase"), err.get("type"), (text or err.get("type")) if err else None,
                    dict(result.get("state") or {}), tuple(result.get("unwritten") or ()),
                    tuple(result.get("partly") or ()), tuple(result.get("cut") or ()), result.get("where"), runtime,
                    result.get("first_step"))


def _request(runtime: str, version: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    """What the runtime's worker needs beside the cases, and its environment. SGLang's: its draft classes (the
    registry of the generated model of that release: the EntryClass names tools/registry_data.py calls drafts), the
    inert modules its files import on CPU, its CPU code paths."""
    if runtime != "sglang":
        return {}, {}
    from dspark_ckpt.verify.sglang_worker import STUB, STUB_EVERYONE

    modelled = modelled_release("sglang", version) if version is not None else None
    record = release_record("sglang", modelled) if modelled is not None else None
    return {"mode": "engine", "registry": dict((record or {}).get("registry") or {}), "stub": list(STUB),
            "stub_everyone": dict(STUB_EVERYONE)}, {"SGLANG_USE_CPU_ENGINE": "1"}


def run_worker(cases: Sequence[Mapping[str, Any]], *, device: str, env: Mapping[str, str] | None = None,
               python: str | None = None, timeout: float = WORKER_TIMEOUT_S, runtime: str = "vllm",
               version: str | None = None) -> WorkerRun:
    """One subprocess for all cases (the runtime imports once); its crash or hang is a reason, never a traceback
    here. `version`: the installed release (SGLang's worker is told its draft classes from that release's data)."""
    doc = worker_document(cases, device=device, env=env, python=python, timeout=timeout, runtime=runtime,
                          version=version)
    return worker_run(doc, runtime)


def worker_document(cases: Sequence[Mapping[str, Any]], *, device: str, env: Mapping[str, str] | None = None,
                    python: str | None = None, timeout: float = WORKER_TIMEOUT_S, runtime: str = "vllm",
                    version: str | None = None) -> dict[str, Any]:
    """The worker's JSON document for these cases; a worker that hung or died is `{"ok": false, "reason": ...}`."""
    label = LABEL.get(runtime, runtime)
    extra, extra_env = _request(runtime, version)
    with tempfile.TemporaryDirectory(prefix="dspark-engine-") as tmp:
        request, out = Path(tmp) / "request.json", Path(tmp) / "result.json"
        request.write_text(json.dumps({"device": device, "cases": list(cases), **extra}))
        full_env = {**os.environ, **extra_env, **(env or {})}
        if device == "cpu" and runtime == "vllm":
            full_env.setdefault("VLLM_TARGET_DEVICE", "cpu")
        try:
            # The worker file runs as a script: neither dspark_ckpt's package imports nor its folder on sys.path.
            done = subprocess.run([python or sys.executable, "-c", _RUN_WORKER, str(WORKER_FILES[runtime]),
                                   str(request), str(out)], env=full_env,
                                  capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return {"ok": False, "reason": f"the {label} worker ran past {timeout:.0f} s"}
        if not out.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            return {"ok": False, "reason": f"the {label} worker died: {tail[0]}"}
        doc: dict[str, Any] = json.loads(out.read_text())
        return doc


def worker_run(doc: Mapping[str, Any], runtime: str) -> WorkerRun:
    """What the worker's document says: whether the runtime imported, its version and file, each case observed."""
    results = doc.get("results") or []
    return WorkerRun(bool(doc.get("ok")), doc.get("reason"), doc.get("vllm_version") or doc.get("version"),
                     doc.get("vllm_file") or doc.get("file"),
                     {r["id"]: _observed(r, runtime) for r in results if "adapter_error" not in r},
                     {r["id"]: f"{r['adapter_error']['type']}: {r['adapter_error']['message']}" for r in results
                      if "adapter_error" in r})


def predicted(facts: DraftFacts, version: str, runtime: str = "vllm") -> Verdict | None:
    """check's verdict for this release (assumed or not-registered rows included): the one release verdict."""
    return built_verdict(build_for(facts, runtime, version), facts)


def at_load(facts: DraftFacts, version: str) -> Verdict | None:
    """check's verdict for what the engine runs: `__init__` and `load_weights`, without the config-time
    validation of vllm/config/speculative.py (Qwen3-Omni, dspark_draft_topk), which runs before any model code (the
    one release verdict, runtimes/release_verdict.py, with config_time off)."""
    return built_verdict(build_for(facts, "vllm", version), facts, config_time=False)


def words_agree(seen: Observed, text: str) -> bool:
    """vLLM's exception says what check's error says: check quotes it up to where it varies ("are:", the available
    parameters), or quotes the part of it that names the tensor (the landing's errors add the shapes around it)."""
    message = landing.sorted_sets(seen.error or "")
    words = message.split(" The available", 1)[0]
    return message.startswith(text) or (bool(words) and words in text)


def judged_parameter(model: ArchitectureModel, parameter: str, family: Family | None) -> bool:
    """A parameter the one pass's record speaks about when unwritten (parameter_pass.unfilled_judged; not one no
    name can fill, not a vocabulary parameter the target's may replace after load_weights)."""
    return normal(parameter) in model.parameters and normal(parameter) not in model.unfilled and \
        parameter_pass.unfilled_judged(model, parameter, family)


def judged_tensor(model: ArchitectureModel, name: str, family: Family | None) -> bool:
    rule = model.tensors.get(normal(name))
    return rule is not None and rule.parameter is not None and \
        parameter_pass.judgement(model, rule.parameter, family).shape


@dataclass(frozen=True, slots=True)
class Landed:
    """What check's generated release model says of every tensor (runtimes/landing.py), for the engine to compare."""

    model: ArchitectureModel
    found: tuple[landing.Landing, ...]
    family: Family | None = None  # whose vocab contract judges the vocabulary (parameter_pass.judgement)

    @property
    def unfilled(self) -> set[str]:
        return {p.parameter for p in self.found if p.kind == "unfilled" and p.parameter is not None}

    @property
    def cut(self) -> set[str]:
        return {p.tensor for p in self.found if p.kind in landing.SILENT_SHAPES and p.tensor is not None}


def observed_unwritten(seen: Observed, said: Landed) -> set[str]:
    return {p for p in seen.unwritten + seen.partly if judged_parameter(said.model, p, said.family)}


def observed_cut(seen: Observed, said: Landed) -> set[str]:
    return {n for n in seen.cut if judged_tensor(said.model, n, said.family)}


def disagreement(seen: Observed, said: Verdict | None, facts: DraftFacts | None,
                 landed_as: Landed | None = None) -> str | None:
    """Why the runtime's own load and check's verdict differ (None when they agree): the outcome, the error's words,
    the d2t decision (a vocab family), the backbone parameters no tensor wrote and the tensors cut to fit (where
    check has the release's generated model of the class: `landed_as`)."""
    if said is not None and said.error is not None and said.error.code == "DSP368":
        said = None  # check's row says it could not judge this release (check/no_verdict.py): no prediction
    if said is None:
        return f"{seen.label} loaded a family the table has no row for" if seen.registered and facts is not None \
            else None
    if not seen.registered:
        return None if said.error is not None and said.error.code == UNREGISTERED else \
            f"{seen.architecture} is not registered in this {seen.label}, check predicts it " + \
            ("loads" if said.loads else f"fails with {said.error.code}")  # type: ignore[union-attr]
    if seen.loads != said.loads:
        if seen.loads and said.error is not None:
            return f"{seen.label} loads it, check predicts {said.error.code}: {said.error.text}"
        return f"{seen.label} raised {seen.verbatim}; check predicts it loads"
    if said.error is not None:
        if not words_agree(seen, said.error.text):
            return f"{seen.label} raised {seen.verbatim}; check predicts {said.error.code}: {said.error.text}"
        return None
    if facts is not None and said.contract.family is not None and seen.runtime == "vllm":
        param = said.contract.d2t_param.holds(facts.draft_vocab_size, facts.target_vocab_size)
        if bool(seen.state.get("d2t_param")) != param:
            return (f"vLLM's __init__ {'created' if seen.state.get('d2t_param') else 'did not create'} "
                    f"draft_id_to_target_id, check says {'it does' if param else 'it does not'}")
    if landed_as is not None:
        unwritten, unfilled = observed_unwritten(seen, landed_as), landed_as.unfilled
        if unwritten != unfilled:
            return (f"{seen.label}'s load_weights left {_listed(unwritten)} unwritten, check predicts "
                    f"{_listed(unfilled)} (DSP363)")
        cut, said_cut = observed_cut(seen, landed_as), landed_as.cut
        if cut != said_cut:
            return f"{seen.label} cut {_listed(cut)} to fit, check predicts {_listed(said_cut)} (DSP362)"
    return None


def _listed(names: set[str]) -> str:
    shown = sorted(names)
    return "none" if not shown else ", ".join(shown[:6]) + (f" and {len(shown) - 6} more" if len(shown) > 6 else "")


def observed_code(seen: Observed, said: Verdict | None) -> FindingCode | None:
    """The finding code of the runtime's failure: check's where they agree, DSP607 where it has no rule."""
    if seen.loads:
        return None
    if not seen.registered:
        return UNREGISTERED
    if said is not None and said.error is not None and words_agree(seen, said.error.text):
        return said.error.code
    return UNPREDICTED


def landing_of(built: BuiltConfig | None, version: str, tensors: Mapping[str, tuple[int, ...]], *,
               target_hidden: int | None, target_vocab: int | None, runtime: str = "vllm") -> Landed | None:
    """check's landing of these tensors in the class this release builds (None where no generated model of the
    class exists: then only the outcome and the words are compared)."""
    if built is None or built.hf is None or built.architecture is None or built.error is not None:
        return None
    model = built_model(runtime, version, built.architecture)
    if model is None:
        return None
    return Landed(model, landing.land(model, built.hf, tensors, target_hidden=target_hidden,
                                      target_vocab=target_vocab, config_class=built.config_class,
                                      family=built.family, dropped=landing.dropped_unshipped(model, version)),
                  built.family)


# SGLang's phases the engine does not run: start-up (server args, the speculative worker's checks), the worker's
# attachment of the target's head and embedding. check's error there stands. (Its first draft step, which raises
# no error of the load, runs where verify/sglang_step.py knows the class: Observed.first_step.)
LOAD_CODES = landing.CODES | {"DSP333"}


def expected(subject: Subject, runtime: str, version: str) -> tuple[Verdict | None, Issue | None]:
    """check's verdict for what the engine runs, and the error of a phase it does not run (check's row stands
    there): check's own verdict for this release (vocab contract and landing), except where vLLM's contract refuses
    the draft in vllm/config/speculative.py (Qwen3-Omni, dspark_draft_topk), before any model code (then the
    contract without those checks, with the landing), or where SGLang's fails outside __init__ and load_weights."""
    facts, full = subject.facts, subject.verdicts.get(runtime)
    if runtime != "vllm":
        if full is not None and full.error is not None and full.error.code not in LOAD_CODES:
            return full, full.error
        return full, None
    said = at_load(facts, version) if facts is not None else None
    table = predicted(facts, version) if facts is not None else None
    config_time = table.error if table is not None and table.error is not None and (
        said is None or said.error != table.error) else None
    if config_time is None:
        return (full if full is not None else said), None
    return said, config_time


@dataclass(frozen=True, slots=True)
class Availability:
    """Which loader answers verify --engine: an installed runtime's own, or the modelled one and why."""

    engine: Engine  # which loader answers
    runtimes: tuple[tuple[str, str], ...]  # (runtime, release) of each installed one that will be asked
    reason: str | None  # why the modelled loader answers instead (None when an installed one does)

    @property
    def version(self) -> str | None:
        """The installed vLLM's release (else the first installed runtime's)."""
        return dict(self.runtimes).get("vllm") or next((v for _, v in self.runtimes), None)


def availability(requested: Engine) -> Availability:
    """Which installed runtimes to ask (vLLM and SGLang, from their metadata; importing them is the workers' job)."""
    if requested is Engine.MODELLED:
        return Availability(Engine.MODELLED, (), None)
    found: list[tuple[str, str]] = []
    unusable: list[str] = []
    for runtime in ("vllm", "sglang"):
        installed = installed_runtime(runtime)
        if installed is None:
            continue
        try:
            found.append((runtime, selected(runtime, installed.version).name))
        except Exception as exc:  # noqa: BLE001 - an unparseable version in someone's metadata
            unusable.append(f"the installed {LABEL[runtime]} has an unusable version ({exc})")
    if found:
        return Availability(Engine.INSTALLED, tuple(found), None)
    return Availability(Engine.MODELLED, (), "; ".join(unusable) or "neither vLLM nor SGLang is installed in this "
                                                                   "environment")


@dataclass(frozen=True, slots=True)
class Subject:
    """One checkpoint verify ran on: its report so far, its folder, the facts check reasons from, and what check
    made of it for each installed release (the config that release builds, check's verdict: by runtime), every
    tensor's shape and the target's sizes."""

    report: CheckpointReport
    folder: Path | None
    facts: DraftFacts | None
    parallel_drafting: bool = False
    builds: Mapping[str, BuiltConfig] = field(default_factory=dict)
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    tensors: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    target_vocab: int | None = None
    target_hidden: int | None = None
    # The deploy's --speculative-config where it goes with this checkpoint: vLLM's worker resolves the draft from
    # config.json with the release's own SpeculativeConfig (release_worker.Release.served), in a folder named as
    # the draft vLLM reads (`served_as`: its method detection reads the path)
    served: Mapping[str, Any] | None = None
    served_as: str | None = None

    @property
    def vocab(self) -> int | None:
        return self.facts.target_vocab_size if self.facts is not None else self.target_vocab

    def ready(self, runtime: str) -> bool:
        return self.folder is not None and self.vocab is not None and (
            self.facts is not None or runtime in self.verdicts)

    def case(self, case_id: str, runtime: str = "vllm") -> dict[str, Any]:
        """The worker's request for this checkpoint: the config the release builds from config.json (check's
        build of it, as the runtime's hf_config is), every tensor's shape, the target's vocab and hidden size."""
        out: dict[str, Any] = {"id": case_id, "folder": str(self.folder), "target_vocab": self.vocab,
                               "parallel_drafting": self.parallel_drafting,
                               "tensors": {n: list(s) for n, s in self.tensors.items()} or None,
                               "target_hidden": self.target_hidden}
        built = self.builds.get(runtime)
        if built is not None and built.hf is not None and built.architecture is not None:
            out.update(architecture=built.architecture, config=dict(built.hf),
                       bare=built.config_class in landing.BARE_CONFIGS)
            if built.parallel_drafting is not None:
                out["parallel_drafting"] = built.parallel_drafting
        if self.served is not None and runtime == "vllm":  # the path comes from served_as; `model` is not passed
            out.update(served={k: v for k, v in self.served.items() if k != "model"}, served_as=self.served_as)
        return out


def _note(report: CheckpointReport, reason: str, every: bool = True) -> CheckpointReport:
    what = "the modelled loader answered every runtime" if every else "the modelled loader answered its rows"
    return replace(report, findings=report.findings + (finding("DSP606", f"--engine installed: {reason}; {what}."),))


def _fallback(subject: Subject, reason: str) -> tuple[CheckpointReport, dict[str, Any]]:
    doc = {"engine": Engine.MODELLED.value, "requested": Engine.INSTALLED.value, "fallback": reason}
    return _note(subject.report, reason), doc


def observed_silent(seen: Observed, landed_as: Landed | None) -> list[Issue]:
    """The landing problems the runtime's own load showed without a word: tensors cut to fit, parameters left
    unwritten."""
    if landed_as is None or not seen.loads:
        return []
    out = []
    if cut := observed_cut(seen, landed_as):
        out.append(Issue(landing.CUT, f"{seen.label}'s load_weights loaded only part of {_listed(cut)}, without a "
                                      "word", verbatim=False))
    if unwritten := observed_unwritten(seen, landed_as):
        cls = (seen.model_class or "?").rsplit(".", 1)[-1]
        out.append(Issue(landing.UNFILLED, f"{len(unwritten)} parameter{'s' if len(unwritten) != 1 else ''} of its "
                                           f"{cls} no tensor wrote keep their initial values: {_listed(unwritten)}",
                         verbatim=False))
    return out


@dataclass(frozen=True, slots=True)
class StepSaid:
    """check's first-step finding for a release: its words, code and whether they are the release's own."""

    text: str | None = None
    code: FindingCode | None = None
    verbatim: bool = True


def step_said(subject: Subject, runtime: str, modelled: Compatibility | None) -> StepSaid:
    """What check says of the first draft step: its own verdict for the release (the analysis's), else the report's
    row (verify's modelled loader)."""
    full = subject.verdicts.get(runtime)
    if full is not None:
        step = full.first_step if full.loads else None
        return StepSaid(step.text, step.code, step.verbatim) if step is not None else StepSaid()
    if modelled is not None and modelled.loads:
        return StepSaid(modelled.first_step_error, modelled.first_step_error_code, modelled.first_step_verbatim)
    return StepSaid()


def _first_step(seen: Observed, said: StepSaid) -> StepSaid:
    """The row's first-step failure: where the release's own step ran, what it raised (DSP371, in its words), or
    nothing, in place of check's step findings it answers for (STEP_CODES); check's others stand, and so does every
    one of check's where the step did not run."""
    if not seen.loads:
        return StepSaid()
    if not seen.stepped:
        return said
    if (observed := seen.step_error) is not None:
        if seen.runtime != "vllm" and step_agrees(seen, said):
            return said  # check's finding quotes the release's words (with what they mean)
        return StepSaid(observed, seen.step_code, True)
    return said if said.code not in step_codes(seen.runtime) else StepSaid()


def step_agrees(seen: Observed, said: StepSaid) -> bool:
    """Whether check's first-step finding says what the release's own step did: vLLM's DSP371 quotes it whole;
    SGLang's findings quote its exception's text (runtimes/sglang_eval.py step_issue, short_d2t, selector_index)."""
    predicted_text = said.text if said.code in step_codes(seen.runtime) else None
    failure = seen.step_failure
    if failure is None or predicted_text is None:
        return failure is None and predicted_text is None
    if seen.runtime == "vllm":
        return seen.step_error == predicted_text
    return str(failure.get("text")) in predicted_text


def step_disagreement(seen: Observed, said: StepSaid) -> str | None:
    """Why the release's own first draft step and check's prediction of it differ (None when they agree)."""
    if not seen.stepped or step_agrees(seen, said):
        return None
    observed = seen.step_error
    predicted_text = said.text if said.code in step_codes(seen.runtime) else None
    predicts = "it runs" if predicted_text is None else f"{said.code}: {predicted_text}"
    return (f"{seen.label}'s first draft step raised {observed}; check predicts {predicts}" if observed is not None
            else f"{seen.label}'s first draft step ran; check predicts {predicts}")


def _compat(seen: Observed, version: str, code: FindingCode | None, modelled: Compatibility | None,
            landed_as: Landed | None, said: StepSaid | None = None) -> Compatibility:
    """The runtime's row as its own load answered: its outcome and words; where it loads, the modelled row's
    silent issues about the vocabulary (target sharing, the mapping: after load_weights), then the landing problems
    it showed (in place of the modelled ones), and its own first draft step where it ran one."""
    keep = [(t, c) for t, c in zip(modelled.silent, modelled.silent_codes, strict=True) if c not in landing.CODES] \
        if modelled is not None and modelled.loads and seen.loads else []
    keep += [(i.text, i.code) for i in observed_silent(seen, landed_as)]
    after = ("its target sharing and first draft step run too" if seen.stepped else
             "target sharing as the table models it") if seen.runtime == "vllm" else \
        ("start-up as the table models it; its own first draft step runs too" if seen.stepped else
         "start-up, the worker's target sharing and the first step as the table models them")
    row_step = StepSaid(modelled.first_step_error, modelled.first_step_error_code, modelled.first_step_verbatim) \
        if modelled is not None and modelled.loads else StepSaid()
    # where the release ran no step, the row keeps what it said (verify's modelled loader: SGLang's step included)
    step = _first_step(seen, said if said is not None and seen.stepped else row_step)
    # where the release ran no step and nothing failed, the modelled row's "not modelled" (and why) stands
    unmodelled = modelled if modelled is not None and modelled.loads and not seen.stepped and step.code is None \
        else None
    return Compatibility(runtime=seen.runtime, version=version, loads=seen.loads,
                         error=seen.error if seen.registered else seen.verbatim, error_code=code,
                         silent=tuple(t for t, _ in keep), silent_codes=tuple(c for _, c in keep),
                         verbatim=seen.registered,
                         source=f"installed {seen.label} {version}: {seen.model_class or '-'} __init__ + load_weights "
                         f"on every tensor ({after})",
                         first_step_error=step.text, first_step_error_code=step.code,
                         first_step_verbatim=step.verbatim,
                         first_step_not_modelled_why=unmodelled.first_step_not_modelled_why if unmodelled else None,
                         first_step_not_modelled=unmodelled.first_step_not_modelled if unmodelled else None)


def _answered(subject: Subject, seen: Observed, version: str, location: str | None) -> tuple[CheckpointReport,
                                                                                              dict[str, Any]]:
    runtime = seen.runtime
    said, config_time = expected(subject, runtime, version)
    landed_as = landing_of(subject.builds.get(runtime), version, subject.tensors, target_hidden=subject.target_hidden,
                           target_vocab=subject.vocab, runtime=runtime) if said is None or said.error is None \
        else None
    why = disagreement(seen, said, subject.facts, landed_as) if config_time is None or runtime == "vllm" else None
    code = observed_code(seen, said)
    report = subject.report
    entries = list(report.compatibility)
    at = next((i for i, c in enumerate(entries) if (c.runtime, c.version) == (runtime, version)), None)
    modelled = entries[at] if at is not None else None
    check_step = step_said(subject, runtime, modelled)
    row = _compat(seen, version, code, modelled, landed_as, check_step)
    if config_time is None and (step_why := step_disagreement(seen, check_step)) is not None:
        why = step_why if why is None else f"{why}; {step_why}"
    if config_time is not None:
        pass  # the runtime refuses the draft in a phase the engine does not run: check's row stands
    elif at is None:
        entries.append(row)
    else:
        entries[at] = row
    extra = []
    if code == UNPREDICTED and config_time is None:
        extra.append(finding(UNPREDICTED, f"the installed {seen.label} {version} raised {seen.verbatim}"))
    elif config_time is None:  # what its own load showed and the report does not say yet (a draft no family
        present = {f.code for f in report.findings}  # describes: verify's torch run skipped it)
        shown = [(code, f"installed {seen.label} {version}: {row.error}")] if code is not None and seen.registered \
            else []
        shown += list(zip(row.silent_codes, (f"installed {seen.label} {version}: {t}" for t in row.silent),
                          strict=True))
        if row.first_step_error_code is not None:
            step = f"installed {seen.label} {version}: loads, then fails at the first draft step: " \
                f"{row.first_step_error}"
            shown.append((row.first_step_error_code, step))
        extra += [finding(c, text) for c, text in shown if c is not None and c not in present]
    if why is not None:
        extra.append(finding("DSP605", f"the installed {seen.label} {version}'s own loader and check disagree: "
                                       f"{why}."))
    doc = {"engine": Engine.INSTALLED.value, "runtime": runtime, "version": version, "location": location,
           "architecture": seen.architecture, "model_class": seen.model_class, "where": seen.where,
           "registered": seen.registered, "loads": seen.loads, "phase": seen.phase, "exception": seen.verbatim,
           "error_type": seen.error_type, "error": seen.error, "state": dict(seen.state),
           "unwritten": sorted(seen.unwritten), "partly": sorted(seen.partly), "cut": sorted(seen.cut),
           "landing": None if landed_as is None else {
               "unwritten": sorted(observed_unwritten(seen, landed_as)), "cut": sorted(observed_cut(seen, landed_as)),
               "check_unfilled": sorted(landed_as.unfilled), "check_cut": sorted(landed_as.cut)},
           "table": None if said is None else {"loads": said.loads, "error_code": said.error.code if said.error
                                                else None, "error": said.error.text if said.error else None},
           "config_time_error": None if config_time is None else {"code": config_time.code,
                                                                   "error": config_time.text},
           "first_step": None if seen.first_step is None or not seen.loads else dict(seen.first_step),
           "disagreement": why}
    return replace(report, compatibility=tuple(entries), findings=report.findings + tuple(extra)), doc


def _one_runtime(subjects: Sequence[Subject], runtime: str, version: str, *, device: str,
                 env: Mapping[str, str] | None) -> list[tuple[Observed | None, str | None, str | None, str]]:
    """Per subject: the runtime's observation (or why there is none), its location, the release it reported."""
    label = LABEL[runtime]
    if runtime == "sglang" and modelled_release("sglang", version) is None:  # its draft classes: from that data
        why = f"no generated model of SGLang {version} (runtimes/release_data) lists its draft classes"
        return [(None, why, None, version) for _ in subjects]
    ready = {i for i, s in enumerate(subjects) if s.ready(runtime)}
    cases = [subjects[i].case(str(i), runtime) for i in sorted(ready)]
    run = run_worker(cases, device=device, env=env, runtime=runtime, version=version) if cases else None
    out: list[tuple[Observed | None, str | None, str | None, str]] = []
    for i in range(len(subjects)):
        if run is None or i not in ready:
            out.append((None, "the draft's class or target vocab is unknown, nothing to load", None, version))
        elif not run.ok:
            out.append((None, f"{label} {version} cannot be imported here ({run.reason})", None, version))
        elif str(i) in run.adapter_errors:
            why = f"the adapter does not support {label} {run.version or version} for this draft " \
                f"({run.adapter_errors[str(i)]})"
            out.append((None, why, None, version))
        else:
            out.append((run.observed[str(i)], None, run.location,
                        selected(runtime, run.version).name if run.version else version))
    return out


def apply_engine(subjects: Sequence[Subject], requested: Engine, *, device: str,
                 env: Mapping[str, str] | None = None) -> list[tuple[CheckpointReport, dict[str, Any]]]:
    """Each report with each installed runtime's own answer for its version in place of the modelled one. The
    engine doc is that runtime's; with both vLLM and SGLang installed, {"engine": "installed", "runtimes": [...]}."""
    if requested is Engine.MODELLED:
        return [(s.report, {"engine": Engine.MODELLED.value}) for s in subjects]
    avail = availability(requested)
    if avail.reason is not None:
        return [_fallback(s, avail.reason) for s in subjects]
    answers = {runtime: _one_runtime(subjects, runtime, version, device=device, env=env)
               for runtime, version in avail.runtimes}
    out: list[tuple[CheckpointReport, dict[str, Any]]] = []
    for i, subject in enumerate(subjects):
        docs: list[dict[str, Any]] = []
        reasons: list[str] = []
        for runtime in answers:
            seen, why_not, location, version = answers[runtime][i]
            if seen is None:
                reasons.append(why_not or "?")
                continue
            report, doc = _answered(subject, seen, version, location)
            subject = replace(subject, report=report)
            docs.append(doc)
        if not docs:
            out.append(_fallback(subject, "; ".join(reasons)))
            continue
        report = subject.report
        for reason in reasons:
            report = _note(report, reason, every=False)
        out.append((report, docs[0] if len(docs) == 1 and not reasons else {
            "engine": Engine.INSTALLED.value, "runtimes": docs, **({"fallback": "; ".join(reasons)} if reasons
                                                                    else {})}))
    return out
