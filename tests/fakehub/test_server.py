"""Drive tests/fakehub/server.py with the real huggingface_hub 2.4.0 client (no network beyond 127.0.0.1)."""
from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import httpx2
import huggingface_hub
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, hf_hub_download
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils import get_session
from server import DEFAULT_TOKEN, READ_TOKEN, FakeHub

REPO = "org/draft"
CONFIG = json.dumps({"architectures": ["LlamaForCausalLM"], "hidden_size": 64}).encode()


def make_safetensors(n_floats: int = 16) -> bytes:
    header = json.dumps({"w": {"dtype": "F32", "shape": [n_floats], "data_offsets": [0, 4 * n_floats]},
                         "__metadata__": {"format": "pt"}}).encode()
    return struct.pack("<Q", len(header)) + header + struct.pack(f"<{n_floats}f", *range(n_floats))


WEIGHTS = make_safetensors()


@pytest.fixture
def hub(tmp_path, monkeypatch):
    with FakeHub() as hub:
        files = {"config.json": CONFIG, "model.safetensors": WEIGHTS, "README.md": b"# draft\n"}
        hub.main_sha = hub.add_repo(REPO, files, tags=["v1.0"], card_tags=["safetensors"])
        hub.client_env(monkeypatch, tmp_path / "hf_home")
        yield hub


@pytest.fixture
def api(hub):
    return HfApi(endpoint=hub.endpoint, token=DEFAULT_TOKEN)


# -- model_info / refs / whoami ------------------------------------------------------------------------
def test_model_info_files_metadata(hub, api):
    info = api.model_info(REPO, files_metadata=True)
    assert info.id == REPO and info.sha == hub.main_sha and info.tags == ["safetensors"]
    sib = {s.rfilename: s for s in info.siblings}
    assert set(sib) == {"config.json", "model.safetensors", "README.md"}
    assert sib["config.json"].size == len(CONFIG) and sib["config.json"].lfs is None
    assert sib["config.json"].blob_id == huggingface_hub.utils.sha.git_hash(CONFIG)
    lfs = sib["model.safetensors"].lfs
    assert lfs is not None and lfs.sha256 == hashlib.sha256(WEIGHTS).hexdigest() and lfs.size == len(WEIGHTS)
    assert hub.matching("GET", "/api/models/org/draft$")[-1].status == 200
    plain = api.model_info(REPO)  # without blobs=true only rfilename is sent
    assert all(s.size is None and s.lfs is None for s in plain.siblings)


def test_model_info_revisions_and_refs(hub, api):
    new_sha = hub.add_commit(REPO, {"config.json": b"{}", "README.md": None}, message="second")
    hub.add_branch(REPO, "dev", hub.main_sha)
    assert api.model_info(REPO).sha == new_sha
    assert api.model_info(REPO, revision=hub.main_sha).sha == hub.main_sha
    assert api.model_info(REPO, revision=hub.main_sha[:7]).sha == hub.main_sha
    assert api.model_info(REPO, revision="v1.0").sha == hub.main_sha
    assert api.model_info(REPO, revision="dev").sha == hub.main_sha
    assert {s.rfilename for s in api.model_info(REPO).siblings} == {"config.json", "model.safetensors"}
    refs = api.list_repo_refs(REPO)
    assert {b.name: b.target_commit for b in refs.branches} == {"main": new_sha, "dev": hub.main_sha}
    assert [(t.name, t.ref) for t in refs.tags] == [("v1.0", "refs/tags/v1.0")]


def test_whoami(hub, api):
    assert api.whoami()["name"] == "tester"
    assert api.whoami(token=READ_TOKEN)["auth"]["accessToken"]["role"] == "read"
    with pytest.raises(HfHubHTTPError) as exc:
        api.whoami(token="hf_wrong")
    assert exc.value.response.status_code == 401


# -- downloads, cache, offline ---------------------------------------------------------------------------
def test_hf_hub_download_caches_then_offline(hub, tmp_path, monkeypatch):
    path = hf_hub_download(REPO, "config.json", revision=hub.main_sha, endpoint=hub.endpoint)
    assert open(path, "rb").read() == CONFIG
    assert str(tmp_path / "hf_home" / "hub") in path  # cache dir comes from the patched constants
    assert [r.method for r in hub.matching(path_regex="/resolve/")] == ["HEAD", "GET"]
    # LFS file: cached blob is named after the sha256 (X-Linked-Etag), as with the real Hub
    weights = hf_hub_download(REPO, "model.safetensors")  # no endpoint= : relies on patched constants
    assert os.path.basename(os.path.realpath(weights)) == hashlib.sha256(WEIGHTS).hexdigest()
    # Same sha again: served from the cache without any request
    before = len(hub.requests)
    assert hf_hub_download(REPO, "config.json", revision=hub.main_sha) == path
    assert len(hub.requests) == before
    # Offline: both the sha and the branch name resolve from the cache, nothing hits the server
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    assert hf_hub_download(REPO, "config.json", revision=hub.main_sha) == path
    assert open(hf_hub_download(REPO, "model.safetensors"), "rb").read() == WEIGHTS
    with pytest.raises(LocalEntryNotFoundError):
        hf_hub_download(REPO, "README.md")
    assert len(hub.requests) == before


def test_ranged_get_via_hf_session(hub):
    url = hub.file_url(REPO, "model.safetensors", hub.main_sha)
    r = get_session().get(url, headers={"Range": "bytes=0-7"})
    assert r.status_code == 206 and r.content == WEIGHTS[:8]
    assert r.headers["Content-Range"] == f"bytes 0-7/{len(WEIGHTS)}"
    assert r.headers["X-Repo-Commit"] == hub.main_sha
    r = get_session().get(url, headers={"Range": "bytes=10-"})
    assert r.status_code == 206 and r.content == WEIGHTS[10:]
    r = get_session().get(url, headers={"Range": "bytes=-4"})
    assert r.content == WEIGHTS[-4:]
    r = get_session().get(url, headers={"Range": "bytes=0-999999"})  # clamped to the file end
    assert r.status_code == 206 and r.content == WEIGHTS
    r = get_session().get(url, headers={"Range": f"bytes={len(WEIGHTS)}-"})
    assert r.status_code == 416 and r.headers["Content-Range"] == f"bytes */{len(WEIGHTS)}"
    assert [(q.range, q.status, q.bytes) for q in hub.matching("GET", "/resolve/")][:2] == [
        ("bytes=0-7", 206, 8), ("bytes=10-", 206, len(WEIGHTS) - 10)]


def test_ranged_get_via_urllib_and_safetensors_parser(hub, api):
    req = urllib.request.Request(hub.file_url(REPO, "config.json"), headers={"Range": "bytes=2-5"})
    with urllib.request.urlopen(req) as resp:
        assert resp.status == 206 and resp.read() == CONFIG[2:6]
    meta = api.parse_safetensors_file_metadata(REPO, "model.safetensors")  # does "range: bytes=0-100000"
    assert meta.tensors["w"].shape == [16] and meta.metadata == {"format": "pt"}


def test_head_metadata(hub, api):
    meta = api.get_hf_file_metadata(url=hub.file_url(REPO, "model.safetensors"))
    assert meta.commit_hash == hub.main_sha and meta.size == len(WEIGHTS)
    assert meta.etag == hashlib.sha256(WEIGHTS).hexdigest()
    assert hub.matching("HEAD")[-1].bytes == 0


# -- commits / PRs ------------------------------------------------------------------------------------
# huggingface_hub's own LFS PUT passes a file object as `data=`, which httpx2 flags as deprecated.
@pytest.mark.filterwarnings("ignore:Use 'content=<...>':DeprecationWarning")
def test_create_commit_pr_with_lfs_and_delete(hub, api):
    new_weights = make_safetensors(32)
    info = api.create_commit(
        REPO,
        operations=[CommitOperationAdd("config.json", b'{"hidden_size": 128}'),
                    CommitOperationAdd("model.safetensors", new_weights),
                    CommitOperationDelete("README.md")],
        commit_message="dspark: fix draft config", commit_description="automated check",
        create_pr=True, parent_commit=hub.main_sha)
    assert info.pr_url == f"{hub.endpoint}/{REPO}/discussions/1"
    assert info.pr_revision == "refs/pr/1" and info.pr_num == 1 and len(info.oid) == 40
    [rec] = hub.commits
    assert (rec.title, rec.description, rec.create_pr, rec.pr_num, rec.parent) == (
        "dspark: fix draft config", "automated check", True, 1, hub.main_sha)
    assert rec.added == {"config.json": b'{"hidden_size": 128}', "model.safetensors": new_weights}
    assert rec.deleted == ["README.md"] and rec.user == "tester"
    # LFS went through preupload -> batch -> PUT -> verify; the small file went inline
    assert hub.count("POST", "/preupload/main$") == 1
    assert hub.count("POST", r"\.git/info/lfs/objects/batch$") == 1
    assert hub.count("PUT", "^/__lfs__/") == 1 and hub.count("POST", "/commit/main$") == 1
    # main is untouched; the PR revision is readable through model_info and resolve
    assert api.model_info(REPO).sha == hub.main_sha
    pr = api.model_info(REPO, revision="refs/pr/1", files_metadata=True)
    assert pr.sha == info.oid and {s.rfilename for s in pr.siblings} == {"config.json", "model.safetensors"}
    assert hub.matching("GET", "/revision/")[-1].path.endswith("/revision/refs%2Fpr%2F1")
    path = hf_hub_download(REPO, "model.safetensors", revision="refs/pr/1")
    assert open(path, "rb").read() == new_weights
    assert [b.name for b in api.list_repo_refs(REPO, include_pull_requests=True).pull_requests] == ["1"]
    # a second PR gets the next number; committing to the PR ref updates it
    info2 = api.create_commit(REPO, [CommitOperationAdd("a.txt", b"a")], commit_message="two", create_pr=True)
    assert info2.pr_num == 2
    info3 = api.create_commit(REPO, [CommitOperationAdd("b.txt", b"b")], commit_message="on pr",
                              revision="refs/pr/1")
    assert api.model_info(REPO, revision="refs/pr/1").sha == info3.oid
    assert hub.commits[-1].revision == "refs/pr/1"


def test_unchanged_file_is_skipped_by_client(hub, api):
    info = api.create_commit(REPO, [CommitOperationAdd("config.json", CONFIG)], commit_message="noop")
    assert info.oid == hub.main_sha and hub.commits == [] and hub.count("POST", "/commit/") == 0


def test_parent_commit_mismatch_412(hub, api):
    hub.add_commit(REPO, {"config.json": b"{}"}, message="someone else pushed")
    with pytest.raises(HfHubHTTPError) as exc:
        api.create_commit(REPO, [CommitOperationAdd("x.txt", b"x")], commit_message="stale",
                          parent_commit=hub.main_sha)
    assert exc.value.response.status_code == 412 and "A commit has happened since" in str(exc.value)
    with pytest.raises(HfHubHTTPError) as exc:  # PR from a commit that is not in the repo
        api.create_commit(REPO, [CommitOperationAdd("x.txt", b"x")], commit_message="pr",
                          create_pr=True, parent_commit="0" * 40)
    assert exc.value.response.status_code == 412
    # A PR from an older (but existing) parent is based on that parent, as documented by create_commit
    info = api.create_commit(REPO, [CommitOperationAdd("x.txt", b"x")], commit_message="pr",
                             create_pr=True, parent_commit=hub.main_sha)
    assert hub.commits[-1].parent == hub.main_sha
    assert hf_hub_download(REPO, "config.json", revision=info.pr_revision) is not None
    assert hub.count("POST", "/commit/") == 3


def test_commit_auth(hub):
    anon = HfApi(endpoint=hub.endpoint, token=False)
    with pytest.raises(HfHubHTTPError) as exc:
        anon.create_commit(REPO, [CommitOperationAdd("x.txt", b"x")], commit_message="m")
    assert exc.value.response.status_code == 401
    reader = HfApi(endpoint=hub.endpoint, token=READ_TOKEN)
    with pytest.raises(HfHubHTTPError) as exc:
        reader.create_commit(REPO, [CommitOperationAdd("x.txt", b"x")], commit_message="m")
    assert exc.value.response.status_code == 403
    info = reader.create_commit(REPO, [CommitOperationAdd("x.txt", b"x")], commit_message="m", create_pr=True)
    assert info.pr_num == 1


# -- errors and fault knobs -------------------------------------------------------------------------------
def test_not_found_errors(hub, api):
    with pytest.raises(RepositoryNotFoundError):
        api.model_info("org/missing")
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download("org/missing", "config.json")
    with pytest.raises(RevisionNotFoundError):
        api.model_info(REPO, revision="nope")
    with pytest.raises(RevisionNotFoundError):
        hf_hub_download(REPO, "config.json", revision="nope")
    with pytest.raises(RemoteEntryNotFoundError):
        hf_hub_download(REPO, "missing.json")
    assert api.file_exists(REPO, "config.json") and not api.file_exists(REPO, "missing.json")
    hub.status_for("/api/models/org/draft$", 404, times=1, error_code="RepoNotFound")
    with pytest.raises(RepositoryNotFoundError):
        api.model_info(REPO)
    assert api.model_info(REPO).sha == hub.main_sha  # times=1 consumed


def test_private_and_gated_repos(hub):
    hub.add_repo("org/private", {"config.json": CONFIG}, private=True, users={"tester"})
    hub.add_repo("org/gated", {"config.json": CONFIG}, gated=True, users={"tester"})
    hub.add_token("hf_other", user="mallory")
    anon, ok, other = (HfApi(endpoint=hub.endpoint, token=t) for t in (False, DEFAULT_TOKEN, "hf_other"))
    with pytest.raises(RepositoryNotFoundError):
        anon.model_info("org/private")
    with pytest.raises(RepositoryNotFoundError):
        other.model_info("org/private")
    assert ok.model_info("org/private").private is True
    assert anon.model_info("org/gated").gated == "manual"  # metadata stays public
    with pytest.raises(GatedRepoError) as exc:
        anon.hf_hub_download("org/gated", "config.json")
    assert exc.value.response.status_code == 401
    with pytest.raises(GatedRepoError) as exc:
        other.hf_hub_download("org/gated", "config.json")
    assert exc.value.response.status_code == 403
    assert open(ok.hf_hub_download("org/gated", "config.json"), "rb").read() == CONFIG
    bad = HfApi(endpoint=hub.endpoint, token="hf_invalid")
    with pytest.raises(HfHubHTTPError) as exc:  # invalid token: plain 401, not RepositoryNotFoundError
        bad.model_info(REPO)
    assert exc.value.response.status_code == 401 and not isinstance(exc.value, RepositoryNotFoundError)
    assert all("hf_" not in repr(r) for r in hub.requests)  # tokens are never recorded


def test_injected_statuses(hub, api):
    hub.status_for("/api/models/", 500, times=1)
    with pytest.raises(HfHubHTTPError) as exc:
        api.model_info(REPO)
    assert exc.value.response.status_code == 500
    hub.status_for("/api/models/", 403, times=1, message="nope")
    with pytest.raises(HfHubHTTPError) as exc:
        api.model_info(REPO)
    assert exc.value.response.status_code == 403 and "nope" in str(exc.value)
    hub.status_for("/resolve/", 401, times=1, error_code="GatedRepo")
    with pytest.raises(GatedRepoError):
        hf_hub_download(REPO, "config.json")
    hub.status_for("/api/models/", 429, times=1, retry_after=0)
    with pytest.raises(HfHubHTTPError) as exc:  # model_info does not retry
        api.model_info(REPO)
    assert exc.value.response.status_code == 429 and exc.value.response.headers["Retry-After"] == "0"
    assert api.model_info(REPO).sha == hub.main_sha


def test_429_is_retried_by_hf_hub_download(hub):
    hub.status_for("/resolve/", 429, times=2, method="HEAD", retry_after=0)
    path = hf_hub_download(REPO, "config.json")
    assert open(path, "rb").read() == CONFIG
    assert [r.status for r in hub.matching("HEAD", "/resolve/")] == [429, 429, 200]
    assert hub.count("GET", "/resolve/") == 1


def test_latency_and_hang(hub, api):
    hub.set_knobs(REPO, latency_s=0.3)
    start = time.monotonic()
    api.model_info(REPO)
    assert time.monotonic() - start >= 0.3
    hub.set_knobs(REPO)
    hub.fault("/api/models/", times=1, hang_s=2)
    with pytest.raises(httpx2.TimeoutException):
        api.model_info(REPO, timeout=0.3)
    assert api.model_info(REPO).sha == hub.main_sha


def test_ignore_range(hub):
    hub.set_knobs(ignore_range=True)
    r = get_session().get(hub.file_url(REPO, "model.safetensors"), headers={"Range": "bytes=0-7"})
    assert r.status_code == 200 and r.content == WEIGHTS and "Content-Range" not in r.headers


def test_truncated_body(hub):
    hub.set_knobs(truncate_body=10)
    with pytest.raises(httpx2.RemoteProtocolError):
        get_session().get(hub.file_url(REPO, "config.json"))
    assert hub.requests[-1].bytes == 10
    hub.set_knobs()
    # one truncated answer: hf_hub_download retries. It only resumes (Range) from the bytes it has
    # written, i.e. whole 10 MiB chunks (constants.DOWNLOAD_CHUNK_SIZE); a shorter partial body is
    # re-fetched in full.
    big = os.urandom(12 * 1024 * 1024)
    hub.add_commit(REPO, {"big.bin": big})
    hub.fault("/resolve/", times=1, method="GET", truncate_body=11 * 1024 * 1024)
    assert open(hf_hub_download(REPO, "big.bin"), "rb").read() == big
    chunk = huggingface_hub.constants.DOWNLOAD_CHUNK_SIZE
    assert [(g.status, g.range, g.bytes) for g in hub.matching("GET", "/resolve/")[-2:]] == [
        (200, None, 11 * 1024 * 1024), (206, f"bytes={chunk}-", len(big) - chunk)]
    hub.fault("/resolve/", times=1, method="GET", truncate_body=20)
    assert open(hf_hub_download(REPO, "config.json"), "rb").read() == CONFIG
    assert [(g.status, g.range, g.bytes) for g in hub.matching("GET", "/resolve/")[-2:]] == [
        (200, None, 20), (200, None, len(CONFIG))]


def test_urllib_sees_error_headers(hub):
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(hub.file_url(REPO, "nope.bin"))
    assert exc.value.code == 404 and exc.value.headers["X-Error-Code"] == "EntryNotFound"
    assert exc.value.headers["X-Repo-Commit"] == hub.main_sha


# -- env-var configuration in a fresh interpreter -------------------------------------------------------
def test_env_vars_in_subprocess(hub, tmp_path):
    script = textwrap.dedent(f"""
        import huggingface_hub as h
        info = h.model_info({REPO!r}, files_metadata=True)
        p = h.hf_hub_download({REPO!r}, "config.json")
        print(info.sha, open(p).read() == {CONFIG.decode()!r}, p.startswith({str(tmp_path / "sub")!r}))
    """)
    env = hub.subprocess_env(tmp_path / "sub", token=DEFAULT_TOKEN)
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [hub.main_sha, "True", "True"]
    n = len(hub.requests)
    offline = textwrap.dedent(f"""
        import huggingface_hub as h
        print(open(h.hf_hub_download({REPO!r}, "config.json")).read() == {CONFIG.decode()!r})
    """)
    env = hub.subprocess_env(tmp_path / "sub", offline=True)
    run = subprocess.run([sys.executable, "-c", offline], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True" and len(hub.requests) == n
