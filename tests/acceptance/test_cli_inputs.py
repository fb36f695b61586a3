"""Inputs a user gets wrong, driven through the real CLI: a shard for a folder, a config file, --jobs, the default
gate on runtimes the user did not choose, and the GitHub Action's report paths."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli, run_on_a_terminal
from listed import vllm_before, vllm_minors
from test_preflight_action import run_action

T = 96
SHARDS = ("model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors")
VLLM = "vllm>=0.25.0"  # the releases that register Qwen3DSparkModel (registry.py @ v0.25.0 L597 first)


def check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("check", *args, "--isolated", cwd=cwd)


def codes(doc: dict[str, object]) -> list[str]:
    (entry,) = doc["checkpoints"]  # type: ignore[misc]
    return [f["code"] for f in entry["findings"]]


@pytest.fixture
def sharded(tmp_path: Path) -> Path:
    """A pruned draft correct for every vLLM version that registers it (VLLM), in three shards: lm_head, d2t and t2d
    in different files."""
    return make_checkpoint(tmp_path / "draft", vocab=T, draft_vocab=32, target_vocab=T, d2t=True, t2d=True, shards=3)


def test_one_shard_checks_its_folder_and_says_so(sharded: Path) -> None:
    folder = check(sharded.parent, "draft", "--target-vocab-size", str(T), "--runtime", VLLM, "--format", "json")
    shard = check(sharded.parent, f"draft/{SHARDS[0]}", "--target-vocab-size", str(T), "--runtime", VLLM,
                  "--format", "json")
    assert folder.returncode == 0 and shard.returncode == 0, shard.stdout
    doc = json.loads(shard.stdout)
    assert doc["checkpoints"][0]["source"] == "draft"
    # the false errors a shard alone gave (no lm_head, no d2t in that file) are gone; only the note is added
    assert codes(doc) == [*codes(json.loads(folder.stdout)), "DSP230"]
    note = doc["checkpoints"][0]["findings"][-1]
    assert note["severity"] == "info" and "model.safetensors.index.json is beside it" in note["message"]
    # the command repeats the run's target and runtimes, so pasting it checks the same thing, without the note
    assert note["hint"] == (f"give the folder to skip this note: `dspark-ckpt check draft --target-vocab-size {T} "
                            f"--runtime '{VLLM}'`")


def test_a_shell_glob_of_shards_is_one_checkpoint(sharded: Path) -> None:
    result = check(sharded.parent, *(f"draft/{s}" for s in SHARDS), "--target-vocab-size", str(T),
                   "--runtime", VLLM, "--format", "json")
    assert result.returncode == 0, result.stdout
    (entry,) = json.loads(result.stdout)["checkpoints"]
    (note,) = [f for f in entry["findings"] if f["code"] == "DSP230"]
    assert "are 3 shards of the sharded checkpoint in draft" in note["message"]
    assert not [f for f in entry["findings"] if f["severity"] == "error"]


def test_a_shard_named_part_of_n_without_index_still_means_the_folder(sharded: Path) -> None:
    (sharded / "model.safetensors.index.json").unlink()
    result = check(sharded.parent, f"draft/{SHARDS[1]}", "--target-vocab-size", str(T), "--format", "json")
    entry = json.loads(result.stdout)["checkpoints"][0]
    assert entry["source"] == "draft"
    assert any("its name says part 2 of 3" in f["message"] for f in entry["findings"] if f["code"] == "DSP230")
    assert {t["name"] for t in entry["tensors"]} >= {"lm_head.weight", "d2t"}  # read from the other shards


def test_a_single_file_checkpoint_is_still_checked_as_one_file(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "single", vocab=T, draft_vocab=T, target_vocab=T)
    result = check(tmp_path, "single/model.safetensors", "--target-vocab-size", str(T), "--format", "json")
    assert result.returncode == 0 and "DSP230" not in result.stdout


@pytest.mark.parametrize(("name", "what"), [("config.json", "a config file"),
                                            ("model.safetensors.index.json", "the shard index")])
def test_a_json_file_is_refused_with_the_folder_to_give(sharded: Path, name: str, what: str) -> None:
    result = check(sharded.parent, f"draft/{name}", "--target-vocab-size", str(T))
    assert result.returncode == 2 and result.stdout == ""
    assert f"[DSP-E110]: draft/{name} is {what}" in result.stderr
    assert "dspark-ckpt check draft" in result.stderr and "header length" not in result.stderr


def test_a_pytorch_pickle_is_refused(tmp_path: Path) -> None:
    (tmp_path / "pytorch_model.bin").write_bytes(b"PK\x03\x04" + b"\0" * 64)
    result = check(tmp_path, "pytorch_model.bin")
    assert result.returncode == 2 and "[DSP-E111]" in result.stderr and "PyTorch pickle" in result.stderr


def test_a_config_among_checkpoints_is_one_failed_entry(sharded: Path) -> None:
    result = check(sharded.parent, "draft/config.json", "draft", "--target-vocab-size", str(T), "--runtime", "vllm",
                   "--format", "json")
    assert result.returncode == 2  # the config could not be checked: never a pass
    first, second = json.loads(result.stdout)["checkpoints"]
    assert first["findings"][0]["code"] == "DSP702" and "[DSP-E110]" in first["findings"][0]["message"]
    assert second["source"] == "draft" and second["vocab_kind"] == "pruned"


@pytest.mark.parametrize("jobs", ["0", "-1", "65"])
def test_jobs_out_of_range_is_a_usage_error_with_one_checkpoint(sharded: Path, jobs: str) -> None:
    result = check(sharded.parent, "draft", "--target-vocab-size", str(T), "--jobs", jobs)
    assert result.returncode == 2 and result.stdout == ""
    assert "--jobs" in result.stderr


# --- the default gate: every runtime is shown, vLLM decides the exit code unless runtimes are chosen ---

@pytest.fixture
def pruned(tmp_path: Path) -> Path:
    """Loads on every vLLM version that registers Qwen3DSparkModel (0.25.0+, registry.py @ v0.25.0 L597; an older one
    refuses it: shown, not gated by default); SGLang's Qwen3 DSpark refuses any d2t (no reduced-vocab support)."""
    return make_checkpoint(tmp_path / "pruned", vocab=T, draft_vocab=32, target_vocab=T, d2t=True, t2d=True,
                           config_extra={"markov_head_type": "vanilla"})


def test_a_draft_correct_for_vllm_passes_the_default_gate(pruned: Path) -> None:
    result = check(pruned.parent, "pruned", "--target-vocab-size", str(T), "-v")  # the matrix: the long form
    assert result.returncode == 0, result.stdout
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith(("vllm ", "sglang "))]
    older, registered = vllm_before("0.25.0"), vllm_minors("0.25.0")  # off a terminal: one record per line
    assert [(r[1], r[2]) for r in rows if r[0] == "vllm"] == [(f"{older[0]}-{older[-1]}", "no"),
                                                              (f"{registered[0]}-{registered[-1]}", "yes")]
    assert any(r[0] == "sglang" and r[2] == "no" for r in rows)  # SGLang's refusal is still shown
    last = result.stdout.rstrip().splitlines()[-1]
    assert last.startswith("1 checkpoint(s): 0 error(s)")  # the counts are the gated findings' (issue 41)
    assert "not gated (only on sglang or on vllm releases older than the draft's architecture)" in last
    assert "drop-d2t" not in result.stdout  # dropping the d2t would break every vLLM version


@pytest.mark.parametrize("runtime", [("--runtime", "all"), ("--runtime", "sglang"),
                                     ("--runtime", "vllm==0.33.0", "--runtime", "sglang")])
def test_naming_sglang_gates_on_it(pruned: Path, runtime: tuple[str, ...]) -> None:
    result = check(pruned.parent, "pruned", "--target-vocab-size", str(T), *runtime)
    assert result.returncode == 1
    last = result.stdout.rstrip().splitlines()[-1]
    # SGLang gates now; only its releases older than the draft's architecture are shown apart (issue 41)
    assert last.startswith("1 checkpoint(s): 1 error(s)") and "only on sglang)" not in last, last


def test_settings_runtime_gates_on_what_it_names(pruned: Path) -> None:
    (pruned.parent / "dspark-ckpt.toml").write_text('runtime = ["vllm", "sglang"]\ntarget-vocab-size = 96\n')
    assert run_cli("check", "pruned", cwd=pruned.parent).returncode == 1
    (pruned.parent / "dspark-ckpt.toml").write_text('runtime = "vllm>=0.25.0"\ntarget-vocab-size = 96\n')
    assert run_cli("check", "pruned", cwd=pruned.parent).returncode == 0


def test_a_vllm_failure_still_fails_the_default_gate(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "padded", vocab=T, draft_vocab=120, target_vocab=T)  # fails on vLLM 0.29
    result = check(tmp_path, "padded", "--target-vocab-size", str(T), "-v")
    assert result.returncode == 1 and "gate: vllm (the default" in result.stderr


def test_markdown_headline_follows_the_gate(pruned: Path) -> None:
    result = check(pruned.parent, "pruned", "--target-vocab-size", str(T), "--format", "markdown")
    assert result.returncode == 0 and result.stdout.startswith("## dspark-ckpt: ✅ no finding at or above error")


# --- the text report: one legend line, the verdict last ---

def test_text_report_has_one_legend_line_and_the_verdict_last(tmp_path: Path) -> None:
    for name in ("a", "b"):
        make_checkpoint(tmp_path / name, vocab=T, draft_vocab=120, target_vocab=T)
    result = check(tmp_path, "a", "b", "--target-vocab-size", str(T), "-v")  # the legend: the long form
    lines = result.stdout.splitlines()
    legend = [line for line in lines if line.startswith("T: target vocab; V: draft input vocab")]
    assert len(legend) == 1 and "yes*: loads, but misbehaves silently" in result.stdout
    assert lines[-1].startswith("2 checkpoint(s):")


# --- the GitHub Action: a report path it cannot write ---

@pytest.mark.parametrize("option", ["sarif-file", "junit-file"])
def test_action_unwritable_report_path_exits_2_with_the_output_written(tmp_path: Path, option: str) -> None:
    make_checkpoint(tmp_path / "drafts" / "clean", vocab=T, draft_vocab=T, target_vocab=T)
    (tmp_path / "blocker").write_text("a file where the report's folder should be")
    result = run_action(tmp_path, checkpoints="drafts/clean", **{"target-vocab-size": str(T),
                                                                 option: "blocker/sub/report.out"})
    assert result.returncode == 2, result.stderr
    assert (tmp_path / "output.txt").read_text() == "exit-code=2\n"
    assert f"{option}: cannot create the folder of blocker/sub/report.out" in result.stderr


def test_action_report_path_that_is_a_folder_exits_2_with_the_output_written(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "drafts" / "clean", vocab=T, draft_vocab=T, target_vocab=T)
    (tmp_path / "results.sarif").mkdir()
    result = run_action(tmp_path, checkpoints="drafts/clean", **{"target-vocab-size": str(T),
                                                                 "sarif-file": "results.sarif"})
    assert result.returncode == 2
    assert (tmp_path / "output.txt").read_text() == "exit-code=2\n"


def test_action_empty_checkpoints_writes_the_output_too(tmp_path: Path) -> None:
    result = run_action(tmp_path, checkpoints="  \n")
    assert result.returncode == 2 and (tmp_path / "output.txt").read_text() == "exit-code=2\n"



# --- progress over many checkpoints: on a terminal only, never with -q ---

def test_a_run_over_many_checkpoints_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        make_checkpoint(tmp_path / name, vocab=T, draft_vocab=T, target_vocab=T)
    args = ["check", "a", "b", "c", "--target-vocab-size", str(T), "--isolated", "--format", "json"]
    rc, _, err = run_on_a_terminal(*args, cwd=tmp_path, timeout=60)
    assert rc == 0 and "checking" in err
    rc, _, err = run_on_a_terminal(*args, "-q", cwd=tmp_path, timeout=60)
    assert rc == 0 and err == ""
    assert run_cli(*args, cwd=tmp_path).stderr.count("checking") == 0  # a pipe: no bar
