"""Command markers in hints (model/hint_template.py) and their filling-in for one checkpoint (check/hints.py)."""

from __future__ import annotations

import shlex
from pathlib import Path

from dspark_ckpt.check.hints import HintInputs, with_runnable_hints
from dspark_ckpt.model.findings import finding
from dspark_ckpt.model.hint_template import MARKER, generic, has_markers
from dspark_ckpt.model.report import CheckpointReport, Compatibility
from dspark_ckpt.model.rule_catalog import RULES


def report(*findings, compat=(), revision=None, t=96):
    return CheckpointReport(source="x", revision=revision, family="qwen3-dspark", architecture=None,
                            draft_vocab_size=100, input_vocab_size=100, target_vocab_size=t,
                            target_vocab_source=None, vocab_kind="padded", input_kind=None, hidden_size=16,
                            tensors=(), compatibility=compat, findings=findings)


def fails(version: str, code: str) -> Compatibility:
    return Compatibility("vllm", version, False, "e", code, (), (), True, "src")


def test_markers_match_commands_only_never_other_braces() -> None:
    assert MARKER.fullmatch("{fix --strategy trim}") and MARKER.fullmatch("{verify --engine installed}")
    for prose in ('{"markov_head_type": "vanilla"}', "{fix; rm -rf /}", "{fix --strategy $(x)}", "{draft}"):
        assert not has_markers(prose), prose


def test_no_registered_fix_names_a_command_literally() -> None:
    """A command in a rule's fix is a marker, so check can fill it in; explain shows DRAFT and T and says so."""
    for r in RULES.values():
        prose = MARKER.sub("", r.fix_template)
        assert "`dspark-ckpt fix" not in prose and "`dspark-ckpt check" not in prose, r.code
        if has_markers(r.fix_template):
            assert "DRAFT stands for the checkpoint" in r.fix and "{" not in generic(r.fix_template), r.code


def test_a_literal_hint_is_never_read_as_a_template() -> None:
    """A hint may quote a path or a server's words: `{fix}` in it stays text, it never becomes a command."""
    f = finding("DSP702", "x", hint="see /tmp/{fix}/draft")
    assert f.template is None
    out = with_runnable_hints(report(f), "d", HintInputs(("--target-vocab-size", "96")))
    assert out.findings[0].hint == "see /tmp/{fix}/draft"


def test_a_hostile_path_is_one_shell_word() -> None:
    spec = "it's $(rm -rf ~) `x`; d"
    out = with_runnable_hints(report(finding("DSP305", "m"), compat=(fails("0.29.0", "DSP305"),)), spec,
                              HintInputs(("--target-vocab-size", "96")))
    hint = out.findings[0].hint or ""
    line = hint[hint.index("dspark-ckpt fix"):hint.rindex("`")]
    assert shlex.split(line)[2] == spec
    assert shlex.split(line)[3:] == ["--target-vocab-size", "96", "--strategy", "trim", "--for", "vllm"]


def test_a_hub_repo_is_pinned_and_a_missing_t_is_named(tmp_path: Path) -> None:
    sha = "a" * 40
    hub = with_runnable_hints(report(finding("DSP305", "m"), revision=sha), "org/no-such-local-draft", HintInputs())
    assert f"`dspark-ckpt fix org/no-such-local-draft@{sha} --target-vocab-size 96 --strategy trim --for vllm " \
           "--dry-run` to see the plan, then " in (hub.findings[0].hint or "")
    no_t = with_runnable_hints(report(finding("DSP215", "m"), t=None), str(tmp_path), HintInputs())
    assert "with --target DIR or --target-vocab-size N added" in (no_t.findings[0].hint or "")
