"""Focused tests of sources/hub_cache.py (offline mode's records, in a private HF cache under tmp_path) and
sources/hub_download.py's digest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from huggingface_hub import constants

from dspark_ckpt.sources import hub_cache
from dspark_ckpt.sources.hub_download import file_sha256

REPO = "org/draft"
SHA = "0123456789abcdef0123456789abcdef01234567"
OTHER = "0123999999999999999999999999999999999999"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(constants, "HF_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "home" / "hub"))
    return tmp_path


def test_cache_paths_follow_the_hf_layout(private_cache: Path) -> None:
    assert hub_cache.repo_cache(REPO) == private_cache / "home" / "hub" / "models--org--draft"
    assert hub_cache.snapshot_file(REPO, SHA, "sub/config.json") == \
        private_cache / "home" / "hub" / "models--org--draft" / "snapshots" / SHA / "sub" / "config.json"
    assert hub_cache.own_cache(REPO, SHA).parts[-4:] == ("dspark-ckpt", "hub", "models--org--draft", SHA)


@pytest.mark.parametrize("sha", ["main", "0123", "../" + SHA[:37], SHA.upper(), SHA + "0"])
def test_a_commit_folder_is_only_ever_40_hex_digits(sha: str) -> None:
    with pytest.raises(OSError):
        hub_cache.snapshot_file(REPO, sha, "config.json")


@pytest.mark.parametrize("name", ["../config.json", "/etc/passwd", "a\\b", "", "x\x1by"])
def test_a_server_given_name_never_leaves_the_snapshot(name: str) -> None:
    with pytest.raises(OSError):
        hub_cache.snapshot_file(REPO, SHA, name)


def test_snapshot_files_round_trip_and_are_never_overwritten() -> None:
    with pytest.raises(OSError, match="HF_HUB_OFFLINE"):
        hub_cache.read_snapshot_file(REPO, SHA, "config.json")
    hub_cache.store_snapshot_file(REPO, SHA, "config.json", b'{"a": 1}')
    hub_cache.store_snapshot_file(REPO, SHA, "config.json", b'{"a": 2}')  # the first copy stays
    assert hub_cache.read_snapshot_file(REPO, SHA, "config.json") == b'{"a": 1}'
    hub_cache.store_snapshot_file(REPO, "not-a-sha", "config.json", b"x")  # best effort: refused silently


def test_remember_then_lookup_by_branch_and_by_prefix() -> None:
    sizes = {"config.json": 120, "model.safetensors": None}
    hub_cache.remember(REPO, "main", SHA, sizes)
    assert hub_cache.lookup(REPO, None) == (SHA, sizes, True)
    assert hub_cache.lookup(REPO, "main") == (SHA, sizes, True)
    assert hub_cache.lookup(REPO, SHA[:7]) == (SHA, sizes, True)
    assert hub_cache.lookup(REPO, "dev") is None
    assert hub_cache.lookup("org/other", None) is None


def test_a_prefix_two_commits_share_resolves_to_neither() -> None:
    hub_cache.remember(REPO, SHA, SHA, {"config.json": 1})
    hub_cache.remember(REPO, OTHER, OTHER, {"config.json": 2})
    assert SHA[:4] == OTHER[:4]
    assert hub_cache.lookup(REPO, SHA[:4] + "5") is None  # a 5-digit prefix is too short to name a commit
    assert hub_cache.lookup(REPO, "0123") is None  # shorter than 7 hex digits: never a commit prefix
    assert hub_cache.lookup(REPO, "0123456")[0] == SHA  # type: ignore[index]
    assert hub_cache.lookup(REPO, "0123999")[0] == OTHER  # type: ignore[index]


def test_remember_writes_nothing_for_an_unsafe_revision(private_cache: Path) -> None:
    hub_cache.remember(REPO, "../../escape", SHA, {"config.json": 1})
    assert not list(private_cache.rglob("escape"))


def test_lookup_adds_the_snapshots_files_and_says_the_list_is_incomplete() -> None:
    hub_cache.store_snapshot_file(REPO, SHA, "config.json", b"{}")
    refs = hub_cache.repo_cache(REPO) / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_text(SHA + "\n")
    assert hub_cache.lookup(REPO, None) == (SHA, {"config.json": 2}, False)


def test_a_recorded_listing_keeps_only_plain_names_and_sizes() -> None:
    listing = hub_cache.own_cache(REPO, SHA) / hub_cache.LISTING
    listing.parent.mkdir(parents=True)
    listing.write_text(json.dumps({"ok.json": 3, "none.bin": None, "../up": 1, "neg": -1, "float": 1.5, "b": True}))
    (hub_cache.repo_cache(REPO) / "refs").mkdir(parents=True)
    (hub_cache.repo_cache(REPO) / "refs" / "main").write_text(SHA)
    assert hub_cache.lookup(REPO, "main") == (SHA, {"ok.json": 3, "none.bin": None}, True)


def test_open_cached_serves_the_kept_header_and_nothing_past_it() -> None:
    with pytest.raises(OSError), hub_cache.open_cached(REPO, SHA, "model.safetensors", 1000):
        pass
    hub_cache.keep_prefix(REPO, SHA, "model.safetensors", b"H" * 16)
    with hub_cache.open_cached(REPO, SHA, "model.safetensors", 1000) as f:
        assert f.read(16) == b"H" * 16
        with pytest.raises(OSError, match="only the header was kept"):
            f.read(32)


def test_open_cached_prefers_the_full_snapshot_file() -> None:
    hub_cache.store_snapshot_file(REPO, SHA, "model.safetensors", b"0123456789")
    with hub_cache.open_cached(REPO, SHA, "model.safetensors", 10) as f:
        assert f.read() == b"0123456789"


# --- hub_download.py ---

def test_file_sha256_over_several_blocks(tmp_path: Path) -> None:
    data = bytes(range(256)) * (2**20 // 256 * 3 + 7)  # 3 MiB and a bit: crosses the 1 MiB read blocks
    (tmp_path / "blob").write_bytes(data)
    assert file_sha256(tmp_path / "blob") == hashlib.sha256(data).hexdigest()
    (tmp_path / "empty").write_bytes(b"")
    assert file_sha256(tmp_path / "empty") == hashlib.sha256(b"").hexdigest()
