"""The Hub source in-process against a real FakeHub: same findings as a local check, pinned, ranged, cached."""

from __future__ import annotations

import re
import socket
import struct
from pathlib import Path

import pytest
from conftest import make_checkpoint

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.errors import SourceError
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.hub import open_hub, parse_repo_spec
from dspark_ckpt.sources.hub_http import PREFETCH
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.resolve import open_source, with_source_notes
from hub.conftest import publish, repo_files

RUNTIMES = parse_selectors(["vllm"])


def check(source, target=96):
    report = inspect_checkpoint(source, target=TargetVocab(target, "test"), runtimes=RUNTIMES)
    return with_source_notes(report, source)


def essence(report):
    """What must not depend on where the checkpoint lives."""
    return ([(f.code, f.message, f.file, f.tensor) for f in report.findings], report.vocab_kind,
            [(t.name, t.shape, t.file) for t in report.tensors], [(c.version, c.loads) for c in report.compatibility])


@pytest.mark.parametrize("spec, expected", [
    ("org/repo", ("org/repo", None)),
    ("org/repo@v1.2", ("org/repo", "v1.2")),
    ("hf://org/repo@refs/pr/3", ("org/repo", "refs/pr/3")),
    ("hf://org/repo", ("org/repo", None)),
    ("org/repo@", None), ("org", None), ("a/b/c", None), ("../x", None), ("org/re po", None), ("org/..", None),
])
def test_parse_repo_spec(spec, expected):
    parsed = parse_repo_spec(spec)
    assert (parsed and (parsed.repo_id, parsed.revision)) == expected


def test_existing_local_path_wins_over_repo_id(tmp_path, monkeypatch, hub):
    make_checkpoint(tmp_path / "org" / "draft")
    monkeypatch.chdir(tmp_path)
    assert open_source("org/draft").revision is None  # local: no request at all
    assert hub.requests == []
    with pytest.raises(SourceError) as exc:
        open_source("no-such-folder")
    assert exc.value.code == "DSP-E010"


@pytest.mark.parametrize("shards, extra", [(1, {}), (3, {"d2t": True, "t2d": True})])
def test_remote_check_matches_local_check(tmp_path, hub, shards, extra):
    folder = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, shards=shards, **extra)
    sha = publish(hub, "org/draft", folder)
    source = open_hub(parse_repo_spec("org/draft"))
    remote = check(source)
    assert remote.revision == sha and remote.source == "org/draft"
    assert essence(remote) == essence(check(local_source(folder)))
    assert remote.shards == shards


def test_one_ranged_request_per_shard_within_budget(tmp_path, hub):
    folder = make_checkpoint(tmp_path / "d", vocab=4000, draft_vocab=4000, target_vocab=4000, hidden=32, shards=2)
    publish(hub, "org/draft", folder)
    check(open_hub(parse_repo_spec("org/draft")), target=4000)
    for shard in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"):
        gets = hub.matching("GET", f"/resolve/.*/{shard}$")
        header = struct.unpack("<Q", (folder / shard).read_bytes()[:8])[0]
        assert len(gets) == 1 and gets[0].status == 206 and gets[0].range == f"bytes=0-{PREFETCH - 1}"
        assert gets[0].bytes <= 8 + header + PREFETCH < (folder / shard).stat().st_size
    # model info once, the JSON files once each (one bounded GET: no more bytes than listed), one GET per shard
    assert sorted((r.method, r.path.rsplit("/", 1)[-1]) for r in hub.requests) == sorted([
        ("GET", "draft"), ("GET", "config.json"), ("GET", "model.safetensors.index.json"),
        ("GET", "model-00001-of-00002.safetensors"), ("GET", "model-00002-of-00002.safetensors")])


def test_header_larger_than_the_first_read_takes_one_more_request(tmp_path, hub):
    meta = {f"k{i}": "x" * 100 for i in range(1500)}  # ~150 KB header
    from conftest import write_safetensors

    folder = make_checkpoint(tmp_path / "d")
    tensors = {}
    import numpy as np
    tensors["norm.weight"] = np.ones(4, dtype=np.float32)
    write_safetensors(folder / "model.safetensors", tensors, metadata=meta)
    publish(hub, "org/big", folder)
    source = open_hub(parse_repo_spec("org/big"))
    report = check(source)
    assert "DSP0" not in " ".join(f.code for f in report.findings)
    ranges = [r.range for r in hub.matching("GET", "model.safetensors$")]
    header_end = 8 + struct.unpack("<Q", (folder / "model.safetensors").read_bytes()[:8])[0]
    assert ranges == [f"bytes=0-{PREFETCH - 1}", f"bytes={PREFETCH}-{header_end - 1}"]


def test_revision_is_pinned_to_the_commit_resolved_once(tmp_path, hub):
    good = make_checkpoint(tmp_path / "good", vocab=96, draft_vocab=64, target_vocab=96, d2t=True)
    sha = publish(hub, "org/draft", good, tags=["v1"])
    source = open_hub(parse_repo_spec("org/draft"))
    # main moves after resolution: broken config and weights; the check must still read the resolved commit
    moved = hub.add_commit("org/draft", {"config.json": b"[1]", "model.safetensors": b"junk"})
    report = check(source)
    assert report.revision == sha != moved
    assert essence(report) == essence(check(local_source(good)))
    file_requests = hub.matching(path_regex="/resolve/")
    assert file_requests and all(f"/resolve/{sha}/" in r.path for r in file_requests)
    assert hub.count("GET", "/api/models/") == 1
    assert open_hub(parse_repo_spec("org/draft@v1")).revision == sha
    assert open_hub(parse_repo_spec(f"org/draft@{sha[:8]}")).revision == sha
    assert open_hub(parse_repo_spec("org/draft")).revision == moved


def test_truncated_and_padded_shards_are_size_findings(tmp_path, hub):
    folder = make_checkpoint(tmp_path / "d", shards=2)
    files = repo_files(folder)
    files["model-00001-of-00002.safetensors"] = files["model-00001-of-00002.safetensors"][:-10]
    files["model-00002-of-00002.safetensors"] += b"\0" * 3
    hub.add_repo("org/cut", files)
    report = check(open_hub(parse_repo_spec("org/cut")))
    dsp015 = {f.file: f.message for f in report.findings if f.code == "DSP015"}
    assert re.search(r"\b10 (bytes )?missing", dsp015["model-00001-of-00002.safetensors"])  # against the Hub's size
    assert re.search(r"\b3 trailing", dsp015["model-00002-of-00002.safetensors"])


def test_missing_shard_named_by_the_index(tmp_path, hub):
    folder = make_checkpoint(tmp_path / "d", shards=2)
    files = repo_files(folder)
    del files["model-00002-of-00002.safetensors"]
    hub.add_repo("org/partial", files)
    codes = {f.code: f.file for f in check(open_hub(parse_repo_spec("org/partial"))).findings}
    assert codes["DSP103"] == "model-00002-of-00002.safetensors"


def test_d2t_contents_fetch_only_their_range(tmp_path, hub):
    folder = make_checkpoint(tmp_path / "d", vocab=30000, draft_vocab=20000, target_vocab=30000, hidden=8,
                             d2t=True, markov=False, embed=False)
    publish(hub, "org/pruned", folder)
    source = open_hub(parse_repo_spec("org/pruned"))
    report = check(source, target=30000)
    assert not [f for f in report.findings if f.code.startswith("DSP40")]  # d2t was read and validated
    gets = hub.matching("GET", "model.safetensors$")
    assert len(gets) == 2 and gets[1].bytes == 20000 * 8  # the int64 d2t, nothing more
    assert source.fetch_log.requests == 2


def test_cache_snapshot_path_is_a_local_input(tmp_path, hub):
    from huggingface_hub import hf_hub_download

    folder = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, d2t=True)
    publish(hub, "org/draft", folder)
    snapshot = Path(hf_hub_download("org/draft", "config.json")).parent
    hf_hub_download("org/draft", "model.safetensors")
    assert any(p.is_symlink() for p in snapshot.iterdir())
    before = {p: p.resolve().stat().st_mtime_ns for p in snapshot.iterdir()}
    report = check(open_source(str(snapshot)))
    assert essence(report) == essence(check(local_source(folder)))
    assert before == {p: p.resolve().stat().st_mtime_ns for p in snapshot.iterdir()}


def test_guard_refuses_connections_outside_loopback(net_guard):
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("192.0.2.1", 80), timeout=0.1)
    assert net_guard.violations() == ["192.0.2.1"]
    net_guard.refused.clear()  # this one was on purpose


def test_offline_from_what_an_online_check_kept(tmp_path, hub, monkeypatch):
    import huggingface_hub.constants as C

    folder = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, shards=2, d2t=True, t2d=True)
    sha = publish(hub, "org/draft", folder)
    online = check(open_hub(parse_repo_spec("org/draft")))
    monkeypatch.setattr(C, "HF_HUB_OFFLINE", True)
    before = len(hub.requests)
    offline = check(open_hub(parse_repo_spec("org/draft")))
    assert offline.revision == sha and essence(offline) == essence(online)
    assert len(hub.requests) == before
    with pytest.raises(SourceError) as exc:
        open_hub(parse_repo_spec("org/never-seen"))
    assert exc.value.code == "DSP-E056" and "HF_HUB_OFFLINE" in str(exc.value)


def test_offline_from_a_download_and_an_uncached_shard(tmp_path, hub, monkeypatch):
    import huggingface_hub.constants as C
    from huggingface_hub import hf_hub_download

    folder = make_checkpoint(tmp_path / "d", shards=2)
    sha = publish(hub, "org/draft", folder)
    for name in ("config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors"):
        hf_hub_download("org/draft", name)  # what another tool (vLLM, huggingface-cli) leaves in the cache
    monkeypatch.setattr(C, "HF_HUB_OFFLINE", True)
    before = len(hub.requests)
    report = check(open_hub(parse_repo_spec("org/draft")))
    assert report.revision == sha and len(hub.requests) == before
    # shard 2 was never cached: not "missing" (the Hub may have it) but unreadable offline, said plainly
    unread = {f.file: f.message for f in report.findings if f.code == "DSP018"}
    assert list(unread) == ["model-00002-of-00002.safetensors"]
    assert "not in the local cache and HF_HUB_OFFLINE=1 is set" in unread["model-00002-of-00002.safetensors"]
    assert not any(f.code in ("DSP103", "DSP101") or f.code.startswith("DSP0") and f.code != "DSP018"
                   for f in report.findings)
