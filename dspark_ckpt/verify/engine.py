"""`verify --engine installed`: run the installed vLLM's own loader (engine_vllm, in a subprocess) and compare what
it did with the contract table's verdict for that version; fall back to the modelled loader, saying so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import finding
from dspark_ckpt.model.report import CheckpointReport, Compatibility
from dspark_ckpt.runtimes.compatibility import evaluate_contract
from dspark_ckpt.runtimes.installed import installed_runtime
from dspark_ckpt.runtimes.records import DraftFacts, Verdict
from dspark_ckpt.runtimes.selectors import release
from dspark_ckpt.runtimes.table import contract_for

WORKER_FILE = Path(__file__).with_name("engine_vllm.py")
_RUN_WORKER = "import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')"
WORKER_TIMEOUT_S = 900.0
# What the installed vLLM's failure is reported as where the table cannot name it: the registry's answer for an
# architecture this release does not register, and the error of a failure no contract row predicts.
UNREGISTERED: Final[FindingCode] = "DSP309"
UNPREDICTED: Final[FindingCode] = "DSP607"


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

    @property
    def loads(self) -> bool:
        return self.registered and self.error is None

    @property
    def verbatim(self) -> str | None:
        if not self.registered:
            return f"{self.architecture} is not in this vLLM's _SPECULATIVE_DECODING_MODELS"
        if not self.error_type:
            return None
        return self.error_type if self.error == self.error_type else f"{self.error_type}: {self.error}"


@dataclass(frozen=True, slots=True)
class WorkerRun:
    ok: bool
    reason: str | None  # why the runtime could not be imported or set up
    version: str | None
    location: str | None
    observed: dict[str, Observed]
    adapter_errors: dict[str, str]  # case id -> why the adapter could not build the class


def _observed(result: Mapping[str, Any]) -> Observed:
    err = result.get("error") or {}
    text = err.get("message")
    return Observed(bool(result.get("registered")), result.get("architecture"),
                    f"{result['module']}.{result['class']}" if result.get("module") else None,
                    err.get("phase"), err.get("type"), (text or err.get("type")) if err else None,
                    dict(result.get("state") or {}))


def run_worker(cases: Sequence[Mapping[str, Any]], *, device: str, env: Mapping[str, str] | None = None,
               python: str | None = None, timeout: float = WORKER_TIMEOUT_S) -> WorkerRun:
    """One subprocess for all cases (vLLM imports once); its crash or hang is a reason, never a traceback here."""
    with tempfile.TemporaryDirectory(prefix="dspark-engine-") as tmp:
        request, out = Path(tmp) / "request.json", Path(tmp) / "result.json"
        request.write_text(json.dumps({"device": device, "cases": list(cases)}))
        full_env = {**os.environ, **(env or {})}
        if device == "cpu":
            full_env.setdefault("VLLM_TARGET_DEVICE", "cpu")
        try:
            # The worker file runs as a script: neither dspark_ckpt's package imports nor its folder on sys.path.
            done = subprocess.run([python or sys.executable, "-c", _RUN_WORKER, str(WORKER_FILE), str(request),
                                   str(out)], env=full_env,
                                  capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return WorkerRun(False, f"the vLLM worker ran past {timeout:.0f} s", None, None, {}, {})
        if not out.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit {done.returncode}"]
            return WorkerRun(False, f"the vLLM worker died: {tail[0]}", None, None, {}, {})
        doc = json.loads(out.read_text())
    results = doc.get("results") or []
    return WorkerRun(bool(doc.get("ok")), doc.get("reason"), doc.get("vllm_version"), doc.get("vllm_file"),
                     {r["id"]: _observed(r) for r in results if "adapter_error" not in r},
                     {r["id"]: f"{r['adapter_error']['type']}: {r['adapter_error']['message']}" for r in results
                      if "adapter_error" in r})


def predicted(facts: DraftFacts, version: str) -> Verdict | None:
    """The contract table's verdict for this vLLM version (assumed or not-registered rows included)."""
    contract = contract_for("vllm", version, facts.family)
    return evaluate_contract(contract, version, facts) if contract is not None else None


def at_load(facts: DraftFacts, version: str) -> Verdict | None:
    """The table's verdict for what the engine runs: `__init__` and `load_weights`, without the config-time
    validation of vllm/config/speculative.py (Qwen3-Omni, dspark_draft_topk), which runs before any model code."""
    contract = contract_for("vllm", version, facts.family)
    if contract is None:
        return None
    if contract.supported:  # an unregistered architecture is the registry's answer, which the engine does see
        contract = replace(contract, omni_config_check=False, omni_target_validated=False, topk_check=False)
    return evaluate_contract(contract, version, facts)


def disagreement(seen: Observed, said: Verdict | None, facts: DraftFacts) -> str | None:
    """Why the runtime's own load and the table differ (None when they agree on loads, the error and d2t)."""
    if said is None:
        return "vLLM loaded a family the table has no row for" if seen.registered else None
    if not seen.registered:
        return None if said.error is not None and said.error.code == UNREGISTERED else \
            f"{seen.architecture} is not registered in this vLLM, the table predicts it " + \
            ("loads" if said.loads else f"fails with {said.error.code}")  # type: ignore[union-attr]
    if seen.loads != said.loads:
        if seen.loads:
            return f"vLLM loads it, the table predicts {said.error.code}: {said.error.text}"  # type: ignore[union-attr]
        return f"vLLM raised {seen.verbatim}; the table predicts it loads"
    if said.error is not None:
        if not (seen.error or "").startswith(said.error.text):
            return f"vLLM raised {seen.verbatim}; the table predicts {said.error.code}: {said.error.text}"
        return None
    param = said.contract.d2t_param.holds(facts.draft_vocab_size, facts.target_vocab_size)
    if bool(seen.state.get("d2t_param")) != param:
        return (f"vLLM's __init__ {'created' if seen.state.get('d2t_param') else 'did not create'} "
                f"draft_id_to_target_id, the table says {'it does' if param else 'it does not'}")
    return None


def observed_code(seen: Observed, said: Verdict | None) -> FindingCode | None:
    """The finding code of the runtime's failure: the table's where they agree, DSP607 where it has no rule."""
    if seen.loads:
        return None
    if not seen.registered:
        return UNREGISTERED
    if said is not None and said.error is not None and (seen.error or "").startswith(said.error.text):
        return said.error.code
    return UNPREDICTED


@dataclass(frozen=True, slots=True)
class Availability:
    engine: Engine  # which loader answers
    version: str | None  # the installed vLLM release, when it is the one answering
    reason: str | None  # why the modelled loader answers instead (None when the installed one does)


def availability(requested: Engine) -> Availability:
    """Is there an installed vLLM to ask (from its metadata; importing it is the worker's job)?"""
    if requested is Engine.MODELLED:
        return Availability(Engine.MODELLED, None, None)
    found = installed_runtime("vllm")
    if found is None:
        return Availability(Engine.MODELLED, None, "vLLM is not installed in this environment")
    try:
        return Availability(Engine.INSTALLED, release(found.version), None)
    except Exception as exc:  # noqa: BLE001 - an unparseable version in someone's metadata
        return Availability(Engine.MODELLED, None, f"the installed vLLM has an unusable version ({exc})")


@dataclass(frozen=True, slots=True)
class Subject:
    """One checkpoint verify ran on: its report so far, its folder, and the facts check reasons from."""

    report: CheckpointReport
    folder: Path | None
    facts: DraftFacts | None
    parallel_drafting: bool = False


def _fallback(subject: Subject, reason: str) -> tuple[CheckpointReport, dict[str, Any]]:
    note = finding("DSP606", f"--engine installed: {reason}; the modelled loader answered every runtime.")
    doc = {"engine": Engine.MODELLED.value, "requested": Engine.INSTALLED.value, "fallback": reason}
    return replace(subject.report, findings=subject.report.findings + (note,)), doc


def _compat(seen: Observed, said: Verdict | None, version: str, code: FindingCode | None,
            modelled: Compatibility | None) -> Compatibility:
    silent = modelled.silent if modelled is not None and modelled.loads and seen.loads else ()
    codes = modelled.silent_codes if silent and modelled is not None else ()
    return Compatibility(runtime="vllm", version=version, loads=seen.loads, error=seen.error if seen.registered
                         else seen.verbatim, error_code=code, silent=silent, silent_codes=codes,
                         verbatim=seen.registered, source=f"installed vLLM {version}: {seen.model_class or '-'} "
                         "__init__ + load_weights (target sharing as the table models it)")


def _answered(subject: Subject, seen: Observed, version: str, location: str | None) -> tuple[CheckpointReport,
                                                                                              dict[str, Any]]:
    assert subject.facts is not None
    full, said = predicted(subject.facts, version), at_load(subject.facts, version)
    why = disagreement(seen, said, subject.facts)
    code = observed_code(seen, said)
    report = subject.report
    entries = list(report.compatibility)
    at = next((i for i, c in enumerate(entries) if (c.runtime, c.version) == ("vllm", version)), None)
    config_time = full.error if full is not None and full.error is not None and (
        said is None or said.error != full.error) else None
    row = _compat(seen, said, version, code, entries[at] if at is not None else None)
    if config_time is not None:
        pass  # vLLM refuses the speculative config before any model code runs: the table's row stands
    elif at is None:
        entries.append(row)
    else:
        entries[at] = row
    extra = []
    if code == UNPREDICTED:
        extra.append(finding(UNPREDICTED, f"the installed vLLM {version} raised {seen.verbatim}"))
    if why is not None:
        extra.append(finding("DSP605", f"the installed vLLM {version}'s own loader and the contract table "
                                       f"disagree: {why}."))
    doc = {"engine": Engine.INSTALLED.value, "runtime": "vllm", "version": version, "location": location,
           "model_class": seen.model_class, "registered": seen.registered, "loads": seen.loads,
           "phase": seen.phase, "exception": seen.verbatim, "state": dict(seen.state),
           "table": None if said is None else {"loads": said.loads, "error_code": said.error.code if said.error
                                                else None, "error": said.error.text if said.error else None},
           "config_time_error": None if config_time is None else {"code": config_time.code,
                                                                   "error": config_time.text},
           "disagreement": why}
    return replace(report, compatibility=tuple(entries), findings=report.findings + tuple(extra)), doc


def apply_engine(subjects: Sequence[Subject], requested: Engine, *, device: str,
                 env: Mapping[str, str] | None = None) -> list[tuple[CheckpointReport, dict[str, Any]]]:
    """Each report with the installed vLLM's own answer for its version in place of the modelled one."""
    if requested is Engine.MODELLED:
        return [(s.report, {"engine": Engine.MODELLED.value}) for s in subjects]
    avail = availability(requested)
    if avail.reason is not None:
        return [_fallback(s, avail.reason) for s in subjects]
    ready = [(i, s) for i, s in enumerate(subjects) if s.folder is not None and s.facts is not None]
    cases = [{"id": str(i), "folder": str(s.folder), "target_vocab": s.facts.target_vocab_size,  # type: ignore
              "parallel_drafting": s.parallel_drafting} for i, s in ready]
    run = run_worker(cases, device=device, env=env) if cases else None
    out: list[tuple[CheckpointReport, dict[str, Any]]] = []
    for i, subject in enumerate(subjects):
        if run is None or subject.facts is None or subject.folder is None:
            out.append(_fallback(subject, "the draft's family or target vocab is unknown, nothing to load"))
        elif not run.ok:
            out.append(_fallback(subject, f"vLLM {avail.version} cannot be imported here ({run.reason})"))
        elif str(i) in run.adapter_errors:
            out.append(_fallback(subject, f"the adapter does not support vLLM {run.version or avail.version} "
                                          f"for this draft ({run.adapter_errors[str(i)]})"))
        else:
            version = release(run.version) if run.version else avail.version or "0"
            out.append(_answered(subject, run.observed[str(i)], version, run.location))
    return out
