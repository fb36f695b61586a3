"""Every way the Hub can fail: an operational error with a stable code, or a finding for one shard."""

from __future__ import annotations

import pytest
from conftest import make_checkpoint

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.errors import SourceError
from dspark_ckpt.model.findings import Severity
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.hub import open_hub, parse_repo_spec
from dspark_ckpt.sources.hub_http import RetryPolicy
from dspark_ckpt.sources.resolve import with_source_notes
from hub.conftest import DEFAULT_TOKEN, publish

SHARD1, SHARD2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"


def check(source):
    # every vLLM release that registers Qwen3DSparkModel (registry.py @ v0.25.0 L597 first): an older one refuses it
    report = inspect_checkpoint(source, target=TargetVocab(96, "test"), runtimes=parse_selectors(["vllm>=0.25.0"]))
    return with_source_notes(report, source)


def opened(spec, token=None):
    return open_hub(parse_repo_spec(spec), token=token)


def error_of(spec, token=None, *, read=False):
    with pytest.raises(SourceError) as exc:
        source = opened(spec, token)
        if read:
            check(source)
    return exc.value


@pytest.fixture
def repo(tmp_path, hub):
    folder = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, shards=2, d2t=True)
    publish(hub, "org/draft", folder)
    return folder


def test_missing_repo_and_revision(hub, repo):
    err = error_of("org/nope")
    assert err.code == "DSP-E050" and "not found" in str(err) and "token" in err.hint
    err = error_of("org/draft@no-such-branch")
    assert err.code == "DSP-E052" and "no-such-branch" in str(err)


def test_private_repo_needs_a_token(tmp_path, hub):
    hub.add_repo("org/private", {"config.json": b"{}"}, private=True)
    assert error_of("org/private").code == "DSP-E050"
    assert opened("org/private", DEFAULT_TOKEN).revision is not None


def test_gated_repo_without_access(tmp_path, hub, repo):
    from hub.conftest import repo_files

    hub.add_repo("org/gated", repo_files(repo), gated=True, users={"tester"})
    hub.add_token("hf_other_user", user="mallory")
    for token in (None, "hf_other_user"):  # 401 without a token, 403 with one that has no access
        err = error_of("org/gated", token, read=True)
        assert err.code == "DSP-E051" and "gated" in str(err) and "--token" in err.hint
    report = check(opened("org/gated", DEFAULT_TOKEN))
    assert report.family == "qwen3-dspark" and report.shards == 2 and not report.at_or_above(Severity.ERROR)


def test_rate_limit_is_retried_honouring_retry_after(hub, repo):
    hub.status_for("/api/models/", 429, times=2, retry_after=0)
    hub.status_for(SHARD1, 429, times=1, retry_after=0, method="GET")
    report = check(opened("org/draft"))
    assert report.revision and [r.status for r in hub.matching("GET", "/api/models/")] == [429, 429, 200]
    assert [r.status for r in hub.matching("GET", SHARD1)][:2] == [429, 206]
    assert not [f for f in report.findings if f.code == "DSP018"]


def test_rate_limit_gives_up_within_bounds(hub, repo):
    hub.status_for("/api/models/", 429, retry_after=0)
    err = error_of("org/draft")
    assert err.code == "DSP-E053" and "429" in str(err)
    assert hub.count("GET", "/api/models/") == RetryPolicy().attempts
    hub.faults.clear()
    hub.status_for("/api/models/", 429, retry_after=3600)  # not worth waiting: fail at once, say how long
    err = error_of("org/draft")
    assert err.code == "DSP-E053" and "3600" in str(err)
    assert hub.count("GET", "/api/models/") == RetryPolicy().attempts + 1


def test_server_errors_and_timeouts_at_resolution(hub, repo, monkeypatch):
    hub.status_for("/api/models/", 503)
    assert error_of("org/draft").code == "DSP-E054"
    hub.faults.clear()
    monkeypatch.setenv("DSPARK_CKPT_HUB_TIMEOUT", "0.2")
    monkeypatch.setenv("DSPARK_CKPT_HUB_RETRIES", "1")
    hub.fault("/api/models/", hang_s=1.0)
    err = error_of("org/draft")
    assert err.code == "DSP-E054" and "timed out after 0.2 s" in str(err) and "2 attempt" in str(err)


def test_one_bad_shard_is_a_finding_not_a_crash(hub, repo):
    hub.status_for(SHARD2, 500, method="GET")
    report = check(opened("org/draft"))
    bad = [f for f in report.findings if f.code == "DSP018"]
    assert [f.file for f in bad] == [SHARD2] and "HTTP 500" in bad[0].message and "4 attempts" in bad[0].message
    assert report.shards == 1 and any(t.file == SHARD1 for t in report.tensors)


def test_shard_forbidden_and_timeout(hub, repo, monkeypatch):
    monkeypatch.setenv("DSPARK_CKPT_HUB_TIMEOUT", "0.2")
    monkeypatch.setenv("DSPARK_CKPT_HUB_RETRIES", "0")
    hub.status_for(SHARD1, 403, method="GET")
    hub.fault(SHARD2, method="GET", hang_s=1.0)
    found = {f.file: f.message for f in check(opened("org/draft")).findings if f.code == "DSP018"}
    assert "HTTP 403" in found[SHARD1] and "timed out after 0.2 s" in found[SHARD2]


def test_short_body_is_retried_then_reported(hub, repo):
    hub.fault(SHARD1, method="GET", times=1, truncate_body=5)
    report = check(opened("org/draft"))
    assert not [f for f in report.findings if f.code == "DSP018"]
    assert [r.bytes for r in hub.matching("GET", SHARD1)][0] == 5
    hub.fault(SHARD2, method="GET", truncate_body=5)
    report = check(opened("org/draft"))
    [bad] = [f for f in report.findings if f.code == "DSP018"]
    assert bad.file == SHARD2 and "RemoteProtocolError" in bad.message


def test_server_ignoring_range_is_reported_and_not_downloaded(tmp_path, hub):
    folder = make_checkpoint(tmp_path / "big", vocab=20000, draft_vocab=20000, target_vocab=20000, hidden=64)
    publish(hub, "org/big", folder)
    size = (folder / "model.safetensors").stat().st_size
    assert size > 10 * 2**20
    hub.set_knobs(ignore_range=True)
    source = opened("org/big")
    report = check(source)
    [note] = [f for f in report.findings if f.code == "DSP701"]
    assert note.file == "model.safetensors" and note.severity == "info"
    assert [r.status for r in hub.matching("GET", "model.safetensors$")] == [200]
    assert source.fetch_log.bytes < 2 * 2**20 < size  # read the prefix, then hung up
    assert report.shards == 1 and not [f for f in report.findings if f.code.startswith("DSP0")]


def test_retry_policy_bounds():
    policy = RetryPolicy(attempts=4, base_s=0.5, cap_s=1.5, max_wait_s=30)
    assert [policy.wait_for(i, None) for i in range(4)] == [0.5, 1.0, 1.5, None]
    assert policy.wait_for(0, 12.0) == 12.0 and policy.wait_for(0, 31.0) is None and policy.wait_for(3, 0) is None
