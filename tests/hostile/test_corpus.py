"""Every hostile corpus case, checked by the real CLI in a subprocess under RLIMIT_AS (2 GiB) and the 5 s budget:
its code, its exit, never a traceback, and a JSON report a strict reader parses."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from corpus import BASELINE, CASES, RUNTIMES, TARGET_VOCAB, Case, big_header
from corpus_round2 import CASES2
from limits import Run, assert_outcome, finding_codes, run_limited, strict_json
from typer.testing import CliRunner

from dspark_ckpt.cli.app import app
from dspark_ckpt.formats.safetensors_header import MAX_HEADER_SIZE, read_header

# Root bypasses file modes (CAP_DAC_OVERRIDE), so chmod 000 alone proves nothing; drop those capabilities instead.
SETPRIV = shutil.which("setpriv")
DROP_DAC = [SETPRIV or "setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
ALL_CASES = CASES + CASES2


def arguments(case: Case, built: Path) -> list[str]:
    return case.args(built) if case.args else [str(built), "--target-vocab-size", str(TARGET_VOCAB)]


def check(case: Case, built: Path, *extra: str, drop_dac: bool = False) -> Run:
    args = ["check", *arguments(case, built), *RUNTIMES, *(extra or ("--format", "json"))]
    return run_limited(*args, prefix=DROP_DAC if drop_dac else None)


def needs_dac_drop(case: Case) -> bool:
    drop = case.unreadable and os.geteuid() == 0
    if drop and (SETPRIV is None or subprocess.run([*DROP_DAC, "true"]).returncode != 0):
        pytest.skip("running as root without setpriv/CAP_SETPCAP: an unreadable file cannot be simulated")
    return drop


def test_corpus_is_large_and_named_uniquely() -> None:
    names = [case.name for case in ALL_CASES]
    assert len(CASES) >= 30 and len(CASES2) >= 60
    assert len(set(names)) == len(names)
    assert all(case.exit != 0 and case.code for case in ALL_CASES), "every hostile case must fail the check"
    assert {case.klass for case in CASES2} == {1, 2, 3, 4, 5, 9}  # classes 6-8 are in test_verify / tests/hub


def test_baseline_is_clean(tmp_path: Path) -> None:
    result = check(BASELINE, BASELINE.build(tmp_path))
    assert result.returncode == 0, result.output
    assert [c for c in finding_codes(strict_json(result.stdout)) if c != "DSP206"] == []


@pytest.mark.parametrize("case", [c for c in ALL_CASES if c.name != "header-99-mb"], ids=lambda c: c.name)
def test_case(case: Case, tmp_path: Path) -> None:
    drop_dac = needs_dac_drop(case)
    assert_outcome(check(case, case.build(tmp_path), drop_dac=drop_dac), case.code, case.exit)


def test_99_mb_header(big_header_checkpoint: Path) -> None:
    case = next(c for c in CASES if c.name == "header-99-mb")
    assert_outcome(check(case, big_header_checkpoint), case.code, case.exit)


@pytest.fixture(scope="session")
def big_header_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return big_header(tmp_path_factory.mktemp("big-header"))


@pytest.mark.parametrize("code", sorted({case.code for case in CASES}))
def test_every_corpus_code_is_explained(code: str) -> None:
    result = CliRunner().invoke(app, ["explain", code])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(code)
    for section in ("What it means", "Why it matters", "Example", "How to fix"):
        assert section in result.output


class CountingStream(io.BufferedIOBase):
    """A seekable file stand-in that counts the bytes handed out, to prove what a header read touches."""

    def __init__(self, data: bytes) -> None:
        self._inner = io.BytesIO(data)
        self.bytes_read = 0

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._inner.seek(offset, whence)

    def read(self, size: int | None = -1) -> bytes:
        chunk = self._inner.read(size)
        self.bytes_read += len(chunk)
        return chunk


@pytest.mark.parametrize("declared, file_size", [(2**63, 10**12), (MAX_HEADER_SIZE + 1, 10**12), (4096, 100)])
def test_read_header_never_reads_past_a_refused_length(declared: int, file_size: int) -> None:
    stream = CountingStream(declared.to_bytes(8, "little") + b"{" * 8192)
    result = read_header(stream, file_size)
    assert result.header is None
    assert stream.bytes_read <= 8 + len("https://git-lfs")


def test_read_header_reads_the_header_and_never_the_declared_tensor_bytes() -> None:
    body = json.dumps({"w": {"dtype": "U8", "shape": [2**40], "data_offsets": [0, 2**40]}}).encode()
    stream = CountingStream(len(body).to_bytes(8, "little") + body + b"\0" * 4096)
    result = read_header(stream, 8 + len(body) + 2**40)  # the file claims a terabyte of data
    assert result.ok
    assert stream.bytes_read == 8 + len(body)


def test_read_header_of_the_99_mb_case_reads_exactly_the_header(big_header_checkpoint: Path) -> None:
    path = big_header_checkpoint / "model.safetensors"
    stream = CountingStream(path.read_bytes())
    result = read_header(stream, path.stat().st_size)
    assert stream.bytes_read == path.stat().st_size == 8 + 99_000_000
    assert [p.code for p in result.problems] == ["DSP015"]
