"""SGLang's EAGLE-3 aux hidden states (issue 21 items 1/2), LlamaForCausalLMEagle3 per release: fc is sized for 3
through 0.5.11, from num_aux_hidden_states / eagle_config's list from 0.5.12; the runner reads only eagle_config's
list (runtimes/eagle3_aux_sglang.py LINES; read in the wheels, not executed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import draft_tensors, make_checkpoint

from dspark_ckpt.check.analysis import Analysis, analyze
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes import messages as m
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS
from dspark_ckpt.sources.local import local_source

H, T = 16, 96
IDS4 = [1, 5, 9, 13]
# The releases that register LlamaForCausalLMEagle3 (0.4.4.post2 on: models/llama_eagle3.py:196 @ 0.4.4.post2).
RELEASES = SGLANG_VERSIONS[SGLANG_VERSIONS.index("0.4.4.post2"):]
OLD = RELEASES[:RELEASES.index("0.5.12")]
NEW = RELEASES[RELEASES.index("0.5.12"):]
# 0.4.4.post2-0.4.8: the worker's get_hot_token_id() needs a d2t, which these drafts (D == T) do not ship; fc is
# loaded before, so an fc error still comes first there (docs/upstream-notes.md section 3.1).
HOT = RELEASES[:RELEASES.index("0.4.9")]
NO_HOT = (m.E_SGLANG_NO_HOT_TOKEN, None)


def shape_error(got: int, want: int) -> str:
    """weight_utils.py default_weight_loader's assert (fc is a plain nn.Linear)."""
    return f"Attempted to load weight (torch.Size([{H}, {got}])) into parameter (torch.Size([{H}, {want}]))"


def run(tmp_path: Path, family: str, config: dict[str, Any], fc_cols: int) -> Analysis:
    tensors = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, hidden=H, markov=False)
    tensors["fc.weight"] = np.zeros((H, fc_cols), dtype=np.float32)
    path = make_checkpoint(tmp_path / family, family=family, vocab=T, draft_vocab=T, target_vocab=T, hidden=H,
                           config_extra={"num_hidden_layers": 1, **config}, tensors=tensors)
    return analyze(local_source(path), target=TargetVocab(T, "test"),
                   runtimes=[RuntimeVersion("sglang", v) for v in RELEASES])


def outcome(a: Analysis) -> dict[str, tuple[str | None, str | None]]:
    return {v.version: (v.error.text if v.error else None, v.first_step.code if v.first_step else None)
            for v in a.verdicts}


def message(a: Analysis, code: str) -> str:
    (found,) = [f.message for f in a.findings if f.code == code]
    return found


@pytest.mark.parametrize("family", ["eagle3-llama"])
def test_top_level_four_ids_fail_on_fc_everywhere(tmp_path: Path, family: str) -> None:
    a = run(tmp_path, family, {"eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H)
    assert outcome(a) == dict.fromkeys(RELEASES, (shape_error(4 * H, 3 * H), None))
    said = message(a, "DSP356")
    assert f"SGLang {OLD[0]}-{OLD[-1]} (llama_eagle3.py) always sizes fc for 3 aux hidden states" in said
    assert f"SGLang {NEW[0]}-{NEW[-1]} (llama_eagle3.py) sizes fc from the default of 3 x hidden_size" in said
    assert "reads the target layers only from eagle_config.eagle_aux_hidden_state_layer_ids" in said


def test_nested_four_ids_load_from_0_5_12(tmp_path: Path) -> None:
    a = run(tmp_path, "eagle3-llama", {"eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 4 * H)
    assert outcome(a) == {**dict.fromkeys(OLD, (shape_error(4 * H, 3 * H), None)), **dict.fromkeys(NEW, (None, None))}


def test_count_with_only_a_top_level_list_fails_at_the_first_step(tmp_path: Path) -> None:
    """num_aux_hidden_states sizes fc (0.5.12+), but the runner hands it the target's 3 default layers."""
    a = run(tmp_path, "eagle3-llama", {"num_aux_hidden_states": 4, "eagle_aux_hidden_state_layer_ids": IDS4}, 4 * H)
    assert outcome(a) == {**dict.fromkeys(OLD, (shape_error(4 * H, 3 * H), None)),
                          **dict.fromkeys(NEW, (None, "DSP329"))}


def test_count_and_both_lists_load_from_0_5_12(tmp_path: Path) -> None:
    a = run(tmp_path, "eagle3-llama", {"num_aux_hidden_states": 4, "eagle_aux_hidden_state_layer_ids": IDS4,
                                       "eagle_config": {"eagle_aux_hidden_state_layer_ids": IDS4}}, 4 * H)
    assert outcome(a) == {**dict.fromkeys(OLD, (shape_error(4 * H, 3 * H), None)), **dict.fromkeys(NEW, (None, None))}


def test_no_list_takes_the_default_layers(tmp_path: Path) -> None:
    a = run(tmp_path, "eagle3-llama", {}, 3 * H)
    assert outcome(a) == {**dict.fromkeys(RELEASES, (None, None)), **dict.fromkeys(HOT, NO_HOT)}
    assert message(a, "DSP357").startswith(f"SGLang {RELEASES[0]}-{RELEASES[-1]} finds no ")


def test_target_hidden_size_sets_fc_width(tmp_path: Path) -> None:
    a = run(tmp_path, "eagle3-llama", {"target_hidden_size": 24}, 3 * H)
    assert outcome(a) == dict.fromkeys(RELEASES, (shape_error(3 * H, 72), None))
