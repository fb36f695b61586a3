"""Real checkpoints on disk: kind x shipped tensors x vLLM version -> `loads` and the exact error string."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from conftest import make_checkpoint
from listed import vllm_before

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import messages as c
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.table import VLLM_VERSIONS
from dspark_ckpt.sources.local import local_source

T = 100
KINDS = {"pruned": (40, 100), "equal": (100, 100), "padded": (120, 120), "expanded": (100, 120)}  # (D, V)
SHIPS = list(itertools.product([True, False], repeat=4))  # lm_head, d2t, t2d, embed_tokens
NOPARAM = c.E_NOPARAM.format(cls="Qwen3DSparkForCausalLM")
UNREGISTERED = "Model architectures ['Qwen3DSparkModel'] are not supported for now."


def expected_error(version: str, d: int, v: int, lm: bool, d2t: bool, embed: bool) -> str | None:
    """Transcribed from vllm-contracts.md 2.1/2.3: checks in upstream order, first failure wins. 0.34's load_weights
    has none of the three vocab checks (qwen3_dspark.py 0.33.0 L341-357, gone in 0.34.0): only the d2t parameter.
    Before 0.25 no release registers Qwen3DSparkModel (registry.py @ v0.25.0 L597 first): the registry's refusal
    (registry.py L999 @ v0.20.0, L1062 @ v0.24.0); 0.25/0.26 load as 0.27 (qwen3_dspark.py L121-127, L149-185 @
    v0.25.0; probe_runtime 0.25.0, 0.26.0 384/384)."""
    if version in vllm_before("0.25.0"):
        return UNREGISTERED
    era = "old" if version < "0.29" else "0.29" if version.startswith("0.29") else "new"
    checks = era != "old" and tuple(map(int, version.split(".")[:2])) < (0, 34)
    if checks:
        if v > T and not embed:
            return c.E_EMBED
        reduced = d != T if era == "0.29" else d < T
        if reduced and not lm:
            return c.E_LM_HEAD
        if reduced and not d2t:
            return c.E_D2T
    has_param = d != T if era != "new" else d < T
    return NOPARAM if d2t and not has_param else None


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("matrix")
    runtimes = [RuntimeVersion("vllm", v) for v in VLLM_VERSIONS]
    out = {}
    for kind, (d, v) in KINDS.items():
        for ships in SHIPS:
            lm, d2t, t2d, embed = ships
            path = make_checkpoint(root / f"{kind}-{''.join('1' if s else '0' for s in ships)}", vocab=v,
                                   draft_vocab=d, target_vocab=T, lm_head=lm, d2t=d2t, t2d=t2d, embed=embed)
            out[kind, ships] = inspect_checkpoint(local_source(path), target=TargetVocab(T, "test"),
                                                  runtimes=runtimes)
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("ships", SHIPS, ids=lambda s: "lm{}-d2t{}-t2d{}-emb{}".format(*map(int, s)))
def test_matrix(reports: dict, kind: str, ships: tuple[bool, bool, bool, bool]) -> None:
    report = reports[kind, ships]
    d, v = KINDS[kind]
    lm, d2t, _t2d, embed = ships
    assert report.vocab_kind == {"expanded": "equal"}.get(kind, kind)
    assert [e.version for e in report.compatibility] == list(VLLM_VERSIONS)
    for entry in report.compatibility:
        want = expected_error(entry.version, d, v, lm, d2t, embed)
        assert entry.error == want, (entry.version, entry.error)
        assert entry.loads is (want is None)
    failing_codes = {e.error_code for e in report.compatibility if e.error_code}
    assert failing_codes <= {f.code for f in report.findings}


def test_report_lists_vocab_tensors_without_reading_weights(tmp_path: Path) -> None:
    path = make_checkpoint(tmp_path / "d", vocab=100, draft_vocab=40, target_vocab=T, d2t=True, t2d=True)
    report = inspect_checkpoint(local_source(path), target=TargetVocab(T, "test"), runtimes=[])
    names = {t.name: (t.dtype, t.shape) for t in report.tensors}
    assert names["lm_head.weight"] == ("F32", (40, 16))
    assert names["d2t"] == ("I64", (40,))
    assert names["t2d"] == ("BOOL", (T,))
    assert report.findings == ()
