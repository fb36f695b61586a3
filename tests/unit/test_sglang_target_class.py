"""SGLang's routing of a base-class draft (runtimes/sglang_target_class.py) rests on the lines each release's files
show (release_data/sglang_target_class.json, tools/sglang_target_class_lines.py): said only where they were read."""

from __future__ import annotations

import pytest

from dspark_ckpt.runtimes import sglang_target_class as stc
from dspark_ckpt.runtimes.versions import SGLANG_RELEASES

READ = tuple(stc._table().get("releases") or {})


def test_the_table_holds_listed_releases_with_their_lines() -> None:
    assert READ and set(READ) <= set(SGLANG_RELEASES)
    for release in READ:
        lines = stc._lines(release)
        assert {"config_draft_model", "skip_unknown", "hot_token_id"} <= set(lines), release
        assert all(isinstance(n, int) and n > 0 for n in lines.values())


@pytest.mark.parametrize("release", SGLANG_RELEASES)
def test_routed_only_where_the_release_was_read(release: str) -> None:
    read = release in READ
    # DFLASH: the start-up read of the selector (0.5.19+), else the projection at the first prefill
    dflash = bool({"dflash_selector", "dflash_project"} & set(stc._lines(release)))
    assert stc.routed_as_target(release, "LlamaForCausalLM", "eagle") is read
    assert stc.routed_as_target(release, "LlamaForCausalLM", "eagle3") is read
    assert stc.routed_as_target(release, "LlamaForCausalLM", "dflash") is dflash
    assert not stc.routed_as_target(release, "LlamaForCausalLM", "draft_model")
    assert not stc.routed_as_target(release, "DeepseekV3ForCausalLM", "eagle3")  # a NextN rename, not a target
    # another target class: under a method whose worker reads what no target class has, it fails either way
    # (at its own load or at that read); under EAGLE (no read) its loader was not read: no verdict
    assert stc.routed_as_target(release, "LagunaForCausalLM", "dflash") is dflash
    assert stc.routed_as_target(release, "Qwen3ForCausalLM", "dflash") is dflash
    assert stc.routed_as_target(release, "Qwen3ForCausalLM", "eagle3") is read
    assert not stc.routed_as_target(release, "LagunaForCausalLM", "eagle")


def test_the_words_cite_the_release_s_own_lines() -> None:
    release = READ[-1]
    text = stc.issue(release, "LlamaForCausalLM", "eagle3").text
    assert f"eagle_worker_v2.py:{stc._lines(release)['hot_token_id']} @ {release}" in text
    assert f"models/llama.py:{stc._lines(release)['skip_unknown']} @ {release}" in text
    assert stc.raises("eagle3") and stc.raises("dflash") and not stc.raises("eagle")


def test_under_eagle_the_parameters_left_unwritten_are_named_at_the_draft_s_own_sizes() -> None:
    release = READ[-1]
    text = stc.issue(release, "LlamaForCausalLM", "eagle", {"num_hidden_layers": 2, "attention_bias": True}).text
    for i in (0, 1):
        for name in (*stc.LAYER_PARAMETERS, *stc.BIASED):
            assert f"model.layers.{i}.{name}" in text
    assert "model.layers.2." not in text and "model.norm.weight" in text
    assert "Left at" not in stc.issue(release, "LlamaForCausalLM", "eagle3", {"num_hidden_layers": 1}).text


def test_dflash_fails_where_the_release_s_worker_first_reads_what_a_target_class_lacks() -> None:
    """0.5.19+ reads candidate_selector when the worker starts; before, the first request's prefill calls
    `self.draft_model.project_target_hidden(target_hidden)` (dflash_worker_v2.py L1092 @ 0.5.16)."""
    with_selector = [r for r in READ if "dflash_selector" in stc._lines(r)]
    projecting_only = [r for r in READ if "dflash_project" in stc._lines(r) and r not in with_selector]
    assert with_selector and projecting_only
    for release in with_selector:
        assert stc.worker_read(release, "dflash") == stc.WORKER_READS["dflash"][0]
    for release in projecting_only:
        assert stc.worker_read(release, "dflash")[0] == "project_target_hidden"
        text = stc.issue(release, "Qwen3ForCausalLM", "dflash", {"num_hidden_layers": 1}).text
        line = stc._lines(release)["dflash_project"]
        assert "'Qwen3ForCausalLM' object has no attribute 'project_target_hidden' at the first request's" in text
        assert f"dflash_worker_v2.py:{line} @ {release}" in text and "Left at" not in text
    assert stc.worker_read(READ[-1], "eagle") is None
