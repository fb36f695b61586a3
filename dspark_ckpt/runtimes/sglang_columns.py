"""The contract columns only SGLang's loaders need (a `Contract.sglang` cell): what each release range does."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Loader(StrEnum):
    """Which SGLang load path a row describes (the family's model class)."""

    EAGLE3 = "eagle3"  # models/llama_eagle3.py LlamaForCausalLMEagle3
    DSPARK = "dspark"  # models/dspark.py Qwen3DSparkModel (DSparkDraftMixin + DFlashDraftModel)
    DFLASH = "dflash"  # models/dflash.py DFlashDraftModel
    DFLASH2 = "dflash2"  # models/dflash.py DFlash2DraftModel (DFlashDraftModel + CandidateSelector)
    UNREGISTERED = "unregistered"  # no class: model_loader/utils.py "Cannot find model module ..."


class Width(StrEnum):
    """How the DSpark Markov bias (V columns) meets the target head's base logits (W columns) at the first step."""

    ADD = "add"  # `logits + bias`: torch's size-mismatch RuntimeError whenever V != W (0.5.16-0.5.21)
    KERNEL = "kernel"  # `assert bias.shape[1] <= base_logits.shape[1]`; columns >= V masked (0.5.22+)


@dataclass(frozen=True, slots=True)
class SglangColumns:
    """What one range of SGLang releases does with a draft, column by column, beside its contract row."""

    loader: Loader
    # EAGLE-3
    one_layer: bool = False  # num_hidden_layers != 1 is refused (before 0.5.12)
    midlayer_only: bool = False  # the decoder layer is `midlayer`: `layers.0.*` names are dropped (before 0.5.12)
    draft_vocab_always_read: bool = False  # the logits-processor copy reads draft_vocab_size, even tied (0.5.4.post2+)
    null_shares_target: bool = False  # draft_vocab_size: null -> load_lm_head_from_target (0.5.2+); 0.5.1: TypeError
    crop: str = "V"  # the draft logits are cropped to V (before 0.5.4.post2) or to D
    null_crop_fails: bool = False  # tied, draft_vocab_size null: `logits.shape[-1] > None` at the first step (0.5.15+)
    # 0.4.4.post2-0.4.8.post1: load_weights hands `model.<name>` to LlamaForCausalLM.load_weights, whose stacked
    # branch indexes params_dict unguarded (a `layers.0.*` q/k/v/gate/up name: KeyError), and the worker reads
    # get_hot_token_id(), which only a d2t sets (no d2t: AttributeError at start-up)
    stacked_keyerror: bool = False
    d2t_required: bool = False
    # DSpark, DFlash
    merged_parser: bool = False  # 0.5.23: dflash_config merged under dspark_config when parsing
    nemotron_embed: bool = False  # Nemotron-3.5 NVFP4 drafts keep and load their own embed_tokens (0.5.19+)
    width: Width = Width.ADD
    # DSpark: mask_token_id is bounded by the target's `hf_text_config.padded_vocab_size or vocab_size` (0.5.18+;
    # before, by model_config.vocab_size = T)
    mask_bound_padded: bool = False
    # DFlash's load_weights (DFlash, DFlash2 and DSpark backbones, 0.5.20+) refuses Domino projector names
    # (`prefix_gru.*`, `embed_proj.*`) unless projector_type is "domino"; earlier releases skip them by name
    domino: bool = False
