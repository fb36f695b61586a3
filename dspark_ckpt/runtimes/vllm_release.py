"""One record per listed vLLM release: what it does to a draft's config before any weight is read, read lazily from
its generated data, and consumed by check (runtimes/config_build.py), the deploy preflight
(runtimes/speculative_config.py) and the speculators conversion (runtimes/speculators.py) alike.

A row is generated data only: the release's columns (`release_data/vllm-X/spec.json`: the SpeculativeConfig fields,
the `method` Literal, the MTP types, the architectures its method detection names, the topk and adaptive checks, the
names EAGLEConfig keeps, its registry) and its line citations (`lines.json`, located by tools/release_anchors.py), from
which every behaviour flag follows: a release has a behaviour exactly where it has that rule's lines. What a change
means, in words, is tools/release_changes.py `CHANGES`. Nothing is read at import.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from dspark_ckpt.runtimes import registered, release_lines, spec_facts
from dspark_ckpt.runtimes.release import How, parse, resolve
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

SPEC_FILE = "vllm/config/speculative.py"
ALGOS_FILE = "vllm/transformers_utils/configs/speculators/algos.py"
BASE_FILE = "vllm/transformers_utils/configs/speculators/base.py"
REGISTRY_FILE = "vllm/model_executor/models/registry.py"

VERSIONS = VLLM_RELEASES  # the one list (runtimes/versions.py); RELEASE_RULES has one row per entry


@dataclass(frozen=True, slots=True)
class ReleaseRules:
    """One release: what its config pipeline (transformers_utils/config.py, the speculators conversion, EAGLEConfig,
    SpeculativeConfig.__post_init__ and _verify_args) decides. The columns are spec.json's (spec_facts.columns); the
    properties read lines.json (a behaviour is there exactly where its lines are, and every line is cited)."""

    version: str
    fields: frozenset[str]
    methods: frozenset[str]  # the `method` Literal
    mtp_types: frozenset[str]
    dflash_detect_archs: tuple[str, ...]
    dspark_detect_archs: tuple[str, ...]
    topk_archs: tuple[str, ...] | None  # the architectures dspark_draft_topk allows; None: no such check
    topk_arch_message: str
    adaptive_message: str | None  # enable_adaptive_verification with a method other than dspark; None: no check
    adaptive_needs_argmax: bool  # ... refused only together with use_local_argmax_reduction (0.30+)
    dflash_keep_extra: tuple[str, ...]  # eagle.py keeps these names under method dflash, beside DFlash* / *DFlash
    # 0.34+: the options __post_init__ refuses unless the method's SpeculatorConfig supports them, in order, and
    # each built-in method's supported ones; () before (each option had its own check)
    method_specific_options: tuple[str, ...] = ()
    method_options: tuple[tuple[str, frozenset[str]], ...] = ()
    # to 0.21: the methods fed the target's aux hidden states, the names one of which the target's text model_type
    # must contain (None: no such check), and the refusal's words ({method}, {supported}, {model_type!r})
    aux_target_methods: frozenset[str] = frozenset()
    aux_targets: tuple[str, ...] | None = None
    aux_target_message: str = ""

    def refuses_target(self, method: str | None, text_model_type: str | None) -> str | None:
        """_verify_args' refusal of `method` for a target whose hf_text_config.model_type is `text_model_type`
        (a substring test, as vLLM's `any(name in model_type ...)`); None where it passes or is not known."""
        if (self.aux_targets is None or method not in self.aux_target_methods or text_model_type is None
                or any(name in text_model_type for name in self.aux_targets)):
            return None
        return self.aux_target_message.format(method=method, supported=list(self.aux_targets),
                                              model_type=text_model_type)

    # --- behaviour a generated citation shows (lines.json: the release has the rule's lines, or not) ---
    @property
    def dspark_detect_qwen3_draft(self) -> bool:
        """DSparkDraftModel with model_type qwen3 is detected as method dspark (0.29+)."""
        return self.has("qwen3_draft_detect")

    @property
    def medusa_detect(self) -> bool:
        """model_type medusa / mlp_speculator detect their methods (until 0.32)."""
        return self.has("medusa_detect")

    @property
    def dspark_v41(self) -> bool:
        """A deepseek_v41 target sends the DSpark rewrite to DSparkV41DraftModel (0.30+)."""
        return self.has("v41_rewrite")

    @property
    def speculators_merge(self) -> bool:
        """The user's --speculative-config is merged over the speculators config (0.29+)."""
        return self.has("speculators_merge")

    @property
    def speculators_dflash2(self) -> bool:
        """The speculators type dflash2 is served as method dflash (0.29+)."""
        return self.has("speculators_dflash2")

    @property
    def speculators_dspark_keeps_arch(self) -> bool:
        """update_dspark keeps Qwen3(Omni)DSparkModel from `architectures` (0.29+)."""
        return self.has("speculators_keep_arch")

    @property
    def dspark_min_block(self) -> bool:
        """num_speculative_tokens >= dspark_block_size (0.27)."""
        return self.has("min_block")

    @property
    def dspark_block_default(self) -> bool:
        """Method dspark: num_speculative_tokens defaults to block_size (0.31+)."""
        return self.has("block_default")

    @property
    def gemma4_n_predict(self) -> bool:
        """Gemma4 DSpark: n_predict = block_size when unset (0.27-0.30)."""
        return self.has("gemma4_n_predict")

    @property
    def omni_validation(self) -> bool:
        """_validate_qwen3_omni_dspark is called (0.29+)."""
        return self.has("omni_call")

    @property
    def speculators_local_verifier_refused(self) -> bool:
        """maybe_override_with_speculators refuses a local verifier (0.33)."""
        return self.has("speculators_verifier")

    @property
    def limit_to_draft(self) -> bool:
        """VllmConfig._limit_max_model_len_to_draft (0.33, the V2 model runner)."""
        return self.has("limit_to_draft")

    @property
    def positions_raised_for(self) -> tuple[str, ...] | None:
        """The methods whose draft max_position_embeddings _maybe_override_draft_max_position_embeddings raises to
        the served max_model_len; None: every method but draft_model (0.33: RoPE that only sizes the cache); ():
        none (0.20-0.26 have no such override: the draft keeps its own)."""
        if not self.has("raise_positions"):
            return ()
        return None if self.has("rope_cache_only") else ("eagle", "eagle3")

    @property
    def dash_keys(self) -> bool:
        """engine/arg_utils.py turns `-` into `_` in the speculative config's keys (0.26+); before, a dashed key
        reaches SpeculativeConfig(**spec) as written and extra="forbid" refuses it."""
        return self.has("dash_keys")

    @property
    def speculators_peagle_refused(self) -> bool:
        """update_peagle raises instead of converting a P-EAGLE draft (0.34+; algos.py)."""
        return self.has("speculators_peagle_update")

    @property
    def per_method_configs(self) -> bool:
        """SpeculativeConfig hands the method's setup to one SpeculatorConfig class per method (0.34+): the class
        the draft's model declares decides an unset method, a configured one is checked against it."""
        return self.has("checkpoint_detect")

    def supports_option(self, method: str | None, option: str) -> bool:
        """Whether the config class of `method` accepts a method-specific option (0.34+)."""
        return option in dict(self.method_options).get(str(method), frozenset())

    def declared_method(self, architectures: tuple[str, ...]) -> str | None:
        """0.34+: the base method of the SpeculatorConfig the draft's registered class declares (DFlash or DSpark
        here: spec.json's detection columns), for the first architecture the registry resolves."""
        for arch in architectures:
            if arch in self.dspark_detect_archs:
                return "dspark"
            if arch in self.dflash_detect_archs:
                return "dflash"
            if self.registers(arch):
                return None
        return None

    # --- the registry (registered_architectures.json; spec.json for the drafts' classes) ---
    def registers(self, name: str) -> bool:
        """Whether the release's ModelRegistry resolves the name: a `_*_MODELS` dict `_VLLM_MODELS` spreads maps it
        (not `_PREVIOUSLY_SUPPORTED_MODELS`/`_OOT_SUPPORTED_MODELS`, which it refuses)."""
        return registered.registration("vllm", self.version, name) is not None

    def model_class(self, name: str) -> str | None:
        """The class the release's `_SPECULATIVE_DECODING_MODELS` maps a draft name to (None: not a draft it maps)."""
        return spec_facts.drafts(self.version).get(name)

    def registry_line(self, architecture: str) -> str:
        """registry.py's `_SPECULATIVE_DECODING_MODELS` entry of a modelled draft name (`registry.<name>`)."""
        named = architecture in release_lines.keys("registry", self.version)  # no key built for another name
        line = release_lines.first_line(self.version, f"registry.{architecture}") if named else None
        return f"{REGISTRY_FILE} @ v{self.version}" + (f" L{line}" if line else "")

    # --- lines.json ---
    def has(self, rule: str) -> bool:
        return release_lines.cited(self.version, f"spec.{rule}") is not None

    def citation(self, key: str) -> str | None:
        """`file @ vX Llines` of a lines.json citation (`build.dflash2_conv`, ...), None where the release has none."""
        found = release_lines.cited(self.version, key)
        return f"{found[0]} @ v{self.version} {found[1]}" if found is not None else None

    def _line(self, key: str) -> int:
        line = release_lines.first_line(self.version, key)
        if line is None:
            raise KeyError(f"{key} @ v{self.version}: not in release_data/vllm-{self.version}/lines.json")
        return line

    @property
    def dspark_keep(self) -> tuple[str, ...]:
        """The architectures method dspark leaves alone; any other becomes the DeepSeek-V4 draft (the names its
        speculative.py's rewrite condition excludes, in line order: `keep.*` of lines.json). From 0.34 no list: the
        architectures whose class declares a DSpark config (DSparkSpeculatorConfig.adapt_draft_model_config)."""
        keep = release_lines.keys("keep", self.version)
        return keep if keep or not self.has("undeclared_rewrite") else self.dspark_detect_archs

    @property
    def speculators_types(self) -> tuple[str, ...]:
        """SUPPORTED_SPECULATORS_TYPES: algos.py's `@register_speculator` names, in file order."""
        return release_lines.keys("algos", self.version)

    @property
    def algos(self) -> dict[str, int]:
        """speculators type -> line of its update_* function in algos.py."""
        return {kind: self._line(f"algos.{kind}") for kind in self.speculators_types}

    @property
    def speculators_detect(self) -> int:
        """transformers_utils/config.py: no model_type + speculators_config -> "speculators"."""
        return self._line("build.speculators_detect")

    @property
    def expected_line(self) -> int:
        """base.py: the "Expected one of" ValueError."""
        return self._line("build.expected")

    @property
    def dspark_rewrite_line(self) -> int:
        """The `model_type = "deepseek_v4"` line."""
        return self._line("build.dspark_rewrite")

    @property
    def qwen3_rename_line(self) -> int | None:
        """DSparkDraftModel + model_type qwen3 -> Qwen3DSparkModel (0.29+; 0.34: an hf_config override), else None."""
        return (release_lines.first_line(self.version, "spec.qwen3_rename")
                or release_lines.first_line(self.version, "spec.qwen3_override"))

    @property
    def eagle_config_line(self) -> int:
        """`EAGLEConfig(hf_config, method=..., model_type="eagle")`: the eagle3/dflash rename."""
        return self._line("spec.eagle_wrap")

    @property
    def markov_rank_line(self) -> int:
        """Qwen3DSparkModel.__init__: `config.markov_rank` (a plain attribute)."""
        return self._line("build.markov_rank")

    @property
    def hc_mult_line(self) -> int:
        """DSparkDeepseekV4Model.__init__: `config.hc_mult` (models/deepseek_v4/nvidia/dspark.py)."""
        return self._line("build.hc_mult")


def _row(version: str) -> ReleaseRules:
    """One listed release's row: its generated columns, and the behaviour changes up to it."""
    return ReleaseRules(version, **spec_facts.columns(version))


class _Rules(Mapping[str, ReleaseRules]):
    """One row per listed release, built on first use from its generated data (release_data/vllm-X/)."""

    def __getitem__(self, version: str) -> ReleaseRules:
        if version not in VERSIONS:
            raise KeyError(version)
        return _cached_row(version)

    def __iter__(self) -> Iterator[str]:
        return iter(VERSIONS)

    def __len__(self) -> int:
        return len(VERSIONS)


_cached_row = functools.cache(_row)
RELEASE_RULES: Mapping[str, ReleaseRules] = _Rules()
# 0.27.1 differs from 0.27.0 only in _version.py and qwen3_dspark.py: its speculative.py is the same file (md5).


@functools.cache  # asked once per release and draft evaluated; the answer depends on the version alone
def rules_for(version: str) -> ReleaseRules | None:
    """The row of the release line `version` belongs to (release.resolve: its own, its minor's, the newest for a
    newer release, as the contract table assumes with its DSP220 warning); None before the first row."""
    found = resolve("vllm", version, VERSIONS)
    return RELEASE_RULES[found.modelled] if found is not None and found.modelled is not None else None


def nearest_rules(version: str) -> tuple[ReleaseRules, bool]:
    """The row read nearest `version` (an older release than every row takes the first), and whether it is the
    release line of `version` itself."""
    found = resolve("vllm", version, VERSIONS)
    if found is None:
        return RELEASE_RULES[VERSIONS[0]], False
    return RELEASE_RULES[found.name], found.how in (How.OWN, How.LINE)


def later_field(key: str, version: str) -> str | None:
    """The first release whose SpeculativeConfig has `key` when `version` does not, if any."""
    asked = parse("vllm", version)
    return next((r.version for r in RELEASE_RULES.values()
                 if parse("vllm", r.version) > asked and key in r.fields), None)


def earlier_field(key: str, version: str) -> str | None:
    """The last release before `version` whose SpeculativeConfig has `key` when `version` does not (a field gone,
    e.g. use_heterogeneous_vocab after 0.33), if any."""
    if version in VERSIONS and key in RELEASE_RULES[version].fields:
        return None
    asked = parse("vllm", version)
    return next((r.version for r in reversed(list(RELEASE_RULES.values()))
                 if parse("vllm", r.version) < asked and key in r.fields), None)
