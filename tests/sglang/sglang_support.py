"""Helpers for the SGLang tests: real checkpoints (tests/conftest.py make_checkpoint) checked against every known
SGLang release, and the releases of a range as the rows name them. (Not a conftest.py: tests/sglang has no
__init__.py, so that its folder never shadows an installed `sglang` package.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import edit_config  # noqa: F401 - re-exported: the SGLang tests take it from here

from dspark_ckpt.check.analysis import inspect_checkpoint
from dspark_ckpt.model.report import Compatibility
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS
from dspark_ckpt.sources.local import local_source

T = 96
# What SGLang's DSpark parser and worker require of every draft (markov_head_type, mask_token_id).
DSPARK_READY = {"markov_head_type": "vanilla", "mask_token_id": 0}
EAGLE3_READY = {"model_type": "llama", "num_hidden_layers": 1}


def releases(first: str, last: str) -> list[str]:
    """The known releases from `first` to `last`, inclusive, in the table's order."""
    return list(SGLANG_VERSIONS[SGLANG_VERSIONS.index(first): SGLANG_VERSIONS.index(last) + 1])


def outcome(e: Compatibility) -> tuple[str, Any]:
    """('error', code) | ('first-step', code) | ('loads', silent codes)."""
    if e.error_code:
        return "error", e.error_code
    if e.first_step_error_code:
        return "first-step", e.first_step_error_code
    return "loads", frozenset(e.silent_codes)


def check(path: Path, runtimes: list[str] | None = None, target: int = T) -> dict[str, Compatibility]:
    report = inspect_checkpoint(local_source(path), target=TargetVocab(target, "test"),
                                runtimes=parse_selectors(runtimes or ["sglang"]))
    return {e.version: e for e in report.compatibility if e.runtime == "sglang"}


# An outcome `expect` checks only as loading: the caller checks the silent codes per release (those the release's
# generated model adds where it has one, runtimes/release_data/sglang-X).
ANY_LOADS = ("loads", None)


def expect(found: dict[str, Compatibility], ranges: dict[tuple[str, str], tuple[str, Any]]) -> None:
    """Every known release has exactly the outcome its range says (the ranges must cover every release)."""
    covered = [v for first, last in ranges for v in releases(first, last)]
    assert sorted(covered) == sorted(SGLANG_VERSIONS), "the ranges must cover every known release once"
    for (first, last), want in ranges.items():
        for version in releases(first, last):
            got = outcome(found[version])
            assert (got[0] == "loads") if want is ANY_LOADS else got == want, (version, found[version])


class Drafts:
    """make_checkpoint in fresh folders under one tmp_path, T = 96 unless given."""

    def __init__(self, root: Path) -> None:
        self.root, self.n = root, 0

    def __call__(self, **kwargs: Any) -> Path:
        from conftest import make_checkpoint

        self.n += 1
        kwargs.setdefault("target_vocab", T)
        return make_checkpoint(self.root / f"d{self.n}", **kwargs)
