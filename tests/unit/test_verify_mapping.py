"""map_draft_to_target(arange(D)) checks on hand-made d2t tables, directly and through a real verify run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import draft_tensors, make_checkpoint, mapping_tables

from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import local_source
from dspark_ckpt.sources.target import explicit_target
from dspark_ckpt.verify.checkpoint import verify_checkpoint
from dspark_ckpt.verify.mapping_check import check_mapping, map_draft_to_target
from dspark_ckpt.verify.torch_loader import VerifyOptions

T, D = 96, 64


def check(d2t: np.ndarray | None, t2d: np.ndarray | None = None, *, loaded: bool = True, width: int = D):
    as_tensor = (lambda a: torch.from_numpy(a) if a is not None else None)
    return check_mapping(as_tensor(d2t), width=width, target_vocab=T, pruned=width < T, loaded=loaded,
                         t2d=as_tensor(t2d), runtimes=("vllm==0.33.0",))


def test_valid_table_passes_every_check() -> None:
    d2t, t2d = mapping_tables(D, T)
    result = check(d2t, t2d)
    assert result.failures == () and result.t2d_consistent is True and result.out_of_range == 0
    ids = map_draft_to_target(torch.arange(D), torch.from_numpy(d2t))
    assert torch.equal(ids, torch.from_numpy(np.flatnonzero(t2d)))


def test_out_of_range_ids_are_counted_with_the_first_one() -> None:
    d2t, _ = mapping_tables(D, T)
    d2t[-3:] += T  # the last three draft ids leave [0, T)
    result = check(d2t)
    assert result.out_of_range == 3
    assert result.first_out_of_range == (D - 3, D - 3 + int(d2t[D - 3]))
    d2t[0] = -1  # a negative id counts too
    assert check(d2t).out_of_range == 4 and check(d2t).first_out_of_range == (0, -1)


def test_duplicate_and_decreasing_ids_break_strict_increase() -> None:
    d2t, _ = mapping_tables(D, T)
    d2t[10] = d2t[9] - 1  # draft id 10 maps onto draft id 9's target
    result = check(d2t)
    assert not result.strictly_increasing and result.first_not_increasing == 10


def test_stale_t2d_is_inconsistent() -> None:
    d2t, _ = mapping_tables(D, T, seed=0)
    _, other = mapping_tables(D, T, seed=1)
    assert check(d2t, other).t2d_consistent is False
    assert check(d2t, np.ones(T - 1, dtype=bool)).t2d_consistent is False  # wrong length


def test_all_zero_identity_on_pruned_draft() -> None:
    zeros = np.zeros(D, dtype=np.int64)
    shipped = check(zeros)
    assert shipped.all_zero_identity_on_pruned and any("all-zero" in f for f in shipped.failures)
    assert check(None).all_zero_identity_on_pruned  # no parameter at all: identity
    assert not check(np.zeros(T, dtype=np.int64), width=T).all_zero_identity_on_pruned  # equal vocab: fine


def test_padded_identity_is_not_a_table_failure() -> None:
    result = check(None, width=128)
    assert result.out_of_range == 128 - T and result.first_out_of_range == (T, T) and result.failures == ()


def test_bad_table_in_a_checkpoint_gives_dsp603(tmp_path: Path) -> None:
    tensors = draft_tensors(vocab=T, draft_vocab=D, target_vocab=T, d2t=True, t2d=True)
    tensors["d2t"] = tensors["d2t"].copy()
    tensors["d2t"][5] = tensors["d2t"][4] - 1
    path = make_checkpoint(tmp_path / "x", tensors=tensors, vocab=T, draft_vocab=D, target_vocab=T)
    report, result = verify_checkpoint(local_source(path), target=explicit_target(T),
                                       runtimes=parse_selectors(["vllm==0.33.0"]),
                                       options=VerifyOptions(device="cpu", probes=0), device=torch.device("cpu"))
    (mapping,) = result.mappings
    assert mapping.source == "d2t" and mapping.first_not_increasing == 5 and mapping.t2d_consistent is False
    found = [f for f in report.findings if f.code == "DSP603"]
    assert len(found) == 1 and "vllm==0.33.0" in found[0].message
