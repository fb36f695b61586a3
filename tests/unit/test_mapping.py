"""d2t/t2d decoding and validation on hand-made tables."""

from __future__ import annotations

import struct

import numpy as np
from conftest import mapping_tables

from dspark_ckpt.formats.mapping import check_d2t, check_t2d, d2t_targets, decode_ints, rebuild_d2t


def codes(findings: list) -> set[str]:
    return {f.code for f in findings}


def test_valid_mapping_has_no_findings() -> None:
    d2t, t2d = mapping_tables(32, 200, seed=3)
    assert check_d2t(list(d2t), target_vocab_size=200, pruned=True, file="f", tensor="d2t") == []
    assert check_t2d(list(t2d), d2t_targets(list(d2t)), draft_vocab_size=32, file="f", tensor="t2d") == []


def test_rebuild_d2t_is_exact() -> None:
    d2t, t2d = mapping_tables(50, 300, seed=1)
    assert rebuild_d2t(t2d.tolist()) == d2t.tolist()


def test_all_zero_on_pruned_draft() -> None:
    assert codes(check_d2t([0] * 10, target_vocab_size=100, pruned=True, file="f", tensor="d2t")) == {"DSP401"}
    # On an identity-mapped (padded/equal) draft zeros are the right answer.
    assert check_d2t([0] * 10, target_vocab_size=100, pruned=False, file="f", tensor="d2t") == []


def test_out_of_range_and_not_increasing() -> None:
    found = check_d2t([0, 5, 98, 97], target_vocab_size=100, pruned=True, file="f", tensor="d2t")
    assert codes(found) == {"DSP402", "DSP403"}
    assert "draft id 2 -> 100" in next(f.message for f in found if f.code == "DSP402")
    assert codes(check_d2t([-1, 3], target_vocab_size=100, pruned=True, file="f", tensor="d2t")) == {"DSP402"}
    assert codes(check_d2t([3, 2], target_vocab_size=100, pruned=True, file="f", tensor="d2t")) == {"DSP403"}


def test_t2d_count_and_consistency() -> None:
    d2t, t2d = mapping_tables(10, 50, seed=2)
    flipped = t2d.copy()
    flipped[np.flatnonzero(~t2d)[0]] = True
    assert codes(check_t2d(list(flipped), d2t_targets(list(d2t)), draft_vocab_size=10, file="f", tensor="t2d")) == {
        "DSP404", "DSP405"}
    moved = t2d.copy()
    first_true, first_false = np.flatnonzero(t2d)[0], np.flatnonzero(~t2d)[-1]
    moved[first_true], moved[first_false] = False, True
    assert codes(check_t2d(list(moved), d2t_targets(list(d2t)), draft_vocab_size=10, file="f", tensor="t2d")) == {"DSP405"}


def test_decode_little_endian_ints_and_bools() -> None:
    assert list(decode_ints(struct.pack("<3q", 1, -2, 3), "I64") or []) == [1, -2, 3]
    assert list(decode_ints(struct.pack("<2i", 7, 8), "I32") or []) == [7, 8]
    assert list(decode_ints(bytes([0, 1, 1]), "BOOL") or []) == [0, 1, 1]
    assert decode_ints(b"\x00" * 8, "F32") is None
    assert decode_ints(b"\x00" * 7, "I64") is None


def test_padded_rows_are_left_to_dsp305_but_real_rows_are_checked() -> None:
    # A zero d2t on a padded draft (D = 12 > T = 10): rows 10 and 11 are the padding DSP305 reports.
    assert check_d2t([0] * 12, target_vocab_size=10, pruned=False, file="f", tensor="d2t") == []
    # An offset that pushes a real row (< T) out of range is still an error.
    assert codes(check_d2t([0] * 8 + [5, 0, 0, 0], target_vocab_size=10, pruned=False, file="f",
                           tensor="d2t")) == {"DSP402", "DSP403"}
