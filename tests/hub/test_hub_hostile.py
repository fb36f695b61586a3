"""Hostile Hub servers (a FakeHub whose answers a test bends, tests/fakehub/hostile_answers.py), checked by the real CLI under
RLIMIT_AS 2 GiB and 5 s of wall time: an operational error with its DSP-E code (exit 2), or a finding for what could
not be read while the rest is still checked (exit 1); never a hang, a crash, or a file written outside HF_HOME."""

from __future__ import annotations

import json
import os
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import make_checkpoint

sys.path.insert(0, str(Path(__file__).parent.parent / "hostile"))
import hostile_answers as bad  # noqa: E402 - tests/fakehub is on sys.path (hub/conftest.py)
from limits import Run, assert_outcome, finding_codes, run_limited, strict_json  # noqa: E402

from hub.conftest import HERE, publish  # noqa: E402

INFO = r"^/api/models/org/draft"
SHARD1, SHARD2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
CONFIG = r"/org/draft/resolve/[0-9a-f]{40}/config\.json$"
INDEX = r"/org/draft/resolve/[0-9a-f]{40}/model\.safetensors\.index\.json$"
# Short waits, so that every case, retries included, ends well inside 5 s.
FAST = {"DSPARK_CKPT_HUB_TIMEOUT": "0.4", "DSPARK_CKPT_HUB_RETRIES": "1", "DSPARK_CKPT_HUB_BACKOFF": "0.01",
        "DSPARK_CKPT_HUB_DEADLINE": "1.0"}
WALL_S = 5.0


def shard(name: str) -> str:
    return rf"/org/draft/resolve/[0-9a-f]{{40}}/{name}$"


@dataclass(frozen=True)
class HubCase:
    name: str
    setup: Callable[[Any], None]  # bends the FakeHub
    code: str  # a finding code in the JSON report, or the DSP-E code on stderr
    exit: int = 1
    also: tuple[str, ...] = ()  # more finding codes the report must hold
    args: tuple[str, ...] = ("org/draft",)
    env: dict[str, str] = field(default_factory=dict)
    messages: tuple[str, ...] = ()  # text the output must contain (e.g. the DSP-E code inside a DSP018 message)
    target: str = "96"


def fault(regex: str, respond: Callable[[Any, Any], None], **kwargs: Any) -> Callable[[Any], None]:
    return lambda hub: hub.fault(regex, respond=respond, **kwargs)


def status(regex: str, code: int) -> Callable[[Any], None]:
    return lambda hub: hub.status_for(regex, code, method="GET")


def info(change: Callable[[dict[str, Any]], object]) -> Callable[[Any], None]:
    return lambda hub: hub.mutate_info("org/draft", change)


def sibling(name: str, **values: Any) -> Callable[[dict[str, Any]], None]:
    """Set fields of the listed file `name` (adding the entry when absent)."""
    def change(doc: dict[str, Any]) -> None:
        found = [s for s in doc["siblings"] if s.get("rfilename") == name]
        if found:
            found[0].update(values)
        else:
            doc["siblings"].append({"rfilename": name, **values})
    return change


def set_key(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc.__setitem__(key, value)


def drop_key(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc.pop(key, None)


def raw_answer(body: bytes, content_type: str = "application/json") -> Callable[[Any, Any], None]:
    def respond(handler: Any, answer: Any) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
    return respond


def counting_redirects() -> Callable[[Any, Any], None]:
    """Each answer redirects to a new URL on the same host: a chain that never ends."""
    hops = iter(range(10_000))
    return bad.redirect(lambda handler: f"{handler.path.split('?')[0]}?blobs=true&hop={next(hops)}")


def claims_huge_header_then_trickles(hub: Any) -> None:
    """The first 8 bytes say a 99 MB header follows; then one byte every 0.2 s. The listing says 200 MB."""
    hub.mutate_info("org/draft", sibling(SHARD1, size=200_000_000, lfs={"size": 200_000_000}))

    def respond(handler: Any, answer: Any) -> None:
        start, end = (int(x) for x in (answer.range or "bytes=0-0").split("=")[1].split("-"))
        body = (struct.pack("<Q", 99_000_000) + b'{"a": "' + b"x" * 200_000)[start : end + 1]
        handler.send_response(206)
        handler.send_header("Content-Range", f"bytes {start}-{end}/200000000")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        for i in range(len(body)):
            if handler.hub._stop.is_set():
                return
            handler.wfile.write(body[i : i + 1])
            handler.wfile.flush()
            handler.hub._stop.wait(0.2)

    hub.fault(shard(SHARD1), respond=respond)


def big_repo_whole_file_for_d2t(hub: Any) -> None:
    """A draft whose d2t lies past the first ranged read (a 256 KB embedding comes first): its own ranged read is
    answered with the whole file."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        folder = make_checkpoint(Path(tmp) / "big", vocab=4000, draft_vocab=2000, target_vocab=4000, d2t=True)
        publish(hub, "org/big", folder)
    hub.fault(r"/org/big/resolve/[0-9a-f]{40}/model\.safetensors$", respond=bad.whole_file_for_ranges_after(1))


def target_repo_bomb(hub: Any) -> None:
    hub.add_repo("org/target", {"config.json": json.dumps({"vocab_size": 96}).encode()})
    hub.fault(r"/org/target/resolve/.*/config\.json$", respond=bad.gzip_bomb())


HUB_CASES: tuple[HubCase, ...] = (
    # model_info: redirects, budgets, deadlines
    HubCase("info-redirect-to-another-host", fault(INFO, bad.redirect("http://127.0.0.2:9/api/models/org/draft")),
            "DSP-E090", exit=2),
    HubCase("info-redirect-to-another-port", fault(INFO, bad.redirect("http://127.0.0.1:9/api/models/org/draft")),
            "DSP-E090", exit=2),
    HubCase("info-redirect-to-file-scheme", fault(INFO, bad.redirect("file:///etc/passwd")), "DSP-E090", exit=2),
    HubCase("info-redirect-loop", fault(INFO, bad.redirect_to_self()), "DSP-E091", exit=2),
    HubCase("info-redirect-chain-never-ends", fault(INFO, counting_redirects()), "DSP-E091", exit=2),
    HubCase("info-gzip-bomb", fault(INFO, bad.gzip_bomb()), "DSP-E092", exit=2),
    HubCase("info-endless-chunked", fault(INFO, bad.endless_chunked()), "DSP-E092", exit=2,
            env={"DSPARK_CKPT_HUB_DEADLINE": "4"}),
    HubCase("info-trickle", fault(INFO, bad.trickle(0.2, 64)), "DSP-E093", exit=2),
    HubCase("info-stall-after-headers", fault(INFO, bad.stall_after_headers()), "DSP-E054", exit=2),
    # the deadline covers the header phase too: each byte within the per-read timeout, the whole never in time
    HubCase("info-trickled-status-line", fault(INFO, bad.trickle_status_line(0.3)), "DSP-E093", exit=2),
    HubCase("info-trickled-headers", fault(INFO, bad.trickle_headers(0.3)), "DSP-E093", exit=2),
    HubCase("info-trickled-redirect", fault(INFO, bad.trickle_redirect("/api/models/org/draft?blobs=true&x=1")),
            "DSP-E093", exit=2),
    HubCase("info-redirect-then-trickled-headers", lambda hub: (
        hub.fault(INFO, respond=bad.redirect("/api/models/org/draft?blobs=true&hop=1"), times=1),
        hub.fault(INFO, respond=bad.trickle_headers(0.3))), "DSP-E093", exit=2),
    HubCase("info-500-forever", status(INFO, 500), "DSP-E054", exit=2),
    HubCase("info-content-length-too-long", fault(INFO, bad.wrong_length(+1000)), "DSP-E054", exit=2),
    HubCase("info-not-json", fault(INFO, raw_answer(b"<html>maintenance</html>", "text/html")), "DSP-E094",
            exit=2),
    HubCase("info-json-array", fault(INFO, raw_answer(b"[]")), "DSP-E094", exit=2),
    HubCase("info-utf8-bom", fault(INFO, raw_answer(b"\xef\xbb\xbf{}")), "DSP-E094", exit=2),
    # model_info: fields distrusted
    HubCase("info-siblings-null", info(set_key("siblings", None)), "DSP-E094", exit=2),
    HubCase("info-siblings-object", info(set_key("siblings", {"rfilename": "config.json"})), "DSP-E094", exit=2),
    HubCase("info-sha-missing", info(drop_key("sha")), "DSP-E095", exit=2),
    HubCase("info-sha-path-traversal", info(set_key("sha", "../../../../../../somewhere/else")), "DSP-E095",
            exit=2),
    HubCase("info-sha-short", info(set_key("sha", "abc123")), "DSP-E095", exit=2),
    HubCase("info-sha-not-a-string", info(set_key("sha", 12345)), "DSP-E095", exit=2),
    HubCase("info-size-as-string", info(sibling(SHARD2, size="1234")), "DSP703", also=("DSP018",)),
    HubCase("info-size-negative", info(sibling(SHARD2, size=-5)), "DSP703", also=("DSP018",)),
    HubCase("info-sibling-without-rfilename", info(lambda d: d["siblings"].append({"size": 3})), "DSP703"),
    HubCase("info-sibling-dotdot", info(sibling("../../../evil.safetensors", size=10)), "DSP703"),
    HubCase("info-sibling-absolute", info(sibling("/etc/passwd", size=10)), "DSP703"),
    HubCase("info-sibling-backslash", info(sibling("..\\..\\evil.safetensors", size=10)), "DSP703"),
    HubCase("info-sibling-control-char", info(sibling("x\x1b[31m.safetensors", size=10)), "DSP703"),
    # one shard misbehaves: a finding for it, the other shard still checked
    HubCase("shard-404", status(shard(SHARD2), 404), "DSP018", messages=("HTTP 404",)),
    HubCase("shard-500-forever", status(shard(SHARD2), 500), "DSP018", messages=("HTTP 500",)),
    HubCase("shard-stall-after-headers", fault(shard(SHARD2), bad.stall_after_headers()), "DSP018",
            messages=("timed out",)),
    HubCase("shard-trickle", fault(shard(SHARD2), bad.trickle(0.2, 256)), "DSP018", messages=("[DSP-E093]",)),
    HubCase("shard-trickled-status-line", fault(shard(SHARD2), bad.trickle_status_line(0.3)), "DSP018",
            messages=("[DSP-E093]",)),
    HubCase("shard-trickled-headers", fault(shard(SHARD2), bad.trickle_headers(0.3)), "DSP018",
            messages=("[DSP-E093]",)),
    HubCase("shard-trickled-redirect", fault(shard(SHARD2), bad.trickle_redirect(lambda h: h.path + "?x=1")),
            "DSP018", messages=("[DSP-E093]",)),
    HubCase("shard-99-mb-header-then-trickle", claims_huge_header_then_trickles, "DSP018",
            messages=("[DSP-E093]",)),
    HubCase("shard-redirect-to-another-host", fault(shard(SHARD2), bad.redirect("http://127.0.0.2:9/x")),
            "DSP018", messages=("[DSP-E090]",)),
    HubCase("shard-redirect-loop", fault(shard(SHARD2), bad.redirect_to_self()), "DSP018",
            messages=("[DSP-E091]",)),
    HubCase("shard-gzip-compressed-range", fault(shard(SHARD2), bad.gzip_bomb()), "DSP018",
            messages=("[DSP-E094]",)),
    HubCase("shard-content-length-too-short", fault(shard(SHARD2), bad.wrong_length(-100)), "DSP018",
            messages=("short body",)),
    # Range ignored: the check completes, reading only what it needs (nothing is wrong with the checkpoint)
    HubCase("shard-range-ignored-endless-body", fault(shard(SHARD2), bad.endless_body()), "DSP701", exit=0),
    HubCase("d2t-range-answered-with-whole-file", big_repo_whole_file_for_d2t, "DSP701", exit=0,
            args=("org/big",), target="4000"),
    # the small JSON files: no longer than listed, never redirected off the host
    HubCase("config-far-longer-than-listed", fault(CONFIG, bad.padded(50 * 2**20)), "DSP202",
            messages=("[DSP-E092]",)),
    HubCase("config-gzip-bomb", fault(CONFIG, bad.gzip_bomb()), "DSP202", messages=("[DSP-E092]",)),
    HubCase("config-redirect-to-another-host", fault(CONFIG, bad.redirect("http://127.0.0.2:9/c")), "DSP202",
            messages=("[DSP-E090]",)),
    HubCase("config-trickle", fault(CONFIG, bad.trickle(0.3, 8)), "DSP202", messages=("[DSP-E093]",)),
    HubCase("config-trickled-headers", fault(CONFIG, bad.trickle_headers(0.3)), "DSP202", messages=("[DSP-E093]",)),
    HubCase("index-trickled-status-line", fault(INDEX, bad.trickle_status_line(0.3)), "DSP102",
            messages=("[DSP-E093]",)),
    HubCase("index-404", status(INDEX, 404), "DSP102", messages=("HTTP 404",)),
    HubCase("index-listed-huge", info(sibling("model.safetensors.index.json", size=10**12)), "DSP112"),
    # revisions and targets from the command line are distrusted too
    HubCase("revision-with-dotdot", lambda hub: None, "DSP-E052", exit=2, args=("org/draft@../../../../x",)),
    HubCase("target-config-gzip-bomb", target_repo_bomb, "DSP-E035", exit=2,
            args=("org/draft", "--target", "org/target")),
)


@pytest.fixture
def draft(tmp_path: Path, hub: Any) -> Path:
    folder = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, shards=2, d2t=True)
    publish(hub, "org/draft", folder)
    return folder


def hub_check(hub: Any, tmp_path: Path, *args: str, env: dict[str, str] | None = None, fast: bool = True) -> Run:
    full = hub.subprocess_env(tmp_path / "hf")
    for key in ("DSPARK_CKPT_HUB_TIMEOUT", "DSPARK_CKPT_HUB_RETRIES", "DSPARK_CKPT_HUB_BACKOFF",
                "DSPARK_CKPT_HUB_DEADLINE"):
        full.pop(key, None)
    full.update(FAST if fast else {})
    full["PYTHONPATH"] = os.pathsep.join([str(HERE / "netguard"), str(HERE.parent.parent)])
    full["DSPARK_TEST_NET_LOG"] = str(tmp_path / "net-violations.log")
    full.update(env or {})
    # every vLLM release that registers Qwen3DSparkModel (registry.py @ v0.25.0 L597 first): an older one refuses it
    return run_limited("check", *args, *("--runtime", "vllm>=0.25.0", "--format", "json"), env=full, cwd=tmp_path)


def test_cases_are_many_and_named_uniquely() -> None:
    names = [c.name for c in HUB_CASES]
    assert len(names) >= 40 and len(set(names)) == len(names)


def test_the_honest_repo_is_clean(tmp_path: Path, hub: Any, draft: Path) -> None:
    run = hub_check(hub, tmp_path, "org/draft", "--target-vocab-size", "96")
    assert run.returncode == 0, run.output
    assert [c for c in finding_codes(strict_json(run.stdout)) if c != "DSP206"] == []


@pytest.mark.parametrize("case", HUB_CASES, ids=lambda c: c.name)
def test_hostile_hub(case: HubCase, tmp_path: Path, hub: Any, draft: Path) -> None:
    case.setup(hub)
    target = () if "--target" in case.args else ("--target-vocab-size", case.target)
    run = hub_check(hub, tmp_path, *case.args, *target, env=case.env)
    doc = assert_outcome(run, case.code, case.exit, wall_limit=WALL_S)
    if doc is not None:
        codes = finding_codes(doc)
        assert set(case.also) <= set(codes), run.output
        if case.exit == 1 and case.name.startswith("shard-"):  # the other shard was still read
            assert doc["checkpoints"][0]["tensors"], run.output
    for text in case.messages:
        assert text in run.output, run.output[-3000:]
    written = {p.relative_to(tmp_path).parts[0] for p in tmp_path.rglob("*")}
    assert written <= {"d", "hf", "net-violations.log"}, written  # nothing outside HF_HOME (and the draft)
    assert not list((tmp_path / "hf").rglob("*somewhere*")) and not list((tmp_path / "hf").rglob("*evil*"))


ONE_KNOB = {c.name: c for c in HUB_CASES if c.name in (
    "info-stall-after-headers", "info-500-forever", "info-trickle", "shard-stall-after-headers", "shard-trickle")}


@pytest.mark.parametrize("name", sorted(ONE_KNOB))
def test_one_timeout_bounds_every_request_and_its_retries(name: str, tmp_path: Path, hub: Any, draft: Path) -> None:
    """Only DSPARK_CKPT_HUB_TIMEOUT=1 and the default retries and backoff: each request's deadline (three
    timeouts) covers its retries and waits too, so a stalling or trickling server costs seconds, not minutes."""
    case = ONE_KNOB[name]
    case.setup(hub)
    run = hub_check(hub, tmp_path, *case.args, "--target-vocab-size", "96", fast=False,
                    env={"DSPARK_CKPT_HUB_TIMEOUT": "1"})
    assert_outcome(run, case.code, case.exit, wall_limit=WALL_S + 3)  # start-up on a loaded machine, beside 3 s
