"""`fix --push` resolves its run as every fix does (cli/run.py resolve_run): the settings file's runtime and
target reach the plan, the pull request and the check of its revision; -q and -v are checked and honoured."""

from __future__ import annotations

import json

import pytest
from conftest import make_checkpoint

from hub.conftest import DEFAULT_TOKEN, cli, publish

RUNTIME = "vllm==0.33.0"


@pytest.fixture
def padded(tmp_path, hub):
    """A padded draft (D = V = 100 > T = 96) on the Hub: DSP305 on vLLM, repaired by trimming the rows."""
    folder = make_checkpoint(tmp_path / "padded", vocab=100, draft_vocab=100, target_vocab=96, shards=2)
    return publish(hub, "org/draft", folder)


@pytest.fixture
def project(tmp_path):
    """A project folder whose dspark-ckpt.toml names the runtime and the target (a folder, relative to the file)."""
    root = tmp_path / "project"
    (root / "target").mkdir(parents=True)
    (root / "target" / "config.json").write_text(json.dumps({"vocab_size": 96, "hidden_size": 64}))
    (root / "dspark-ckpt.toml").write_text(f'runtime = ["{RUNTIME}"]\ntarget = "target"\n')
    return root


def test_settings_file_runtime_and_target_reach_the_push(tmp_path, hub, padded, project):
    run = cli(hub, tmp_path, "fix", "org/draft", "--push", "--format", "json", token=DEFAULT_TOKEN, cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    doc = json.loads(run.stdout)
    assert (doc["schema_version"], doc["command"], doc["status"]) == (1, "fix --push", "pushed")  # docs/json.md
    plan = doc["plan"]
    assert (plan["runtimes"], plan["target_vocab_size"]) == ([RUNTIME], 96)  # not every runtime, not "no T"
    [commit] = hub.commits
    assert commit.title == f"dspark-ckpt fix: DSP305 for {RUNTIME}"
    for needle in ("Target vocab T: 96", f"Runtimes targeted: {RUNTIME}", f"Checked commit: {padded}"):
        assert needle in commit.description
    # the PR's revision is checked against the same target, resolved once from the file, not re-resolved
    check = doc["check"]
    assert check["revision"] == commit.oid and check["target_vocab_size"] == 96
    assert str(project / "target" / "config.json") in check["target_vocab_source"]
    assert [f'{c["runtime"]}=={c["version"]}' for c in check["compatibility"]] == [RUNTIME]


def test_push_text_names_the_settings_runtime(tmp_path, hub, padded, project):
    run = cli(hub, tmp_path, "fix", "org/draft", "--push", token=DEFAULT_TOKEN, cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"fix for {RUNTIME} (T=96)" in run.stdout and "opened pull request:" in run.stdout
    assert "check of refs/pr/1:" in run.stdout


def test_push_quiet_and_verbose_contradict(tmp_path, hub, padded):
    before = hub.count()
    run = cli(hub, tmp_path, "fix", "org/draft", "--target-vocab-size", "96", "--for", RUNTIME, "--push", "-q", "-v",
              token=DEFAULT_TOKEN)
    assert run.returncode == 2 and "[DSP-E025]" in run.stderr, run.stderr
    assert hub.commits == [] and hub.count() == before  # a usage error: nothing read, nothing pushed


def test_push_quiet_is_one_line_and_verbose_says_what_shaped_the_run(tmp_path, hub, padded, project):
    run = cli(hub, tmp_path, "fix", "org/draft", "--push", "-q", token=DEFAULT_TOKEN, cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    [commit] = hub.commits
    [line] = run.stdout.splitlines()
    assert line.startswith(f"org/draft @ {padded}: opened pull request {commit.pr_url}")
    assert line.endswith("check of refs/pr/1 passes")
    again = cli(hub, tmp_path, "fix", "org/draft", "--push", "-v", token=DEFAULT_TOKEN, cwd=project)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"settings: {project / 'dspark-ckpt.toml'}" in again.stderr and f"runtimes: {RUNTIME}" in again.stderr


def test_push_isolated_ignores_the_settings_file(tmp_path, hub, padded, project):
    run = cli(hub, tmp_path, "fix", "org/draft", "--push", "--isolated", token=DEFAULT_TOKEN, cwd=project)
    assert run.returncode == 2 and "[DSP-E061]" in run.stderr, run.stdout + run.stderr  # no T without the file
    assert hub.commits == []


def test_hub_dry_run_reads_the_settings_file_and_honours_quiet(tmp_path, hub, padded, project):
    run = cli(hub, tmp_path, "fix", "org/draft", "--dry-run", "-q", cwd=project)
    assert run.returncode == 1, run.stdout + run.stderr  # it would change the repo
    [line] = run.stdout.splitlines()
    assert line.startswith(f"hf://org/draft@{padded}: would apply ") and f"for {RUNTIME}" in line
    assert hub.commits == []
