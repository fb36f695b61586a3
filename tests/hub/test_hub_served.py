"""`fix org/repo --dry-run` and `fix --push` with --speculative-config: the plan on the pinned commit, and the check
of the pull request's revision, route the draft by the deploy's method as a local fix does (issue 40, item 3)."""

from __future__ import annotations

import json

from conftest import edit_config, make_checkpoint

from hub.conftest import DEFAULT_TOKEN, cli, publish

FIX = ("--target-vocab-size", "96", "--for", "vllm==0.33.0")
SPEC = json.dumps({"method": "eagle3", "model": "org/llama-eagle3-head", "num_speculative_tokens": 1})


def _publish(tmp_path, hub):  # type: ignore[no-untyped-def]
    """A pruned EAGLE-3 head whose config is a plain LlamaForCausalLM one, with its t2d and no d2t."""
    folder = make_checkpoint(tmp_path / "head", family="eagle3-llama", vocab=96, draft_vocab=32, target_vocab=96,
                             markov=False, t2d=True)
    edit_config(folder, architectures=["LlamaForCausalLM"], model_type="llama", markov_rank=None)
    return publish(hub, "org/llama-eagle3-head", folder)


def test_the_hub_plan_and_the_pr_check_use_the_deploy_s_method(tmp_path, hub):  # type: ignore[no-untyped-def]
    _publish(tmp_path, hub)
    run = cli(hub, tmp_path, "fix", "org/llama-eagle3-head", *FIX, "--dry-run", "--format", "json",
              "--speculative-config", SPEC)
    entry = json.loads(run.stdout)["checkpoints"][0]
    assert (entry["status"], entry["strategy"], entry["serving_method"]["method"]) == (
        "planned", "rebuild-d2t", "eagle3"), run.stderr
    run = cli(hub, tmp_path, "fix", "org/llama-eagle3-head", *FIX, "--dry-run", "--format", "json")
    entry = json.loads(run.stdout)["checkpoints"][0]
    assert (entry["status"], entry["refusal"]["code"], entry["serving_method"]) == ("refused", "DSP501", None)

    run = cli(hub, tmp_path, "fix", "org/llama-eagle3-head", *FIX, "--push", "--format", "json",
              "--speculative-config", SPEC, token=DEFAULT_TOKEN)
    doc = json.loads(run.stdout)
    assert run.returncode == 0 and doc["status"] == "pushed", run.stdout + run.stderr
    assert doc["plan"]["serving_method"]["method"] == "eagle3"
    codes = {f["code"] for f in doc["check"]["findings"]}  # the PR's revision, checked as served: no DSP368
    assert "DSP368" not in codes and "DSP302" not in codes
    assert [c["loads"] for c in doc["check"]["compatibility"]] == [True]
