"""Focused tests of verify/ (run, runtime_load, sglang_load, budget, memory, agreement, verdicts, result,
probe_setup) on real tiny checkpoints, on the CPU."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from conftest import make_checkpoint

from dspark_ckpt.check.analysis import Analysis, analyze
from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.output.documents import probe_json, verify_json
from dspark_ckpt.output.verify_records import MappingCheck, ProbeStats, VerifyResult
from dspark_ckpt.runtimes.records import Issue, Verdict
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.runtimes.table import contract_for
from dspark_ckpt.sources.local import LocalFolder
from dspark_ckpt.verify import agreement, budget, memory
from dspark_ckpt.verify.load_state import D2T_PARAM, LoadState
from dspark_ckpt.verify.probe_setup import run_probe
from dspark_ckpt.verify.run import run_verify
from dspark_ckpt.verify.runtime_load import needs_data, rename, run_runtime
from dspark_ckpt.verify.runtime_model import ParamStore, dims_for
from dspark_ckpt.verify.torch_loader import VerifyOptions, load_order, read_tensors
from dspark_ckpt.verify.verdicts import state_for, verdict_for

T = 96
H = 16
CPU = torch.device("cpu")
SGLANG_READY = {"markov_head_type": "vanilla", "mask_token_id": 0}


def analysis_of(folder: Path, runtimes: list[str], target: int | None = T) -> Analysis:
    tv = TargetVocab(target, "test") if target is not None else None
    return analyze(LocalFolder(folder), target=tv, runtimes=parse_selectors(runtimes))


def verify(folder: Path, runtimes: list[str], target: int | None = T, probes: int = 0) -> tuple[Any, VerifyResult]:
    return run_verify(analysis_of(folder, runtimes, target), folder, options=VerifyOptions(device="cpu", probes=probes),
                      device=CPU, label="cpu", torch_version=torch.__version__)


def by_version(result: VerifyResult) -> dict[str, Any]:
    return {s.version: s for s in result.runtimes}


def emulate(folder: Path, version: str, target: int = T) -> LoadState:
    """run_runtime for one vLLM release on the checkpoint's own tensors."""
    a = analysis_of(folder, [f"vllm=={version}"], target)
    assert a.config is not None and a.target is not None and a.config.family is not None
    dims = dims_for(a.config, a.target)
    order = load_order(a.loaded)
    tensors = read_tensors(folder, a.loaded, [n for n in order if needs_data(n)], CPU)
    k = contract_for("vllm", version, a.config.family)
    assert k is not None
    return run_runtime(k, version, a.config, dims, order, tensors, ParamStore(CPU), facts=a.facts)


# --- run.py ---

def test_verify_without_a_target_is_skipped_and_claims_no_verdict(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=128, target_vocab=T)
    report, result = verify(folder, ["vllm==0.30.0"], target=None)
    assert result.skipped is not None and "target vocab T is unknown" in result.skipped
    assert report.compatibility == () and result.runtimes == ()


def test_verify_refuses_broken_safetensors(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=128, target_vocab=T)
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[:-100])  # the header now claims more data than the file holds
    _, result = verify(folder, ["vllm==0.30.0"])
    assert result.skipped is not None and "not loadable" in result.skipped and result.runtimes == ()


def test_padded_draft_with_d2t_as_each_release_loads_it(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=128, target_vocab=T, d2t=True)
    report, result = verify(folder, ["vllm==0.29.0", "vllm==0.30.0"])
    states = by_version(result)
    # 0.29 creates draft_id_to_target_id for D != T and loads the d2t; 0.30 creates it only for D < T.
    assert states["0.29.0"].loads and states["0.29.0"].d2t_param and states["0.29.0"].d2t_loaded
    assert not states["0.30.0"].loads and states["0.30.0"].error_code == "DSP303"
    assert result.check_disagreements == ()  # torch observed what check predicted from the headers
    assert {c.version: c.loads for c in report.compatibility} == {"0.29.0": True, "0.30.0": False}


def test_only_the_vocab_tensors_are_read(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=128, target_vocab=T)
    _, result = verify(folder, ["vllm==0.30.0"])
    read = {t.name: t for t in result.tensors_read}
    assert "layers.0.mlp.down_proj.weight" not in read
    assert read["lm_head.weight"].shape == (128, H) and read["lm_head.weight"].nbytes == 128 * H * 4
    assert "norm.weight" in read  # the probe normalises with it


def test_identity_mapping_of_a_padded_draft_sends_exactly_the_padded_rows_out(tmp_path: Path) -> None:
    d = 128
    folder = make_checkpoint(tmp_path / "d", vocab=d, draft_vocab=d, target_vocab=T)
    report, result = verify(folder, ["vllm==0.30.0"], probes=8)
    (mapping,) = result.mappings
    assert mapping.width == d and mapping.out_of_range == d - T and mapping.first_out_of_range == (T, T)
    assert mapping.failures == ()  # rows [T, D) leaving [0, T) is DSP305, not a broken table
    assert result.probe.ran and result.probe.illegal_rows == d - T and result.probe.probes == 8
    # each source once on the plain logits, once with the Markov bias (the draft ships markov_head)
    assert sum(s.probes for s in result.probe.stats if s.logits == "lm_head") == 8
    assert {s.logits for s in result.probe.stats} == {"lm_head", "lm_head + markov"}
    assert "DSP305" in {f.code for f in report.findings}


def test_sglang_verdict_observed_by_torch_agrees_with_check(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=T, draft_vocab=T, target_vocab=T, config_extra=SGLANG_READY)
    _, result = verify(folder, ["sglang==0.5.20"])
    (state,) = result.runtimes
    assert state.runtime == "sglang" and state.loads and state.lm_head == "target"
    assert result.check_disagreements == ()


# --- runtime_load.py ---

@pytest.mark.parametrize(("name", "data"), [("lm_head.weight", True), ("embed_tokens.weight", True), ("d2t", True),
                                            ("t2d", True), ("markov_head.markov_w1.weight", True),
                                            ("layers.0.mlp.down_proj.weight", False), ("norm.weight", False)])
def test_needs_data(name: str, data: bool) -> None:
    assert needs_data(name) is data


def test_rename_as_the_loaders_do() -> None:
    names = rename(["d2t", "embed_tokens.weight", "lm_head.weight", "t2d", "mask_hidden"])
    assert dict(names.renamed) == {"d2t": D2T_PARAM, "embed_tokens.weight": "model.embed_tokens.weight",
                                   "lm_head.weight": "lm_head.weight", "t2d": None, "mask_hidden": "model.mask_hidden"}
    assert names.lm_head and names.embed and names.d2t and names.mask_hidden
    bare = rename(["layers.0.mlp.down_proj.weight", "t2d"])
    assert not (bare.lm_head or bare.embed or bare.d2t or bare.mask_hidden)


def test_pruned_draft_without_d2t_is_refused_by_030(tmp_path: Path) -> None:
    out = emulate(make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=32, target_vocab=128), "0.30.0", target=128)
    assert out.error is not None and out.error.code == "DSP302"


def test_pruned_draft_without_lm_head_is_refused_by_030(tmp_path: Path) -> None:
    out = emulate(make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=32, target_vocab=128, lm_head=False,
                                  d2t=True), "0.30.0", target=128)
    assert out.error is not None and out.error.code == "DSP301"


def test_pruned_draft_with_d2t_loads_its_mapping(tmp_path: Path) -> None:
    out = emulate(make_checkpoint(tmp_path / "d", vocab=128, draft_vocab=32, target_vocab=128, d2t=True), "0.30.0",
                  target=128)
    assert out.error is None and out.d2t_loaded and out.d2t is not None and out.d2t.numel() == 32
    assert out.lm_head == "own" and out.head_rows == 32


def test_equal_draft_without_lm_head_takes_the_targets(tmp_path: Path) -> None:
    out = emulate(make_checkpoint(tmp_path / "d", vocab=T, draft_vocab=T, target_vocab=T, lm_head=False), "0.30.0")
    assert out.error is None and out.lm_head == "target" and out.d2t is None  # D = T: no d2t parameter at all


def test_model_prefixed_weights_are_refused_by_qwen3_dspark(tmp_path: Path) -> None:
    from conftest import draft_tensors
    tensors = {f"model.{k}" if k != "lm_head.weight" else k: v
               for k, v in draft_tensors(vocab=T, draft_vocab=T, target_vocab=T).items()}
    out = emulate(make_checkpoint(tmp_path / "d", vocab=T, draft_vocab=T, target_vocab=T, tensors=tensors), "0.30.0")
    assert out.error is not None and out.error.code == "DSP313"


# --- verdicts.py ---

def _state(**kw: Any) -> LoadState:
    k = contract_for("vllm", "0.30.0", Family.QWEN3_DSPARK)
    assert k is not None
    return LoadState(k, "0.30.0", **kw)


def _mapping(width: int, t: int, out_of_range: int = 0, first: tuple[int, int] | None = None,
             source: str = "identity") -> MappingCheck:
    return MappingCheck(("vllm==0.30.0",), source, width, t, out_of_range, first, True, None, None, False)


def test_verdict_for_an_uninitialised_head_of_a_padded_draft() -> None:
    v = verdict_for(_state(lm_head="uninitialised", head_rows=128), _mapping(128, T), (128, 128, T))
    assert v.loads and "DSP306" in {i.code for i in v.silent}


def test_verdict_for_a_target_embedding_too_small_for_the_input_ids() -> None:
    v = verdict_for(_state(lm_head="own", head_rows=T, embed_tokens="target"), _mapping(T, T), (T, 128, T))
    assert {i.code for i in v.silent} == {"DSP304"}


def test_verdict_for_an_own_padded_head_names_the_rows_beyond_t() -> None:
    d = 128
    v = verdict_for(_state(lm_head="own", head_rows=d), _mapping(d, T, d - T, (T, T)), (d, d, T))
    (issue,) = v.silent
    assert issue.code == "DSP305" and f"[{T}, {d})" in issue.text


def test_verdict_for_a_failed_load_keeps_its_error_and_state_for_reports_it() -> None:
    out = _state(error=Issue("DSP303", "no parameter"))
    v = verdict_for(out, None, (128, 128, T))
    assert not v.loads and v.error is not None and v.error.code == "DSP303" and v.silent == ()
    state = state_for(out)
    assert (state.loads, state.error_code, state.error) == (False, "DSP303", "no parameter")


# --- agreement.py ---

def _verdict(version: str, error: Issue | None = None, silent: tuple[Issue, ...] = ()) -> Verdict:
    k = contract_for("vllm", version, Family.QWEN3_DSPARK)
    assert k is not None
    return Verdict("vllm", version, k, error, silent)


def test_same_error_accepts_the_quoted_prefix_only() -> None:
    full = _verdict("0.30.0", Issue("DSP303", "There is no parameter d2t. Available are: {'a', 'b'}"))
    quoted = _verdict("0.30.0", Issue("DSP303", "There is no parameter d2t. Available are:"))
    assert agreement.same_error(full, quoted)
    assert not agreement.same_error(quoted, full)
    assert not agreement.same_error(full, _verdict("0.30.0", Issue("DSP302", "There is no parameter")))
    assert not agreement.same_error(full, _verdict("0.30.0"))
    assert agreement.same_error(_verdict("0.30.0"), _verdict("0.30.0"))


def test_disagreements_name_the_release_and_what_differs() -> None:
    observed = [_verdict("0.29.0", Issue("DSP303", "x")), _verdict("0.30.0", silent=(Issue("DSP305", "y"),)),
                _verdict("0.31.0"), _verdict("0.32.0")]
    predicted = [_verdict("0.29.0"), _verdict("0.30.0"), _verdict("0.31.0")]
    found = agreement.disagreements(observed, predicted)
    assert found == ("vllm==0.29.0: torch observed DSP303, check predicted loads",
                     "vllm==0.30.0: silent issues observed ['DSP305'], predicted none",
                     "vllm==0.32.0: check has no verdict")


# --- budget.py ---

@pytest.mark.parametrize(("text", "count", "seconds", "label"), [
    ("auto", None, None, "auto"), (" AUTO ", None, None, "auto"), ("4096", 4096, None, "4096"), ("0", 0, None, "0"),
    ("10s", None, 10.0, "10s"), ("2.5 s", None, 2.5, "2.5s"), (".5s", None, 0.5, "0.5s")])
def test_parse_probe(text: str, count: int | None, seconds: float | None, label: str) -> None:
    b = budget.parse_probe(text)
    assert (b.count, b.seconds, b.label) == (count, seconds, label)


@pytest.mark.parametrize("text", ["0s", "-5", "ten", "5m", "1e3", ""])
def test_parse_probe_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        budget.parse_probe(text)


def test_planned_count_exact_and_cuda_auto() -> None:
    assert budget.planned_count(budget.ProbeBudget(count=7), device_type="cpu", seconds_per_probe=1.0)[0] == 7
    n, why = budget.planned_count(budget.AUTO, device_type="cuda", seconds_per_probe=None)
    assert n == budget.CUDA_PROBES and "CUDA" in why


def test_planned_count_fits_the_cpu_budget_in_an_even_count() -> None:
    # auto on CPU: 5 s at 1 ms per probe, 1 s already spent timing -> 4000 probes
    n, why = budget.planned_count(budget.AUTO, device_type="cpu", seconds_per_probe=1e-3, spent=1.0)
    assert n == int((budget.CPU_SECONDS - 1.0) / 1e-3) // 2 * 2 and n % 2 == 0 and "capped" not in why
    odd, _ = budget.planned_count(budget.ProbeBudget(seconds=0.0111), device_type="cpu", seconds_per_probe=1e-3)
    assert odd == 10  # 11 fit, rounded down to even (half embedding rows, half Gaussian)
    assert budget.planned_count(budget.AUTO, device_type="cpu", seconds_per_probe=100.0)[0] == 2  # never below 2


def test_planned_count_caps_auto_at_the_cuda_count_and_a_time_budget_at_max() -> None:
    n, why = budget.planned_count(budget.AUTO, device_type="cpu", seconds_per_probe=1e-9)
    assert n == budget.CUDA_PROBES and "capped" in why
    m, _ = budget.planned_count(budget.ProbeBudget(seconds=60.0), device_type="cpu", seconds_per_probe=1e-9)
    assert m == budget.MAX_PROBES


# --- memory.py ---

@pytest.mark.parametrize(("text", "size"), [("64G", 64 * 2**30), ("512MiB", 512 * 2**20), ("1.5t", int(1.5 * 2**40)),
                                            ("100", 100), (" 2 kb ", 2048), ("8GB", 8 * 2**30)])
def test_parse_size(text: str, size: int) -> None:
    assert memory.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "G", "12 x", "-1G", "1.5.2G"])
def test_parse_size_refuses(text: str) -> None:
    assert memory.parse_size(text) is None


def test_memory_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(memory.BUDGET_ENV, "3M")
    assert memory.memory_budget(CPU) == (3 * 2**20, memory.BUDGET_ENV)
    monkeypatch.setenv(memory.BUDGET_ENV, "lots")
    with pytest.raises(UsageError) as exc:
        memory.memory_budget(CPU)
    assert exc.value.code == "DSP-E013"
    monkeypatch.delenv(memory.BUDGET_ENV)
    size, where = memory.memory_budget(CPU)
    assert 0 < size and "90%" in where


def _dims(tmp_path: Path, d: int, v: int) -> Any:
    a = analysis_of(make_checkpoint(tmp_path / "d", vocab=v, draft_vocab=d, target_vocab=T), ["vllm==0.30.0"])
    assert a.config is not None and a.target is not None
    return dims_for(a.config, a.target), a.verdicts[0].contract


def test_planned_bytes_counts_tensors_parameters_and_one_probe_batch(tmp_path: Path) -> None:
    dims, contract = _dims(tmp_path, 128, 160)
    logits = 64 * 160 * 4  # one 64-row float32 probe batch over max(D, V) columns
    assert memory.planned_bytes([], dims, 1000) == 1000 + logits
    with_params = memory.planned_bytes([contract, contract], dims, 1000)
    # at least the lm_head and the embedding (each padded to 64 rows, bfloat16); a parameter shared, counted once
    assert with_params >= 1000 + logits + (128 + 160) * H * 2
    assert with_params == memory.planned_bytes([contract], dims, 1000)


def test_check_budget_refuses_before_allocating(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dims, contract = _dims(tmp_path, 128, 128)
    monkeypatch.setenv(memory.BUDGET_ENV, "1K")
    with pytest.raises(UsageError) as exc:
        memory.check_budget([contract], dims, 0, CPU, "draft")
    assert exc.value.code == "DSP-E013" and "D = 128" in str(exc.value) and "draft:" in str(exc.value)
    monkeypatch.setenv(memory.BUDGET_ENV, "1G")
    memory.check_budget([contract], dims, 0, CPU, "draft")


# --- result.py ---

def test_mapping_failures_tell_a_broken_table_from_padded_rows() -> None:
    assert _mapping(128, T, 128 - T, (T, T)).failures == ()
    (broken,) = _mapping(128, T, 5, (3, 200)).failures
    assert broken == f"5 ids outside [0, {T}) (first: 3 -> 200)"
    unsorted = replace(_mapping(T, T), strictly_increasing=False, first_not_increasing=7, t2d_consistent=False)
    assert unsorted.failures == ("not strictly increasing at draft id 7", "nonzero(t2d) differs from the mapped ids")


def test_verify_json_fractions_and_rounding() -> None:
    stats = ProbeStats("gaussian", "lm_head", 8, 4, 2, 4, 5, 0.5, 100, 3)
    result = VerifyResult(device="cpu", torch_version="2", timings_ms={"load": 1.23456},
                          mappings=(_mapping(128, T, 128 - T, (T, T)),))
    doc = verify_json(replace(result, probe=replace(result.probe, ran=True, stats=(stats,), probes=8)))
    assert doc["timings_ms"] == {"load": 1.235}
    assert doc["probe"]["stats"][0]["argmax_illegal_fraction"] == 2 / 8
    assert doc["probe"]["stats"][0]["topk_any_illegal_fraction"] == 4 / 8
    assert doc["mapping"][0]["first_out_of_range"] == [T, T] and doc["mapping"][0]["failures"] == []
    empty = probe_json(replace(result.probe, stats=(replace(stats, probes=0),)))
    assert empty["stats"][0]["argmax_illegal_fraction"] is None


# --- probe_setup.py ---

def test_probe_skips_when_no_release_loads_the_own_head(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=T, draft_vocab=T, target_vocab=T, lm_head=False)
    out = emulate(folder, "0.30.0")
    report = run_probe([out], {}, {}, {}, Family.QWEN3_DSPARK, None, VerifyOptions(probes=4))  # type: ignore[arg-type]
    assert not report.ran and "own lm_head" in (report.reason or "")


def test_probe_skips_when_every_row_is_legal(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=T, draft_vocab=T, target_vocab=T)
    _, result = verify(folder, ["vllm==0.30.0"], probes=4)
    assert not result.probe.ran and result.probe.illegal_rows == 0
    assert "every lm_head row maps into [0, T)" in (result.probe.reason or "")


def test_probe_identifies_the_runtime_and_stays_within_the_count(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d", vocab=100, draft_vocab=100, target_vocab=T)
    _, result = verify(folder, ["vllm==0.30.0"], probes=6)
    p = result.probe
    assert p.ran and p.runtime == "vllm==0.30.0" and p.illegal_rows == 100 - T
    plain = [s for s in p.stats if s.logits == "lm_head"]
    assert [s.source for s in plain] == ["embed_tokens", "gaussian"] and [s.probes for s in plain] == [3, 3]
    assert p.markov_pairing is not None
    assert all(0 <= s.argmax_illegal <= s.probes for s in p.stats)
