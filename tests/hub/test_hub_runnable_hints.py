"""A Hub draft's hint names the repo at the commit checked: its --dry-run shows the plan, its --push opens the PR."""

from __future__ import annotations

import json
import re
import shlex

from conftest import make_checkpoint

from hub.conftest import DEFAULT_TOKEN, cli, publish

COMMAND = re.compile(r"`(dspark-ckpt fix [^`]+)`")


def test_the_hub_hint_dry_runs_then_pushes(tmp_path, hub):
    folder = make_checkpoint(tmp_path / "padded", vocab=100, draft_vocab=100, target_vocab=96)
    sha = publish(hub, "org/draft", folder)
    checked = cli(hub, tmp_path, "check", "org/draft", "--target-vocab-size", "96", "--runtime", "vllm==0.29.0",
                  "--format", "json")
    assert checked.returncode == 1, checked.stderr
    [hint] = [f["hint"] for f in json.loads(checked.stdout)["checkpoints"][0]["findings"] if f["code"] == "DSP302"]
    dry, push = (shlex.split(c) for c in COMMAND.findall(hint))
    assert dry[2] == push[2] == f"org/draft@{sha}"  # the commit that was checked, not whatever main is later
    assert dry[-1] == "--dry-run" and push[-1] == "--push" and dry[:-1] == push[:-1]

    planned = cli(hub, tmp_path, *dry[1:])
    assert planned.returncode == 1 and "trim lm_head.weight" in planned.stdout, planned.stdout + planned.stderr
    assert not hub.commits  # a dry run pushes nothing

    pushed = cli(hub, tmp_path, *push[1:], token=DEFAULT_TOKEN)
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    [commit] = hub.commits
    assert (commit.repo_id, commit.parent, commit.create_pr) == ("org/draft", sha, True)
    assert "DSP302" not in pushed.stdout.split("check of refs/pr/1")[1]
