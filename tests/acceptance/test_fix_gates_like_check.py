"""fix repairs for the runtimes check gates on (issue 41, item 3): the same resolution of runtimes for every command,
a non-zero exit, said first, when a gated runtime stays broken, and no hint that proposes a command doing nothing."""

from __future__ import annotations

import json
import re
import shlex
import struct
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli

sys.path.insert(0, str(REPO / "tests" / "producers"))
from producers import materialise

T96 = ("--target-vocab-size", "96", "--isolated")


def rename_tensor(path: Path, old: str, new: str) -> None:
    """Rewrite a safetensors header with one tensor name changed (a producer's misspelling), data untouched."""
    data = path.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    header = {k.replace(old, new): v for k, v in json.loads(data[8:8 + n]).items()}
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data[8 + n:])


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fixgate")
    typo = materialise(root / "typo", "specforge-0.2.0-eagle3")  # SpecForge's EAGLE-3 export, one name misspelt
    rename_tensor(typo / "model.safetensors", "midlayer.hidden_norm", "midlayer.hiden_norm")
    materialise(root / "dflash", "dflash-0.1.0-dflash")
    return root


def test_check_fails_it_on_vllm(ws: Path) -> None:
    done = run_cli("check", "typo", *T96, cwd=ws)
    assert done.returncode == 1 and "DSP360" in done.stdout


@pytest.mark.parametrize("runtimes", [(), ("--for", "all"), ("--for", "vllm"), ("--for", "vllm", "--for", "sglang")],
                         ids=["default", "all", "vllm", "vllm-sglang"])
def test_fix_exits_non_zero_and_says_so_first(ws: Path, runtimes: tuple[str, ...]) -> None:
    done = run_cli("fix", "typo", *T96, "--dry-run", *runtimes, cwd=ws)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "nothing to do" not in done.stdout
    first = done.stdout.splitlines()[:3]
    assert any("vllm" in line and ("refused" in line or "stays broken" in line) for line in first), done.stdout


def test_no_hint_proposes_a_command_that_does_nothing(ws: Path) -> None:
    out = "".join(run_cli("fix", "typo", *T96, "--dry-run", *r, cwd=ws).stdout
                  for r in [(), ("--for", "vllm"), ("--for", "all")])
    commands = re.findall(r"`(dspark-ckpt fix [^`]+)`", out)
    for command in commands:
        argv = shlex.split(command)[1:]
        done = run_cli(*argv, "--dry-run", "--isolated", cwd=ws)
        assert "nothing to do" not in done.stdout, (command, done.stdout)


def test_a_correct_draft_has_nothing_to_do_and_exits_zero(ws: Path) -> None:
    for runtimes in [(), ("--for", "all"), ("--for", "sglang")]:
        done = run_cli("fix", "dflash", *T96, "--dry-run", *runtimes, cwd=ws)
        assert done.returncode == 0 and "nothing to do" in done.stdout, (runtimes, done.stdout + done.stderr)


def test_the_default_fix_plans_for_what_check_gates(ws: Path) -> None:
    done = run_cli("fix", "typo", *T96, "--dry-run", "--format", "json", cwd=ws)
    (entry,) = json.loads(done.stdout)["checkpoints"]
    assert {r.split("==")[0] for r in entry["runtimes"]} == {"vllm"}, entry["runtimes"]
