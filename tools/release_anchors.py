"""Where each per-release citation is read in a vLLM wheel: one release-independent anchor per rule (pure data).

A generator input (tools/release_lines.py reads it), kept out of the package: no run reads it.

`tools/release_lines.py X.Y.Z` resolves every anchor against that release's extracted `.py` files and writes
`release_data/vllm-X.Y.Z/lines.json` (runtimes/release_lines.py reads it): no line number is read off by hand.
An anchor names the file and a regex whose first match (over the file's text with `re.MULTILINE`, so a pattern may
span lines) is the first line cited; `inside` confines the search to one `def`, `class` or assigned name (dotted
for a method); a tuple of patterns lists the wordings of different releases, tried in order. How far it reaches:
that line (`LINE`); the statement starting there (`STATEMENT`: an `if` with its `elif`/`else`, a `def` with its
body, from `ast`'s end_lineno); the `if` to the end of its first branch (`BRANCH`). With `through` (a regex
searched from the start): to that match's line (`LINE`), or to the end of the innermost statement holding it
(`STATEMENT`: the `raise` whose message it is). `since`/`until` bound the releases that have the rule: outside them
the anchor must not match, inside them it must; the generator stops on either, naming the anchor. `moved` is the
same rule where another release keeps it (another file or function: vLLM 0.34's per-method SpeculatorConfig
classes; 0.17's per-model EAGLE-3 aux-layer default), tried where the anchor itself finds nothing; the citation then
names that file.
"""

from __future__ import annotations

from dataclasses import dataclass

from dspark_ckpt.runtimes import registered
from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

SPEC = "vllm/config/speculative.py"
REGISTRY = "vllm/model_executor/models/registry.py"
EAGLE_CFG = "vllm/transformers_utils/configs/eagle.py"
TF_CONFIG = "vllm/transformers_utils/config.py"
ALGOS = "vllm/transformers_utils/configs/speculators/algos.py"
BASE = "vllm/transformers_utils/configs/speculators/base.py"
ARG_UTILS = "vllm/engine/arg_utils.py"
CONFIG_UTILS = "vllm/config/utils.py"
MODEL_CFG = "vllm/config/model.py"
VLLM_CFG = "vllm/config/vllm.py"
CONVERTOR = "vllm/transformers_utils/model_arch_config_convertor.py"
DFLASH = "vllm/model_executor/models/qwen3_dflash.py"
DFLASH2 = "vllm/model_executor/models/qwen3_dflash2.py"
QWEN3_DSPARK = "vllm/model_executor/models/qwen3_dspark.py"
GEMMA4_DSPARK = "vllm/model_executor/models/gemma4_dspark.py"
V4_DSPARK = "vllm/models/deepseek_v4/nvidia/dspark.py"
LLAMA_EAGLE3 = "vllm/model_executor/models/llama_eagle3.py"
QWEN3_EAGLE3 = "vllm/model_executor/models/qwen3_eagle3.py"
LINEAR = "vllm/model_executor/layers/linear.py"
RUNNER = "vllm/v1/worker/gpu_model_runner.py"
RUNNER2 = "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py"
INTERFACES = "vllm/model_executor/models/interfaces.py"
LLAMA = "vllm/model_executor/models/llama.py"
MODEL_UTILS = "vllm/model_executor/models/utils.py"
# vLLM 0.34 moved the per-method parts of SpeculativeConfig.__post_init__ into one SpeculatorConfig class per method
SPEC_CFG = "vllm/v1/worker/gpu/spec_decode/speculator_config.py"
DSPARK_CFG = "vllm/v1/worker/gpu/spec_decode/dspark/config.py"
EAGLE_SPEC_CFG = "vllm/v1/worker/gpu/spec_decode/eagle/config.py"
DRAFT_CFG = "DraftModelSpeculatorConfig"

LINE, STATEMENT, BRANCH = "line", "statement", "branch"
POST_INIT = "SpeculativeConfig.__post_init__"
SPECULATORS_FN = "maybe_override_with_speculators"
OMNI = "_validate_qwen3_omni_dspark"


@dataclass(frozen=True, slots=True)
class Anchor:
    """One citation: its file, the pattern(s) of its first line, how far it reaches, the releases that have it."""

    file: str
    at: str | tuple[str, ...]
    reach: str = LINE
    through: str | None = None
    inside: str | None = None
    since: str | None = None
    until: str | None = None
    every: bool = False  # every match, cited as "L1, L2, ..." (each one line)
    moved: Anchor | None = None  # the same rule in another release's other file or function


@dataclass(frozen=True, slots=True)
class Decorated:
    """A family of citations: each function of `file` decorated `@<decorator>("<name>")` is `<prefix>.<name>`, cited
    at its `def` line (algos.py's `@register_speculator`: the speculators types a release converts)."""

    file: str
    decorator: str
    prefix: str


@dataclass(frozen=True, slots=True)
class Excluded:
    """A family of citations: each architecture the condition of the `if` located by anchor `anchor` excludes, as
    `"<name>" not in ....architectures` (a string, or a module constant holding one), is `<prefix>.<name>`, cited
    at the line naming it (speculative.py's DeepSeek rewrite: the architectures method dspark leaves alone)."""

    anchor: str
    prefix: str


def _def(file: str, name: str) -> Anchor:
    """The `def name(` line."""
    return Anchor(file, rf"^\s*def {name}\(")


def _def_body(file: str, name: str, inside: str | None = None, since: str | None = None) -> Anchor:
    """A whole function, `def` line to its last line (a method: `inside` its class)."""
    return Anchor(file, rf"^\s*def {name}\(", STATEMENT, inside=inside, since=since)


def _omni(first: str, message: str) -> Anchor:
    """One check of _validate_qwen3_omni_dspark: from the statement that starts it to the `if` that raises it."""
    return Anchor(SPEC, first, STATEMENT, through=message, inside=OMNI, since="0.29.0")


# vllm/config/speculative.py's SpeculativeConfig and the files it calls: the deploy preflight's rules
# (runtimes/speculative_config.py, runtimes/draft_context.py).
SPEC_ANCHORS: dict[str, Anchor] = {
    "fields": Anchor(SPEC, r"^class SpeculativeConfig:"),
    "extra_forbid": Anchor(CONFIG_UTILS, r'ConfigDict\(extra="forbid"\)', since="0.16.0"),
    # 0.15 and older: a plain pydantic dataclass (extra fields ignored: an unknown key is dropped, DSP828)
    "extra_ignored": Anchor(SPEC, r"^@dataclass\nclass SpeculativeConfig\b", until="0.15.1"),
    # 0.20-0.25 pass the dict to SpeculativeConfig(**...) as given: a dashed key is an unexpected keyword
    "dash_keys": Anchor(ARG_UTILS, r"self\.speculative_config = \{\n\s*k\.replace", STATEMENT, since="0.26.0"),
    "num_tokens_field": Anchor(SPEC, r"^\s*num_speculative_tokens: int = Field\(", inside="SpeculativeConfig"),
    "topk_field": Anchor(SPEC, r"^\s*dspark_draft_topk: int \| None = Field\(", inside="SpeculativeConfig",
                         since="0.28.0"),
    "method_field": Anchor(SPEC, r"^\s*method: SpeculativeMethod \| None = None", inside="SpeculativeConfig",
                           until="0.33.0"),
    # 0.34: `method: SpeculativeMethod | str | None`, a name outside the Literal refused by this validator unless a
    # plugin registered it (register_speculative_method)
    "method_validator": _def_body(SPEC, "_validate_method", inside="SpeculativeConfig", since="0.34.0"),
    # 0.26-0.33; 0.22-0.25 test a dotted model name first (custom_class); 0.17-0.21 have no custom_class; 0.16 and
    # older no default: an unset method stays None, and the detection raises for a path it does not recognise
    "default_method": Anchor(SPEC, (r"if self\.method is None and SpeculativeConfig\._is_custom_proposer_path\(",
                                    r'if \(\n\s*self\.model is not None\n\s*and "\." in self\.model',
                                    r'^\s*if self\.method is None:\n\s*if self\.model in \("ngram", "\[ngram\]"\):'),
                             STATEMENT, through=r'self\.method = "draft_model"', inside=POST_INIT, since="0.17.0",
                             until="0.33.0"),
    # 0.22-0.25: any `model` with a dot and no `/` (not a URL) is a custom class path, whatever the method given
    "dotted_model": Anchor(SPEC, r'if \(\n\s*self\.model is not None\n\s*and "\." in self\.model', BRANCH,
                           inside=POST_INIT, since="0.22.0", until="0.25.0"),
    # 0.34: no custom_class; with a `model` and no method the method stays None until the checkpoint decides it
    "default_method_unset": Anchor(SPEC, r"if \(custom_cls := get_custom_speculator_config_class\(self\.method\)\)",
                                   STATEMENT, inside=POST_INIT, since="0.34.0"),
    "no_model": Anchor(SPEC, r"^\s*else:\n\s*raise ValueError\(\n\s*\"num_speculative_tokens was provided but without",
                       STATEMENT, through=r"without speculative model\.", inside=POST_INIT,
                       moved=Anchor(SPEC_CFG, r"^\s*def default_model\(", STATEMENT,
                                    through=r"without speculative model\.", inside=f"{DRAFT_CFG}.default_model")),
    # 0.14 and older end in a refusal of every draft the detection does not recognise (draft_model included)
    "detect": Anchor(SPEC, r"# Automatically detect the method", STATEMENT,
                     through=r"Unsupported speculative method|Speculative decoding with draft model is not",
                     inside=POST_INIT, until="0.33.0"),
    "draft_model_refused": Anchor(SPEC, r'^\s*self\.method = "draft_model"\n\s*raise NotImplementedError\(',
                                  through=r"eagle, or mtp\.", inside=POST_INIT, until="0.14.1"),
    # 0.34: the class the draft's model declares (speculator_config_class) first, else the path markers; a
    # configured method is kept and checked against the declared one
    "checkpoint_detect": _def_body(SPEC_CFG, "_resolve_checkpoint_config_class", since="0.34.0"),
    "eagle_wrap": Anchor(SPEC, r"eagle_config = EAGLEConfig\(", inside=POST_INIT,
                         moved=Anchor(EAGLE_SPEC_CFG, r"draft\.hf_config = EAGLEConfig\(",
                                      inside="wrap_eagle_hf_config")),
    "eagle_rename": Anchor(EAGLE_CFG, r'^\s*if method == "eagle":', STATEMENT),
    "qwen3_rename": Anchor(SPEC, r'if \(\n\s*self\.method == "dspark"\n\s*and "DSparkDraftModel" in', BRANCH,
                           inside=POST_INIT, since="0.29.0", until="0.33.0"),
    # 0.34: the rename is a draft-config override, whatever the method
    "qwen3_override": Anchor(SPEC, (r'if \(\n\s*initial_architecture == "DSparkDraftModel"\n'
                              r'\s*and hf_config\.model_type == "qwen3"'),
                             BRANCH, inside="SpeculativeConfig.hf_config_override", since="0.34.0"),
    "deepseek_rewrite": Anchor(SPEC, r'(el)?if self\.method == "dspark" and \(', BRANCH, inside=POST_INIT,
                               since="0.25.0", until="0.33.0"),
    # 0.34: every draft whose class declares no speculator config becomes the DeepSeek-V4 draft (no keep list)
    "undeclared_rewrite": Anchor(DSPARK_CFG, r"if draft\.speculator_config_class is None:", BRANCH,
                                 inside="DSparkSpeculatorConfig.adapt_draft_model_config", since="0.34.0"),
    "v41_rewrite": Anchor(SPEC, r'self\.target_model_config\.hf_config\.model_type == "deepseek_v41"',
                          inside=POST_INIT, since="0.30.0",
                          moved=Anchor(DSPARK_CFG, r'is_v41 = target\.hf_config\.model_type == "deepseek_v41"',
                                       inside="DSparkSpeculatorConfig.adapt_draft_model_config")),
    "qwen3_draft_detect": Anchor(SPEC, r'or \(\n\s*"DSparkDraftModel" in self\.draft_model_config\.architectures\n'
                                 r'\s*and self\.draft_model_config\.hf_config\.model_type == "qwen3"',
                                 through=r'model_type == "qwen3"', inside=POST_INIT, since="0.29.0", until="0.33.0"),
    "medusa_detect": Anchor(SPEC, r'elif self\.draft_model_config\.hf_config\.model_type == "medusa":', BRANCH,
                            inside=POST_INIT, until="0.32.0"),
    "gemma4_n_predict": Anchor(SPEC, r'if \(\n\s*getattr\(hf, "n_predict", None\) is None', STATEMENT,
                               inside=POST_INIT, since="0.26.0", until="0.30.0"),
    "n_predict": Anchor(SPEC, r"n_predict = getattr\(\n\s*self\.draft_model_config\.hf_config, \"n_predict\"",
                        STATEMENT, through=r"must be divisible by \{n_predict=\}", inside=POST_INIT,
                        moved=Anchor(SPEC_CFG, r'n_predict = getattr\(spec\.draft_model_config\.hf_config, "n_predict"',
                                     STATEMENT, through=r"must be divisible by \{n_predict=\}",
                                     inside=f"{DRAFT_CFG}.resolve_num_speculative_tokens")),
    "block_default": Anchor(SPEC, r"^\s*if self\.use_dspark\(\):\n\s*if self\.num_speculative_tokens is None:",
                            BRANCH, inside=POST_INIT, since="0.31.0",
                            moved=Anchor(DSPARK_CFG, r"^\s*if spec\.num_speculative_tokens is None:", BRANCH,
                                         inside="DSparkSpeculatorConfig.resolve_num_speculative_tokens")),
    "missing": Anchor(SPEC, r"if self\.num_speculative_tokens is None:\n\s*raise ValueError\(\n\s*\"A speculative",
                      STATEMENT, inside=POST_INIT, since="0.17.0",
                      moved=Anchor(SPEC_CFG, r"if spec\.num_speculative_tokens is None:\n\s*raise ValueError\(",
                                   STATEMENT, inside=f"{DRAFT_CFG}.configure")),
    # 0.16 and older: no such raise; the token tree is built from an unset num_speculative_tokens, `range(None)`
    "token_tree": Anchor(SPEC, r"if self\.speculative_token_tree is None:\n\s*# Generate chain of tokens\.", LINE,
                         through=r"range\(self\.num_speculative_tokens\)", inside=POST_INIT, until="0.16.0"),
    "min_block": Anchor(SPEC, r'if self\.method == "dspark":\n\s*# DSpark is a semi-autoregressive', STATEMENT,
                        inside=POST_INIT, since="0.26.0", until="0.27.0"),
    "topk_method": Anchor(SPEC, r"if self\.dspark_draft_topk is not None and self\.method != \"dspark\":", STATEMENT,
                          inside=POST_INIT, since="0.28.0", until="0.33.0"),
    # 0.34: each method-specific option (dspark_draft_topk, draft_lm_head_quantization, index_share_for_mtp_iteration,
    # xpress_topc, speculator_options) refused in one wording unless the method's config class supports it
    "method_options": Anchor(SPEC, r"^\s*for option in _METHOD_SPECIFIC_OPTIONS:", STATEMENT, inside=POST_INIT,
                             since="0.34.0"),
    "topk_range": Anchor(SPEC, r"if not 1 <= dspark_draft_topk <= ", STATEMENT, inside=POST_INIT, since="0.28.0",
                         moved=Anchor(DSPARK_CFG, r"if not 1 <= dspark_draft_topk <= ", STATEMENT,
                                      inside="DSparkSpeculatorConfig.apply_options")),
    "topk_arch": Anchor(SPEC, r"if \(\n\s*\"Qwen3DSparkModel\"\n\s*not in self\.draft_model_config\.architectures",
                        STATEMENT, inside=POST_INIT, since="0.28.0",
                        moved=Anchor(DSPARK_CFG, r"if \(\n\s*\"Qwen3DSparkModel\" not in draft\.architectures",
                                     STATEMENT, inside="DSparkSpeculatorConfig.apply_options")),
    "omni_call": Anchor(SPEC, r"^\s*_validate_qwen3_omni_dspark\(", inside=POST_INIT, since="0.29.0",
                        moved=Anchor(DSPARK_CFG, r"^\s*_validate_qwen3_omni_dspark\(",
                                     inside="DSparkSpeculatorConfig.apply_options")),
    # 0.15+ (0.14 and older refuse method draft_model in the detection: spec.draft_model_refused)
    "equal_vocab": Anchor(SPEC, r"^\s*def verify_equal_vocab_size_if_draft_model\(", STATEMENT,
                          inside="SpeculativeConfig", since="0.15.0"),
    # to 0.21, _verify_args refuses the methods fed the target's aux hidden states (eagle3; 0.17+ also
    # extract_hidden_states, 0.20+ dflash) for a target whose text model_type contains none of a list's names
    # (spec.json aux_targets: the methods, the list, the words); 0.22 dropped the check
    "aux_targets": Anchor(SPEC, (r"^\s*aux_hidden_states_supported = \[", r"^\s*eagle3_target_supported = \["),
                          STATEMENT, through=r"is only supported for", inside="SpeculativeConfig._verify_args",
                          until="0.21.0"),
    "inspect_arch": Anchor(MODEL_CFG, r"registry\.inspect_model_cls\(architectures, self\)"),
    "unsupported_arch": Anchor(REGISTRY, r"are not supported for now\. "),
    "xpress": Anchor(SPEC, r"if self\.xpress_topc is not None", STATEMENT, inside=POST_INIT, since="0.33.0",
                     until="0.33.0"),
    "index_share": Anchor(SPEC, r"if self\.index_share_for_mtp_iteration is not None:",
                          STATEMENT, through=r"only supported with method='mtp'", since="0.29.0", until="0.33.0"),
    "adaptive": Anchor(SPEC, (r"if \(\n\s*self\.method != \"dspark\"\n\s*and self\.enable_adaptive_verification",
                              r"if self\.method != \"dspark\" and self\.enable_adaptive_verification",
                              # 0.34: every config class but DSpark's (its own confidence head) reads draft logits
                              (r"if \(\n\s*config_cls\.adaptive_verification_uses_draft_logits\n"
                               r"\s*and self\.enable_adaptive_verification")),
                       STATEMENT, since="0.28.0"),
    # 0.15+: a field refused in words (0.14 and older have no such field: the key is dropped, spec.extra_ignored)
    "tensor_parallel": Anchor(SPEC, r"if self\.tensor_parallel_size is not None:", STATEMENT, since="0.15.0"),
    # 0.34: parallel_drafting is deprecated and ignored, but refused with a method other than dflash or dspark
    "parallel_drafting": Anchor(SPEC, r'if self\.parallel_drafting and self\.method not in \("dflash", "dspark"\):',
                                STATEMENT, inside="SpeculativeConfig._verify_args", since="0.34.0"),
    # 0.34: draft_lm_head_quantization under method dspark only for the DeepSeek-V4/V4.1 drafters
    "lm_head_quant_arch": Anchor(DSPARK_CFG, r'if not \{"DSparkDraftModel", "DSparkV41DraftModel"\} & set\(',
                                 STATEMENT, inside="DSparkSpeculatorConfig.apply_options", since="0.34.0"),
    "heterogeneous": Anchor(SPEC, r"if self\.use_heterogeneous_vocab and not self\.uses_draft_model\(\):",
                            STATEMENT, since="0.25.0", until="0.33.0"),
    "speculators_override": Anchor(TF_CONFIG, (r"speculative_config\.update\(vllm_speculative_config\)",
                                               r'speculative_config\["model"\] = model'),
                                   STATEMENT, through=r"model = tokenizer = verifier_model", inside=SPECULATORS_FN),
    "speculators_verifier": Anchor(TF_CONFIG, r"verifier_error = \(", through=r"if verifier_path\.exists\(\)",
                                   inside=SPECULATORS_FN, since="0.33.0"),
    "speculators_archs": Anchor(ALGOS, (r'pre_trained_config\["architectures"\] = ',
                                        r'vllm_config\["architectures"\] = '), every=True),  # 0.15: `vllm_config`
    # the speculators conversion's behaviour changes (runtimes/speculators.py, ReleaseRules)
    "speculators_merge": Anchor(TF_CONFIG, r"speculative_config\.update\(vllm_speculative_config\)",
                                inside=SPECULATORS_FN, since="0.29.0"),
    "speculators_dflash2": Anchor(BASE, r'(el)?if result\["method"\] == "dflash2":', BRANCH, since="0.29.0"),
    # 0.34: build_vllm_speculative_config refuses a peagle checkpoint (0.33: method eagle3, parallel_drafting)
    # 0.34: update_peagle itself raises it (a peagle draft loaded as a speculative model, check's conversion)
    "speculators_peagle_update": Anchor(ALGOS, r'raise ValueError\("P-EAGLE \(parallel drafting EAGLE-3\) is not supported\."\)',
                                        inside="update_peagle", since="0.34.0"),
    "speculators_peagle_refused": Anchor(BASE, r'raise ValueError\("P-EAGLE \(parallel drafting EAGLE-3\) is not supported\."\)',
                                         since="0.34.0"),
    "speculators_keep_arch": Anchor(ALGOS, r'pre_trained_config\["architectures"\] = selected_architectures or',
                                    inside="update_dspark", since="0.29.0"),
    # max_position_embeddings against max_model_len (runtimes/draft_context.py)
    "max_len_field": Anchor(SPEC, r"^\s*max_model_len: int \| None = Field\(", inside="SpeculativeConfig"),
    # 0.20 builds the draft's ModelConfig without max_model_len (its own derived length; a larger speculative
    # max_model_len is refused by _maybe_override_draft_max_model_len, `spec_len`)
    "draft_config_len": Anchor(SPEC, r"max_model_len=self\.max_model_len,",
                               through=r"spec_target_max_model_len=self\.target_model_config\.max_model_len,",
                               inside=POST_INIT, since="0.21.0",
                               moved=Anchor(SPEC_CFG, r"max_model_len=spec\.max_model_len,",
                                            through=r"spec_target_max_model_len=target\.max_model_len,",
                                            inside=f"{DRAFT_CFG}.configure")),
    # 0.13 and older: the same keys, inline in model.py's _get_and_verify_max_len
    "length_keys": Anchor(CONVERTOR, r"^\s*def derive_max_model_len_and_key\(", STATEMENT,
                          moved=Anchor(MODEL_CFG, r'^\s*derived_max_model_len = float\("inf"\)\n\s*possible_keys = \[',
                                       through=r"derived_max_model_len = tmp_max_len",
                                       inside="_get_and_verify_max_len")),
    "derived_len": Anchor(MODEL_CFG, r"^\s*elif max_model_len > derived_max_model_len:", BRANCH,
                          inside="_get_and_verify_max_len"),
    "rope_factor": Anchor(MODEL_CFG, r'if rope_type not in \(\s*"su",', STATEMENT,
                          through=r'scaling_factor = rp\.get\("factor"', inside="_get_and_verify_max_len"),
    "raise_positions": Anchor(SPEC, (r'if self\.method in \("eagle", "eagle3"\):\n\s*# EAGLE drafts share',
                                     r'if self\.method != "draft_model":\n\s*# Every draft but'),
                              STATEMENT, inside=POST_INIT, since="0.27.0",  # 0.20-0.26 never raise it
                              # 0.34: every draft-model config class but draft_model's (shares_target_positions)
                              moved=Anchor(SPEC_CFG, r"^\s*if config_cls\.shares_target_positions:", STATEMENT,
                                           inside=f"{DRAFT_CFG}.configure")),
    "positions_raised": _def_body(SPEC, "_maybe_override_draft_max_position_embeddings", inside="SpeculativeConfig",
                                  since="0.27.0"),
    "rope_cache_only": Anchor(SPEC, r"^# RoPE types for which get_rope uses max_position_embeddings", STATEMENT,
                              through=r"for params in iter_rope_parameters\(hf_config\)", since="0.33.0"),
    "spec_len": _def_body(SPEC, "_maybe_override_draft_max_model_len", inside="SpeculativeConfig"),
    "limit_to_draft": _def_body(VLLM_CFG, "_limit_max_model_len_to_draft", inside="VllmConfig", since="0.33.0"),
    "draft_rotary": Anchor(DFLASH, r"max_position=config\.max_position_embeddings,", since="0.20.0"),  # DFlash's
}

# _validate_qwen3_omni_dspark (0.29+), check by check in its order (runtimes/speculative_config.omni_problem).
OMNI_ANCHORS: dict[str, Anchor] = {
    "generic": _omni(r"if _QWEN3_OMNI_DSPARK_ARCHITECTURE not in draft_architectures:", "converted first"),
    "block": _omni(r'block_size = _get_qwen3_dspark_value\(draft_hf_config, "block_size"\)',
                   "positive integer block_size"),
    "tokens": _omni(r"if num_speculative_tokens != block_size:", "to match the"),
    "text": _omni(r"target_text_config = _get_qwen3_omni_text_config\(", "could not resolve the target thinker"),
    "hidden": _omni(r"target_hidden_size = getattr\(", "draft hidden_size must match"),
    "attention": _omni(r"target_attention = \{", "must match the target thinker \""),
    "layers": _omni(r"target_layer_ids = _get_nested_config_value\(", "must be zero-based text-layer"),
    "aux": _omni(r'if _get_qwen3_dspark_value\(draft_hf_config, "use_aux_hidden_state"\)', "use_aux_hidden_state=true"),
    "rank": _omni(r'markov_rank = getattr\(draft_hf_config, "markov_rank"', "positive integer markov_rank"),
    "head": _omni(r'markov_head_type = getattr\(draft_hf_config, "markov_head_type"', "markov_head_type='vanilla'"),
    "anchor": _omni(r'sample_from_anchor = getattr\(draft_hf_config', "sample_from_anchor=true"),
    "v": _omni(r"target_vocab_size = getattr\(", "input vocab_size must be a positive integer"),
    "d": _omni(r'draft_output_vocab_size = getattr\(draft_hf_config, "draft_vocab_size"',
               "draft_vocab_size must be a positive integer"),
    "mask": _omni(r"noise_token_id = _get_nested_config_value\(", "valid mask/noise token id"),
    "mrope": _omni(r"rope_configs = \(", "must not define mrope_section"),
}

# How each release builds a draft's config (runtimes/vllm_release.ReleaseRules, runtimes/config_build.py).
BUILD_ANCHORS: dict[str, Anchor] = {
    "speculators_detect": Anchor(TF_CONFIG, r'^\s*"speculators"\n\s*if config_dict\.get\("speculators_config"\)'),
    "expected": Anchor(BASE, r"Expected one of: \{SUPPORTED_SPECULATORS_TYPES\}"),
    "dspark_rewrite": Anchor(SPEC, r'"deepseek_v4"$', inside=POST_INIT, since="0.25.0",
                             moved=Anchor(DSPARK_CFG, r'= "deepseek_v41" if is_v41 else "deepseek_v4"$',
                                          inside="DSparkSpeculatorConfig.adapt_draft_model_config")),
    "markov_rank": Anchor(QWEN3_DSPARK, r"^\s*config\.markov_rank,$", since="0.25.0"),
    "hc_mult": Anchor(V4_DSPARK, r"self\.hc_mult = config\.hc_mult", since="0.25.0"),
    # Gemma4 DSpark's load_weights ends in _build_fused_kv_buffers, which asserts every layer's use_k_eq_v: a full
    # attention layer of a config with attention_k_eq_v (runtimes/release_verdict.fused_kv_error)
    "gemma4_k_eq_v": Anchor(GEMMA4_DSPARK, (r'self\.use_k_eq_v = layer_type == "full_attention" and getattr\(',
                                            r'use_k_eq_v = is_full and getattr\(config, "attention_k_eq_v", False\)'),
                            STATEMENT, since="0.26.0"),
    "gemma4_fused_kv": Anchor(GEMMA4_DSPARK, r"assert all\(a\.use_k_eq_v for a in layers_attn\)",
                              through=r"assumes uniform attention_k_eq_v layers", since="0.26.0"),
    # AutoWeightsLoader ignores an unexpected `.bias` (GPTQ's extra biases): a `.bias` name the loader has no
    # parameter for is skipped where it would raise for another name (runtimes/landing.py IGNORED_SUFFIXES)
    "ignore_bias": Anchor(MODEL_UTILS, r'self\.ignore_unexpected_suffixes\.append\("\.bias"\)',
                          inside="AutoWeightsLoader.load_weights", since="0.25.0"),
    # 0.34: called from the post-load hook Gemma4DSparkForCausalLM inherits (through Qwen3DSparkForCausalLM)
    "gemma4_fused_call": Anchor(GEMMA4_DSPARK, r"self\.model\._build_fused_kv_buffers\(\)",
                                inside="Gemma4DSparkForCausalLM.load_weights", since="0.26.0",
                                moved=Anchor(DFLASH, r"self\.model\._build_fused_kv_buffers\(\)",
                                             inside="DFlashQwen3ForCausalLM.process_weights_after_loading")),
    # What each release's speculators conversion writes (transformers_utils/configs/speculators/algos.py; the types
    # it registers are the `algos.*` family): runtimes/speculators.py follows these
    "algos_qwen3": Anchor(ALGOS, r'"qwen3": "Eagle3Qwen3ForCausalLM"', inside="update_eagle3", since="0.24.0"),
    "algos_norm_before_fc": Anchor(ALGOS, r'pre_trained_config\["norm_before_fc"\] = config_dict\.get\(',
                                   inside="update_eagle3", since="0.19.0"),
    "algos_fc_norm": Anchor(ALGOS, r'pre_trained_config\["fc_norm"\] = ', inside="update_eagle3", since="0.25.0"),
    "algos_dflash_shift": Anchor(ALGOS, r'"target_layer_ids": \[i - 1 for i in aux_layer_ids\]', inside="update_dflash",
                                 since="0.22.0"),
    "algos_dflash_causal": Anchor(ALGOS, r'pre_trained_config\["dflash_config"\]\["causal"\] = ',
                                  inside="update_dflash", since="0.26.0"),
    "algos_dflash_anchor": Anchor(ALGOS, r'"sample_from_anchor": config_dict\.get\("sample_from_anchor"',
                                  inside="update_dflash", since="0.27.0"),
    "algos_bonus_always": Anchor(ALGOS, r'pre_trained_config\["dspark_bonus_anchor"\] = True', inside="update_dspark",
                                 since="0.25.0", until="0.26.0"),
    # DFlash2's __init__ reads its dflash_config keys by subscript (a KeyError for a missing one): the conv head's,
    # then the candidate selector's (runtimes/vllm_rows.DFLASH2_KEYS).
    "dflash2_conv": Anchor(DFLASH2, r"^\s*draft_config = config\.dflash_config$",
                           through=r'draft_config\["conv_group_size"\]', since="0.28.0"),
    "dflash2_selector": Anchor(DFLASH2, r"^\s*draft_config = self\.config\.dflash_config$",
                               through=r'draft_config\["selector_top_k"\]', since="0.28.0"),
}
SPECULATORS = Decorated(ALGOS, "register_speculator", "algos")
DSPARK_KEEP = Excluded("spec.deepseek_rewrite", "keep")
FAMILIES = (SPECULATORS.prefix, DSPARK_KEEP.prefix)  # the keys of a family: every release has some

# EAGLE-3's aux hidden states (runtimes/eagle3_aux.py).
_USE = r'if (eagle_config is not None and )?"use_aux_hidden_state" in eagle_config:'
_WIDTH = r"self\.fc_input_size = target_hidden_size \* "
# 0.20-0.21: `if hasattr(self.config, "target_hidden_size"): fc_input_size = self.config.target_hidden_size * 3
# else: ... hidden_size * 3`: fc is sized for three aux hidden states, whatever the config says (no count key read)
_DEFAULT_LAYERS = r"return \(2, num_layers // 2, num_layers - 3\)"
_FIXED = r'if hasattr\(self\.config, "target_hidden_size"\):\n\s*fc_input_size = self\.config\.target_hidden_size \* 3'
AUX_ANCHORS: dict[str, Anchor] = {
    "llama_use": Anchor(LLAMA_EAGLE3, _USE),
    "llama_count": Anchor(LLAMA_EAGLE3, r"self\.num_aux_hidden_states = getattr\(",
                          STATEMENT, through=r"len\(layer_ids\) if layer_ids else 3", since="0.22.0"),
    "llama_fixed": Anchor(LLAMA_EAGLE3, _FIXED, STATEMENT, until="0.21.0"),
    "llama_width": Anchor(LLAMA_EAGLE3, (_WIDTH, r"fc_input_size = self\.config\.target_hidden_size \* 3")),
    "qwen3_use": Anchor(QWEN3_EAGLE3, _USE, since="0.24.0"),
    "qwen3_count": Anchor(QWEN3_EAGLE3, r'num_aux_features = getattr\(self\.config, "num_aux_layers", None\)',
                          STATEMENT, through=r"len\(aux_ids\) if aux_ids else 3", since="0.24.0"),
    "qwen3_width": Anchor(QWEN3_EAGLE3, _WIDTH, since="0.24.0"),
    "assert": Anchor(LINEAR, r"assert param\.size\(\) == loaded_weight\.size\(\)",
                     inside="ReplicatedLinear.weight_loader"),
    "runner": Anchor(RUNNER, r"^\s*def _get_eagle3_aux_layers_from_config\(", until="0.33.0"),  # V1 runner gone
    "runner2": Anchor(RUNNER2, r"^\s*def get_eagle3_aux_layers_from_config\(", since="0.17.0"),  # V2's EAGLE-3
    # which keys each runner reads for the target layers (runtimes/eagle3_aux.runner_keys): V1 eagle_config's list
    # from 0.22; V2 the DSpark keys from 0.25, the drafter configs' `layer_ids` from 0.27
    "runner_nested": Anchor(RUNNER, r'eagle_config = getattr\(hf_config, "eagle_config", None\)',
                            inside="GPUModelRunner._get_eagle3_aux_layers_from_config", since="0.22.0",
                            until="0.33.0"),
    "runner2_dspark": Anchor(RUNNER2, r'getattr\(hf_config, "dspark_target_layer_ids", None\)',
                             inside="get_eagle3_aux_layers_from_config", since="0.25.0"),
    "runner2_drafter": Anchor(RUNNER2, r'for config_name in \("dflash_config", "eagle_config"\)',
                              inside="get_eagle3_aux_layers_from_config", since="0.27.0"),
    # the target's default aux layers: SupportsEagle3's from 0.18; up to 0.17 each target model's own override, the
    # same three layers (16 models in 0.17.0; the Llama one cited)
    "default": Anchor(INTERFACES, _DEFAULT_LAYERS,
                      moved=Anchor(LLAMA, _DEFAULT_LAYERS, inside="LlamaForCausalLM.get_eagle3_aux_hidden_state_layers")),
    "algos_width": Anchor(ALGOS, r'if config_dict\.get\("target_hidden_size"\) is not None:', inside="update_eagle3"),
    "algos_layers": Anchor(ALGOS, r'if config_dict\.get\("eagle_aux_hidden_state_layer_ids"\):',
                           inside="update_eagle3"),
}

# registry.py's `_SPECULATIVE_DECODING_MODELS` entry of each draft architecture dspark-ckpt models. Which releases
# register each is the generated registry data's (registered_architectures.json, tools/registry_data.py): the first
# listed release that registers it (None: the oldest listed already does) and the last (where a newer one dropped it).
REGISTRY_NAMES = ("Qwen3DSparkModel", "Qwen3OmniDSparkModel", "Gemma4DSparkModel", "DFlashDraftModel",
                  "DFlash2DraftModel", "Eagle3LlamaForCausalLM", "LlamaForCausalLMEagle3", "Eagle3Qwen3ForCausalLM",
                  "DSparkDraftModel", "PEagleDraftModel", "PeagleLlamaForCausalLM", "PeagleQwen3ForCausalLM")


def _registered_span(name: str) -> tuple[str, str]:
    held = [r for r in VLLM_RELEASES if (g := registered.registration("vllm", r, name)) is not None and g.draft]
    return held[0], held[-1]


REGISTRY_SINCE: dict[str, str | None] = {
    n: first if first != VLLM_RELEASES[0] else None for n in REGISTRY_NAMES for first, _ in [_registered_span(n)]}
REGISTRY_UNTIL: dict[str, str] = {
    n: last for n in REGISTRY_NAMES for _, last in [_registered_span(n)] if last != VLLM_RELEASES[-1]}


def _registry(name: str, since: str | None) -> Anchor:
    return Anchor(REGISTRY, rf'^\s*"{name}": \(', inside="_SPECULATIVE_DECODING_MODELS", since=since,
                  until=REGISTRY_UNTIL.get(name))


ANCHORS: dict[str, Anchor] = {
    **{f"spec.{k}": a for k, a in SPEC_ANCHORS.items()},
    **{f"omni.{k}": a for k, a in OMNI_ANCHORS.items()},
    **{f"build.{k}": a for k, a in BUILD_ANCHORS.items()},
    **{f"aux.{k}": a for k, a in AUX_ANCHORS.items()},
    **{f"registry.{name}": _registry(name, since) for name, since in REGISTRY_SINCE.items()},
}


def covers(anchor: Anchor, release: str) -> bool:
    """Whether `release` lies in the anchor's since..until (by minor, as vLLM's rows are): it must have the rule."""
    key = release_key(release, precision=2)
    return ((anchor.since is None or release_key(anchor.since, precision=2) <= key)
            and (anchor.until is None or key <= release_key(anchor.until, precision=2)))
