"""runtimes/absent_refusal.py: a key taken only together with another, left out or null beside it, judged from the
record's `absent_keys` refusals (the record's words, the other key's value at the draft's)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from dspark_ckpt.runtimes.absent_refusal import ABSENT, NULL, refused_absence, state
from dspark_ckpt.runtimes.release_model import architecture_model

WORDS = "DFLASH grouped convolution needs conv_kernel_size and conv_group_size together."
KERNEL, GROUP = "dflash_config.conv_kernel_size", "dflash_config.conv_group_size"


def said(message: str) -> dict[str, str]:
    return {"raises": "ValueError", "message": message, "where": "sglang/srt/speculative/dflash_utils.py:630"}


def model() -> Any:
    found = architecture_model("sglang", "0.5.23", "DFlash2DraftModel")
    assert found is not None
    gone = ["layers.0.attention_conv.base_kernel"]
    return replace(found, absent_keys={
        KERNEL: {"disappears": gone, "with_absent": [GROUP], "null": "as_absent",
                 "refused_alone": said(f"{WORDS} Got conv_kernel_size=0, conv_group_size={{{GROUP}}}."),
                 "refused_null_alone": said(f"{WORDS} Got conv_kernel_size=None, conv_group_size={{{GROUP}}}.")},
        GROUP: {"disappears": gone, "with_absent": [KERNEL], "null": said("TypeError: a null group"),
                "refused_alone": said(f"{WORDS} Got conv_kernel_size={{{KERNEL}}}, conv_group_size=0.")}})


def test_state_tells_a_key_left_out_from_a_null_and_a_value() -> None:
    config = {"dflash_config": {"conv_kernel_size": None, "conv_group_size": 4}, "top": 1}
    assert state(config, KERNEL) == NULL and state(config, GROUP) == 4
    assert state(config, "dflash_config.selector_rank") == ABSENT and state({}, KERNEL) == ABSENT
    assert state({"dflash_config": None}, KERNEL) == ABSENT and state(config, "top") == 1


@pytest.mark.parametrize(("section", "text"), [
    ({"conv_group_size": 4}, (f"{WORDS} Got conv_kernel_size=0, conv_group_size=4. (sglang/srt/speculative/"
                              f"dflash_utils.py:630, in __init__: {KERNEL} left out, {GROUP} 4)")),
    ({"conv_kernel_size": None, "conv_group_size": 4.0}, f"{WORDS} Got conv_kernel_size=None, conv_group_size=4."),
    ({"conv_kernel_size": 5}, f"{WORDS} Got conv_kernel_size=5, conv_group_size=0."),
    ({"conv_group_size": None}, "TypeError: a null group"),  # a null alone the record saw refused
    ({"conv_kernel_size": None, "conv_group_size": None}, "TypeError: a null group"),  # the kernel's reads as absent
])
def test_the_records_refusal_at_the_drafts_values(section: dict[str, Any], text: str) -> None:
    issue = refused_absence(model(), {"dflash_config": section})
    assert issue is not None and issue.code == "DSP372" and issue.text.startswith("ValueError: ")
    assert text in issue.text, issue.text


@pytest.mark.parametrize("section", [
    {},  # both left out: as the record's absence (landing.left_out)
    {"conv_kernel_size": 3, "conv_group_size": 2},  # both set
    {"conv_group_size": 0},  # the other at a value the record never saw it hold: no claim
    {"conv_group_size": "2"},
    {"conv_kernel_size": None},  # a null the record saw read as absent, the other left out
])
def test_no_refusal_where_the_record_saw_none_or_has_no_observation(section: dict[str, Any]) -> None:
    assert refused_absence(model(), {"dflash_config": section}) is None
