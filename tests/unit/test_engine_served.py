"""verify --engine installed with a --speculative-config: the request vLLM's worker gets carries the deploy's
method (the speculative config less its `model`) and the name of the folder vLLM would read, and the worker resolves
such a case with the release's own SpeculativeConfig (release_worker.Release.served, as the agreement tests' served
cases are) before it builds the class that resolution settled on. The worker's vLLM side runs in the upstream tier;
here a stand-in release shows what engine_case hands on and builds."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import edit_config, make_checkpoint

from dspark_ckpt.check.deploy import plan_deploy
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.output.verify_records import VerifyResult
from dspark_ckpt.verify import release_worker
from dspark_ckpt.verify.engine_report import _subject

SPEC = {"method": "eagle3", "num_speculative_tokens": 1}


def _head(tmp_path: Path) -> Path:
    folder = make_checkpoint(tmp_path / "llama-eagle3-head", family="eagle3-llama", vocab=96, draft_vocab=32,
                             target_vocab=96, markov=False, t2d=True)
    return edit_config(folder, architectures=["LlamaForCausalLM"], model_type="llama", markov_rank=None)


def _run() -> Any:
    return SimpleNamespace(config=None, token=None, target=TargetVocab(96, "test"))


def _plan(spec: dict[str, Any]) -> Any:
    plan = plan_deploy(json.dumps(spec), target=TargetVocab(96, "test"), target_spec=None,
                       runtimes=[("vllm", "0.33.0")])
    assert plan is not None
    return plan


def test_the_worker_request_carries_the_method_where_the_config_goes_with_the_checkpoint(tmp_path: Path) -> None:
    head = _head(tmp_path)
    result = VerifyResult(device="cpu", torch_version="")
    served = _subject(str(head), None, result, _run(), [("vllm", "0.33.0")],  # type: ignore[arg-type]
                      _plan({**SPEC, "model": str(head)}).pair([str(head)], hook=False))
    case = served.case("0", "vllm")
    assert case["served"] == SPEC and case["served_as"] == "llama-eagle3-head"  # `model` is the worker's folder
    assert case["architecture"] == "Eagle3LlamaForCausalLM"  # check's build routes it by the method too
    assert "served" not in served.case("0", "sglang")  # SGLang's worker has no SpeculativeConfig to run
    plain = _subject(str(head), None, result, _run(), [("vllm", "0.33.0")])  # type: ignore[arg-type]
    assert plain.served is None and "served" not in plain.case("0", "vllm")
    # a config naming another checkpoint, with two given: not this one's method (DeployPlan.applies)
    elsewhere = _plan({**SPEC, "model": str(tmp_path / "other")}).pair([str(head), "other"], hook=False)
    other = _subject(str(head), None, result, _run(), [("vllm", "0.33.0")], elsewhere)  # type: ignore[arg-type]
    assert other.served is None


class _Release:
    """What engine_case asks of a release: its registry and a model class."""

    registry = {"Eagle3LlamaForCausalLM": ("llama_eagle3", "Eagle3LlamaForCausalLM")}

    def model_class(self, architecture: str) -> type:
        return type(architecture, (), {})


@pytest.mark.parametrize(("settled", "registered"), [("Eagle3LlamaForCausalLM", True), ("LlamaForCausalLM", False)])
def test_engine_case_builds_the_class_the_release_settles_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            settled: str, registered: bool) -> None:
    head = _head(tmp_path)
    seen: list[dict[str, Any]] = []

    def observe(release: Any, case: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        seen.append(case)
        return {"id": case["id"], "phase": "load_weights", "error": None, "cut": [], "unwritten": [],
                "partly": [], "architecture": settled, "method": "eagle3"}, None

    monkeypatch.setattr(release_worker, "observe_load", observe)
    case = {"id": "0", "folder": str(head), "target_vocab": 96, "architecture": "Eagle3LlamaForCausalLM",
            "config": {"architectures": ["Eagle3LlamaForCausalLM"]}, "bare": True, "served": SPEC,
            "served_as": "llama-eagle3-head"}
    out, _ = release_worker.engine_case(_Release(), case)
    shipped = json.loads((head / "config.json").read_text())
    assert seen[0]["config"] == shipped  # the release resolves config.json as shipped, not check's build of it
    assert (seen[0]["served"], seen[0]["served_as"], seen[0]["bare"]) == (SPEC, "llama-eagle3-head", False)
    assert (out["registered"], out["architecture"], out["method"]) == (registered, settled, "eagle3")

