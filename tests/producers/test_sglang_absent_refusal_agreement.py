"""A key left out, or set to null, beside the key SGLang takes it with, held against SGLang's own code (issue 42).

SGLang's DFlash2 reads `dflash_config.conv_kernel_size` and `conv_group_size` with `.get(key, 0)`, parses each with
`_parse_optional_int` (None stays None) and refuses one without the other: "DFLASH grouped convolution needs
conv_kernel_size and conv_group_size together. Got conv_kernel_size=..., conv_group_size=..."
(speculative/dflash_utils.py parse_dflash_draft_config, L629-634 @ 0.5.23). The release model records that
refusal, for the key left out and for it set to null, and what a null does alone (`absent_keys.<key>`:
`refused_alone`, `refused_null_alone`, `null`; release_worker._absence); check reports the refusal as DSP372 in the
release's words at the draft's values (runtimes/absent_refusal.py). Each case runs through the release's own
get_config, __init__ and load_weights on CPU (the worker's load mode); the answers are recorded in
tests/data/observed/sglang-absent-refusal (tests/recorded.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from producers import materialise
from recorded import observations, sources
from test_sglang_absent_keys_agreement import CONV, LAYOUT, judged
from test_sglang_whole_agreement import _compare
from test_sglang_whole_classes_agreement import _observe

from dspark_ckpt.runtimes.release_model import generated_releases

RELEASES = ("0.5.23", "0.5.22", "0.5.21", "0.5.20", "0.5.19")
DROP = object()  # leave the key out


def _set(**keys: Any) -> Callable[[dict[str, Any]], None]:
    def edit(cfg: dict[str, Any]) -> None:
        for key, value in keys.items():
            if value is DROP:
                cfg["dflash_config"].pop(key)
            else:
                cfg["dflash_config"][key] = value
    return edit


# name -> (config edit, convolution tensors dropped, whether the release refuses it)
CASES: dict[str, tuple[Callable[[dict[str, Any]], None], bool, bool]] = {
    "kernel-left-out": (_set(conv_kernel_size=DROP), False, True),
    "group-left-out": (_set(conv_group_size=DROP), False, True),
    "group-left-out-kernel-5": (_set(conv_group_size=DROP, conv_kernel_size=5), False, True),
    "kernel-null": (_set(conv_kernel_size=None), False, True),
    "group-null": (_set(conv_group_size=None), True, True),
    "both-null": (_set(conv_kernel_size=None, conv_group_size=None), True, False),
    "kernel-null-group-left-out": (_set(conv_kernel_size=None, conv_group_size=DROP), True, False),
}


def _cases(tmp_path: Path, release: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    cases, predicted = [], {}
    for name, (edit, dropped, _) in CASES.items():
        folder = tmp_path / name
        materialise(folder, LAYOUT, config=edit, drop=tuple(f"layers.0.{s}" for s in CONV) if dropped else ())
        case, predicted[name] = judged(folder, name, release)
        cases.append(case)
    return cases, predicted


@pytest.mark.parametrize("source", sources("sglang"))
@pytest.mark.parametrize("release", RELEASES)
def test_check_agrees_with_sglang_on_a_conv_key_left_out_or_null(tmp_path: Path, release: str, source: str) -> None:
    assert release in generated_releases("sglang")
    cases, predicted = _cases(tmp_path, release)
    observed = observations("sglang-absent-refusal", "sglang", release, cases, source,
                            lambda: _observe(release, cases))
    assert _compare(predicted, observed) == []
    for name, (_, _, refused) in CASES.items():
        verdict, seen = predicted[name][0], observed[name]
        assert (seen["error"] is not None) == refused, (name, seen)
        if refused:  # the release's own words, at the draft's values, in check's DSP372
            assert verdict.error is not None and verdict.error.code == "DSP372", (name, verdict.error)
            assert seen["error"]["message"] in verdict.error.text, (name, seen["error"], verdict.error.text)
        else:  # a null the release reads as the key's absence: no convolution, nothing left unwritten by it
            assert verdict.loads and not any("_conv." in p for p in seen["unwritten"]), (name, seen)


@pytest.mark.parametrize("release", RELEASES)
def test_the_conv_refusal_comes_before_the_workers_mask_check(tmp_path: Path, release: str) -> None:
    """SGLang parses dflash_config in the draft model's __init__ (models/dflash.py L293 and L700 @ 0.5.23 call
    parse_dflash_draft_config, whose conv refusal is dflash_utils.py L629-634), which the DFlash worker builds
    (dflash_worker_v2.py L438-441: bundle.draft_model) before it resolves the mask token (L533
    _resolve_mask_token_id): a draft with both problems is refused for the conv keys (DSP372), not the mask
    (DSP343)."""
    from producers import T

    both = tmp_path / "both"
    materialise(both, LAYOUT, config=_set(conv_kernel_size=DROP, mask_token_id=T + 5))
    error = judged(both, "both", release)[1][0].error
    assert error is not None and error.code == "DSP372", error
    mask = tmp_path / "mask"  # the mask alone is the worker's refusal
    materialise(mask, LAYOUT, config=_set(mask_token_id=T + 5))
    error = judged(mask, "mask", release)[1][0].error
    assert error is not None and error.code == "DSP343", error
