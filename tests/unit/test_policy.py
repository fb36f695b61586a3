"""The policy engine: select/ignore by code prefix (longest wins), layering of settings file and flags."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dspark_ckpt.check.policy import ALL, Layer, Policy, apply, hidden_count, normalize, resolve
from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.findings import Severity, finding
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.model.rule_catalog import RULES


def _report(*codes: str) -> Report:
    c = CheckpointReport(source="d", revision=None, family="qwen3-dspark", architecture=None, draft_vocab_size=8,
                         input_vocab_size=8, target_vocab_size=8, target_vocab_source="x", vocab_kind="equal",
                         input_kind="equal", hidden_size=8, tensors=(), compatibility=(),
                         findings=tuple(finding(code, f"message for {code}") for code in codes))
    return Report((c,), runtimes=("vllm==0.29.0",))


def test_default_selects_every_registered_code() -> None:
    policy = Policy()
    assert all(policy.is_selected(code) for code in RULES)
    assert policy.select == ALL


@pytest.mark.parametrize(("select", "ignore", "code", "expected"), [
    (("DSP3",), ("DSP32",), "DSP301", True),     # only select matches
    (("DSP3",), ("DSP32",), "DSP320", False),    # longer ignore beats shorter select
    (("DSP320",), ("DSP32",), "DSP320", True),   # longer select beats shorter ignore
    (("DSP320",), ("DSP32",), "DSP321", False),  # select narrows; ignore matches too
    (("DSP32",), ("DSP32",), "DSP320", False),   # a tie goes to ignore, as in flake8
    (("DSP1",), (), "DSP301", False),            # not selected at all
    (ALL, ("DSP206",), "DSP206", False),
    (ALL, ("DSP206",), "DSP205", True),
])
def test_longest_prefix_wins(select: tuple[str, ...], ignore: tuple[str, ...], code: str, expected: bool) -> None:
    assert Policy(select=select, ignore=ignore).is_selected(code) is expected


def test_normalize_splits_commas_upper_cases_and_dedupes() -> None:
    assert normalize(["dsp301, DSP32", "DSP301", "all"], "--select") == ("DSP301", "DSP32", "DSP")


@pytest.mark.parametrize("bad", ["DSP999", "DSX", "E501", "DSP3O1"])
def test_normalize_refuses_a_prefix_that_matches_nothing(bad: str) -> None:
    with pytest.raises(UsageError) as err:
        normalize([bad], "--ignore")
    assert err.value.code == "DSP-E020" and bad in str(err.value)


def test_later_select_resets_earlier_select_and_extend_select() -> None:
    file = Layer(select=("DSP1",), extend_select=("DSP206",))
    flags = Layer(select=("DSP3",))
    policy = resolve(file, flags)
    assert policy.select == ("DSP3",)
    assert not policy.is_selected("DSP206") and not policy.is_selected("DSP101")


def test_extend_select_adds_to_the_selection_in_force() -> None:
    policy = resolve(Layer(select=("DSP1",)), Layer(extend_select=("DSP206",)))
    assert policy.select == ("DSP1", "DSP206")
    assert policy.is_selected("DSP101") and policy.is_selected("DSP206") and not policy.is_selected("DSP301")


def test_flags_replace_file_ignore_fail_on_and_exit_zero() -> None:
    file = Layer(ignore=("DSP206",), fail_on=Severity.WARNING, exit_zero=True)
    assert resolve(file) == Policy(ignore=("DSP206",), fail_on=Severity.WARNING, exit_zero=True)
    flags = Layer(ignore=("DSP305",), fail_on=Severity.ERROR, exit_zero=False)
    policy = resolve(file, flags)
    assert policy.ignore == ("DSP305",) and policy.fail_on is Severity.ERROR and policy.exit_zero is False
    assert policy.is_selected("DSP206")


def test_unset_flags_keep_the_file_values() -> None:
    file = Layer(select=("DSP3",), ignore=("DSP305",), fail_on=Severity.INFO, exit_zero=True)
    assert resolve(file, Layer()) == resolve(file)


def test_apply_drops_unselected_findings_and_keeps_facts() -> None:
    report = _report("DSP206", "DSP301", "DSP305")
    shown = apply(report, Policy(ignore=("DSP206", "DSP305")))
    assert [f.code for f in shown.findings] == ["DSP301"]
    assert shown.checkpoints[0].vocab_kind == "equal" and shown.runtimes == report.runtimes
    assert hidden_count(report, shown) == 2


def test_fails_follows_fail_on() -> None:
    warning = finding("DSP305", "w")
    assert not Policy(fail_on=Severity.ERROR).fails(warning)
    assert Policy(fail_on=Severity.WARNING).fails(warning)
    assert Policy(fail_on=Severity.INFO).fails(finding("DSP206", "i"))


def _gated_report(*entries: tuple[str, str | None, tuple[str, ...]], codes: tuple[str, ...]) -> Report:
    """A checkpoint whose matrix has (runtime, error code, silent codes) entries, with findings of `codes`."""
    from dspark_ckpt.model.report import Compatibility

    compat = tuple(Compatibility(runtime=r, version="*", loads=err is None, error="x" if err else None, error_code=err,
                                 silent=tuple("x" for _ in silent), silent_codes=silent, verbatim=True, source="s")
                   for r, err, silent in entries)
    base = _report(*codes).checkpoints[0]
    return Report((replace(base, compatibility=compat),))


def test_the_default_gate_counts_only_problems_of_gated_runtimes() -> None:
    from dspark_ckpt.check.policy import DEFAULT_GATE

    report = _gated_report(("vllm", None, ()), ("sglang", "DSP303", ()), codes=("DSP303", "DSP101"))
    gated = Policy(gate=DEFAULT_GATE)
    assert [f.code for f in gated.failing(report)] == ["DSP101"]  # a layout error is the draft's own: it counts
    assert [f.code for f in gated.outside_gate(report)] == ["DSP303"]
    assert gated.ungated_runtimes(report) == ("sglang",)
    assert [f.code for f in Policy().failing(report)] == ["DSP303", "DSP101"]  # runtimes chosen: every one gates


def test_a_code_on_a_gated_runtime_counts_even_if_an_ungated_one_has_it_too() -> None:
    report = _gated_report(("vllm", None, ("DSP305",)), ("sglang", "DSP305", ()), codes=("DSP305",))
    assert Policy(gate=("vllm",), fail_on=Severity.WARNING).failing(report)
    assert not Policy(gate=("vllm",)).failing(report)  # a warning below --fail-on error counts nowhere
