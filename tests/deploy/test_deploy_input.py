"""Reading `--speculative-config` (inline JSON or a .json file) and pairing it with checkpoints: the I/O edge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_checkpoint

from dspark_ckpt.check.deploy import (
    INLINE,
    DeployPlan,
    plan_deploy,
    read_request,
    same_checkpoint,
    verifier_matches,
)
from dspark_ckpt.errors import DsparkCkptError
from dspark_ckpt.runtimes import speculative_config as sc
from dspark_ckpt.runtimes import vllm_release
from dspark_ckpt.runtimes.release import parse


def test_inline_json_and_a_json_file_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = {"method": "dspark", "model": "./drafts/d", "num_speculative_tokens": 8}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    inline, from_file = read_request(json.dumps(spec)), read_request("spec.json")
    assert inline.spec == from_file.spec == spec and inline.problem is None
    assert (inline.source, from_file.source) == (INLINE, "spec.json")
    assert inline.model == "./drafts/d"


@pytest.mark.parametrize(("text", "code", "says"), [
    ("{method: dspark}", "DSP801", "is not valid JSON (Expecting property name enclosed in double quotes"),
    ('{"method": "dspark",}', "DSP801", "is not valid JSON"),
    ("dspark", "DSP801", "is not valid JSON"),
    ('["dspark", 8]', "DSP802", "is a JSON array, not an object"),
    ("[" * 100_000, "DSP801", "nests too deeply"),
])
def test_not_json_or_not_an_object_is_a_finding(text: str, code: str, says: str) -> None:
    request = read_request(text)
    assert request.spec is None and request.problem is not None
    assert request.problem.code == code and says in request.problem.message, request.problem.message


def test_a_file_that_is_not_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_bytes(b"\xef\xbb\xbf{}")
    request = read_request(str(path))
    assert request.problem is not None and request.problem.code == "DSP801"
    assert request.problem.message.startswith(f"{path} starts with a UTF-8 byte-order mark")


@pytest.mark.parametrize(("make", "code"), [
    (lambda p: None, "DSP-E027"),  # missing
    (lambda p: p.mkdir(), "DSP-E027"),  # a folder
    (lambda p: p.write_bytes(b" " * (2 << 20)), "DSP-E027"),  # above 1 MiB
])
def test_a_file_that_cannot_be_read_is_an_operational_error(tmp_path: Path, make, code: str) -> None:
    path = tmp_path / "deploy" / "spec.json"
    path.parent.mkdir()
    make(path)
    with pytest.raises(DsparkCkptError) as exc:
        read_request(str(path))
    assert exc.value.code == code and str(path) in str(exc.value)


def test_an_empty_flag_is_refused() -> None:
    with pytest.raises(DsparkCkptError) as exc:
        read_request("  ")
    assert exc.value.code == "DSP-E028"


def test_unknown_keys_name_the_closest_field_and_dashes_are_vllms_underscores() -> None:
    r = vllm_release.RELEASE_RULES["0.29.0"]
    assert sc.closest_key("num_speculative_token", r.fields) == "num_speculative_tokens"
    assert sc.closest_key("methd", r.fields) == "method"
    assert sc.closest_key("zzzz", r.fields) is None
    assert sc.normalize_keys({"num-speculative-tokens": 8}) == {"num_speculative_tokens": 8}
    assert vllm_release.later_field("dspark_draft_topk", "0.27.0") == "0.28.0"
    assert vllm_release.later_field("xpress_topc", "0.32.0") == "0.33.0" and vllm_release.later_field("foo", "0.27.0") is None


@pytest.mark.parametrize(("value", "expected"), [
    (8, 8), (True, 1), (8.0, 8), ("8", 8), (" 8 ", 8), (None, None), (8.5, sc.P_INT), ("eight", sc.P_INT),
    ([8], sc.P_INT),
])
def test_lax_integers_as_pydantic_takes_them(value: object, expected: object) -> None:
    assert sc.lax_int(value) == expected


@pytest.mark.parametrize(("name", "valid"), [
    ("Qwen/Qwen3-8B", True), ("gpt2", True), ("org/name.v2", True), ("/models/qwen3-8b", False),
    ("./target", False), ("a/b/c", False), ("org--x/name", False), ("org/name.git", False), ("x" * 97, False),
])
def test_repo_ids_as_huggingface_hub_validates_them(name: str, valid: bool) -> None:
    assert sc.valid_repo_id(name) is valid


def test_verifier_and_target_comparison(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cached = tmp_path / "hub" / "models--Qwen--Qwen3-8B" / "snapshots" / "abc"
    cached.mkdir(parents=True)
    (tmp_path / "models" / "Qwen3-8B").mkdir(parents=True)
    assert verifier_matches("Qwen/Qwen3-8B", "Qwen/Qwen3-8B")
    assert verifier_matches("Qwen/Qwen3-8B", "hf://qwen/qwen3-8b@main")
    assert verifier_matches("Qwen/Qwen3-8B", str(cached))
    assert verifier_matches("Qwen/Qwen3-8B", "models/Qwen3-8B")
    assert not verifier_matches("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B")
    assert not verifier_matches("Qwen/Qwen3-32B", str(cached))
    assert same_checkpoint("./models/Qwen3-8B", "models/Qwen3-8B/")


def plan(tmp_path: Path, spec: dict[str, object]) -> DeployPlan:
    made = plan_deploy(json.dumps(spec), target=None, target_spec=None, runtimes=[("vllm", "0.29.0")])
    assert made is not None
    return made


def test_which_checkpoints_a_config_goes_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("a", "b"):
        make_checkpoint(tmp_path / name)
    named = plan(tmp_path, {"model": "b", "method": "dspark", "num_speculative_tokens": 8})
    assert named.checkpoints([], hook=False) == ["b"]  # the checkpoint argument may be omitted
    assert named.checkpoints(["a"], hook=False) == ["a"]  # paired with the one given (DSP806 says they differ)
    assert named.checkpoints(["a"], hook=True) == ["a", "b"]  # hooks check the deploy's checkpoint too
    assert named.checkpoints(["a", "./b"], hook=False) == ["a", "./b"]
    assert named.pair(["a"], hook=False).applies("a") and not named.pair(["a", "b"], hook=False).applies("a")
    assert named.pair(["a", "b"], hook=False).applies("./b")
    anonymous = plan(tmp_path, {"num_speculative_tokens": 8})
    with pytest.raises(DsparkCkptError) as exc:
        anonymous.checkpoints([], hook=False)
    assert exc.value.code == "DSP-E026" and "names no `model`" in str(exc.value)
    assert anonymous.checkpoints([], hook=True) == [] and anonymous.applies("a")
    assert plan_deploy(None, target=None, target_spec=None, runtimes=[]) is None


def test_newer_releases_take_the_newest_row_and_older_ones_none() -> None:
    rules = vllm_release.RELEASE_RULES
    # a listed patch release is its own row (0.27.1 has its own data); an unlisted one takes the newest listed
    # release of its line before it
    assert vllm_release.rules_for("0.27.1") is rules["0.27.1"]
    assert vllm_release.rules_for("0.27.3") is rules["0.27.1"]
    assert vllm_release.rules_for("0.27.0") is rules["0.27.0"]
    assert vllm_release.rules_for("0.34.0") is rules["0.34.0"]
    assert vllm_release.rules_for("0.35.0") is rules[vllm_release.VERSIONS[-1]]
    assert vllm_release.rules_for("0.26.0") is rules["0.26.0"]
    before_all = "0.{}.0".format(parse("vllm", vllm_release.VERSIONS[0]).line[1] - 1)  # older than every listed one
    assert vllm_release.rules_for(before_all) is None


def test_the_settings_key_resolves_a_path_against_the_settings_folder_and_keeps_inline_json(tmp_path: Path) -> None:
    from dspark_ckpt.cli.settings import parse_settings

    base = tmp_path / "repo"
    path = parse_settings({"speculative-config": "deploy/spec.json"}, base=base, where="pyproject.toml")
    assert path.speculative_config == str(base / "deploy" / "spec.json")
    inline = parse_settings({"speculative-config": '{"model": "d"}'}, base=base, where="pyproject.toml")
    assert inline.speculative_config == '{"model": "d"}'
    with pytest.raises(DsparkCkptError) as exc:
        parse_settings({"speculative-config": 8}, base=base, where="pyproject.toml")
    assert exc.value.code == "DSP-E021" and "speculative-config" in str(exc.value)
