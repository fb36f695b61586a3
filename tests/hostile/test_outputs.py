"""Untrusted text in every output format, a report too large to print whole, and a file that changes between reads:
the real CLI (under the corpus limits) for the formats, real files for the race."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from corpus import RUNTIMES, TARGET_VOCAB, WEIGHTS
from corpus_round2 import CASES2, many_tensors, weights_case
from limits import assert_contained, finding_codes, run_limited, strict_json

from dspark_ckpt.check.load import load, read_mapping
from dspark_ckpt.formats.vocab_tensors import find_vocab_tensors
from dspark_ckpt.sources.local import LocalFolder

TEXT_CASES = [c for c in CASES2 if c.klass == 3]
# What must never reach a terminal, a CI log or a browser raw: C0/C1 controls (ESC starts every ANSI sequence),
# bidirectional overrides and isolates, zero-width characters, and lone surrogates.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
FORMATS = ("text", "github", "markdown", "junit", "sarif", "json", "concise", "json-lines", "gitlab")


def run_format(case_args: list[str], fmt: str) -> str:
    run = run_limited("check", *case_args, *RUNTIMES, "--format", fmt, "--fail-on", "warning")
    assert_contained(run)
    assert run.returncode == 1, run.output[-2000:]
    return run.stdout


@pytest.mark.parametrize("case", TEXT_CASES, ids=lambda c: c.name)
def test_no_format_lets_raw_control_characters_through(case, tmp_path: Path) -> None:
    built = case.build(tmp_path)
    args = case.args(built) if case.args else [str(built), "--target-vocab-size", str(TARGET_VOCAB)]
    for fmt in FORMATS:
        out = run_format(args, fmt)
        assert not RAW.search(out), (fmt, RAW.search(out))
        if fmt == "text":
            assert not [line for line in out.splitlines() if line.lstrip().startswith("::")]
        elif fmt == "github":  # every line is one of our commands, or the plain summary line
            for line in out.splitlines():
                assert re.match(r"^::(error|warning|notice) file=[^:,]*,line=1,title=DSP\d{3}[^:,]*::", line) \
                    or line.startswith("dspark-ckpt: "), line
        elif fmt == "junit":
            ET.fromstring(out.split("\n", 1)[1])
        elif fmt == "markdown":
            for row in (line for line in out.splitlines() if line.startswith("| ") and "DSP" in line):
                assert len(re.findall(r"(?<!\\)\|", row)) in (4, 5), row  # the table's own pipes only
        elif fmt == "json-lines":
            for line in out.splitlines():
                strict_json(line)
        elif fmt == "concise":  # one finding a line, then the verdict line
            assert all(re.search(r": DSP\d{3} \[", line) for line in out.splitlines()[:-1])
        else:
            strict_json(out)


def test_text_report_summarises_after_a_limit_and_json_keeps_every_finding(tmp_path: Path) -> None:
    ckpt = weights_case(lambda: many_tensors(100_000, "F128"))(tmp_path)
    text = run_limited("check", str(ckpt), "--target-vocab-size", str(TARGET_VOCAB), *RUNTIMES)
    assert_contained(text)
    assert text.returncode == 1 and "more findings not shown" in text.stdout and "--format json" in text.stdout
    assert len(text.stdout) < 400_000  # 200 findings, not 100,000
    report = run_limited("check", str(ckpt), "--target-vocab-size", str(TARGET_VOCAB), *RUNTIMES, "--format", "json")
    assert_contained(report)
    codes = finding_codes(strict_json(report.stdout))
    # every problem is in the JSON: the first 1000 one by one, the rest counted in one more finding
    assert codes.count("DSP009") == 1001
    summary = [f for c in json.loads(report.stdout)["checkpoints"] for f in c["findings"]][-1]
    assert "99,000 more tensors" in summary["message"]


def test_a_file_that_changes_between_reads_is_dsp020(tmp_path: Path) -> None:
    import numpy as np

    from conftest import make_checkpoint

    ckpt = make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=64, target_vocab=96, d2t=True)
    source = LocalFolder(ckpt)
    loaded = load(source)  # the header is read now
    d2t = find_vocab_tensors(loaded.tensors).d2t
    assert d2t is not None
    path = ckpt / WEIGHTS
    path.write_bytes(path.read_bytes() + b"\0" * 8)  # another process rewrites the shard meanwhile
    values, findings = read_mapping(source, d2t)
    assert values is None and [f.code for f in findings] == ["DSP020"]
    assert "changed while it was being checked" in findings[0].message
    fresh, problems = read_mapping(LocalFolder(ckpt), d2t)  # a new check of the new file is fine
    assert fresh is not None and problems == [] and np.frombuffer(fresh, "<i8").shape == (64,)



@pytest.mark.parametrize("fmt", ("json", "json-lines", "sarif", "junit"))
def test_a_long_name_is_quoted_once_not_in_every_releases_row(tmp_path: Path, fmt: str) -> None:
    """A 10 MB architecture name: each release that refuses it says so (DSP309) with the name's first characters and
    its length, so the report stays about the size of the input (it was 70 copies: 740 MB of JSON)."""
    case = next(c for c in CASES2 if c.name == "architecture-10-mb")
    built = case.build(tmp_path)
    out = run_format(case.args(built), fmt)
    assert len(out) < 3 * 10_000_000, len(out)  # the name itself, in the `architecture` field and one message
    assert "(10,000,000 characters)" in out
    if fmt == "json":
        rows = strict_json(out)["checkpoints"][0]["compatibility"]
        refused = [r for r in rows if r["error_code"] == "DSP309"]
        assert len(refused) > 10 and all(len(r["error"]) < 1000 for r in refused)
