"""`fix --push`: exactly the changed files, as a PR on the checked commit, then a check of the PR's revision."""

from __future__ import annotations

import json
import shlex

import pytest
from conftest import make_checkpoint, run_cli

from dspark_ckpt.formats.safetensors_header import read_header
from hub.conftest import DEFAULT_TOKEN, SECRET, cli, publish, repo_files

FIX = ("--target-vocab-size", "96", "--for", "vllm==0.33.0")


def header_of(data: bytes):
    import io

    return read_header(io.BytesIO(data), len(data)).header


@pytest.fixture
def padded(tmp_path, hub):
    """A padded draft (D = V = 100 > T = 96) in three shards, plus a README the repair must not touch."""
    folder = make_checkpoint(tmp_path / "padded", vocab=100, draft_vocab=100, target_vocab=96, shards=3)
    (folder / "README.md").write_text("# padded draft\n")
    sha = publish(hub, "org/draft", folder)
    return folder, sha


def test_push_opens_a_pr_with_exactly_the_changed_files(tmp_path, hub, padded):
    folder, sha = padded
    local = run_cli("fix", str(folder), *FIX, "--out", str(tmp_path / "local-fix"))
    assert local.returncode == 0, local.stdout + local.stderr
    changed = {n for n, data in repo_files(tmp_path / "local-fix").items() if repo_files(folder).get(n) != data}
    # the shards holding lm_head and markov_w2, the index (total_size) and config.json; no other shard, no README
    weight_map = json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"]
    trimmed = {weight_map["lm_head.weight"], weight_map["markov_head.markov_w2.weight"]}
    assert len(set(weight_map.values()) - trimmed) >= 1  # a shard the fix leaves alone
    assert changed == {"config.json", "model.safetensors.index.json", *trimmed}

    run = cli(hub, tmp_path, "fix", "org/draft", *FIX, "--push", "--token", DEFAULT_TOKEN)
    assert run.returncode == 0, run.stdout + run.stderr
    [commit] = hub.commits
    assert (commit.repo_id, commit.parent, commit.create_pr, commit.pr_num, commit.deleted) == (
        "org/draft", sha, True, 1, [])
    assert set(commit.added) == changed
    fixed = repo_files(tmp_path / "local-fix")
    for name, data in commit.added.items():
        if name.endswith(".safetensors"):
            assert header_of(data).entries == header_of(fixed[name]).entries and len(data) == len(fixed[name])
        else:
            assert json.loads(data) == json.loads(fixed[name])
    assert commit.title == "dspark-ckpt fix: DSP305 for vllm==0.33.0"
    for needle in ("DSP305 padded-rows-samplable", "Runtimes targeted: vllm==0.33.0", f"Checked commit: {sha}",
                   *(f"- {n}" for n in sorted(changed))):
        assert needle in commit.description
    assert "README.md" not in commit.description
    assert hub.repos["org/draft"].branches["main"] == sha  # main untouched: a PR, not a push
    # the URL, then the check of the PR's own revision
    assert commit.pr_url in run.stdout and "check of refs/pr/1" in run.stdout
    assert f"revision  {commit.oid}" in run.stdout and "DSP305" not in run.stdout.split("check of refs/pr/1")[1]


def test_push_json_and_nothing_to_do(tmp_path, hub, padded):
    run = cli(hub, tmp_path, "fix", "org/draft", *FIX, "--push", "--format", "json", token=DEFAULT_TOKEN)
    doc = json.loads(run.stdout)
    [commit] = hub.commits
    assert (doc["schema_version"], doc["command"]) == (1, "fix --push")  # docs/json.md
    assert (doc["status"], doc["pr_url"], doc["commit"], doc["parent_commit"]) == (
        "pushed", commit.pr_url, commit.oid, commit.parent)
    assert sorted(doc["files"]) == sorted(commit.added) and doc["check"]["revision"] == commit.oid
    clean = make_checkpoint(tmp_path / "clean", vocab=96, draft_vocab=96, target_vocab=96)
    publish(hub, "org/clean", clean)
    run = cli(hub, tmp_path, "fix", "org/clean", *FIX, "--push", token=DEFAULT_TOKEN)
    assert run.returncode == 0 and "nothing pushed" in run.stdout and len(hub.commits) == 1


def test_push_without_a_usable_token(tmp_path, hub, padded):
    hub.add_token(SECRET, user="someone", role="read")
    hub.status_for("/commit/", 403, method="POST", message="this token may not open pull requests")
    run = cli(hub, tmp_path, "fix", "org/draft", *FIX, "--push", "--token", SECRET)
    assert run.returncode == 2 and "[DSP-E051]" in run.stderr and hub.commits == []
    assert SECRET not in run.stdout + run.stderr
    hub.faults.clear()
    run = cli(hub, tmp_path, "fix", "org/draft", *FIX, "--push")  # no token at all: the Hub's own 401
    assert run.returncode == 2 and "[DSP-E051]" in run.stderr and hub.commits == []


def test_push_refuses_local_targets_and_local_outputs(tmp_path, hub, padded):
    folder, _ = padded
    run = cli(hub, tmp_path, "fix", str(folder), *FIX, "--push")
    assert run.returncode == 2 and "[DSP-E059]" in run.stderr
    run = cli(hub, tmp_path, "fix", "org/draft", *FIX, "--push", "--out", str(tmp_path / "x"))
    assert run.returncode == 2 and "[DSP-E059]" in run.stderr and hub.count() == 0
    # its hint is the same fix as a dry run, runnable as pasted: it plans, and pushes nothing
    hinted = shlex.split(run.stderr.split("hint: `", 1)[1].split("`", 1)[0])
    assert hinted[:3] == ["dspark-ckpt", "fix", "org/draft"] and "--dry-run" in hinted
    assert all(word in hinted for word in FIX)
    planned = cli(hub, tmp_path, *hinted[1:])
    assert planned.returncode in (0, 1) and "dry run" in planned.stdout + planned.stderr, planned.stderr
    assert hub.commits == []
