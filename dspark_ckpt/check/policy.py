"""Which findings count: select/ignore by code prefix (flake8's DecisionEngine), --fail-on and --exit-zero."""

from __future__ import annotations

from dataclasses import dataclass, replace

from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import Report
from dspark_ckpt.model.rule_catalog import RULES

ALL = ("DSP",)  # the default selection: every registered code


@dataclass(frozen=True, slots=True)
class Policy:
    """The resolved policy. `select` already includes extend-select; prefixes are upper-case."""

    select: tuple[str, ...] = ALL
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.ERROR
    exit_zero: bool = False

    def is_selected(self, code: str) -> bool:
        """Longest matching prefix wins; a tie goes to ignore, as in flake8's DecisionEngine."""
        chosen = _longest(code, self.select)
        if chosen is None:
            return False
        ignored = _longest(code, self.ignore)
        return ignored is None or len(chosen) > len(ignored)

    def fails(self, finding: Finding) -> bool:
        return finding.severity.rank >= self.fail_on.rank


def _longest(code: str, prefixes: tuple[str, ...]) -> str | None:
    return max((p for p in prefixes if code.startswith(p)), key=len, default=None)


def normalize(prefixes: list[str] | tuple[str, ...], option: str) -> tuple[str, ...]:
    """Upper-case, split commas, and refuse a prefix that matches no registered code.

    A mistyped `--ignore DSP3O1` that matched nothing would silently change what the gate enforces.
    """
    out: list[str] = []
    for raw in prefixes:
        for part in (p.strip().upper() for p in raw.split(",")):
            if not part:
                continue
            if part != "ALL" and not any(code.startswith(part) for code in RULES):
                raise UsageError(f"{option} {part!r} matches no finding code", code="DSP-E020",
                                 hint="`dspark-ckpt rules` lists the codes; prefixes such as DSP3 or DSP32 work")
            out.append("DSP" if part == "ALL" else part)
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True, slots=True)
class Layer:
    """One source of policy keys (the settings file, then the command line); None means 'not set here'."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] | None = None
    fail_on: Severity | None = None
    exit_zero: bool | None = None


def resolve(*layers: Layer) -> Policy:
    """Apply layers in order: a later `select` resets the selection (extend-selects before it included)."""
    select: tuple[str, ...] = ALL
    ignore: tuple[str, ...] = ()
    policy = Policy()
    for layer in layers:
        if layer.select is not None:
            select = layer.select
        select = tuple(dict.fromkeys(select + layer.extend_select))
        if layer.ignore is not None:
            ignore = layer.ignore
        if layer.fail_on is not None:
            policy = replace(policy, fail_on=layer.fail_on)
        if layer.exit_zero is not None:
            policy = replace(policy, exit_zero=layer.exit_zero)
    return replace(policy, select=select, ignore=ignore)


def apply(report: Report, policy: Policy) -> Report:
    """The report a user asked to see: findings outside the selection are dropped; facts stay as they are."""
    kept = tuple(replace(c, findings=tuple(f for f in c.findings if policy.is_selected(f.code)))
                 for c in report.checkpoints)
    return replace(report, checkpoints=kept)


def hidden_count(before: Report, after: Report) -> int:
    return len(before.findings) - len(after.findings)
