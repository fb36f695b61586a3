"""Focused tests of runtimes/ data and helpers: vllm_release, vllm_rows, contracts, installed, sglang_build,
sglang_columns, and model/runtime_label; the tables checked against each other and against the release list."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dspark_ckpt.model import runtime_label
from dspark_ckpt.model.families import ARCHITECTURE_FAMILY, Family
from dspark_ckpt.runtimes import registered as registered_data
from dspark_ckpt.runtimes import release_lines, spec_facts, vllm_release, vllm_rows
from dspark_ckpt.runtimes.config_build import family_of
from dspark_ckpt.runtimes.contracts import When
from dspark_ckpt.runtimes.installed import DISTRIBUTIONS, installed_runtime, installed_runtimes
from dspark_ckpt.runtimes.release import How, parse, resolve
from dspark_ckpt.runtimes.release_model import generated_releases, release_record
from dspark_ckpt.runtimes.releases import FIRST_REGISTERED
from dspark_ckpt.runtimes.sglang_build import build_sglang, registered
from dspark_ckpt.runtimes.sglang_columns import Loader, SglangColumns, Width
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS, VLLM_VERSIONS, covers

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))  # the generator's inputs: not in the package
import release_anchors as anchors


def at_least(release: str, first: str) -> bool:
    return parse("vllm", release) >= parse("vllm", first)


# --- vllm_release.py: the one record per release (registry, build lines, behaviour) ---
RULES = vllm_release.RELEASE_RULES


@pytest.mark.parametrize("family", list(FIRST_REGISTERED))
def test_the_registry_data_agrees_with_the_first_registered_release(family: Family) -> None:
    reg = FIRST_REGISTERED[family]
    for release, rules in RULES.items():
        assert rules.registers(reg.architecture) is at_least(release, reg.first), release


def test_registered_for_unknown_names_and_unread_releases() -> None:
    before_all = f"0.{parse('vllm', VLLM_VERSIONS[0]).line[1] - 1}.0"  # older than every release read
    assert before_all not in RULES and vllm_release.rules_for(before_all) is None
    assert not RULES["0.30.0"].registers("NoSuchModelForCausalLM")
    assert RULES["0.32.0"].registers("MedusaModel")
    assert not RULES["0.33.0"].registers("MedusaModel")  # removed in 0.33
    # _PREVIOUSLY_SUPPORTED_MODELS is not spread into _VLLM_MODELS: ModelRegistry does not resolve its names
    # (registry.py L841 @ 0.33.0; L822-833 spread the tables it resolves)
    assert not RULES["0.33.0"].registers("AquilaForCausalLM")
    assert tuple(RULES) == VLLM_VERSIONS


def test_the_generated_registry_agrees_with_registered_architectures() -> None:
    """spec.json's drafts (each with its class) are exactly the names registered_architectures.json calls the
    release's drafts, and ReleaseRules.registers answers from that file."""
    for release, rules in RULES.items():
        drafts = set(spec_facts.drafts(release))
        assert {n for n in registered_data.names("vllm")
                if (r := registered_data.registration("vllm", release, n)) is not None and r.draft} == drafts, release
        assert all(rules.registers(n) for n in drafts), release


@pytest.mark.parametrize("name", sorted(anchors.REGISTRY_SINCE))
def test_a_registry_line_is_cited_exactly_where_the_release_registers_the_name(name: str) -> None:
    for release, rules in RULES.items():
        line = release_lines.first_line(release, f"registry.{name}")
        assert (line is not None) is rules.registers(name), (name, release)


@pytest.mark.parametrize("name", sorted(anchors.REGISTRY_NAMES))
def test_a_draft_class_is_every_release_records_class(name: str) -> None:
    """The class check takes a modelled draft name to (spec_facts.draft_class, from spec.json) is the one every
    generated release record that registers the name maps it to (release.json `registry`); which releases register
    it is registered_architectures.json's. Its family's contract rows describe that class (vllm_rows.CLASS_FAMILIES,
    read off the rows), except DSparkDraftModel's DeepSeek-V4 class, which no family models."""
    cls = spec_facts.draft_class(name)
    assert any((r := registered_data.registration("vllm", release, name)) is not None and r.draft
               for release in VLLM_VERSIONS), name
    records = {release: record["registry"][name] for release in generated_releases("vllm")
               if (record := release_record("vllm", release)) is not None and name in record["registry"]}
    assert records and {entry[1] for entry in records.values()} == {cls}, (name, records)
    assert {spec_facts.drafts(r).get(name) for r in VLLM_VERSIONS} - {None} == {cls}, name
    family = ARCHITECTURE_FAMILY.get(name)
    assert (family in vllm_rows.CLASS_FAMILIES.get(cls, ())) is (name != "DSparkDraftModel"), (name, cls)
    assert family_of(name) is family


def test_the_modelled_names_are_the_families_names() -> None:
    """The names whose registry entry the anchors cite are the names a family models, and DeepSeek-V4's DSpark name
    (a rewrite target); the classes the rows describe are exactly the classes those names map to."""
    assert set(anchors.REGISTRY_NAMES) == {*ARCHITECTURE_FAMILY, "DSparkDraftModel"}
    assert set(vllm_rows.CLASS_FAMILIES) == {spec_facts.draft_class(n) for n in ARCHITECTURE_FAMILY}
    assert vllm_rows.CLASS_FAMILIES["Qwen3DSparkForCausalLM"] == {Family.QWEN3_DSPARK, Family.QWEN3_OMNI_DSPARK}


def test_a_name_registered_to_a_modelled_class_gets_no_family_it_does_not_name() -> None:
    """A registered alias of a modelled class that no family names (Eagle3MiniMaxM2ForCausalLM -> Eagle3Llama's
    class, 0.34) is judged by the generated record, not by the rows: the family comes from the name."""
    assert spec_facts.draft_class("Eagle3MiniMaxM2ForCausalLM") == "Eagle3LlamaForCausalLM"
    assert family_of("Eagle3MiniMaxM2ForCausalLM") is None and family_of("NoSuchDraftModel") is None
    assert family_of(None) is None


def test_minor_and_nearest_rules() -> None:
    assert parse("vllm", "0.29.3").line == (0, 29) and resolve("vllm", "garbage", VLLM_VERSIONS) is None
    assert resolve("vllm", "0.29.3", VLLM_VERSIONS).how == How.LINE  # type: ignore[union-attr]
    rules, exact = vllm_release.nearest_rules("0.29.5")
    assert rules.version == "0.29.0" and exact
    newer, exact_newer = vllm_release.nearest_rules("0.40.0")
    assert newer.version == VLLM_VERSIONS[-1] and not exact_newer
    before_all = f"0.{parse('vllm', VLLM_VERSIONS[0]).line[1] - 1}.0"  # older than every listed release
    older, exact_older = vllm_release.nearest_rules(before_all)
    assert older.version == VLLM_VERSIONS[0] and not exact_older


def test_registry_line_cites_the_release_and_its_line() -> None:
    line = release_lines.first_line("0.30.0", "registry.Qwen3DSparkModel")
    assert RULES["0.30.0"].registry_line("Qwen3DSparkModel") == f"{vllm_release.REGISTRY_FILE} @ v0.30.0 L{line}"
    # Omni is not registered in 0.27: the file and release are cited without a line
    assert RULES["0.27.0"].registry_line("Qwen3OmniDSparkModel") == f"{vllm_release.REGISTRY_FILE} @ v0.27.0"
    assert RULES["0.27.0"].registry_line("Unlisted") == f"{vllm_release.REGISTRY_FILE} @ v0.27.0"


def test_the_omni_name_is_kept_by_dspark_from_029_only() -> None:
    for release, r in RULES.items():
        assert ("Qwen3OmniDSparkModel" in r.dspark_keep) is at_least(release, "0.29.0")
        assert r.speculators_dspark_keeps_arch is at_least(release, "0.29.0")
        assert (r.qwen3_rename_line is not None) is at_least(release, "0.29.0")


@pytest.mark.parametrize("family", sorted({c.family for c in vllm_rows.VLLM_ROWS}, key=str))
def test_each_familys_rows_cover_every_release_once(family: Family) -> None:
    rows = [c for c in vllm_rows.VLLM_ROWS if c.family == family]
    for version in VLLM_VERSIONS:
        covering = [c for c in rows if covers(c, version)]
        assert len(covering) <= 1, (family, version)


def test_qwen3_dspark_d2t_parameter_predicate_changes_at_030() -> None:
    def row(version: str) -> object:
        return next(c for c in vllm_rows.VLLM_ROWS if c.family == Family.QWEN3_DSPARK and covers(c, version))
    assert row("0.29.0").d2t_param is When.D_NE_T  # type: ignore[attr-defined]
    assert row("0.30.0").d2t_param is When.D_LT_T  # type: ignore[attr-defined]
    assert row("0.33.0").d2t_param is When.D_LT_T  # type: ignore[attr-defined]


# --- contracts.py ---

@pytest.mark.parametrize(("when", "d", "t", "holds"), [
    (When.ALWAYS, 1, 2, True), (When.NEVER, 1, 1, False), (When.D_NE_T, 128, 96, True), (When.D_NE_T, 96, 96, False),
    (When.D_LT_T, 32, 96, True), (When.D_LT_T, 128, 96, False), (When.D_LT_T, 96, 96, False),
    (When.D_EQ_T, 96, 96, True), (When.D_EQ_T, 97, 96, False)])
def test_when_holds(when: When, d: int, t: int, holds: bool) -> None:
    assert when.holds(d, t) is holds


# --- installed.py ---

def test_installed_runtimes_reads_package_metadata_only() -> None:
    # vLLM and SGLang are not installed in this test environment: nothing is found, nothing imported.
    found = installed_runtimes()
    assert {i.runtime for i in found} <= set(DISTRIBUTIONS)
    for runtime in DISTRIBUTIONS:
        one = installed_runtime(runtime)
        assert (one is not None) is any(i.runtime == runtime for i in found)
        if one is not None:
            assert one.version


# --- sglang_build.py ---

def test_qwen3_dspark_is_registered_in_sglang_from_0516() -> None:
    for version in SGLANG_VERSIONS:
        names = registered(version)
        assert ("Qwen3DSparkModel" in names) is at_least(version.replace(".post", "."), "0.5.16"), version


def test_build_sglang_reads_the_config_as_written() -> None:
    raw = {"architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "vocab_size": 128, "draft_vocab_size": 96}
    built = build_sglang(raw, "0.5.20")
    assert built.error is None and built.family == Family.QWEN3_DSPARK
    assert (built.vocab_size, built.draft_vocab_size) == (128, 96)
    null = build_sglang({**raw, "draft_vocab_size": None}, "0.5.20")
    assert null.draft_vocab_size == 128  # D is V when draft_vocab_size is null


def test_build_sglang_errors_before_any_weight() -> None:
    raw = {"architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "vocab_size": 128}
    too_old = build_sglang(raw, "0.5.10")
    assert too_old.error is not None and too_old.error.code == "DSP309" and "Qwen3DSparkModel" in too_old.error.text
    nameless = build_sglang({"model_type": "qwen3"}, "0.5.20")
    assert nameless.error is not None and nameless.error.code == "DSP309" and nameless.architecture is None
    assert build_sglang({"architectures": [7]}, "0.5.20").architecture is None


# --- sglang_columns.py ---

def test_sglang_columns_defaults_are_the_oldest_behaviour() -> None:
    c = SglangColumns(Loader.DSPARK)
    assert c.width is Width.ADD and c.crop == "V" and not (c.domino or c.mask_bound_padded or c.merged_parser)


# --- model/runtime_label.py ---

def test_runtime_labels() -> None:
    assert runtime_label.selector("vllm", "0.29.0") == "vllm==0.29.0"
    assert runtime_label.selector("sglang", runtime_label.ANY_VERSION) == "sglang"
    assert runtime_label.display("vllm", "0.29.0") == "vllm 0.29.0"
    assert runtime_label.display("sglang", runtime_label.ANY_VERSION) == "sglang"
