"""Runtime selectors: exact versions (known or not), PEP 440 ranges, `installed`, and the verdicts they lead to."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_checkpoint
from listed import vllm_before

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.releases import FIRST_REGISTERED, assumed_from
from dspark_ckpt.runtimes.selectors import RuntimeVersion, parse_selectors, release
from dspark_ckpt.runtimes.table import VLLM_VERSIONS, contract_for
from dspark_ckpt.sources.local import local_source

# A vLLM release older than every listed one (the minor before the first listed release's)
OLDER = f"0.{release_key(VLLM_VERSIONS[0], precision=2)[1] - 1}.0"


def names(*texts: str) -> list[str]:
    return [str(r) for r in parse_selectors(list(texts))]


@pytest.mark.parametrize(("text", "want"), [
    ("vllm>=0.30", ["0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0"]),
    ("vllm~=0.31", ["0.31.0", "0.32.0", "0.33.0", "0.34.0"]),
    ("vllm>=0.29,<0.32", ["0.29.0", "0.30.0", "0.31.0"]),
    ("vllm!=0.30.0", [v for v in VLLM_VERSIONS if v != "0.30.0"]),
    ("vllm==0.31.*", ["0.31.0"]),
    ("vllm<0.28", list(vllm_before("0.28.0"))),
])
def test_ranges_select_known_versions(text: str, want: list[str]) -> None:
    assert names(text) == [f"vllm=={v}" for v in want]


@pytest.mark.parametrize(("text", "want"), [
    ("vllm==0.29", "vllm==0.29.0"), ("vllm==0.34.0", "vllm==0.34.0"), ("vllm==0.34.0rc1", "vllm==0.34.0"),
    ("vllm==0.34.1+cpu", "vllm==0.34.1"), ("vllm==1.0", "vllm==1.0.0"), ("vllm==0.10.1.1", "vllm==0.10.1.1"),
    ("VLLM == 0.30.0", "vllm==0.30.0"),
])
def test_exact_versions_are_kept_even_when_unknown(text: str, want: str) -> None:
    assert names(text) == [want]


@pytest.mark.parametrize(("text", "code"), [
    ("vllm>=0.40", "DSP-E007"), (f"vllm<{VLLM_VERSIONS[0]}", "DSP-E007"), ("vllm==abc", "DSP-E008"),
    ("vllm>=x.y", "DSP-E008"),
    ("vllm==", "DSP-E008"), ("tgi==1.0", "DSP-E001"), ("vllm 0.30", "DSP-E001"),
    # no release (issue 41): malformed, or inside the listed range and never released
    ("vllm==033", "DSP-E009"), ("vllm==1", "DSP-E009"), ("vllm==0.31.1", "DSP-E009"), ("sglang==0.5.3.1", "DSP-E009"),
])
def test_bad_selectors_are_usage_errors(text: str, code: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_selectors([text])
    assert err.value.code == code


def test_sglang_ranges_select_sglang_only() -> None:
    chosen = names("sglang>=0.5")
    assert chosen and all(n.startswith("sglang") for n in chosen)


def test_release_pads_and_drops_suffixes() -> None:
    assert [release(v) for v in ("0.34", "0.34.0.dev12+g1234", "0.30.0.post1")] == ["0.34.0", "0.34.0", "0.30.0"]


def test_newer_version_takes_the_newest_row_of_each_family() -> None:
    for family in Family:
        newest = contract_for("vllm", VLLM_VERSIONS[-1], family)
        assumed = contract_for("vllm", "0.35.0", family)
        assert newest is not None and assumed is not None, family
        assert (assumed.first, assumed.last, assumed.d2t_param) == (newest.first, newest.last, newest.d2t_param)
        assert assumed.source.endswith("assumed for v0.35.0")
        assert assumed_from(assumed, "0.35.0") == VLLM_VERSIONS[-1]
        assert assumed_from(newest, VLLM_VERSIONS[-1]) is None


def test_older_version_is_unsupported_before_first_registration() -> None:
    # the last release before each registration (registry.py @ v0.24.0 L614 Eagle3Qwen3ForCausalLM, @ v0.25.0 L597
    # Qwen3DSparkModel, @ v0.26.0 L612 Gemma4DSparkModel, @ v0.28.0 L628 DFlash2DraftModel first); Qwen3-Omni's
    # 0.25-0.28 are method dspark's DeepSeek-V4 rewrite row (test_contract_matrix), so its release here is 0.24.0
    known = {"eagle3-llama": "0.8.4", "dflash": "0.19.1", "eagle3-qwen3": "0.23.0", "qwen3-dspark": "0.24.0",
             "gemma4-dspark": "0.25.1", "qwen3-omni-dspark": "0.24.0", "dflash2": "0.27.1"}
    last_without = {f: known[f.value] for f in Family if f.value in known}
    assert set(last_without) == set(FIRST_REGISTERED) == set(Family)
    for family, reg in FIRST_REGISTERED.items():
        before = last_without[family]
        contract = contract_for("vllm", before, family)
        assert contract is not None and not contract.supported, family
        assert reg.architecture in contract.messages.omni_unregistered
        assert "registry.py" in contract.source and assumed_from(contract, before) is None


def test_older_but_registered_version_is_assumed_from_the_first_row(tmp_path: Path) -> None:
    # EAGLE-3 Llama is registered long before the first listed release (FIRST_REGISTERED: 0.8.5)
    contract = contract_for("vllm", OLDER, Family.EAGLE3_LLAMA)
    assert contract is not None and contract.supported and contract.first == VLLM_VERSIONS[0]
    assert assumed_from(contract, OLDER) == VLLM_VERSIONS[0]
    a = _analysis(tmp_path, f"vllm=={OLDER}", family="eagle3-llama", vocab=96, draft_vocab=96, markov=False)
    assert a.verdicts[0].loads
    assert (f"vllm=={OLDER}: verdict assumed from vLLM {VLLM_VERSIONS[0]} (older than every release whose vocabulary "
            "contract dspark-ckpt has read, though the family is registered there") in next(
        f.message for f in a.findings if f.code == "DSP220")
    # a listed release is read, not assumed: Qwen3 DSpark's first row starts at its registration (probe_runtime
    # 0.25.0 384/384)
    first = contract_for("vllm", "0.25.0", Family.QWEN3_DSPARK)
    assert first is not None and first.supported and first.first == "0.25.0" and assumed_from(first, "0.25.0") is None


def _analysis(tmp_path: Path, *selectors: str, **kwargs: object):  # type: ignore[no-untyped-def]
    path = make_checkpoint(tmp_path / "d", **kwargs)  # type: ignore[arg-type]
    return analyze(local_source(path), target=TargetVocab(96, "test"), runtimes=parse_selectors(list(selectors)))


def test_unknown_newer_version_evaluates_and_warns(tmp_path: Path) -> None:
    """A pruned draft without d2t: fails on 0.33 (DSP302); 0.34 loads it with d2t all-zero (its load_weights has no
    vocab checks: a silent DSP302), and so, assumed, do 0.35 and 1.0."""
    a = _analysis(tmp_path, "vllm==0.33.0", "vllm==0.34.0", "vllm==0.35.0", "vllm==1.0", vocab=96, draft_vocab=64)
    assert [(v.version, v.error.code if v.error else None) for v in a.verdicts] == \
        [("0.33.0", "DSP302"), ("0.34.0", None), ("0.35.0", None), ("1.0.0", None)]
    assert all("DSP302" in [i.code for i in v.silent] for v in a.verdicts[1:])
    warning = [f for f in a.findings if f.code == "DSP220"]
    assert len(warning) == 1 and warning[0].severity.value == "warning"
    assert "vllm==0.35.0, vllm==1.0.0: verdict assumed from vLLM 0.34.0" in warning[0].message
    assert not a.report.compatibility[2].verbatim and "assumed for v0.35.0" in a.report.compatibility[2].source


def test_clean_draft_on_unknown_version_has_only_the_warning(tmp_path: Path) -> None:
    a = _analysis(tmp_path, "vllm==0.40.2", vocab=96, draft_vocab=96)
    assert [f.code for f in a.findings] == ["DSP220"]
    assert a.verdicts[0].loads


def test_known_versions_never_warn(tmp_path: Path) -> None:
    a = _analysis(tmp_path, "all", vocab=96, draft_vocab=64, d2t=True)
    assert not any(f.code == "DSP220" for f in a.findings)


def test_unregistered_version_is_not_supported(tmp_path: Path) -> None:
    a = _analysis(tmp_path, "vllm==0.24.0", "vllm==0.25.0", vocab=96, draft_vocab=96)
    by_version = {v.version: v for v in a.verdicts}
    # 0.24.0 registers no Qwen3DSparkModel (registry.py @ v0.24.0 L606-615) and says so (registry.py L1062)
    assert by_version["0.24.0"].error is not None and by_version["0.24.0"].error.code == "DSP309"
    assert by_version["0.24.0"].error.text == "Model architectures ['Qwen3DSparkModel'] are not supported for now."
    assert by_version["0.25.0"].loads
    assert not any(f.code == "DSP220" for f in a.findings)  # both listed: nothing assumed


def test_a_release_older_than_the_list_is_not_registered(tmp_path: Path) -> None:
    """Older than every listed release, the registration is FIRST_REGISTERED's bisection (Qwen3DSparkModel from
    0.25.0, registry.py @ v0.25.0 L597)."""
    a = _analysis(tmp_path, f"vllm=={OLDER}", vocab=96, draft_vocab=96)
    (verdict,) = a.verdicts
    assert verdict.error is not None and verdict.error.code == "DSP309"
    assert f"Qwen3DSparkModel is not registered in vLLM {OLDER}: " in verdict.error.text


def test_runtime_version_str() -> None:
    assert str(RuntimeVersion("vllm", "0.34.0")) == "vllm==0.34.0" and str(RuntimeVersion("sglang", "*")) == "sglang"


@pytest.mark.parametrize("runtime", ["vllm", "sglang"])
def test_plain_bounds_choose_what_specifier_set_chooses(runtime: str) -> None:
    """release.plain_bounds answers `>=X`/`<=Y` ranges without packaging.specifiers; it must agree with it."""
    from packaging.specifiers import SpecifierSet

    from dspark_ckpt.runtimes import selectors as s
    from dspark_ckpt.runtimes.release import plain_bounds

    known = s._known(runtime)
    bounds = [*known, "0", "0.5", "0.30", "0.29.1", "0.5.4.post1", "9.0"]
    specs = [f"{op}{a}" for op in (">=", "<=") for a in bounds] + [f">={a},<={b}" for a in bounds for b in bounds]
    for spec in specs:
        assert plain_bounds(runtime, spec, known) == [v for v in known
                                                      if SpecifierSet(spec).contains(v, prereleases=True)]
    assert plain_bounds(runtime, ">0.30", known) is None and plain_bounds(runtime, ">= 0.30", known) is None


def test_folded_writes_runs_of_three_listed_releases_as_ranges() -> None:
    from dspark_ckpt.runtimes.selectors import RuntimeVersion, folded
    from dspark_ckpt.runtimes.versions import SGLANG_RELEASES, VLLM_RELEASES

    v = [RuntimeVersion("vllm", r) for r in VLLM_RELEASES]
    s = [RuntimeVersion("sglang", r) for r in SGLANG_RELEASES]
    assert folded(v) == f"vllm {VLLM_RELEASES[0]}-{VLLM_RELEASES[-1]}"
    # two in a row stay two selectors; a gap breaks a run; an unlisted release is its selector
    assert folded(v[:2]) == f"vllm=={VLLM_RELEASES[0]}, vllm=={VLLM_RELEASES[1]}"
    assert folded([*v[:3], *v[4:7]]) == (f"vllm {VLLM_RELEASES[0]}-{VLLM_RELEASES[2]}, "
                                         f"vllm {VLLM_RELEASES[4]}-{VLLM_RELEASES[6]}")
    assert folded([*v[-3:], RuntimeVersion("vllm", "9.0.0"), *s[:3]]) == (
        f"vllm {VLLM_RELEASES[-3]}-{VLLM_RELEASES[-1]}, vllm==9.0.0, sglang {SGLANG_RELEASES[0]}-{SGLANG_RELEASES[2]}")
    assert folded([]) == ""
