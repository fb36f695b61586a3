"""Issue 25 item 3, through the real CLI: off a terminal the text is one record per line (grep finds a release's
row whole), a stream that cannot encode Unicode gets ASCII, and fix and verify name releases by range as check does."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import edit_config, make_checkpoint, run_cli

from dspark_ckpt.output.plain import table
from dspark_ckpt.output.verify_records import MappingCheck, VerifyResult
from dspark_ckpt.output.write import TextBuffer, make_console
from dspark_ckpt.runtimes.versions import VLLM_RELEASES
from dspark_ckpt.verify.findings import verify_findings

BOX = set("┏┓┗┛┃━│─┡┩└┘╇╋")
EXAMPLE = Path(__file__).parents[2] / "examples"


def _padded(tmp_path: Path) -> Path:
    return make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=120, target_vocab=96)


def test_off_a_terminal_check_text_has_no_box_and_one_line_per_release(tmp_path: Path) -> None:
    draft = _padded(tmp_path)
    result = run_cli("check", str(draft), "--target-vocab-size", "96", "--isolated", "-v")  # the matrix: -v
    assert result.returncode == 1, result.stderr
    assert not BOX & set(result.stdout)
    rows = [line for line in result.stdout.splitlines() if line.startswith("vllm 0.29.0 ")]
    assert len(rows) == 1 and " no " in rows[0] and "DSP302: Reduced-vocabulary" in rows[0]
    assert rows[0].rstrip().endswith("converted to target ids.")  # the runtime's message whole, on its line
    # before 0.4.7 models/registry.py refuses the name in its own words, so the DSP309 releases are two lines
    assert any(line.startswith("sglang 0.4.2-0.4.6.post5 ") for line in result.stdout.splitlines())
    assert any(line.startswith("sglang 0.4.7-0.5.15 ") for line in result.stdout.splitlines())


def test_example_checkpoint_lines_stay_short_enough_for_a_log() -> None:
    result = run_cli("check", str(EXAMPLE / "inkling-small-dspark"), "--target", str(EXAMPLE / "inkling-small-target"),
                     "--isolated", env={"COLUMNS": ""})
    assert result.returncode == 1, result.stderr
    assert not BOX & set(result.stdout)
    # The longest line is a record (a runtime's own message), no longer padded out to a 900-column box.
    assert max(len(line) for line in result.stdout.splitlines()) < 400


@pytest.mark.parametrize("fmt", ["text", "markdown", "github", "concise"])
def test_ascii_stream_gets_ascii(tmp_path: Path, fmt: str) -> None:
    draft = _padded(tmp_path)
    result = run_cli("check", str(draft), "--target-vocab-size", "96", "--isolated", "--format", fmt,
                     env={"PYTHONIOENCODING": "ascii"})
    assert result.returncode == 1, result.stderr
    assert result.stdout.isascii(), [ch for ch in result.stdout if not ch.isascii()][:5]
    assert "DSP302" in result.stdout


def test_ascii_stream_gets_ascii_in_a_real_process(tmp_path: Path) -> None:
    draft = _padded(tmp_path)
    result = run_cli("check", str(draft), "--target-vocab-size", "96", "--isolated", "--format", "markdown",
                     env={"PYTHONIOENCODING": "ascii"}, subprocess_=True)
    assert result.returncode == 1, result.stderr
    assert result.stdout.isascii() and "| vllm 0.29.0 | no |" in result.stdout  # the icon dropped, the word kept


def test_a_terminal_that_cannot_encode_unicode_gets_an_ascii_box() -> None:
    buffer = TextBuffer("ascii")
    console = make_console(buffer, color="never", terminal=True, width=60)
    console.print(table(console, "Compatibility", [("runtime", {}), ("loads", {})], [["vllm 0.29.0", "no"]]))
    out = buffer.getvalue()
    assert out.isascii() and "| vllm 0.29.0 | no    |" in out
    utf = TextBuffer("utf-8")
    console = make_console(utf, color="never", terminal=True, width=60)
    console.print(table(console, "Compatibility", [("runtime", {}), ("loads", {})], [["vllm 0.29.0", "no"]]))
    assert "┃" in utf.getvalue()


def _sglang_draft(tmp_path: Path) -> Path:
    """An EAGLE-3 draft SGLang 0.5.12+ loads: fix and verify have 12 SGLang releases with one outcome (without
    num_hidden_layers, SGLang 0.5.1-0.5.11 take LlamaConfig's 32 layers and refuse it, DSP341)."""
    return edit_config(make_checkpoint(tmp_path / "e3", family="eagle3-llama", vocab=64, draft_vocab=64,
                                       target_vocab=48, markov=False), num_hidden_layers=None)


def test_fix_names_releases_by_range(tmp_path: Path) -> None:
    draft = _sglang_draft(tmp_path)
    result = run_cli("fix", str(draft), "--target-vocab-size", "48", "--for", "all", "--dry-run", "--isolated")
    lines = result.stdout.splitlines()
    sglang = [line for line in lines if line.lstrip().startswith("sglang ")]
    assert sglang == ["  sglang 0.5.12-0.5.23 loads* (DSP307, DSP305) -> loads* (DSP307)"], result.stdout
    # vLLM's consecutive releases with one outcome fold too: EAGLE-3 Llama loads padded on every listed one
    vllm = [" ".join(line.split()) for line in lines if line.lstrip().startswith("vllm ")]
    assert vllm == [f"vllm {VLLM_RELEASES[0]}-{VLLM_RELEASES[-1]} loads* (DSP305) -> loads"], result.stdout


def test_dsp603_names_releases_by_range() -> None:
    sglang = tuple(f"sglang==0.5.{n}" for n in range(16, 24))
    broken = MappingCheck(sglang, "d2t", 64, 48, out_of_range=3, first_out_of_range=(5, 70), strictly_increasing=True,
                          first_not_increasing=None, t2d_consistent=None, all_zero_identity_on_pruned=False)
    (found,) = verify_findings(VerifyResult("cpu", "2", mappings=(broken,)))
    assert found.code == "DSP603" and found.message.startswith("on sglang 0.5.16-0.5.23, map_draft_to_target")


def test_verify_folds_releases_and_gives_probe_rates_an_interval(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    draft = _sglang_draft(tmp_path)
    result = run_cli("verify", str(draft), "--target-vocab-size", "48", "--runtime", "all", "--probe", "34",
                     "--isolated")
    assert result.returncode in (0, 1), result.stderr
    out = result.stdout
    assert not BOX & set(out)
    assert "sglang 0.5.12-0.5.23" in out and "sglang 0.5.13 " not in out
    probe_rows = [line for line in out.splitlines() if line.startswith(("embed_tokens ", "gaussian "))]
    assert len(probe_rows) == 2 and all("95% CI" in row for row in probe_rows)


def test_quiet_text_is_plain_too(tmp_path: Path) -> None:
    draft = _padded(tmp_path)
    result = run_cli("check", str(draft), "--target-vocab-size", "96", "--isolated", "-q")
    assert not BOX & set(result.stdout) and result.stdout.strip().splitlines()[-1].startswith("1 checkpoint(s)")
    assert "Compatibility" not in result.stdout  # -q: the findings and the verdict line only
