"""Every line range the deploy rules cite, re-read in the release it names.

The needles are the upstream text each rule depends on: a line number that drifts, or a rule attributed to a
release that does not have it, fails here. The hermetic suite reads the recorded answers to what these tests ask of
each wheel (tests/wheel_excerpts.py); the upstream tier asks the wheels (fetched once, then cached) and checks that
every recorded answer is still the wheel's.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from recorded import sources
from wheel_excerpts import Wheel, WheelTree, ask_again, recorded_questions
from wheel_excerpts import wheel as release_files

from dspark_ckpt.runtimes import draft_context as dc
from dspark_ckpt.runtimes import spec_facts, vllm_release
from dspark_ckpt.runtimes import speculative_config as sc
from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))  # the generator's inputs: not in the package
import release_anchors as anchors


def wheel(version: str, source: str) -> Wheel:
    """The `.py` files of vLLM `version`'s wheel, as `source` answers for them."""
    return release_files("vllm", version, source)


NEEDLES: dict[str, tuple[str, ...]] = {
    "fields": ("class SpeculativeConfig:",),
    "extra_forbid": ('ConfigDict(extra="forbid")',),
    "extra_ignored": ("@dataclass",),  # pydantic's, extra keys ignored (0.15 and older)
    "aux_targets": ("is only supported for", "hf_text_config.model_type", "_supported = ["),
    "token_tree": ("if self.speculative_token_tree is None:", "range(self.num_speculative_tokens)"),
    "dash_keys": ('k.replace("-", "_")',),
    "num_tokens_field": ("num_speculative_tokens: int = Field(default=None, gt=0)",),
    "topk_field": ("dspark_draft_topk: int | None = Field(default=None, ge=1)",),
    "method_field": ("method: SpeculativeMethod | None = None",),
    "default_method": ('self.method = "custom_class"', 'self.method = "draft_model"'),
    # 0.22-0.25: a dotted `model` read as a custom class path whatever the method (speculative.py L527-534 @ v0.22.0)
    "dotted_model": ('and "." in self.model', '"/" not in self.model', 'self.method = "custom_class"'),
    "no_model": ("num_speculative_tokens was provided but without speculative model.",),
    "detect": ('"eagle-" in self.draft_model_config.model.lower()', '"eagle3" in self.draft_model_config',
               '"dflash" in self.draft_model_config.model.lower()', '"dspark" in self.draft_model_config',
               "Unsupported speculative method"),
    "eagle_wrap": ("eagle_config = EAGLEConfig(",),
    "eagle_rename": ('if method == "eagle":', 'f"Eagle3{arch}"', 'f"DFlash{arch}"'),
    "qwen3_rename": ('"DSparkDraftModel" in self.draft_model_config.architectures', '"Qwen3DSparkModel"'),
    "deepseek_rewrite": ('"deepseek_v4"', '"DSparkDraftModel"'),
    "speculators_merge": ("speculative_config.update(vllm_speculative_config)",),
    "speculators_dflash2": ('result["method"] = "dflash"',),
    "speculators_keep_arch": ("selected_architectures or",),
    "v41_rewrite": ('model_type == "deepseek_v41"',),
    "qwen3_draft_detect": ('"DSparkDraftModel" in self.draft_model_config.architectures',),
    "medusa_detect": ('model_type == "medusa"', 'self.method = "medusa"'),
    "gemma4_n_predict": ("hf.n_predict = hf.block_size",),
    "n_predict": ('n_predict = getattr(', "must be divisible by {n_predict=}"),
    "block_default": ("if self.use_dspark():", '"dspark_block_size"'),
    "missing": ("`num_speculative_tokens` was not provided",),
    "min_block": ("DSpark requires num_speculative_tokens >= ",),
    "topk_method": ('"dspark_draft_topk is only supported by DSpark"',),
    "topk_range": ("dspark_draft_topk must be between 1 and the ",),
    "topk_arch": ('"dspark_draft_topk is only supported by "',),
    "omni_call": ("_validate_qwen3_omni_dspark(",),
    "equal_vocab": ("def verify_equal_vocab_size_if_draft_model(self):",
                    "Target and draft model should have the same vocabulary size. "),
    "inspect_arch": ("registry.inspect_model_cls(architectures, self)",),
    "unsupported_arch": ("are not supported for now. ",),
    "speculators_override": ('speculative_config["model"] = model', "model = tokenizer = verifier_model"),
    "xpress": ("xpress_topc is only supported by XPress",),
    "index_share": ("if self.index_share_for_mtp_iteration is not None:", "only supported with method='mtp'"),
    # " || ": the release holds one of the forms (0.34: every config class whose adaptive verification reads draft
    # logits, i.e. all but DSpark's)
    "adaptive": ('self.method != "dspark" || config_cls.adaptive_verification_uses_draft_logits',
                 "self.enable_adaptive_verification", "Adaptive verification "),
    "tensor_parallel": ("if self.tensor_parallel_size is not None:", "is not a valid argument in the "),
    "heterogeneous": ("if self.use_heterogeneous_vocab and not self.uses_draft_model():",
                      "use_heterogeneous_vocab only works with method='draft_model'"),
    "speculators_verifier": ("Speculators verifier must name a remote model repository. ",),
    "speculators_archs": ('pre_trained_config["architectures"]',),
    # runtimes/draft_context.py: max_position_embeddings against max_model_len
    "max_len_field": ("max_model_len: int | None = Field(default=None, ge=1)",),
    "draft_config_len": ("max_model_len=self.max_model_len,",
                         "spec_target_max_model_len=self.target_model_config.max_model_len,"),
    "length_keys": ("def derive_max_model_len_and_key(self)", '"max_position_embeddings",', '"seq_len",',
                    'if tmp_max_len := getattr(self.hf_text_config, "model_max_length", None):'),
    "derived_len": ("elif max_model_len > derived_max_model_len:", 'f"User-specified max_model_len ({max_model_len})',
                    "raise ValueError("),
    "rope_factor": ('"llama3"', 'scaling_factor = rp.get("factor", scaling_factor)'),
    "raise_positions": ("SpeculativeConfig._maybe_override_draft_max_position_embeddings(",
                        "self.target_model_config.max_model_len,"),
    "positions_raised": ("def _maybe_override_draft_max_position_embeddings(", "makes that cache gather go",
                         "draft_max_position_embeddings >= target_max_model_len",
                         "draft_hf_config.max_position_embeddings = target_max_model_len"),
    "rope_cache_only": ("_CACHE_ONLY_ROPE_TYPES = frozenset(", '{"default", "linear", "llama3", "ntk", "proportional"}',
                        "def _rope_only_sizes_cache("),
    "spec_len": ("def _maybe_override_draft_max_model_len(", "larger than {target_max_model_len=}",
                 "result = min("),
    # 0.34: DraftModelSpeculatorConfig.max_model_len is None where the positions were raised (shares_target_positions)
    "limit_to_draft": ("def _limit_max_model_len_to_draft(self)",
                       "spec_config.draft_shares_target_positions() || spec_config.speculator_config.max_model_len",
                       "self.model_config.max_model_len = draft_max_model_len"),
    "draft_rotary": ("max_position=config.max_position_embeddings,",),
}
NEEDLES.update({  # 0.34's rules (its per-method SpeculatorConfig classes)
    "method_validator": ("def _validate_method(cls, value: str | None)", "registered_speculative_methods()",
                         "Unknown speculative method"),
    "default_method_unset": ("get_custom_speculator_config_class(self.method)", 'self.method = "ngram"',
                             'self.method = "draft_model"'),
    "checkpoint_detect": ("def _resolve_checkpoint_config_class(", "declared_cls.base_method != spec_config.method",
                          "return declared_cls", "config_cls.matches(spec_config)"),
    "qwen3_override": ('initial_architecture == "DSparkDraftModel"', 'hf_config.model_type == "qwen3"',
                       '"Qwen3DSparkModel"'),
    "undeclared_rewrite": ("if draft.speculator_config_class is None:", '"deepseek_v4"', '"DSparkDraftModel"'),
    "method_options": ("for option in _METHOD_SPECIFIC_OPTIONS:", "option not in config_cls.supported_options"),
    "parallel_drafting": ('if self.parallel_drafting and self.method not in ("dflash", "dspark"):',),
    "lm_head_quant_arch": ('{"DSparkDraftModel", "DSparkV41DraftModel"}', "draft_lm_head_quantization is only"),
    "speculators_peagle_refused": ("P-EAGLE (parallel drafting EAGLE-3) is not supported.",),
    "speculators_peagle_update": ("P-EAGLE (parallel drafting EAGLE-3) is not supported.",),
    # 0.14 and older (speculative.py L388-393 @ v0.14.0)
    "draft_model_refused": ('self.method = "draft_model"', "raise NotImplementedError(",
                            '"Speculative decoding with draft model is not "'),
})
# The same rule in the file a later release moved it to (anchors' `moved`: 0.34's SpeculatorConfig classes)
MOVED_NEEDLES: dict[str, tuple[str, ...]] = {
    "eagle_wrap": ("draft.hf_config = EAGLEConfig(",),
    "v41_rewrite": ('is_v41 = target.hf_config.model_type == "deepseek_v41"',),
    "n_predict": ('n_predict = getattr(spec.draft_model_config.hf_config, "n_predict"',
                  "must be divisible by {n_predict=}"),
    "block_default": ("if spec.num_speculative_tokens is None:", '"dspark_block_size"'),
    "draft_config_len": ("max_model_len=spec.max_model_len,", "spec_target_max_model_len=target.max_model_len,"),
    # 0.13 and older: inline in vllm/config/model.py's _get_and_verify_max_len (L2045-2069 @ v0.13.0)
    "length_keys": ("possible_keys = [", '"max_position_embeddings",', '"seq_len",',
                    'if tmp_max_len := getattr(hf_config, "model_max_length", None):'),
    "raise_positions": ("if config_cls.shares_target_positions:",
                        "SpeculativeConfig._maybe_override_draft_max_position_embeddings("),
}


# The same rule in an older wording: rule -> (the first release with NEEDLES' text, the needles before it)
OLDER_NEEDLES: dict[str, tuple[str, tuple[str, ...]]] = {
    # 0.20-0.21 have no custom_class: `if self.method is None: ngram or draft_model` (speculative.py L449-453 @ v0.20.0)
    "default_method": ("0.22.0", ('self.method = "ngram"', 'self.method = "draft_model"')),
    # no dspark clause before 0.25 (speculative.py L580-622 @ v0.20.0; L848-852 @ v0.25.0 first)
    "detect": ("0.25.0", ('"eagle-" in self.draft_model_config.model.lower()', '"eagle3" in self.draft_model_config',
                          '"dflash" in self.draft_model_config.model.lower()', "Unsupported speculative method")),
    # EAGLEConfig renames for eagle and eagle3 only before 0.20 (configs/eagle.py L46-68 @ v0.18.0: no dflash branch)
    "eagle_rename": ("0.20.0", ('if method == "eagle":', 'f"Eagle3{arch}"')),
    # 0.15 names algos.py's dict `vllm_config` (speculators/algos.py L34 @ v0.15.0)
    "speculators_archs": ("0.16.0", ('vllm_config["architectures"]',)),
    # 0.20: "... but neither `speculative_token_tree` nor `num_speculative_tokens` was provided" (L673-677)
    "missing": ("0.21.0", ("`speculative_token_tree` nor `num_speculative_tokens`",)),
    # 0.20 returns min(...) directly (speculative.py L783-786 @ v0.20.0); `result = min(` from 0.21 (L836)
    "spec_len": ("0.21.0", ("def _maybe_override_draft_max_model_len(", "larger than {target_max_model_len=}",
                            "return min(")),
}


# And older still: rule -> (the first release with OLDER_NEEDLES' text, the needles before it)
OLDEST_NEEDLES: dict[str, tuple[str, tuple[str, ...]]] = {
    # no dflash detection before 0.20 (speculative.py L479-519 @ v0.18.0: eagle- and eagle3 only); 0.14 and older
    # end in the refusal of every unrecognised draft (L352-394 @ v0.14.0)
    "detect": ("0.20.0", ('"eagle-" in self.draft_model_config.model.lower()', '"eagle3" in self.draft_model_config',
                          "Unsupported speculative method || Speculative decoding with draft model is not ")),
}


def needles(rule: str, cite: sc.Cite) -> tuple[str, ...]:
    moved = cite.file != anchors.SPEC_ANCHORS[rule].file
    if moved and rule in MOVED_NEEDLES:
        return MOVED_NEEDLES[rule]
    for table in (OLDEST_NEEDLES, OLDER_NEEDLES):
        if rule in table and release_key(cite.version) < release_key(table[rule][0]):
            return table[rule][1]
    return NEEDLES[rule]


OMNI_NEEDLES = {
    "generic": "requires a standalone draft checkpoint with", "block": "positive integer block_size",
    "tokens": "requires num_speculative_tokens to match the", "text": "could not resolve the target thinker",
    "hidden": "draft hidden_size must match the target thinker", "attention": "in the target thinker text_config",
    "layers": "must be zero-based text-layer", "aux": "requires use_aux_hidden_state=true",
    "rank": "positive integer markov_rank", "head": "markov_head_type='vanilla'",
    "anchor": "sample_from_anchor=true and", "v": "input vocab_size must be a positive integer",
    "d": "draft_vocab_size must be a positive integer no", "mask": "valid mask/noise token id within the",
    "mrope": "must not define mrope_section",
}


def cited_text(c: sc.Cite, source: str) -> str:
    text = []
    for part in c.lines.split(", "):
        first, _, last = part.removeprefix("L").partition("-")
        text += wheel(c.version, source).lines(c.file, int(first), int(last or first))
    return "\n".join(text)


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("rule", sorted(anchors.SPEC_ANCHORS))
def test_each_rule_cites_the_lines_that_hold_it(rule: str, source: str) -> None:
    assert rule in NEEDLES, f"add the upstream text {rule} depends on to NEEDLES"
    for version in sc.releases_with(rule):
        text = cited_text(sc.cite(rule, version), source)
        for needle in needles(rule, sc.cite(rule, version)):
            assert any(n in text for n in needle.split(" || ")), f"{sc.cite(rule, version)} does not contain {needle!r}"


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("check", sorted(anchors.OMNI_ANCHORS))
def test_each_omni_check_is_cited_where_it_is(check: str, source: str) -> None:
    for version in (v for v, rules in vllm_release.RELEASE_RULES.items() if rules.omni_validation):
        assert OMNI_NEEDLES[check] in cited_text(sc.omni_cite(check, version), source), (check, version)


@pytest.mark.parametrize("source", sources("vllm"))
def test_rules_absent_from_a_release_are_absent_from_its_wheel(source: str) -> None:
    """A rule the table gives only some releases must not be in the others (e.g. the 0.27-only block minimum)."""
    for rule, needles in (("min_block", NEEDLES["min_block"]), ("speculators_verifier", NEEDLES["speculators_verifier"]),
                          ("topk_field", NEEDLES["topk_field"]), ("block_default", ("if self.use_dspark():",)),
                          ("gemma4_n_predict", NEEDLES["gemma4_n_predict"]), ("omni_call", NEEDLES["omni_call"]),
                          ("rope_cache_only", NEEDLES["rope_cache_only"]),
                          ("limit_to_draft", NEEDLES["limit_to_draft"])):
        for version in vllm_release.VERSIONS:
            if version in sc.releases_with(rule):
                continue
            assert not wheel(version, source).has(anchors.SPEC_ANCHORS[rule].file, needles[0]), (rule, version)


@pytest.mark.parametrize("source", sources("vllm"))
def test_field_lists_match_each_wheel(source: str) -> None:
    for version, rules in vllm_release.RELEASE_RULES.items():
        assert set(wheel(version, source).fields(sc.SPEC, "SpeculativeConfig")) == rules.fields, version


def _literal_type(w: Wheel, name: str) -> str:
    """The inside of `NAME = Literal[...]` in speculative.py."""
    first = w.find(sc.SPEC, f"{name} = Literal[")
    assert first is not None, name
    last = w.find(sc.SPEC, "]", "in", first)
    assert last is not None, name
    return "\n".join(w.lines(sc.SPEC, first, last)).split(f"{name} = Literal[", 1)[1].split("]", 1)[0]


@pytest.mark.parametrize("source", sources("vllm"))
def test_method_literal_and_mtp_types_match_each_wheel(source: str) -> None:
    for version, rules in vllm_release.RELEASE_RULES.items():
        w = wheel(version, source)
        mtp = set(re.findall(r'"(\w+)"', _literal_type(w, "MTPModelTypes")))
        assert mtp == rules.mtp_types, version
        method = _literal_type(w, "SpeculativeMethod")
        assert ('"medusa"' in method) == ("medusa" in rules.methods), version


@pytest.mark.parametrize("source", sources("vllm"))
def test_registered_names_match_each_registry(source: str) -> None:
    """Every `_SPECULATIVE_DECODING_MODELS` entry spec.json holds is in the release's registry.py, with its class."""
    for version, rules in vllm_release.RELEASE_RULES.items():
        w = wheel(version, source)
        drafts = spec_facts.drafts(version)
        assert drafts and w.count(sc.REGISTRY, '": (') >= len(drafts), version
        for name, cls in drafts.items():
            assert rules.model_class(name) == cls and rules.registers(name), (name, version)
            at = w.find(sc.REGISTRY, f'"{name}":')
            assert at is not None, (name, version)
            entry = "\n".join([w.line(sc.REGISTRY, at).split(f'"{name}":', 1)[1],
                               *w.lines(sc.REGISTRY, at + 1, at + 2)])
            assert f'"{cls}"' in entry, (name, version)


# Each message dspark-ckpt quotes, the rule whose releases must contain it, and the wheel file it is in.
MESSAGES: dict[str, tuple[str, str]] = {
    "M_NO_MODEL": ("no_model", sc.SPEC), "M_UNSUPPORTED": ("detect", sc.SPEC),
    "M_DRAFT_REFUSED": ("draft_model_refused", sc.SPEC),
    "M_UNREGISTERED": ("unsupported_arch", sc.REGISTRY), "M_MISSING": ("missing", sc.SPEC),
    "M_DIVISIBLE": ("n_predict", sc.SPEC), "M_MIN_BLOCK": ("min_block", sc.SPEC),
    "M_TOPK_METHOD": ("topk_method", sc.SPEC), "M_TOPK_RANGE": ("topk_range", sc.SPEC),
    "M_EQUAL_VOCAB": ("equal_vocab", sc.SPEC), "M_VERIFIER": ("speculators_verifier", sc.TF_CONFIG),
    "M_TP": ("tensor_parallel", sc.SPEC), "M_HETERO": ("heterogeneous", sc.SPEC), "M_XPRESS": ("xpress", sc.SPEC),
    "M_INDEX_SHARE": ("index_share", sc.SPEC), "M_OPTION": ("method_options", sc.SPEC),
    "M_DECLARED": ("checkpoint_detect", sc.SPEC), "M_LM_HEAD_QUANT": ("lm_head_quant_arch", sc.SPEC),
    "M_PARALLEL": ("parallel_drafting", sc.SPEC), "M_PEAGLE": ("speculators_peagle_refused", sc.SPEC),
    "M_UNKNOWN_METHOD": ("method_validator", sc.SPEC),
    **{name: ("omni_call", sc.SPEC) for name in dir(sc) if name.startswith("M_OMNI_")},
    "M_MISSING_TREE": ("missing", sc.SPEC),
}
# A message only some releases of its rule word that way: which ones (SpeculativeConfig's fields, spec.json).
WORDED: dict[str, Callable[[str], bool]] = {
    "M_MISSING": lambda v: "speculative_token_tree" not in vllm_release.RELEASE_RULES[v].fields,
    "M_MISSING_TREE": lambda v: "speculative_token_tree" in vllm_release.RELEASE_RULES[v].fields,  # 0.18-0.20
    "M_UNSUPPORTED": lambda v: v not in sc.releases_with("draft_model_refused"),  # 0.14-: M_DRAFT_REFUSED
}


@pytest.mark.parametrize("source", sources("vllm"))
@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_each_quoted_message_is_the_wheels_own(name: str, source: str) -> None:
    rule, file = MESSAGES[name]
    sample = re.sub(r"\{\w+\}", "X", getattr(sc, name))
    releases = [v for v in sc.releases_with(rule) if WORDED.get(name, lambda _: True)(v)]
    assert releases, name
    for version in releases:
        # the file named, or where the release cites the rule (0.34 moved some into its SpeculatorConfig classes)
        files = sorted({file, sc.cite(rule, version).file} if rule in anchors.SPEC_ANCHORS else {file})
        w = wheel(version, source)
        assert any(w.matching(f, sample) for f in files), (name, version)


@pytest.mark.parametrize("source", sources("vllm"))
def test_the_adaptive_verification_messages(source: str) -> None:
    for version, rules in vllm_release.RELEASE_RULES.items():
        if rules.adaptive_message is not None:
            sample = rules.adaptive_message
            assert wheel(version, source).matching(sc.SPEC, sample), version
            assert version in sc.releases_with("adaptive")


@pytest.mark.parametrize("source", sources("vllm"))
def test_the_two_topk_architecture_messages(source: str) -> None:
    for version, rules in vllm_release.RELEASE_RULES.items():
        if rules.topk_archs is not None:
            sample = rules.topk_arch_message
            where = sc.cite("topk_arch", version).file  # 0.34: dspark/config.py
            assert wheel(version, source).matching(where, sample), version


@pytest.mark.parametrize("source", sources("vllm"))
def test_which_methods_get_max_position_embeddings_raised_is_each_wheels(source: str) -> None:
    """The SpecRules column against the call site each release cites: eagle and eagle3 only, or all but draft_model;
    and the served length lowered to the draft's (0.33's V2 runner) exactly where the table says."""
    for version, rules in vllm_release.RELEASE_RULES.items():
        if version not in sc.releases_with("raise_positions"):  # 0.20-0.26: no raise, no max_position_embeddings
            assert rules.positions_raised_for == (), version
            assert not wheel(version, source).has(sc.SPEC, "max_position_embeddings"), version
            assert not rules.limit_to_draft, version
            continue
        call = cited_text(sc.cite("raise_positions", version), source)
        if rules.positions_raised_for is None:
            assert ('if self.method != "draft_model":' in call  # 0.34: each config class but draft_model's
                    or "if config_cls.shares_target_positions:" in call), version
            assert "if not _rope_only_sizes_cache(draft_hf_config):" in cited_text(sc.cite("positions_raised", version),
                                                                                    source)
        else:
            methods = ", ".join(f'"{m}"' for m in rules.positions_raised_for)
            assert f"if self.method in ({methods}):" in call, version
        has_limit = wheel(version, source).has(anchors.VLLM_CFG, "def _limit_max_model_len_to_draft(self)")
        assert has_limit is rules.limit_to_draft, version


@pytest.mark.parametrize("source", sources("vllm"))
def test_the_length_keys_and_plain_rope_types_are_each_wheels(source: str) -> None:
    import ast

    for version in vllm_release.VERSIONS:
        keys = cited_text(sc.cite("length_keys", version), source).split("possible_keys = [", 1)[1].split("]", 1)[0]
        assert tuple(re.findall(r'"(\w+)"', keys)) == dc.LENGTH_KEYS, version
        exempt = cited_text(sc.cite("rope_factor", version), source).split("not in (", 1)[1].split(")", 1)[0]
        assert "llama3" in ast.literal_eval(f"({exempt})"), version  # no factor applied to its length
    cache_only = cited_text(sc.cite("rope_cache_only", "0.33.0"), source).split("frozenset(", 1)[1].split(")", 1)[0]
    assert dc.PLAIN_ROPE <= ast.literal_eval(cache_only.strip())


@pytest.mark.parametrize("source", sources("vllm"))
def test_the_max_model_len_messages_are_the_wheels_own(source: str) -> None:
    """M_DERIVED is model.py's `msg`, then `{msg} To allow overriding ... {warning}` with the `warning` constant;
    M_SPEC_LEN the f-string of _maybe_override_draft_max_model_len (pydantic prefixes `Value error, `)."""
    for version in vllm_release.VERSIONS:
        w = wheel(version, source)
        sample = dc.M_DERIVED.format(s=4096, key="max_position_embeddings", derived=2048.0)
        msg, rest = sample.split(" To allow overriding", 1)
        warning = rest.split("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. ", 1)[1]
        assert w.matching(anchors.MODEL_CFG, msg), version
        assert re.escape(warning) in w.matching(anchors.MODEL_CFG, warning), version  # the constant itself
        assert any("ALLOW_LONG_MAX_MODEL_LEN=1" in t for t in w.matching(anchors.MODEL_CFG,
                                                                          f"X To allow overriding{rest}")), version
        assert w.matching(sc.SPEC, dc.M_SPEC_LEN.format(s=8192, t=4096)), version


@pytest.mark.upstream(runtime="vllm")
@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_each_recorded_answer_is_the_wheels(release: str) -> None:
    """The recording the hermetic suite reads (tests/data/wheel_excerpts/vllm-X.json: what this file, the EAGLE-3
    aux citations and the speculators agreement ask of each wheel) is what the wheel answers today."""
    from released_sources import release_tree

    held = recorded_questions("vllm", release)
    assert held, f"nothing recorded for vllm {release} (tests/wheel_excerpts.py)"
    tree = WheelTree(release_tree("vllm", release))
    differ = [key for key, answer in held.items() if ask_again(tree, key) != answer]
    assert not differ, f"vLLM {release}'s wheel answers otherwise: {differ[:10]}"
