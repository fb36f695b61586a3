"""`fix org/repo --dry-run` plans against the repo's pinned commit (read as check reads it) and writes or pushes
nothing: no pull request, no shard downloaded, no local folder; a real FakeHub on 127.0.0.1."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint, run_cli

from hub.conftest import HERE, publish
from server import FakeHub

FIX = ("--target-vocab-size", "96", "--for", "vllm==0.33.0")
SHARD_SIZES_AT_LEAST = 2000  # each tiny shard's data is larger than its header


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with FakeHub() as server:
        server.client_env(monkeypatch, tmp_path / "hf")
        yield server


def cli(hub: FakeHub, cwd: Path, *args: str) -> Any:
    """The real CLI pointed at the FakeHub, with the network guard that refuses anything but 127.0.0.1."""
    env = hub.subprocess_env(cwd / "hf")
    env["PYTHONPATH"] = os.pathsep.join([str(HERE / "netguard"), str(HERE.parent.parent)])
    env["DSPARK_TEST_NET_LOG"] = str(cwd / "net-violations.log")
    return run_cli(*args, env=env, cwd=cwd)


@pytest.fixture
def padded(tmp_path: Path, hub: FakeHub) -> str:
    folder = make_checkpoint(tmp_path / "src" / "padded", vocab=100, draft_vocab=100, target_vocab=96, shards=3)
    return publish(hub, "org/draft", folder)


def test_dry_run_of_a_hub_repo_plans_at_the_pinned_commit_and_pushes_nothing(tmp_path: Path, hub: FakeHub,
                                                                           padded: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for spec in ("org/draft", "hf://org/draft", f"org/draft@{padded[:12]}"):
        run = cli(hub, work, "fix", spec, *FIX, "--dry-run")
        assert run.returncode == 1, run.stdout + run.stderr  # 1: the plan would change the repo
        assert f"hf://org/draft@{padded}" in run.stdout and "strategy trim" in run.stdout
        assert '+  "draft_vocab_size": 96' in run.stdout and "nothing was written or pushed" in run.stdout
        assert "DSP-E062" not in run.stderr and "hf:/org" not in run.stdout + run.stderr
    assert hub.commits == [] and hub.count("POST") == 0, "no commit, no pull request"
    shard_reads = [r for r in hub.requests if r.method == "GET" and r.path.endswith(".safetensors")]
    assert shard_reads and all(r.range is not None for r in shard_reads), "shard headers only, by ranged reads"
    cached = [p for p in (work / "hf").rglob("*.safetensors") if p.is_file()]
    assert all(p.stat().st_size < SHARD_SIZES_AT_LEAST for p in cached), "no shard downloaded"
    assert sorted(p.name for p in work.iterdir() if p.name != "net-violations.log") == ["hf"], "no local folder"
    assert not (work / "net-violations.log").exists()


def test_dry_run_of_a_hub_repo_as_json(tmp_path: Path, hub: FakeHub, padded: str) -> None:
    run = cli(hub, tmp_path, "fix", "org/draft", *FIX, "--dry-run", "--format", "json")
    [doc] = json.loads(run.stdout)["checkpoints"]
    assert run.returncode == 1 and doc["status"] == "planned" and doc["source"] == f"hf://org/draft@{padded}"
    assert {a["action"] for a in doc["actions"]} == {"trim-rows", "set-config"} and doc["diff"]
    assert hub.commits == []


def test_dry_run_of_a_clean_hub_repo_exits_zero(tmp_path: Path, hub: FakeHub) -> None:
    folder = make_checkpoint(tmp_path / "src" / "clean", vocab=96, draft_vocab=96, target_vocab=96)
    publish(hub, "org/clean", folder)
    run = cli(hub, tmp_path, "fix", "org/clean", *FIX, "--dry-run")
    assert run.returncode == 0 and "nothing to do" in run.stdout, run.stdout + run.stderr
