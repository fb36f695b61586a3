"""Every release of the list has its generated lines.json (tools/release_lines.py), holding each citation its
consumers read: the rules each anchor of tools/release_anchors.py bounds to that release, and nothing else."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from listed import vllm_minors

from dspark_ckpt.model.families import Family
from dspark_ckpt.runtimes import eagle3_aux, release_lines, release_store, speculative_config, vllm_release
from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))  # the generator's inputs: not in the package
from release_anchors import (
    ANCHORS,
    DSPARK_KEEP,
    FAMILIES,
    OMNI_ANCHORS,
    SPEC_ANCHORS,
    SPECULATORS,
    Anchor,
    covers,
)

LINES = re.compile(r"L\d+(-\d+)?(, L\d+(-\d+)?)*")


def _doc(release: str) -> dict[str, dict[str, str]]:
    path = release_store.DATA / f"vllm-{release}" / release_lines.FILE_NAME
    assert path.is_file(), f"no {path}: python tools/release_lines.py {release}"
    text = path.read_text(encoding="utf-8")
    doc: dict[str, dict[str, str]] = json.loads(text)
    assert text == json.dumps(doc, indent=1, sort_keys=True) + "\n", "not as tools/release_lines.py writes it"
    return doc


def _files(anchor: Anchor | None) -> set[str]:
    return set() if anchor is None else {anchor.file} | _files(anchor.moved)


def test_lines_exist_exactly_for_the_releases_of_the_list() -> None:
    written = {p.parent.name.removeprefix("vllm-") for p in release_store.DATA.glob(f"vllm-*/{release_lines.FILE_NAME}")}
    assert written == set(VLLM_RELEASES)


def test_every_bound_is_a_release_of_the_list_or_past_it() -> None:
    """A bound names the first (last) listed release with the rule; one past the newest covers none yet."""
    bounds = {b for a in ANCHORS.values() for b in (a.since, a.until) if b is not None}
    newest = release_key(VLLM_RELEASES[-1])
    assert {b for b in bounds if release_key(b) <= newest} <= set(VLLM_RELEASES)


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_each_release_holds_every_rule_it_has_and_no_other(release: str) -> None:
    doc = _doc(release)
    required = {key for key, anchor in ANCHORS.items() if covers(anchor, release)}
    assert required - set(doc) == set(), f"missing in {release}: regenerate with tools/release_lines.py"
    family = {key for key in doc if key.split(".", 1)[0] in FAMILIES}
    assert set(doc) - required - family == set(), f"rules {release} does not have, by tools/release_anchors.py"
    for key in required:  # the anchor's file, or where a later release keeps the rule (`moved`)
        assert doc[key]["file"] in _files(ANCHORS[key]), key
    files = {SPECULATORS.prefix: SPECULATORS.file, DSPARK_KEEP.prefix: ANCHORS[DSPARK_KEEP.anchor].file}
    # every family has names in every release; the keep list of method dspark's rewrite only where the rewrite is
    # (0.25-0.33): no method dspark before 0.25 (speculative.py @ v0.24.0: no "dspark" at all; the rewrite is first
    # in v0.25.0 L899-908), and 0.34 rewrites every draft whose class declares no DSpark config (no list)
    keeps = covers(ANCHORS[DSPARK_KEEP.anchor], release)
    assert {key.split(".", 1)[0] for key in family} == set(FAMILIES) - (set() if keeps else {DSPARK_KEEP.prefix})
    assert all(doc[key]["file"] == files[key.split(".", 1)[0]] for key in family)
    assert all(set(entry) == {"file", "lines"} and LINES.fullmatch(entry["lines"]) for entry in doc.values())


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_the_consumers_read_every_release(release: str) -> None:
    """Each consumer builds its citations of the release from the generated file, and the rules they say the
    release has are the ones the file holds."""
    rules, exact = vllm_release.nearest_rules(release)
    assert rules.version == release and exact and rules is vllm_release.RELEASE_RULES[release]
    assert set(rules.algos) == set(rules.speculators_types) and "eagle3" in rules.speculators_types
    assert min(rules.speculators_detect, rules.expected_line, rules.eagle_config_line) > 0
    # method dspark, qwen3_dspark.py and deepseek_v4/nvidia/dspark.py first ship in 0.25.0 (none in v0.24.0's wheel)
    if release in vllm_minors("0.25.0"):
        assert "Qwen3DSparkModel" in rules.dspark_keep
        assert min(rules.dspark_rewrite_line, rules.markov_rank_line, rules.hc_mult_line) > 0
    else:
        assert rules.dspark_keep == ()
        for line in ("dspark_rewrite_line", "markov_rank_line", "hc_mult_line"):
            with pytest.raises(KeyError, match=f"@ v{release}: not in"):
                getattr(rules, line)
    assert f" @ v{release} L" in eagle3_aux.cite(Family.EAGLE3_LLAMA, release)
    # qwen3_eagle3.py first ships in 0.24.0 (registry.py @ v0.24.0 L614): an older release cites the first that has it
    qwen3 = release if release in vllm_minors("0.24.0") else vllm_minors("0.24.0")[0]
    assert f"qwen3_eagle3.py @ v{qwen3} L" in eagle3_aux.cite(Family.EAGLE3_QWEN3, release)
    spec = vllm_release.RELEASE_RULES[release]
    for rule, anchor in SPEC_ANCHORS.items():
        assert spec.has(rule) is covers(anchor, release), rule
        if spec.has(rule):
            assert str(speculative_config.cite(rule, release)).split(" @ ")[0] in _files(anchor), rule
            assert f" @ v{release} L" in str(speculative_config.cite(rule, release))
    for check in OMNI_ANCHORS:
        assert covers(OMNI_ANCHORS[check], release) is spec.omni_validation, check
    # the topk method check: its own rule until 0.33, the per-method option check from 0.34
    assert (spec.has("topk_method") or spec.has("method_options")) is (spec.topk_archs is not None)


def test_a_release_without_the_rule_has_no_citation() -> None:
    with pytest.raises(KeyError, match="min_block"):
        speculative_config.cite("min_block", VLLM_RELEASES[-1])
    # DSpark's min block-size check: speculative.py L1005 @ v0.26.0, L1036 @ v0.27.0/v0.27.1, gone in v0.28.0
    assert speculative_config.releases_with("min_block") == vllm_minors("0.26.0", "0.27.0")
    assert vllm_release.RELEASE_RULES["0.27.0"].qwen3_rename_line is None
