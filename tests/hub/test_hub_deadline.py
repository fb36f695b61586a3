"""The overall deadline covers the whole request, header phase included, and every whole-file download (`fix --push`)
has a byte budget (the size the Hub lists) and a deadline that grows with the size.

In process: a trickled status line or header block ends with DSP-E093 at the deadline, with no thread and no socket
left behind. Real CLI runs (tests/hostile/limits.py: 2 GiB RLIMIT_AS, CPU limit): `fix --push` against hostile
downloads ends with its code within a few seconds and opens no pull request.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint

sys.path.insert(0, str(Path(__file__).parent.parent / "hostile"))
import hostile_answers as bad
from limits import assert_contained, run_limited

from dspark_ckpt.sources import hub_deadline
from dspark_ckpt.sources.hub_http import PAST_DEADLINE, Refused, RetryPolicy, get_once
from dspark_ckpt.sources.hub_ranges import fetch_range
from hub.conftest import DEFAULT_TOKEN, HERE, publish
from hub.test_hub_hostile import FAST, SHARD2, shard

FIX = ("--target-vocab-size", "96", "--for", "vllm==0.33.0")
CONFIG = r"/org/x/resolve/[^/]+/config\.json$"


def _sockets() -> int:
    """Open sockets of this process (the FakeHub's server side included: it closes when the client hangs up)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


def _client_threads() -> set[str]:
    """Threads that are not the FakeHub's (its serve loop and one handler per connection)."""
    return {t.name for t in threading.enumerate()
            if "process_request_thread" not in t.name and "serve_forever" not in t.name}


@pytest.fixture
def fresh_client() -> None:
    """dspark-ckpt's shared Hub client, rebuilt: no idle connection of an earlier test is counted."""
    for old in hub_deadline._CLIENT:
        old.close()
    hub_deadline._CLIENT.clear()


def _settled(baseline: int, within_s: float = 3.0) -> int:
    """The socket count once the server side of a refused request has noticed the client left."""
    ends = time.monotonic() + within_s
    while _sockets() > baseline and time.monotonic() < ends:
        time.sleep(0.05)
    return _sockets()


HEADER_PHASE = {
    "status-line": lambda: bad.trickle_status_line(0.2),
    "headers": lambda: bad.trickle_headers(0.2),
    "redirect": lambda: bad.trickle_redirect(lambda h: h.path + "?hop=1", 0.2),
}


@pytest.mark.parametrize("mode", sorted(HEADER_PHASE))
def test_the_deadline_covers_the_header_phase(mode: str, hub: Any, fresh_client: None) -> None:
    """Each byte comes well within the 1 s per-read timeout; the 0.8 s deadline still ends the request, as
    DSP-E093, and leaves neither a thread nor a socket behind."""
    hub.add_repo("org/x", {"config.json": b"{}"})
    hub.fault(CONFIG, respond=HEADER_PHASE[mode]())
    policy = RetryPolicy(attempts=3, base_s=0.01, timeout_s=1.0, deadline_s=0.8)
    threads, sockets = _client_threads(), _sockets()
    started = time.monotonic()
    with pytest.raises(Refused) as refused:
        get_once(hub.file_url("org/x", "config.json"), headers={}, policy=policy, limit=100, what="config.json",
                 deadline=started + policy.deadline_s)
    took = time.monotonic() - started
    assert refused.value.code == PAST_DEADLINE and "0.8 s deadline" in str(refused.value)
    # at the deadline: not at the 1 s timeout per try, nor after the whole trickle (3 s and more); the upper bound
    # leaves a loaded machine 1.7 s of slack
    assert 0.75 <= took < 2.5, took
    assert _client_threads() == threads
    assert _settled(sockets) == sockets


def test_a_connect_that_never_completes_ends_at_the_deadline(fresh_client: None) -> None:
    """A listener whose backlog is full never completes the TCP handshake: the 5 s connect timeout is cut to the
    0.8 s deadline (DSP-E093), however many tries the policy allows."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    filling = [socket.socket() for _ in range(4)]
    try:
        for sock in filling:
            sock.setblocking(False)
            try:
                sock.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
        time.sleep(0.1)
        policy = RetryPolicy(attempts=3, base_s=0.01, timeout_s=5.0, deadline_s=0.8)
        started = time.monotonic()
        with pytest.raises(Refused) as refused:
            get_once(f"http://127.0.0.1:{port}/config.json", headers={}, policy=policy, limit=100,
                     what="config.json", deadline=started + policy.deadline_s)
        assert refused.value.code == PAST_DEADLINE and 0.75 <= time.monotonic() - started < 2.5
    finally:
        for sock in [*filling, listener]:
            sock.close()


def test_a_ranged_read_is_bounded_in_its_headers_too(hub: Any, fresh_client: None) -> None:
    from dspark_ckpt.sources.hub_http import FetchLog

    hub.add_repo("org/x", {"model.safetensors": b"x" * 64})
    hub.fault(r"model\.safetensors$", respond=bad.trickle_headers(0.2))
    policy = RetryPolicy(attempts=3, base_s=0.01, timeout_s=1.0, deadline_s=0.8)
    sockets, started = _sockets(), time.monotonic()
    with pytest.raises(Refused) as refused:
        fetch_range(hub.file_url("org/x", "model.safetensors"), 0, 8, headers={}, policy=policy, log=FetchLog(),
                    name="model.safetensors")
    assert refused.value.code == PAST_DEADLINE and time.monotonic() - started < 2.5
    assert _settled(sockets) == sockets


def test_a_per_read_timeout_stays_a_timeout(hub: Any, fresh_client: None) -> None:
    """A stall well inside the deadline is a timeout (retried, then DSP-E054), not the deadline's DSP-E093."""
    from dspark_ckpt.sources.hub_http import Retryable

    hub.add_repo("org/x", {"config.json": b"{}"})
    hub.fault(CONFIG, respond=bad.stall_after_headers(5))
    policy = RetryPolicy(attempts=1, timeout_s=0.3, deadline_s=5.0)
    with pytest.raises(Retryable, match="timed out after 0.3 s"):
        get_once(hub.file_url("org/x", "config.json"), headers={}, policy=policy, limit=100, what="config.json",
                 deadline=time.monotonic() + policy.deadline_s)


def test_outside_a_scope_the_backend_waits_as_asked() -> None:
    assert hub_deadline.current_deadline() is None
    with hub_deadline.deadline_scope(time.monotonic() + 5):
        inner = hub_deadline.current_deadline()
        with hub_deadline.deadline_scope(time.monotonic() + 60):  # a nested scope never extends its parent
            assert hub_deadline.current_deadline() == inner
    assert hub_deadline.current_deadline() is None


def test_a_download_deadline_grows_with_the_size() -> None:
    policy = RetryPolicy(deadline_s=30.0, min_rate=1_000_000.0)
    assert policy.for_transfer(0).deadline_s == 30.0
    assert policy.for_transfer(2_000_000_000).deadline_s == 2030.0
    assert "DSPARK_CKPT_HUB_MIN_RATE" in policy.for_transfer(1).deadline_knob


# --- fix --push: whole-file downloads, real CLI -------------------------------------------------------------


@pytest.fixture
def padded(tmp_path: Path, hub: Any) -> str:
    """A padded draft (D = V = 100 > T = 96) in two shards: `fix --push` downloads every file to repair it."""
    folder = make_checkpoint(tmp_path / "padded", vocab=100, draft_vocab=100, target_vocab=96, shards=2)
    return publish(hub, "org/draft", folder)


def push(hub: Any, tmp_path: Path, *extra: str, env: dict[str, str] | None = None) -> Any:
    full = hub.subprocess_env(tmp_path / "hf", token=DEFAULT_TOKEN)
    full.update(FAST)
    full["PYTHONPATH"] = os.pathsep.join([str(HERE / "netguard"), str(HERE.parent.parent)])
    full["DSPARK_TEST_NET_LOG"] = str(tmp_path / "net-violations.log")
    full.update(env or {})
    return run_limited("fix", "org/draft", *FIX, *extra, env=full, cwd=tmp_path)


PUSH_CASES = {
    # a body longer than the listing states, with no Content-Length: counting the bytes stops it
    "longer-than-listed": (lambda: bad.longer_than_stated(64 * 2**20), "DSP-E092", {}),
    # an honest Content-Length that is longer than the listing
    "announced-longer-than-listed": (lambda: bad.padded(4096), "DSP-E092", {}),
    # each byte within the timeout, the whole download past its deadline (1 s + size / 1 kB/s here)
    "trickled-download": (lambda: bad.trickle(0.05, 64), "DSP-E093", {"DSPARK_CKPT_HUB_MIN_RATE": "1000000"}),
    "trickled-headers": (lambda: bad.trickle_headers(0.3), "DSP-E093", {}),
    "trickled-redirect": (lambda: bad.trickle_redirect(lambda h: h.path + "?hop=1"), "DSP-E093", {}),
    "stall-after-headers": (lambda: bad.stall_after_headers(30), "DSP-E054", {}),
    # the listed size, other bytes: only the listed LFS sha256 tells them apart
    "altered-bytes": (lambda: bad.altered(), "DSP-E097", {}),
}


@pytest.mark.parametrize("name", sorted(PUSH_CASES))
def test_push_downloads_are_bounded(name: str, tmp_path: Path, hub: Any, padded: str) -> None:
    respond, code, env = PUSH_CASES[name]
    hub.fault(shard(SHARD2), respond=respond())
    run = push(hub, tmp_path, "--push", env=env)
    assert_contained(run, wall_limit=8.0)
    assert run.returncode == 2 and f"[{code}]" in run.stderr, run.output[-3000:]
    assert hub.commits == []  # no pull request from a partial or foreign file
    cached = [p for p in (tmp_path / "hf").rglob("*") if p.name.endswith(".part") or p.name == SHARD2]
    assert cached == [], cached  # neither the partial download nor a file longer than listed stays in the cache
    if code == "DSP-E093":
        assert "DSPARK_CKPT_HUB_MIN_RATE" in run.stderr or "DSPARK_CKPT_HUB_DEADLINE" in run.stderr


@pytest.mark.parametrize("respond", [bad.stall_after_headers(30), bad.trickle_headers(0.3)],
                         ids=["stall-after-headers", "trickled-headers"])
def test_the_pull_request_call_ends_by_its_deadline(respond: Any, tmp_path: Path, hub: Any, padded: str) -> None:
    """huggingface_hub waits on its own client with no timeout; the deadline backend under it still ends the
    commit call, as DSP-E093 (its deadline: DSPARK_CKPT_HUB_DEADLINE + the bytes uploaded / the minimum rate)."""
    hub.fault(r"/api/models/org/draft/commit/", method="POST", respond=respond)
    run = push(hub, tmp_path, "--push")
    assert_contained(run, wall_limit=8.0)
    assert run.returncode == 2 and "[DSP-E093]" in run.stderr, run.output[-3000:]
    assert "opened pull request" not in run.stdout  # (the fake made the commit before bending its answer)


def test_push_downloads_once_then_the_cache_is_reused(tmp_path: Path, hub: Any, padded: str) -> None:
    def whole_gets() -> int:
        return sum(1 for r in hub.matching("GET", shard(SHARD2)) if r.range is None)

    run = push(hub, tmp_path, "--push")
    assert run.returncode == 0, run.output[-3000:]
    assert len(hub.commits) == 1 and whole_gets() == 1
    again = push(hub, tmp_path, "--push")  # main is unchanged: the same commit, its files already in the cache
    assert again.returncode == 0, again.output[-3000:]
    assert len(hub.commits) == 2 and whole_gets() == 1


def test_a_cached_copy_that_does_not_hash_to_the_listing_is_downloaded_again(tmp_path: Path, hub: Any,
                                                                            padded: str) -> None:
    def whole_gets() -> int:
        return sum(1 for r in hub.matching("GET", shard(SHARD2)) if r.range is None)

    assert push(hub, tmp_path, "--push").returncode == 0
    (cached,) = [p for p in (tmp_path / "hf").rglob(SHARD2) if p.is_file()]
    data = bytearray(cached.read_bytes())
    data[-1] ^= 0xFF  # same size, other bytes: the cache was altered after the first push
    cached.unlink()  # the snapshot entry may be a link into blobs/: replace it, never write through it
    cached.write_bytes(bytes(data))
    again = push(hub, tmp_path, "--push")
    assert again.returncode == 0, again.output[-3000:]
    assert whole_gets() == 2 and len(hub.commits) == 2  # fetched again, and the PR built on the listed bytes
    assert cached.read_bytes() != bytes(data)


def _unsized(name: str) -> Any:
    def change(doc: dict[str, Any]) -> None:
        for sibling in doc["siblings"]:
            if sibling["rfilename"] == name:
                sibling.pop("size", None)
                sibling.pop("lfs", None)
    return change


def test_a_file_listed_without_a_size(tmp_path: Path, hub: Any, padded: str) -> None:
    """A JSON file without a listed size is downloaded within the JSON limit; a shard without one has no byte
    budget, so it is not downloaded at all (DSP-E092)."""
    hub.mutate_info("org/draft", _unsized("config.json"))
    run = push(hub, tmp_path, "--push")
    assert run.returncode == 0 and len(hub.commits) == 1, run.output[-3000:]
    hub.mutate_info("org/draft", _unsized(SHARD2))
    hub.commits.clear()
    (tmp_path / "again").mkdir()  # a fresh cache: the shard is not there yet
    run = push(hub, tmp_path / "again", "--push")
    assert run.returncode == 2 and "[DSP-E092]" in run.stderr and "no size" in run.stderr, run.output[-3000:]
    assert hub.commits == []


def test_push_into_an_unwritable_cache_is_dsp_e096(tmp_path: Path, hub: Any, padded: str) -> None:
    blocked = tmp_path / "hf" / "hub" / "models--org--draft" / "snapshots" / padded
    blocked.parent.mkdir(parents=True)
    blocked.write_text("a file where the snapshot folder goes")
    run = push(hub, tmp_path, "--push")
    assert_contained(run, wall_limit=8.0)
    assert run.returncode == 2 and "[DSP-E096]" in run.stderr, run.output[-3000:]
    assert hub.commits == []


def test_dry_run_with_a_trickled_shard_ends_by_the_deadline(tmp_path: Path, hub: Any, padded: str) -> None:
    """`fix org/repo --dry-run` reads as check reads: the trickled shard is a finding (DSP018, [DSP-E093]), not a
    hang, and the plan says so."""
    hub.fault(shard(SHARD2), respond=bad.trickle_status_line(0.3))
    run = push(hub, tmp_path, "--dry-run")
    assert_contained(run, wall_limit=8.0)
    assert run.returncode in (1, 2) and "DSP-E093" in run.output, run.output[-3000:]
    assert hub.commits == []


def test_a_retry_cut_short_by_the_deadline_reports_the_failure_before_it() -> None:
    """A stall timed out, and its retry ran into the deadline: the stall (DSP-E054's Retryable) is the cause. A
    first try that runs into the deadline is the deadline's (DSP-E093)."""
    from dspark_ckpt.sources.hub_http import Retryable, past_deadline, with_retries

    policy = RetryPolicy(attempts=4, base_s=0.0)
    answers = iter([Retryable("timed out after 1 s"), past_deadline("model_info", policy)])

    def once() -> None:
        raise next(answers)

    with pytest.raises(Retryable, match="timed out") as failed:
        with_retries(policy, once, sleep=lambda _s: None)
    assert failed.value.attempts == 2

    def late() -> None:
        raise past_deadline("model_info", policy)

    with pytest.raises(Refused) as refused:
        with_retries(policy, late, sleep=lambda _s: None)
    assert refused.value.code == PAST_DEADLINE
