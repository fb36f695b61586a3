"""The contract rows' own answers for a release no row covers go through release.resolve (issue 40, item 1): SGLang's
`nearest_row` / `assumed_row` / DSP220's words and vLLM's `beyond_table` / `assumed_from` each had a policy of their
own (newer than the newest row's last, else the oldest row), which sent an SGLang release inside the list on a line
nothing lists (0.5.0) or an unread post release (0.4.6.post9) to the family's oldest row, an unregistered one. Each
answer here is held to the listed release release.resolve names."""

from __future__ import annotations

import pytest

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes import releases, sglang_rows
from dspark_ckpt.runtimes.release import How, covers, resolve
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS, VLLM_VERSIONS, contract_for

# newer, older, inside the list on an unlisted line, post releases nobody read, a listed one, a post release read
SGLANG_ASKED = ("0.5.24", "0.6.0", "0.4.1", "0.3.9", "0.5.0", "0.4.6.post9", "0.5.14.post2", "0.5.16.post3",
                "0.5.23.post1", "0.5.12", "0.5.13.post1")
VLLM_ASKED = ("0.35.0", "1.0.0", "0.11.0", "0.8.0", "0.34.1", "0.20.3")


@pytest.mark.parametrize("family", list(Family))
def test_sglang_rows_beyond_the_table_answer_as_resolve_does(family: Family) -> None:
    for version in SGLANG_ASKED:
        found = resolve("sglang", version, SGLANG_VERSIONS)
        assert found is not None
        row = sglang_rows.nearest_row(version, family)
        assert row is not None and covers("sglang", row.first, row.last, found.name), (version, row)
        contract = contract_for("sglang", version, family)
        assert contract is not None
        said = releases.assumed_from(contract, version)
        assert said is None if sglang_rows.known_release(version) else said == found.name, (version, said)


@pytest.mark.parametrize("family", list(Family))
def test_vllm_rows_beyond_the_table_answer_as_resolve_does(family: Family) -> None:
    for version in VLLM_ASKED:
        found = resolve("vllm", version, VLLM_VERSIONS)
        assert found is not None
        contract = contract_for("vllm", version, family)
        assert contract is not None
        said = releases.assumed_from(contract, version)
        if found.how == How.NEWER:
            assert said == found.name == contract.last, version
        elif contract.supported and said is not None:  # registered before the list: its oldest row, assumed
            assert found.how == How.OLDER and said == contract.first == found.name, version


def test_an_unlisted_line_inside_the_list_takes_the_release_before_it() -> None:
    """SGLang 0.5.0 was never read: 0.4.10's row (EAGLE-3 registered), not the oldest, unregistered, row."""
    row = sglang_rows.nearest_row("0.5.0", Family.EAGLE3_LLAMA)
    assert row is not None and row.supported and covers("sglang", row.first, row.last, "0.4.10")
    post = sglang_rows.nearest_row("0.4.6.post9", Family.EAGLE3_LLAMA)
    assert post is not None and post.supported and covers("sglang", post.first, post.last, "0.4.6.post5")


def test_dsp220_says_newer_only_of_the_newer_releases() -> None:
    text = sglang_rows.assumption_text([("0.5.23.post1", "0.5.23"), ("0.5.24", "0.5.23"), ("0.4.1", "0.4.2")])
    assert text == ("sglang==0.4.1: verdict assumed from SGLang 0.4.2 (older than every release dspark-ckpt has "
                    "read); sglang==0.5.23.post1: verdict assumed from SGLang 0.5.23 (not a release dspark-ckpt has "
                    "read; the row covering it was used); sglang==0.5.24: verdict assumed from SGLang 0.5.23 (newer "
                    "than every release dspark-ckpt has read; its loader may differ)")
