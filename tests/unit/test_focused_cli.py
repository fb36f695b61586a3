"""Focused tests of cli/inputs.py (what a typed checkpoint becomes) and cli/run.py (the run every command resolves)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_checkpoint

from dspark_ckpt.check.policy import DEFAULT_GATE
from dspark_ckpt.cli import inputs
from dspark_ckpt.cli.run import Common, hook_folders, read_paths, resolve_run, target_flags
from dspark_ckpt.errors import SourceError, UsageError

T = 96


@pytest.fixture(autouse=True)
def no_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # settings are discovered from the working directory upward


# --- inputs.py ---

def test_shard_of(tmp_path: Path) -> None:
    sharded = make_checkpoint(tmp_path / "s", shards=2)
    first = sharded / "model-00001-of-00002.safetensors"
    assert inputs.shard_of(first) == "model.safetensors.index.json is beside it"
    single = make_checkpoint(tmp_path / "one")
    assert inputs.shard_of(single / "model.safetensors") is None
    assert inputs.shard_of(single / "config.json") is None
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "model-00002-of-00003.safetensors").write_bytes(b"x")
    assert inputs.shard_of(lone / "model-00002-of-00003.safetensors") == "its name says part 2 of 3"
    (lone / "model-00001-of-00001.safetensors").write_bytes(b"x")
    assert inputs.shard_of(lone / "model-00001-of-00001.safetensors") is None  # one part of one is the whole
    assert inputs.shard_of(lone / "model-00009-of-00009.safetensors") is None  # not a file


def test_plan_inputs_reads_a_shard_glob_as_its_folder_once(tmp_path: Path) -> None:
    sharded = make_checkpoint(tmp_path / "s", shards=2)
    single = str(make_checkpoint(tmp_path / "one"))
    shards = [str(sharded / f"model-0000{i}-of-00002.safetensors") for i in (1, 2)]
    planned = inputs.plan_inputs([shards[0], single, shards[1]])
    assert [p.spec for p in planned] == [str(sharded), single]
    assert planned[0].given == tuple(shards) and planned[1].given == (single,)
    note = planned[0].note
    assert note is not None and note.code == "DSP230"
    assert "are 2 shards" in note.message and str(sharded) in note.message
    assert planned[1].note is None


def test_plan_inputs_gives_no_note_when_the_folder_itself_was_given(tmp_path: Path) -> None:
    sharded = make_checkpoint(tmp_path / "s", shards=2)
    (only,) = inputs.plan_inputs([str(sharded)])
    assert only.spec == str(sharded) and only.note is None
    (one,) = inputs.plan_inputs([str(sharded / "model-00002-of-00002.safetensors")])
    assert one.note is not None and "is one shard" in one.note.message


def test_a_relative_shard_in_the_working_directory_means_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sharded = make_checkpoint(tmp_path / "s", shards=2)
    monkeypatch.chdir(sharded)
    (p,) = inputs.plan_inputs(["model-00001-of-00002.safetensors"])
    assert p.spec == "."


@pytest.mark.parametrize(("name", "code", "what"), [
    ("config.json", "DSP-E110", "a config file"), ("model.safetensors.index.json", "DSP-E110", "the shard index"),
    ("other.json", "DSP-E110", "a JSON file"), ("pytorch_model.bin", "DSP-E111", "a PyTorch pickle"),
    ("weights.GGUF", "DSP-E111", "a GGUF file"),
])
def test_refuse_wrong_file(tmp_path: Path, name: str, code: str, what: str) -> None:
    (tmp_path / name).write_text("{}")
    with pytest.raises(SourceError) as exc:
        inputs.refuse_wrong_file(str(tmp_path / name))
    assert exc.value.code == code and what in str(exc.value)


def test_refuse_wrong_file_lets_checkpoints_and_missing_paths_through(tmp_path: Path) -> None:
    folder = make_checkpoint(tmp_path / "d")
    inputs.refuse_wrong_file(str(folder))
    inputs.refuse_wrong_file(str(folder / "model.safetensors"))
    inputs.refuse_wrong_file(str(tmp_path / "missing.bin"))  # not a file: the source reports it


# --- run.py ---

def test_resolve_run_with_a_size_and_runtimes() -> None:
    run = resolve_run(Common(target_vocab_size=T, runtime=["vllm==0.30.0", "vllm==0.29.0"], isolated=True))
    assert run.target is not None and run.target.size == T
    assert [str(r) for r in run.runtimes] == ["vllm==0.30.0", "vllm==0.29.0"]
    assert run.runtime_selectors == ("vllm==0.30.0", "vllm==0.29.0")
    assert run.policy.gate is None  # the runtimes chosen all gate
    assert run.hints.target == ("--target-vocab-size", str(T))


def test_resolve_run_defaults_to_every_runtime_with_the_default_gate() -> None:
    run = resolve_run(Common(isolated=True), need_target=False)
    assert run.target is None and run.runtime_selectors is None
    assert run.policy.gate == DEFAULT_GATE
    assert {r.runtime for r in run.runtimes} == {"vllm", "sglang"}


def test_resolve_run_takes_target_and_runtimes_from_a_settings_file(tmp_path: Path) -> None:
    (tmp_path / "dspark-ckpt.toml").write_text(f'runtime = ["vllm==0.31.0"]\ntarget-vocab-size = {T}\n')
    run = resolve_run(Common())
    assert run.target is not None and run.target.size == T and [str(r) for r in run.runtimes] == ["vllm==0.31.0"]
    flagged = resolve_run(Common(target_vocab_size=T + 1, runtime=["vllm==0.30.0"]))
    assert flagged.target is not None and flagged.target.size == T + 1  # a flag replaces the file's choice
    assert [str(r) for r in flagged.runtimes] == ["vllm==0.30.0"]


def test_resolve_run_refuses_contradictions(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as loud:
        resolve_run(Common(quiet=True, verbose=True, isolated=True))
    assert loud.value.code == "DSP-E025"
    (tmp_path / "a.toml").write_text("")
    with pytest.raises(UsageError) as twice:
        resolve_run(Common(config=tmp_path / "a.toml", settings_file=tmp_path / "a.toml"))
    assert twice.value.code == "DSP-E024"


def test_a_toml_config_is_the_settings_file(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(f"target-vocab-size = {T}\n")
    run = resolve_run(Common(config=tmp_path / "s.toml"))
    assert run.config is None and run.settings.path is not None and run.target is not None
    assert run.target.size == T


def test_read_paths_names_every_input() -> None:
    run = resolve_run(Common(target_vocab_size=T, isolated=True, config=Path("cfg.json")))
    assert read_paths(run, ["a", "b"]) == ("a", "b", "cfg.json")


def test_target_flags() -> None:
    assert target_flags("some/dir", None) == ("--target", "some/dir")
    assert target_flags(None, 5) == ("--target-vocab-size", "5")
    assert target_flags(None, None) is None


def test_hook_folders_keeps_checkpoint_files_only(tmp_path: Path) -> None:
    ckpt = make_checkpoint(tmp_path / "d")
    other = tmp_path / "tool"
    other.mkdir()
    (other / "config.json").write_text("{}")  # another tool's config: no weights beside it
    (tmp_path / "README.md").write_text("x")
    paths = [str(ckpt / "config.json"), str(ckpt / "model.safetensors"), str(other / "config.json"),
             str(tmp_path / "README.md")]
    assert hook_folders(paths) == [str(ckpt)]
