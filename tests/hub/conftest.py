"""Hub tests: a real FakeHub on 127.0.0.1, and a guard that fails any test connecting anywhere else."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "fakehub"))

from cli_runner import SUBPROCESS_ENV
from conftest import make_checkpoint, run_cli
from server import DEFAULT_TOKEN, FakeHub

ALLOWED = ("127.0.0.1", "::1", "localhost")
SECRET = "hf_sEcReT_tOkEn_dO_nOt_pRiNt_0123456789"  # a token that must never appear in any output


class NetGuard:
    """Patches socket connect / create_connection in this process (the in-process CLI runs under it); the
    subprocesses and forked cases of the hostile-Hub tests load netguard/sitecustomize.py."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.refused: list[str] = []

    def check(self, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else None
        if host is not None and host not in ALLOWED:
            self.refused.append(str(host))
            raise ConnectionRefusedError(f"test network guard: connection to {host} refused")

    def violations(self) -> list[str]:
        logged = self.log.read_text().split() if self.log.exists() else []
        return self.refused + logged


@pytest.fixture(autouse=True)
def net_guard(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[NetGuard]:
    guard = NetGuard(tmp_path / "net-violations.log")
    connect, connect_ex, create = socket.socket.connect, socket.socket.connect_ex, socket.create_connection

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            guard.check(address)
        return connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            guard.check(address)
        return connect_ex(self, address)

    def guarded_create(address: Any, *args: Any, **kwargs: Any) -> Any:
        guard.check(address)
        return create(address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "create_connection", guarded_create)
    yield guard
    if guard.violations():
        pytest.fail(f"the test tried to connect outside 127.0.0.1: {guard.violations()}")


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A FakeHub with huggingface_hub (in this process) pointed at it and a fresh HF_HOME."""
    for key in ("DSPARK_CKPT_HUB_TIMEOUT", "DSPARK_CKPT_HUB_RETRIES", "DSPARK_CKPT_HUB_BACKOFF"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("DSPARK_CKPT_HUB_BACKOFF", "0.01")  # keep retries fast; the policy itself is unit-tested
    with FakeHub() as server:
        server.client_env(monkeypatch, tmp_path / "hf")
        yield server


def repo_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def publish(hub: FakeHub, repo_id: str, folder: Path, **kwargs: Any) -> str:
    """Upload a checkpoint folder as a new repo; its main commit."""
    return hub.add_repo(repo_id, repo_files(folder), **kwargs)


def cli(hub: FakeHub, tmp_path: Path, *args: str, token: str | None = None, offline: bool = False,
        extra: dict[str, str] | None = None, cwd: Path | None = None) -> Any:
    """The real CLI (in this process, under the net_guard fixture), pointed at the FakeHub: huggingface_hub's
    settings come from this call's environment, as in a new process (tests/cli_runner.py)."""
    env = hub.subprocess_env(tmp_path / "hf", token=token, offline=offline)
    env["DSPARK_CKPT_HUB_BACKOFF"] = "0.01"
    if os.environ.get(SUBPROCESS_ENV) == "1":  # every call a subprocess: the child loads the guard itself
        env["PYTHONPATH"] = os.pathsep.join([str(HERE / "netguard"), str(HERE.parent.parent)])
        env["DSPARK_TEST_NET_LOG"] = str(tmp_path / "net-violations.log")
    env.update(extra or {})
    return run_cli(*args, env=env, cwd=cwd)


def as_json(stdout: str) -> dict[str, Any]:
    return json.loads(stdout)


__all__ = ["DEFAULT_TOKEN", "SECRET", "as_json", "cli", "make_checkpoint", "publish", "repo_files"]
