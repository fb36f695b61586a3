"""What the generated records say of a key a recipe sets that __init__ requires (`absent_keys.<key>.required`), and
of a stray name under a recipe's naming (docs/upstream-notes.md section 48), as check's landing pass reads them."""

from __future__ import annotations

from dspark_ckpt.runtimes import landing
from dspark_ckpt.runtimes.release_model import architecture_model

MINIMAX = ("sglang", "0.5.23", "DSparkMiniMaxDraftModel")


def test_minimax_dspark_requires_the_keys_its_backbone_reads_plainly() -> None:
    model = architecture_model(*MINIMAX)
    assert model is not None and model.config_type is not None
    assert set(model.required_keys) == {"block_size", "use_gemma_norm", "dense_intermediate_size"}
    assert model.required_keys["block_size"]["where"].startswith("sglang/srt/models/dspark_minimax.py:")
    assert not set(model.required_keys) & set(model.absent_keys)  # a refusal is no absence that builds


def test_a_recipe_key_is_required_only_for_the_model_type_the_record_was_built_with() -> None:
    model = architecture_model(*MINIMAX)
    assert model is not None and model.config_type is not None
    model_type, config_class = model.config_type
    config = {"model_type": model_type, "use_gemma_norm": False, "dense_intermediate_size": 24}
    missing = landing.missing_key(model, config, config_class)
    assert missing is not None and missing.key == "block_size" and missing.raises
    assert missing.text == f"AttributeError: '{config_class}' object has no attribute 'block_size'"
    # another model_type's config class may default it: not judged from this record
    assert landing.missing_key(model, {**config, "model_type": "llama"}, "LlamaConfig") is None
    assert landing.missing_key(model, {**config, "block_size": 4}, config_class) is None


def test_a_stray_under_the_recipe_naming_is_refused_and_a_plain_one_skipped() -> None:
    model = architecture_model(*MINIMAX)
    assert model is not None
    assert landing.renamed_prefixes(model) == ("language_model.model.dspark.",)
    stray = "language_model.model.dspark.layers.0.stray_norm.weight"
    found = landing._unknown(model, stray)
    assert found is not None and found.raises
    assert found.text == f"ValueError: Unexpected DSpark checkpoint tensor: {stray}"
    assert landing._unknown(model, "layers.0.stray_norm.weight") is None  # outside its prefixes: skipped


def test_vllm_records_keep_a_required_recipe_key_where_the_recipe_asks() -> None:
    ricursive = architecture_model("vllm", "0.34.0", "DFlash2RicursiveDraftModel")
    assert ricursive is not None and set(ricursive.required_keys) == {"no_rope_layers"}
    for release in ("0.33.0", "0.34.0"):
        muse = architecture_model("vllm", release, "MuseSparkDSparkModel")
        assert muse is not None
        assert set(muse.required_keys) == {"target_layer_ids", "mask_token_id", "enable_confidence_head"}, release
