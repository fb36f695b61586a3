"""SGLang's EAGLE-3 aux-state lines (runtimes/eagle3_aux_sglang.py LINES) tied to the generated data (issue 40): the
releases it lists are exactly the listed releases whose registry (registered_architectures.json) has
LlamaForCausalLMEagle3, and where a release's generated record probed fc.weight one column off, the record's raise is
default_weight_loader's assert in the same file, the line before the message LINES cites. Each line's statement in
its wheel: tests/producers/test_sglang_aux_lines.py (upstream)."""

from __future__ import annotations

import pytest

from dspark_ckpt.runtimes import eagle3_aux_sglang as aux
from dspark_ckpt.runtimes import registered
from dspark_ckpt.runtimes.release_model import LoadOutcome, architecture_model
from dspark_ckpt.runtimes.versions import SGLANG_RELEASES

ARCH = "LlamaForCausalLMEagle3"


def test_the_releases_listed_are_those_that_register_the_class() -> None:
    assert tuple(aux.LINES) == tuple(r for r in SGLANG_RELEASES if registered.registration("sglang", r, ARCH))


def _fc_one_column_more(release: str) -> LoadOutcome | None:
    model = architecture_model("sglang", release, ARCH)
    rule = model.tensors.get("fc.weight") if model is not None else None
    outcome = rule.off_by_one.get("1+") if rule is not None else None
    return outcome if outcome is not None and outcome.raises is not None else None


# The records from 0.5.8 on probed fc.weight (the older ones fed the EAGLE-3 layout without it)
PROBED = tuple(r for r in aux.LINES if _fc_one_column_more(r) is not None)


def test_the_newest_records_probed_fc() -> None:
    assert len(PROBED) >= 16 and PROBED[-1] == SGLANG_RELEASES[-1]


@pytest.mark.parametrize("release", PROBED)
def test_the_loader_line_follows_the_generated_record(release: str) -> None:
    outcome = _fc_one_column_more(release)
    assert outcome is not None
    file, _, line = outcome.where.rpartition(":")
    assert "Attempted to load weight" in outcome.message
    assert (file, int(line) + 1) == ("sglang/srt/model_loader/weight_utils.py", aux.LINES[release].assert_line)
