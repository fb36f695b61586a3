"""Pure pieces of issue 25's output work: the Wilson interval, the release folding fix and verify share with check,
the ASCII fallback, and tables as one record per line off a terminal."""

from __future__ import annotations

import io
import math

import pytest
from rich.console import Console

from dspark_ckpt.check.ranges import spans
from dspark_ckpt.output.charset import encode_for, encodes_unicode, to_ascii
from dspark_ckpt.output.interval import Z95, rate, wilson
from dspark_ckpt.output.plain import ReportConsole, table
from dspark_ckpt.output.runs import fold, split_selector
from dspark_ckpt.repair import hints
from dspark_ckpt.runtimes.selectors import parse_selectors


def test_wilson_matches_known_values() -> None:
    low, high = wilson(1, 34)  # Wilson (1927) at z=1.96: 0.52%-14.9%
    assert low == pytest.approx(0.005211, abs=1e-5) and high == pytest.approx(0.149156, abs=1e-5)
    assert wilson(0, 10)[1] == pytest.approx(Z95 ** 2 / (10 + Z95 ** 2))  # the closed form at zero hits: 0.2775
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0


@pytest.mark.parametrize(("hits", "n"), [(0, 1), (1, 34), (7, 100), (3, 65536), (65536, 65536)])
def test_wilson_is_symmetric_and_holds_the_rate(hits: int, n: int) -> None:
    low, high = wilson(hits, n)
    assert 0.0 <= low <= hits / n <= high <= 1.0
    mirror = wilson(n - hits, n)
    assert math.isclose(low, 1 - mirror[1], abs_tol=1e-12) and math.isclose(high, 1 - mirror[0], abs_tol=1e-12)


def test_rate_shows_the_interval() -> None:
    assert rate(1, 34) == "1/34 (2.9%, 95% CI 0.5-14.9%)"
    assert rate(0, 34) == "0/34 (0.0%, 95% CI 0.0-10.2%)"
    assert rate(0, 0) == "0/0"
    with pytest.raises(ValueError):
        wilson(5, 4)


def test_fold_groups_consecutive_sglang_releases_with_one_outcome() -> None:
    names = [str(r) for r in parse_selectors(["vllm", "sglang"])]
    cut = names.index("sglang==0.5.16")
    outcome = {n: ("fails" if n.startswith("sglang") and i < cut else "loads") for i, n in enumerate(names)}
    folded = fold(names, split_selector, outcome.__getitem__)
    vllm = [n.split("==")[1] for n in names if n.startswith("vllm")]
    # consecutive vLLM releases with one outcome fold too, as in check (`vllm 0.20.0-0.24.0`)
    assert [(f.label, f.count) for f in folded if f.label.startswith("vllm")] == [
        (f"vllm {vllm[0]}-{vllm[-1]}", len(vllm))]
    sglang = [f for f in folded if f.label.startswith("sglang")]
    assert len(sglang) == 2 and sum(f.count for f in sglang) == len([n for n in names if n.startswith("sglang")])
    assert sglang[0].label.startswith("sglang 0.4.2-") and sglang[1].label.endswith("-0.5.23")


def test_spans_is_one_derivation() -> None:
    assert hints.spans is spans  # repair names ranges through check's grouping, not a copy
    sglang = [str(r) for r in parse_selectors(["sglang"])]
    assert spans(sglang) == "sglang"
    assert spans(sglang[:5]) == f"sglang 0.4.2-{sglang[4].split('==')[1]}"
    assert spans(sglang[:2]) == ", ".join(sglang[:2])  # two releases are named one by one


def test_ascii_fallback() -> None:
    assert not encodes_unicode("ascii") and encodes_unicode("utf-8") and not encodes_unicode("no-such-codec")
    assert to_ascii("┏━┳┓\n│ a │ … → ❌ no ⚠️ yes* 🔴 error") == "+-++\n| a | ... -> no yes* error"
    assert to_ascii("tensor \u2248 \udcff") == "tensor \\u2248 \\udcff"  # the rest escaped, never an encode error
    assert encode_for("│", "ascii") == b"|" and encode_for("│", "utf-8") == "│".encode()


def _render(on_terminal: bool) -> str:
    buffer = io.StringIO()
    console = ReportConsole(file=buffer, width=60, color_system=None, soft_wrap=not on_terminal,
                            on_terminal=on_terminal)  # as output/write.py make_console builds it
    console.print(table(console, "Compatibility", [("runtime", {"no_wrap": True}), ("loads", {}), ("error", {})],
                        [["vllm 0.29.0", "no", "DSP302: " + "x" * 80], ["sglang 0.5.1-0.5.15", "yes*", "a\nb"]]))
    return buffer.getvalue()


def test_table_is_one_record_per_line_off_a_terminal() -> None:
    plain = _render(False)
    assert not any(ch in plain for ch in "┏━│└")
    lines = plain.splitlines()
    assert lines[0] == "Compatibility"
    assert lines[1] == "runtime              loads  error"
    assert lines[2] == "vllm 0.29.0          no     DSP302: " + "x" * 80  # whole, not wrapped at 60
    assert lines[3] == "sglang 0.5.1-0.5.15  yes*   a; b"
    assert "┃" in _render(True)  # a terminal keeps the rich table


def test_plain_console_falls_back_to_is_terminal() -> None:
    assert "┃" not in _render_console(Console(file=io.StringIO(), width=60))


def _render_console(console: Console) -> str:
    console.print(table(console, "t", [("a", {}), ("b", {})], [["1", "2"]]))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out
