"""One verify run: stream the vocab tensors, load them per runtime, check the mappings, probe the padded rows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from dspark_ckpt.check.analysis import Analysis, compatibility
from dspark_ckpt.check.verdict_findings import verdict_findings
from dspark_ckpt.model.findings import Finding, Severity, finding, rule
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.model.rule_catalog import Category
from dspark_ckpt.output.verify_records import LandingRun, MappingCheck, TensorRead, VerifyResult
from dspark_ckpt.runtimes import drafting_token, landing
from dspark_ckpt.runtimes.generated_verdict import generated_model
from dspark_ckpt.runtimes.records import Verdict
from dspark_ckpt.runtimes.release_verdict import landed
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.verify.agreement import disagreements
from dspark_ckpt.verify.findings import verify_findings
from dspark_ckpt.verify.landing_load import against_check, load_landing
from dspark_ckpt.verify.load_state import LoadState
from dspark_ckpt.verify.mapping_check import check_mapping
from dspark_ckpt.verify.memory import check_budget
from dspark_ckpt.verify.probe_setup import run_probe
from dspark_ckpt.verify.runtime_load import needs_data, run_runtime
from dspark_ckpt.verify.runtime_model import Dims, ParamStore, dims_for
from dspark_ckpt.verify.torch_loader import NORM_NAMES, Stopwatch, VerifyOptions, load_order, read_tensors
from dspark_ckpt.verify.verdicts import state_for, verdict_for


def _why_not(analysis: Analysis) -> str | None:
    cfg = analysis.config
    if analysis.target is None:
        return "the target vocab T is unknown: pass --target DIR or --target-vocab-size N"
    if cfg is None or cfg.family is None:
        return "the draft family is unknown (config.json missing, unreadable or an unknown architecture)"
    if cfg.vocab_size is None or cfg.draft_vocab_size is None or cfg.hidden_size is None:
        return "config.json lacks a usable vocab_size, draft_vocab_size or hidden_size"
    broken = [f.code for f in analysis.findings if f.severity is Severity.ERROR and rule(f.code).category
              in (Category.HEADER, Category.LAYOUT)]
    if broken:
        return f"the safetensors files are not loadable ({', '.join(sorted(set(broken)))}); fix them first"
    return None


def _t2d(tensors: dict[str, torch.Tensor]) -> torch.Tensor | None:
    named = sorted(n for n in tensors if "t2d" in n)
    return tensors[named[0]] if named else None


def _mappings(outcomes: list[LoadState], dims: Dims, t2d: torch.Tensor | None) -> dict[int, MappingCheck]:
    """One check per distinct mapping (no parameter / all-zero parameter / a loaded d2t), shared by runtimes."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, out in enumerate(outcomes):
        if out.error is None:
            key = (out.d2t is not None, out.d2t_loaded, out.head_rows, id(out.d2t) if out.d2t_loaded else None)
            groups.setdefault(key, []).append(i)
    found: dict[int, MappingCheck] = {}
    pruned = dims.draft_vocab < dims.target_vocab
    for members in groups.values():
        first = outcomes[members[0]]
        names = tuple(str(RuntimeVersion(outcomes[i].contract.runtime, outcomes[i].version)) for i in members)
        width = first.d2t.numel() if first.d2t is not None else first.head_rows
        check = check_mapping(first.d2t, width=width, target_vocab=dims.target_vocab, pruned=pruned,
                              loaded=first.d2t_loaded, t2d=t2d, runtimes=names)
        found.update({i: check for i in members})
    return found


def _skipped(analysis: Analysis, result: VerifyResult) -> tuple[CheckpointReport, VerifyResult]:
    """No torch run: the structural findings stand, and no runtime verdict is claimed."""
    base = replace(analysis.report, compatibility=(), findings=analysis.structural_findings)
    return base, result


def run_verify(analysis: Analysis, folder: Path, *, options: VerifyOptions, device: torch.device, label: str,
               torch_version: str) -> tuple[CheckpointReport, VerifyResult]:
    reason = _why_not(analysis)
    if reason is not None:
        return _skipped(analysis, VerifyResult(device=label, torch_version=torch_version, skipped=reason))
    cfg, target, loaded, runtimes = analysis.config, analysis.target, analysis.loaded, analysis.runtimes
    assert cfg is not None and cfg.family is not None and target is not None
    dims = dims_for(cfg, target)
    watch = Stopwatch(device)
    order = load_order(loaded)
    wanted = [n for n in order if needs_data(n) or n in NORM_NAMES]
    said = {(v.runtime, v.version): v for v in analysis.verdicts}  # each release as check judged what it builds
    contracts = [said[(rv.runtime, rv.version)].contract for rv in runtimes if (rv.runtime, rv.version) in said]
    check_budget(contracts, dims, sum(loaded.tensors[n].nbytes for n in wanted), device, analysis.report.source)
    progress = options.progress
    progress.phase(f"reading {len(wanted)} vocab tensors")
    try:
        with watch.phase("load"):
            tensors = read_tensors(folder, loaded, wanted, device)
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own error types; report, don't crash
        problem = finding("DSP018", f"verify could not read the vocab tensors: {exc}")
        return _skipped(replace(analysis, structural_findings=analysis.structural_findings + (problem,)),
            VerifyResult(device=label, torch_version=torch_version, skipped=f"tensor data unreadable: {exc}"))
    store = ParamStore(device)
    outcomes: list[LoadState] = []
    progress.phase("loading as each runtime would", total=len(runtimes))
    with watch.phase("predicate"):
        for rv in runtimes:
            progress.advance()
            built = next((b for b in analysis.builds if (b.runtime, b.version) == (rv.runtime, rv.version)), None)
            verdict = said.get((rv.runtime, rv.version))
            if verdict is None:
                continue
            # the release fails on the config it builds, or its proposer on the config's mask token (DSP373), at
            # start-up: no torch load
            if built is not None and built.error is not None or \
                    verdict.error is not None and verdict.error.code == drafting_token.CODE:
                outcomes.append(LoadState(verdict.contract, rv.version, error=verdict.error))
                continue
            forced = built.parallel_drafting if built is not None else None
            runtime_cfg = cfg if forced is None else replace(cfg, parallel_drafting=forced)
            outcomes.append(run_runtime(verdict.contract, rv.version, runtime_cfg, dims, order, tensors, store,
                                        facts=analysis.facts))
    progress.phase("checking the mappings")
    with watch.phase("mapping"):
        mappings = _mappings(outcomes, dims, _t2d(tensors))
    with watch.phase("probe"):
        probe = run_probe(outcomes, mappings, tensors, analysis.raw_config or {}, cfg.family, dims, options)
    observed = [verdict_for(out, mappings.get(i), (dims.draft_vocab, dims.vocab, dims.target_vocab),
                            analysis.facts) for i, out in enumerate(outcomes)]
    disagree = disagreements(observed, analysis.verdicts)  # what torch loaded: the vocab tensors
    with watch.phase("predicate"):  # the rest of the tensors, loaded as each release's generated model says
        landings, landing_disagree = every_tensor(analysis, order)
    disagree += landing_disagree
    verdicts = [_stepped(_every_tensor(v, analysis), said) for v in observed]
    watch.ms["total"] = sum(watch.ms.values())
    result = VerifyResult(
        device=label, torch_version=torch_version, timings_ms=dict(watch.ms),
        tensors_read=tuple(TensorRead(n, loaded.tensors[n].dtype, loaded.tensors[n].shape, loaded.tensors[n].nbytes)
                           for n in wanted),
        runtimes=tuple(state_for(o) for o in outcomes), mappings=tuple(dict.fromkeys(mappings.values())),
        probe=probe, check_disagreements=disagree, landing=landings)
    return _report(analysis, verdicts, result, dims), result


def every_tensor(analysis: Analysis, order: list[str]) -> tuple[tuple[LandingRun, ...], tuple[str, ...]]:
    """Every tensor loaded with torch into each release's generated model of the class it builds
    (verify/landing_load.py), and where that loader and check's landing of the same record differ."""
    facts = analysis.facts
    shapes = {n: tuple(t.shape) for n, t in analysis.loaded.tensors.items()}
    hidden = facts.target_hidden_size if facts is not None else None
    vocab = facts.target_vocab_size if facts is not None else None
    runs: list[LandingRun] = []
    why: list[str] = []
    for built in analysis.builds:
        found = generated_model(built)
        if found is None or built.hf is None:
            continue
        model = found[1]
        run = load_landing(model, built.runtime, built.version, built.hf, shapes, order, target_hidden=hidden,
                           target_vocab=vocab, config_class=built.config_class,
                           family=built.family)
        said = landing.land(model, built.hf, shapes, target_hidden=hidden, target_vocab=vocab,
                            config_class=built.config_class, family=built.family)
        runs.append(run)
        if (differs := against_check(run, said)) is not None:
            why.append(f"{RuntimeVersion(built.runtime, built.version)}: every tensor against {model.name}'s "
                       f"generated model: {differs}")
    return tuple(runs), tuple(why)


def _every_tensor(verdict: Verdict, analysis: Analysis) -> Verdict:
    """The rest of the tensors, from the release's generated record as check judges them (runtimes/landing.py):
    torch loaded only the vocab tensors, so a verdict that loads still fails where a backbone tensor does not land."""
    built = next((b for b in analysis.builds if (b.runtime, b.version) == (verdict.runtime, verdict.version)), None)
    if not verdict.loads or built is None or built.hf is None or built.architecture is None or analysis.facts is None:
        return verdict
    return landed(verdict, built.architecture, built.hf, built.config_class, analysis.facts)


def _stepped(verdict: Verdict, said: dict[tuple[str, str], Verdict]) -> Verdict:
    """The first draft step as check judged it for the release (runtimes/release_verdict.py: vLLM's recorded execution,
    DSP371, or why it is not modelled; SGLang's not-recorded flag): torch here loads the vocab tensors and runs no
    vLLM step, so a verdict that loads takes check's. SGLang's emulated load ran its own step (sglang_load.py)."""
    check = said.get((verdict.runtime, verdict.version))
    if check is None or not verdict.loads or not check.loads or verdict.first_step is not None:
        return verdict
    if verdict.runtime == "vllm" and check.first_step is not None:
        return replace(verdict, first_step=check.first_step)
    return replace(verdict, step_unmodelled=check.step_unmodelled)


def _report(analysis: Analysis, verdicts: list[Verdict], result: VerifyResult, dims: Dims) -> CheckpointReport:
    """Check's structural findings, then the verdict findings of what torch observed, then verify's own."""
    kind = analysis.kind
    findings: list[Finding] = list(analysis.structural_findings)
    cfg = analysis.config
    findings += verdict_findings(verdicts, {f.code for f in findings}, kind.value if kind else None,
                                 cfg.family.value if cfg is not None and cfg.family is not None else None,
                                 cfg.architecture if cfg is not None else None)
    findings += verify_findings(result)
    return replace(analysis.report, compatibility=compatibility(verdicts), findings=tuple(findings))
