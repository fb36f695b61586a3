"""fix and verify take the deploy's --speculative-config as check does (issue 40, item 3): its method is the serving
method of the checkpoint its `model` names, so a draft whose verdict depends on it (a base-class architecture, as
EAGLE's repository and older SpecForge export an EAGLE-3 head) gets the same answer from all three commands; a
config naming another checkpoint is ignored for this one, and one that cannot be read gets check's code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import edit_config, make_checkpoint, run_cli

RELEASE = ("--target-vocab-size", "96", "--isolated")
FOR = "vllm==0.33.0"


def _llama_eagle3(root: Path, name: str) -> Path:
    """A pruned EAGLE-3 head (D=32 < T=96) with its t2d but no d2t, its config a plain LlamaForCausalLM one: served
    as eagle3 it is Eagle3LlamaForCausalLM, loads with an identity d2t (DSP302) and rebuild-d2t repairs it; without
    a method it is the target's own class, which no release builds as a draft (DSP368), and nothing is planned."""
    folder = make_checkpoint(root / name, family="eagle3-llama", vocab=96, draft_vocab=32, target_vocab=96,
                             markov=False, t2d=True)
    return edit_config(folder, architectures=["LlamaForCausalLM"], model_type="llama", markov_rank=None)


def _spec(model: Path) -> str:
    return json.dumps({"method": "eagle3", "model": str(model), "num_speculative_tokens": 1})


def _json(*args: str, cwd: Path | None = None) -> tuple[int, dict[str, Any]]:
    done = run_cli(*args, "--format", "json", cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def _check(folder: Path, *flag: str) -> dict[str, Any]:
    return _json("check", str(folder), *RELEASE, "--runtime", FOR, *flag)[1]["checkpoints"][0]


def _verdict(entry: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(c["runtime"], c["version"], c["loads"], c["error_code"], tuple(c["silent_codes"]))
            for c in entry["compatibility"]]


def _codes(entry: dict[str, Any]) -> set[str]:
    return {f["code"] for f in entry["findings"]}


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("served")
    _llama_eagle3(root, "head")
    _llama_eagle3(root, "other")
    return root


def test_check_s_answer_depends_on_the_method(ws: Path) -> None:
    """What the other tests hold fix and verify to: check itself, with and without the method."""
    served, plain = _check(ws / "head", "--speculative-config", _spec(ws / "head")), _check(ws / "head")
    assert (served["family"], _verdict(served)) == ("eagle3-llama", [("vllm", "0.33.0", True, None, ("DSP302",))])
    assert plain["family"] is None and _verdict(plain)[0][3] == "DSP368"


def test_fix_plans_for_the_method_check_judges_with(ws: Path) -> None:
    head = ws / "head"
    check = _check(head, "--speculative-config", _spec(head))
    code, doc = _json("fix", str(head), *RELEASE, "--for", FOR, "--dry-run", "--speculative-config", _spec(head))
    entry = doc["checkpoints"][0]
    assert code == 1 and entry["status"] == "planned" and entry["strategy"] == "rebuild-d2t"
    assert [a["reason"] for a in entry["actions"]] == ["DSP302"] and "DSP302" in _codes(check)
    before = entry["compatibility"][0]["before"]  # fix's view before the repair is check's verdict
    assert (before["loads"], before["error_code"], before["silent_codes"]) == _verdict(check)[0][2:4] + (["DSP302"],)
    assert entry["serving_method"] == {"method": "eagle3", "method_from": "--speculative-config"}
    assert check["deploy"]["runtimes"][0]["method"] == "eagle3"  # check's JSON says the method, so fix's does

    code, doc = _json("fix", str(head), *RELEASE, "--for", FOR, "--dry-run")  # no method: not a draft check knows
    entry = doc["checkpoints"][0]
    assert code == 1 and entry["status"] == "refused" and entry["refusal"]["code"] == "DSP501"
    assert entry["serving_method"] is None and "deploy" not in _check(head)


def test_fix_applies_and_its_re_check_routes_by_the_method(ws: Path, tmp_path: Path) -> None:
    """The re-check of the staged result is handed the method too: without it, it would find DSP368 and refuse."""
    head = _llama_eagle3(tmp_path, "head")
    code, doc = _json("fix", str(head), *RELEASE, "--for", FOR, "--speculative-config", _spec(head))
    entry = doc["checkpoints"][0]
    assert code == 0 and entry["status"] == "applied", entry
    assert entry["compatibility"][0]["after"] == {"loads": True, "error_code": None, "silent_codes": []}
    fixed = tmp_path / "head-fixed"
    after = _check(fixed, "--speculative-config", json.dumps({"method": "eagle3", "model": str(fixed)}))
    assert _verdict(after) == [("vllm", "0.33.0", True, None, ())]
    assert entry["result"]["check_errors"] == []


def test_a_config_naming_another_checkpoint_is_ignored_for_this_one(ws: Path) -> None:
    """Two checkpoints, the config's `model` one of them: the other is fixed as without the config, as check does."""
    head, other = ws / "head", ws / "other"
    flag = ("--speculative-config", _spec(other))
    checked = _json("check", str(head), str(other), *RELEASE, "--runtime", FOR, *flag)[1]["checkpoints"]
    by_source = {Path(c["source"]).name: c for c in checked}
    assert _verdict(by_source["head"]) == _verdict(_check(head)) and "deploy" not in by_source["head"]
    assert _verdict(by_source["other"]) == _verdict(_check(other, "--speculative-config", _spec(other)))
    _, doc = _json("fix", str(head), str(other), *RELEASE, "--for", FOR, "--dry-run", *flag)
    fixed = {Path(c["source"]).name: c for c in doc["checkpoints"]}
    assert (fixed["head"]["status"], fixed["head"]["serving_method"]) == ("refused", None)
    assert (fixed["other"]["status"], fixed["other"]["strategy"]) == ("planned", "rebuild-d2t")


@pytest.mark.parametrize("command", ["check", "fix", "verify"])
def test_a_config_that_is_no_json_object_gets_check_s_code(ws: Path, command: str) -> None:
    """check reports DSP801 and analyses without a method; verify reports it as check does; fix refuses with it
    (it cannot know the method to repair for) and writes nothing."""
    if command == "verify":
        pytest.importorskip("torch")
    extra = {"check": ("--runtime", FOR), "fix": ("--for", FOR), "verify": ("--runtime", FOR)}[command]
    code, doc = _json(command, str(ws / "head"), *RELEASE, *extra, "--speculative-config", "{not json")
    entry = doc["checkpoints"][0]
    assert code == 1
    if command == "fix":
        assert entry["status"] == "refused" and entry["refusal"]["code"] == "DSP801" and not entry["actions"]
        assert not (ws / "head-fixed").exists()
    else:
        assert "DSP801" in _codes(entry)


@pytest.mark.parametrize("command", ["check", "fix", "verify"])
def test_an_unreadable_config_file_is_dsp_e027_for_every_command(ws: Path, command: str) -> None:
    done = run_cli(command, str(ws / "head"), *RELEASE, "--speculative-config", str(ws / "missing" / "spec.json"))
    assert done.returncode == 2 and "[DSP-E027]" in done.stderr and "Traceback" not in done.stderr


def test_verify_routes_by_the_method_as_check_does(ws: Path) -> None:
    pytest.importorskip("torch")
    head = ws / "head"
    check = _check(head, "--speculative-config", _spec(head))
    _, doc = _json("verify", str(head), *RELEASE, "--runtime", FOR, "--speculative-config", _spec(head))
    entry = doc["checkpoints"][0]
    assert entry["verify"]["skipped"] is None  # a draft family, so torch loaded it
    assert entry["family"] == check["family"] == "eagle3-llama"
    assert _verdict(entry) == _verdict(check) and _codes(check) <= _codes(entry)
    assert entry["deploy"]["runtimes"][0]["method"] == "eagle3"
    plain = _json("verify", str(head), *RELEASE, "--runtime", FOR)[1]["checkpoints"][0]
    assert plain["family"] is None and plain["verify"]["skipped"] and "deploy" not in plain


def test_the_settings_file_s_config_is_the_default_for_fix(ws: Path, tmp_path: Path) -> None:
    """`speculative-config` in [tool.dspark-ckpt] is fix's default as it is check's (without --isolated)."""
    head = _llama_eagle3(tmp_path, "head")
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.dspark-ckpt]\nspeculative-config = '{_spec(head)}'\ntarget-vocab-size = 96\n")
    done = run_cli("fix", "head", "--for", FOR, "--dry-run", "--format", "json", cwd=tmp_path)
    entry = json.loads(done.stdout)["checkpoints"][0]
    assert entry["strategy"] == "rebuild-d2t" and entry["serving_method"]["method"] == "eagle3", done.stderr
