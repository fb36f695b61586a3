"""verify (torch, observed) and check (headers, reasoned) agree on loads/errors over the whole fixture matrix."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from conftest import ARCH, make_checkpoint  # noqa: E402
from dspark_ckpt.inspect import inspect_checkpoint  # noqa: E402
from dspark_ckpt.runtimes import parse_selectors  # noqa: E402
from dspark_ckpt.sources.local import local_source  # noqa: E402
from dspark_ckpt.target import explicit_target  # noqa: E402
from dspark_ckpt.torch_loader import VerifyOptions, verify_checkpoint  # noqa: E402

T = 96
KINDS = {"pruned": (96, 64), "equal": (96, 96), "padded": (128, 128), "expanded": (128, 96)}  # kind: (V, D)
SHIPS = list(itertools.product([True, False], repeat=4))  # lm_head, d2t, t2d, embed_tokens
RUNTIMES = parse_selectors(None)  # every vLLM version and SGLang


def known_disagreement(family: str, v: int, d: int, runtime: str) -> bool:
    """SGLang's Qwen3 DSpark sizes lm_head and markov_w2 by V (docs/upstream-notes.md section 3). With D != V the
    torch run sees the row assertion of whichever of them loads first (lm_head sorts before t2d); check expects D
    rows for markov_w2 and rejects t2d before loading anything. Reported to the lead, not papered over."""
    return family == "qwen3-dspark" and runtime == "sglang" and d != v


@pytest.mark.parametrize("family", sorted(ARCH))
def test_matrix_agrees_with_check(tmp_path: Path, family: str) -> None:
    device = torch.device("cpu")
    options = VerifyOptions(device="cpu", probes=0)
    cells = disagreed = 0
    for (kind, (v, d)), (lm, d2t, t2d, embed) in itertools.product(KINDS.items(), SHIPS):
        path = make_checkpoint(tmp_path / f"{kind}-{lm:d}{d2t:d}{t2d:d}{embed:d}", family=family, vocab=v,
                               draft_vocab=d, target_vocab=T, lm_head=lm, d2t=d2t, t2d=t2d, embed=embed)
        checked = inspect_checkpoint(local_source(path), target=explicit_target(T), runtimes=RUNTIMES)
        verified, result = verify_checkpoint(local_source(path), target=explicit_target(T), runtimes=RUNTIMES,
                                             options=options, device=device)
        assert result.skipped is None
        assert [(e.runtime, e.version) for e in verified.compatibility] == \
            [(e.runtime, e.version) for e in checked.compatibility]
        here = 0
        for mine, theirs in zip(verified.compatibility, checked.compatibility):
            cells += 1
            where = f"{path.name} on {mine.runtime} {mine.version}"
            same = (mine.loads == theirs.loads and mine.error_code == theirs.error_code
                    and (mine.error or "").startswith(theirs.error or "")
                    and sorted(set(mine.silent_codes)) == sorted(set(theirs.silent_codes)))
            if not same and known_disagreement(family, v, d, mine.runtime):
                here += 1
                assert not mine.loads and mine.error_code in ("DSP320", "DSP323"), where
                continue
            assert mine.loads == theirs.loads, where
            assert mine.error_code == theirs.error_code, where
            assert (mine.error or "").startswith(theirs.error or ""), where
            assert sorted(set(mine.silent_codes)) == sorted(set(theirs.silent_codes)), where
        disagreed += here
        assert any(f.code == "DSP605" for f in verified.findings) == bool(here), path.name
    assert cells == len(KINDS) * len(SHIPS) * len(checked.compatibility)
    assert disagreed == (12 if family == "qwen3-dspark" else 0)
