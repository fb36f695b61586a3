"""A draft built as a list of heads (vLLM's Medusa: `blocks.{h}.layers.{i}`, `lm_heads.{h}`; FasterDecoding's own
checkpoints `{h}.{i}.linear.*`, `{h}.{layers}.weight`): the head index generalised like a layer's, the record's head
count, and the landing at every head the release builds. The facts the landing relies on are the generated records'
(MedusaModel, vLLM 0.25.0-0.32.0), not restated here: these tests read them."""

from __future__ import annotations

import pytest

from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.release_model import architecture_model, head_index, normal, sequential_position

T = 96


@pytest.mark.parametrize(("name", "normal_name", "head", "position"), [
    ("blocks.1.layers.0.weight", "blocks.{h}.layers.{i}.weight", 1, None),
    ("lm_heads.2.weight", "lm_heads.{h}.weight", 2, None),
    ("1.0.linear.weight", "{h}.{i}.linear.weight", 1, 0),
    ("0.2.weight", "{h}.{i}.weight", 0, 2),
    ("model.layers.3.mlp.experts.7.up_proj.weight", "model.layers.{i}.mlp.experts.{e}.up_proj.weight", None, None),
    ("fc.weight", "fc.weight", None, None),
])
def test_head_index_is_generalised_like_a_layer(name: str, normal_name: str, head: int | None,
                                                position: int | None) -> None:
    assert normal(name) == normal_name
    assert head_index(name) == head
    assert sequential_position(name) == position


def _all(n: int) -> landing.Visit:
    return landing.visit(range(n), frozenset(range(n)))


def test_each_index_expands_heads_and_layers() -> None:
    assert landing.each_index("blocks.{h}.layers.{i}.weight", _all(2), _all(3)) == (
        [f"blocks.{h}.layers.{i}.weight" for h in range(3) for i in range(2)], [])
    assert landing.each_index("lm_heads.{h}.weight", _all(2), _all(2)) == (["lm_heads.0.weight", "lm_heads.1.weight"],
                                                                           [])
    assert landing.each_index("fc.weight", _all(2), None) == (["fc.weight"], [])


def test_each_index_names_what_ships_and_counts_the_rest() -> None:
    """A config declaring 10**9 heads of 10**6 layers, one head of two layers shipped: the shipped indices and the
    first NAMED_PAST_SHIPPED past them one by one, the rest as one name that says how many it stands for."""
    k = landing.NAMED_PAST_SHIPPED
    layers = landing.visit(range(10**6), frozenset({0, 1}))
    heads = landing.visit(range(10**9), frozenset({0}))
    named, rests = landing.each_index("blocks.{h}.layers.{i}.weight", layers, heads)
    assert len(named) == (1 + k) * (2 + k)
    assert rests == [*((f"blocks.{h}.layers.{{{2 + k}..{10**6 - 1}}}.weight", 10**6 - 2 - k) for h in range(1 + k)),
                     (f"blocks.{{{1 + k}..{10**9 - 1}}}.layers.{{0..{10**6 - 1}}}.weight", (10**9 - 1 - k) * 10**6)]
    assert len(named) + sum(n for _, n in rests) == 10**9 * 10**6  # every parameter the release builds, counted


    assert landing.at_name("blocks.{h}.layers.{i}.weight", "2.1.linear.weight", None) == "blocks.2.layers.1.weight"
    assert landing.at_name("lm_heads.{h}.weight", "lm_heads.1.weight", None) == "lm_heads.1.weight"


def _medusa(heads: int, layers: int, *, bias: bool, faster_decoding: bool,
            drop: tuple[str, ...] = ()) -> dict[str, tuple[int, ...]]:
    out: dict[str, tuple[int, ...]] = {}
    for h in range(heads):
        for i in range(layers):
            stem = f"{h}.{i}.linear." if faster_decoding else f"blocks.{h}.layers.{i}."
            out[stem + "weight"] = (16, 16)
            if bias:
                out[stem + "bias"] = (16,)
        out[f"{h}.{layers}.weight" if faster_decoding else f"lm_heads.{h}.weight"] = (T, 16)
    return {n: s for n, s in out.items() if n not in drop}


def _config(heads: int, layers: int, bias: bool) -> dict[str, object]:
    return {"model_type": "medusa", "architectures": ["MedusaModel"], "hidden_size": 16, "vocab_size": T,
            "num_heads": heads, "num_hidden_layers": layers, "medusa_fc_bias": bias, "truncated_vocab_size": T}


def _land(release: str, config: dict[str, object], tensors: dict[str, tuple[int, ...]]) -> list[landing.Landing]:
    model = architecture_model("vllm", release, "MedusaModel")
    assert model is not None and model.not_built is None and model.heads is not None, release
    return list(landing.land(model, config, tensors, target_hidden=None, target_vocab=T, family=None))


RENAMING = ("0.25.0", "0.28.0", "0.32.0")  # medusa.py _remap_old_checkpoint_key from 0.25.0


@pytest.mark.parametrize("release", RENAMING)
@pytest.mark.parametrize("faster_decoding", [False, True])
@pytest.mark.parametrize(("heads", "layers", "bias"), [(2, 1, True), (3, 2, False), (2, 2, True)])
def test_a_whole_medusa_draft_lands_every_head(release: str, faster_decoding: bool, heads: int, layers: int,
                                              bias: bool) -> None:
    found = _land(release, _config(heads, layers, bias),
                  _medusa(heads, layers, bias=bias, faster_decoding=faster_decoding))
    assert found == []


@pytest.mark.parametrize("release", RENAMING)
@pytest.mark.parametrize("faster_decoding", [False, True])
def test_a_head_s_missing_block_is_named_in_the_loader_s_words(release: str, faster_decoding: bool) -> None:
    block = "1.0.linear.weight" if faster_decoding else "blocks.1.layers.0.weight"
    found = _land(release, _config(2, 1, False), _medusa(2, 1, bias=False, faster_decoding=faster_decoding,
                                                         drop=(block,)))
    assert [(f.kind, f.parameter) for f in found if f.raises] == [("missing", "blocks.1.layers.0.weight")]
    assert "not initialized from checkpoint" in found[0].text


@pytest.mark.parametrize("release", RENAMING)
def test_fewer_heads_shipped_than_the_config_builds_is_caught(release: str) -> None:
    """A config of 3 heads over a checkpoint of 2: the third head's block is not initialised (the loader's words)."""
    found = _land(release, _config(3, 1, False), _medusa(2, 1, bias=False, faster_decoding=True))
    assert {f.parameter for f in found if f.raises} == {"blocks.2.layers.0.weight"}


@pytest.mark.parametrize("release", RENAMING)
def test_a_head_past_the_config_s_count_is_skipped_as_the_release_does(release: str) -> None:
    found = _land(release, _config(1, 1, False), _medusa(2, 1, bias=False, faster_decoding=True))
    assert [f for f in found if f.raises] == []


FASTER_DECODING = {"medusa_num_heads": 3, "medusa_num_layers": 2, "hidden_size": 16, "model_type": "medusa"}


@pytest.mark.parametrize("release", ["0.12.0", "0.28.0", "0.32.0"])
def test_medusa_config_renames_faster_decoding_s_keys(release: str) -> None:
    """MedusaConfig.from_pretrained's renames, as the release executed them (config_rewrites.json)."""
    from dspark_ckpt.runtimes import vllm_hf_config
    from dspark_ckpt.runtimes.vllm_release import nearest_rules

    cites: list[str] = []
    hf = vllm_hf_config.medusa_completed(nearest_rules(release)[0], FASTER_DECODING, cites, None)
    assert (hf["num_heads"], hf["num_hidden_layers"]) == (3, 2)
    assert "medusa_num_heads" not in hf and "MedusaConfig.from_pretrained" in cites[0]


@pytest.mark.parametrize("release", ["0.12.0", "0.28.0", "0.32.0"])
def test_a_served_medusa_draft_has_num_speculative_tokens_heads(release: str) -> None:
    """SpeculativeConfig sets the draft hf_config's num_lookahead_tokens, which MedusaConfig's setter writes to
    num_heads: served, the head count is num_speculative_tokens, whatever the config counts."""
    from dspark_ckpt.runtimes import vllm_hf_config
    from dspark_ckpt.runtimes.vllm_release import nearest_rules

    r = nearest_rules(release)[0]
    assert vllm_hf_config.medusa_completed(r, FASTER_DECODING, None, 1)["num_heads"] == 1
    assert vllm_hf_config.medusa_completed(r, {**FASTER_DECODING, "num_heads": 5}, None, 4)["num_heads"] == 4
    assert vllm_hf_config.medusa_completed(r, {"model_type": "llama", "num_heads": 5}, None, 4)["num_heads"] == 5


def test_no_medusa_config_no_rename() -> None:
    """vLLM 0.33.0 has no MedusaConfig (Medusa is gone): the keys stay as written."""
    from dspark_ckpt.runtimes import vllm_hf_config
    from dspark_ckpt.runtimes.vllm_release import nearest_rules

    assert vllm_hf_config.medusa_completed(nearest_rules("0.33.0")[0], FASTER_DECODING, None, 2) == FASTER_DECODING
