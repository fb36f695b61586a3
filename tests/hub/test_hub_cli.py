"""The CLI against a FakeHub, as a user runs it: revisions in every report, --jobs, --target, offline, tokens."""

from __future__ import annotations

import json

from conftest import make_checkpoint

from hub.conftest import SECRET, cli, publish, repo_files


def check(hub, tmp_path, *args, **kwargs):
    # every vLLM release that registers Qwen3DSparkModel (registry.py @ v0.25.0 L597 first): an older one refuses it
    return cli(hub, tmp_path, "check", *args, "--runtime", "vllm>=0.25.0", **kwargs)


def draft(tmp_path, name="d", **kwargs):
    defaults = dict(vocab=96, draft_vocab=64, target_vocab=96, d2t=True)
    return make_checkpoint(tmp_path / name, **{**defaults, **kwargs})


def test_text_and_json_name_the_commit(tmp_path, hub):
    sha = publish(hub, "org/draft", draft(tmp_path, shards=2), tags=["v1.2"])
    run = check(hub, tmp_path, "hf://org/draft@v1.2", "--target-vocab-size", "96")
    assert run.returncode == 0, run.stderr
    assert "org/draft@v1.2" in run.stdout and f"revision {sha}" in run.stdout  # the first screen's facts line
    run = check(hub, tmp_path, "org/draft", "--target-vocab-size", "96", "--format", "json")
    [doc] = json.loads(run.stdout)["checkpoints"]
    assert (doc["source"], doc["revision"], doc["vocab_kind"]) == ("org/draft", sha, "pruned")


def test_single_unreachable_repo_exits_2_with_a_code(tmp_path, hub):
    run = check(hub, tmp_path, "org/missing", "--target-vocab-size", "96")
    assert run.returncode == 2 and "[DSP-E050]" in run.stderr and "Traceback" not in run.stderr
    run = check(hub, tmp_path, "not a repo", "--target-vocab-size", "96")
    assert run.returncode == 2 and "[DSP-E010]" in run.stderr
    assert hub.count() == 1  # only the missing repo's model info was asked for


def test_jobs_checks_concurrently_in_input_order_one_json_document(tmp_path, hub):
    names = [f"org/draft-{i}" for i in range(5)]
    for i, name in enumerate(names):
        publish(hub, name, draft(tmp_path, f"d{i}", draft_vocab=64 + i))
    hub.set_knobs(latency_s=0.1)
    specs = [names[0], "org/missing", *names[1:]]
    run = check(hub, tmp_path, *specs, "--target-vocab-size", "96", "--jobs", "4", "--format", "json")
    assert run.returncode == 2, run.stderr
    doc = json.loads(run.stdout)  # one document for all
    assert [c["source"] for c in doc["checkpoints"]] == specs
    assert [c["draft_vocab_size"] for c in doc["checkpoints"]] == [64, None, 65, 66, 67, 68]
    [missing] = doc["checkpoints"][1]["findings"]
    assert missing["code"] == "DSP702" and "[DSP-E050]" in missing["message"]
    assert "[DSP-E050]" in run.stderr and "checking" not in run.stderr  # no progress bar without a TTY
    assert hub.max_in_flight >= 2
    hub.max_in_flight = 0
    run = check(hub, tmp_path, *names[:3], "--target-vocab-size", "96", "--jobs", "1", "--format", "json")
    assert run.returncode == 0 and hub.max_in_flight == 1


def test_target_from_the_hub(tmp_path, hub):
    publish(hub, "org/draft", draft(tmp_path))
    target_sha = hub.add_repo("org/target", {"config.json": json.dumps(
        {"architectures": ["X"], "text_config": {"vocab_size": 96}}).encode()})
    run = check(hub, tmp_path, "org/draft", "--target", "org/target", "--format", "json")
    [doc] = json.loads(run.stdout)["checkpoints"]
    assert doc["target_vocab_size"] == 96 and f"org/target@{target_sha[:12]}" in doc["target_vocab_source"]
    run = check(hub, tmp_path, "org/draft", "--target", "org/no-target")
    assert run.returncode == 2 and "[DSP-E050]" in run.stderr


def test_offline_after_an_online_check(tmp_path, hub):
    publish(hub, "org/draft", draft(tmp_path, shards=2))
    online = check(hub, tmp_path, "org/draft", "--target-vocab-size", "96", "--format", "json")
    n = len(hub.requests)
    offline = check(hub, tmp_path, "org/draft", "--target-vocab-size", "96", "--format", "json",
                  offline=True)
    assert offline.returncode == online.returncode == 0
    assert json.loads(offline.stdout) == json.loads(online.stdout) and len(hub.requests) == n
    gone = check(hub, tmp_path, "org/other", "--target-vocab-size", "96", offline=True)
    assert gone.returncode == 2 and "[DSP-E056]" in gone.stderr


def test_token_is_never_printed(tmp_path, hub):
    hub.add_token(SECRET, user="tester")
    folder = draft(tmp_path, shards=2)
    hub.add_repo("org/private", repo_files(folder), private=True)
    hub.add_repo("org/gated", repo_files(folder), gated=True, users={"someone-else"})
    hub.status_for("model-00002", 500, method="GET")
    runs = [check(hub, tmp_path, "org/private", "--token", SECRET, "--target-vocab-size", "96", *fmt)
            for fmt in ((), ("--format", "json"))]
    runs.append(check(hub, tmp_path, "org/private", "org/gated", "--target-vocab-size", "96", "--jobs", "2",
                    token=SECRET, extra={"DSPARK_CKPT_DEBUG": "1"}))
    runs.append(check(hub, tmp_path, "org/gated", "--token", SECRET, "--target-vocab-size", "96"))
    assert [r.returncode for r in runs] == [1, 1, 2, 2]  # shard 2 fails (DSP018), gated refuses this user
    assert "DSP018" in runs[0].stdout and "[DSP-E051]" in runs[3].stderr
    for run in runs:
        assert SECRET not in run.stdout + run.stderr and SECRET[3:15] not in run.stdout + run.stderr


def test_token_is_in_no_output_format(tmp_path, hub):
    """Every renderer, the --output file and the GitHub step summary: none may carry the token."""
    hub.add_token(SECRET, user="tester")
    folder = draft(tmp_path, shards=2, d2t=False)  # a pruned draft without d2t: DSP302 in every format
    hub.add_repo("org/private", repo_files(folder), private=True)
    summary = tmp_path / "summary.md"
    for fmt in ("text", "json", "sarif", "github", "junit", "markdown"):
        out = tmp_path / f"report.{fmt}"
        run = check(hub, tmp_path, "org/private", "--token", SECRET, "--target-vocab-size", "96",
                    "--format", fmt, "--output", str(out), extra={"GITHUB_STEP_SUMMARY": str(summary)})
        assert run.returncode == 1, (fmt, run.stderr)
        written = out.read_text()
        assert "DSP302" in written, fmt  # the report really rendered the remote checkpoint's finding
        for text in (run.stdout, run.stderr, written):
            assert SECRET not in text and SECRET[3:15] not in text, fmt
    assert summary.exists() and SECRET not in summary.read_text()
