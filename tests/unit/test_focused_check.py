"""Focused tests of check/batch.py, check/built.py and check/verdict_findings.py on real tiny checkpoints."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from conftest import make_checkpoint

from dspark_ckpt.check import batch
from dspark_ckpt.check.analysis import analyze, inspect_checkpoint
from dspark_ckpt.check.verdict_findings import KIND_HINTS, method_findings, verdict_findings
from dspark_ckpt.cli.inputs import refuse_wrong_file
from dspark_ckpt.errors import DsparkCkptError, SourceError, UsageError
from dspark_ckpt.model.draft_config import parse_draft_config
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.records import Issue, Verdict
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS, contract_for
from dspark_ckpt.sources.local import local_source

T = 96
VLLM_030 = parse_selectors(["vllm==0.30.0"])


def check_one(spec: str) -> CheckpointReport:
    refuse_wrong_file(spec)  # what the CLI does first: a config.json given is an operational error
    return inspect_checkpoint(local_source(Path(spec)), target=TargetVocab(T, "t"), runtimes=VLLM_030)


# --- batch.py ---

def test_results_in_input_order_and_one_failure_does_not_stop_the_rest(tmp_path: Path) -> None:
    good = [str(make_checkpoint(tmp_path / f"d{i}", vocab=T + 32 * i, draft_vocab=T + 32 * i, target_vocab=T))
            for i in range(3)]
    bad = str(tmp_path / "d0" / "config.json")
    specs = [good[0], bad, good[1], good[2]]
    result = batch.run_checks(specs, check_one, jobs=3, progress=False)
    assert [r.source for r in result.reports] == specs
    assert [r.draft_vocab_size for r in result.reports] == [T, None, T + 32, T + 64]
    assert [r.vocab_kind for r in result.reports] == ["equal", None, "padded", "padded"]
    (failed_spec, error), = result.failures
    assert failed_spec == bad and error.code == "DSP-E110"
    (note,) = result.reports[1].findings
    assert note.code == "DSP702" and note.message.startswith("[DSP-E110]")


def test_a_single_spec_raises_its_error(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "d")
    with pytest.raises(SourceError):
        batch.run_checks([str(tmp_path / "d" / "config.json")], check_one)
    assert batch.run_checks([], check_one) == batch.BatchResult((), ())


def test_run_each_uses_several_threads_and_lets_a_bug_propagate() -> None:
    names: set[str] = set()
    barrier = threading.Barrier(2, timeout=5)

    def work(spec: str) -> str:
        names.add(threading.current_thread().name)
        barrier.wait()  # both must run at once: two workers
        return spec.upper()

    assert batch.run_each(["a", "b"], work, jobs=2, progress=False) == ["A", "B"]
    assert len(names) == 2 and all(n.startswith("dspark-check") for n in names)

    def buggy(spec: str) -> str:
        raise KeyError(spec)

    with pytest.raises(KeyError):
        batch.run_each(["a", "b"], buggy, jobs=2, progress=False)


@pytest.mark.parametrize("jobs", [0, -1, batch.MAX_JOBS + 1])
def test_check_jobs_bounds(jobs: int) -> None:
    with pytest.raises(UsageError) as exc:
        batch.check_jobs(jobs)
    assert exc.value.code == "DSP-E058"


def test_check_jobs_accepts_the_range() -> None:
    assert batch.check_jobs(1) == 1 and batch.check_jobs(batch.MAX_JOBS) == batch.MAX_JOBS


def test_unavailable_report_carries_the_error_and_its_hint() -> None:
    error = DsparkCkptError("cannot open", code="DSP-E110", hint="give the folder")
    report = batch.unavailable_report("x/config.json", error)
    (f,) = report.findings
    assert (f.code, f.message, f.hint) == ("DSP702", "[DSP-E110] cannot open", "give the folder")
    assert report.compatibility == () and report.family is None


# --- built.py (through analyze, as check runs it) ---

def test_t_is_taken_from_the_t2d_length_without_a_target(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=32, target_vocab=128, t2d=True, d2t=True)
    a = analyze(local_source(folder), target=None, runtimes=VLLM_030)
    assert a.target is not None and a.target.size == 128 and "t2d" in a.target.source
    assert a.kind is not None and a.kind.value == "pruned"
    assert "DSP217" in {f.code for f in a.findings} and "DSP206" not in {f.code for f in a.findings}


def test_no_t2d_and_no_target_leaves_t_unknown(tmp_path: Path) -> None:
    a = analyze(local_source(make_checkpoint(tmp_path / "d")), target=None, runtimes=VLLM_030)
    assert a.target is None and a.facts is None and "DSP206" in {f.code for f in a.findings}


def test_a_config_contradicting_every_d_sized_tensor_is_one_dsp216(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=T, draft_vocab=T, target_vocab=T,
                             config_extra={"draft_vocab_size": 200})
    a = analyze(local_source(folder), target=TargetVocab(T, "t"), runtimes=VLLM_030)
    (f,) = [f for f in a.findings if f.code == "DSP216"]
    assert "draft_vocab_size is 200" in f.message and f"{T} rows" in f.message
    assert a.facts is not None and a.facts.honoured_draft_vocab == T
    # the per-tensor shape findings it explains are not repeated beside it
    assert not [x for x in a.structural_findings if x.code in ("DSP320", "DSP323", "DSP324")
                and x.tensor in ("lm_head.weight", "markov_head.markov_w2.weight")]


# --- verdict_findings.py ---

def _verdict(runtime: str, version: str, error: Issue | None = None, silent: tuple[Issue, ...] = ()) -> Verdict:
    k = contract_for(runtime, version, Family.QWEN3_DSPARK)
    assert k is not None
    return Verdict(runtime, version, k, error, silent)


def test_one_finding_per_code_naming_every_release_it_affects() -> None:
    err = Issue("DSP303", "no parameter draft_id_to_target_id")
    vs = [_verdict("vllm", v, err) for v in ("0.30.0", "0.31.0")] + [_verdict("vllm", "0.29.0")]
    (f,) = verdict_findings(vs, set(), "padded")
    assert f.code == "DSP303"
    assert f.message == "fails to load on vllm==0.30.0, vllm==0.31.0: no parameter draft_id_to_target_id"
    assert f.template == KIND_HINTS[("DSP303", "padded")]
    assert verdict_findings(vs, {"DSP303"}, "padded") == []  # already reported structurally


def test_three_consecutive_sglang_releases_are_written_as_a_range() -> None:
    silent = (Issue("DSP307", "the draft head is ignored"),)
    run = SGLANG_VERSIONS[16:19]
    vs = [_verdict("sglang", v, silent=silent) for v in run] + [_verdict("sglang", SGLANG_VERSIONS[21], silent=silent)]
    (f,) = [x for x in verdict_findings(vs, set()) if x.code == "DSP307"]
    assert f.message == (f"loads on sglang {run[0]}-{run[-1]}, sglang=={SGLANG_VERSIONS[21]} but the draft head "
                         "is ignored")
    two = [_verdict("sglang", v, silent=silent) for v in SGLANG_VERSIONS[16:18]]
    (g,) = [x for x in verdict_findings(two, set()) if x.code == "DSP307"]
    assert g.message.startswith(f"loads on sglang=={SGLANG_VERSIONS[16]}, sglang=={SGLANG_VERSIONS[17]} ")


def test_an_assumed_release_gets_dsp220_once() -> None:
    vs = [_verdict("vllm", "0.40.0")]
    codes = [f.code for f in verdict_findings(vs, set())]
    assert codes == ["DSP220"]
    assert verdict_findings(vs, {"DSP220"}) == []


@pytest.mark.parametrize(("path", "family_arch", "flagged"), [
    ("/models/eagle3-draft", "Qwen3DSparkModel", True),
    ("/models/my-dflash", "Qwen3DSparkModel", True),
    ("/models/EAGLE-llama", "LlamaForCausalLMEagle3", True),  # "eagle-" means EAGLE-1, not this EAGLE-3 draft
    ("/models/eagle3-draft", "LlamaForCausalLMEagle3", False),
    ("/models/dflash", "DFlashDraftModel", False),
    ("/models/plain", "Qwen3DSparkModel", False),
])
def test_method_findings_warn_when_the_path_names_another_method(path: str, family_arch: str, flagged: bool) -> None:
    cfg, _ = parse_draft_config({"architectures": [family_arch], "model_type": "qwen3", "vocab_size": 96})
    found = method_findings(path, cfg)
    assert [f.code for f in found] == (["DSP207"] if flagged else [])
