"""Which findings count: select/ignore by code prefix (flake8's DecisionEngine), --fail-on and --exit-zero."""

from __future__ import annotations

from dataclasses import dataclass, replace

from dspark_ckpt.check.no_verdict import NO_VERDICT
from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import CheckpointReport, Report
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.runtimes.registered import predates

ALL = ("DSP",)  # the default selection: every registered code

# The runtimes whose load problems fail a run that did not choose its runtimes (no --runtime, no `runtime` in the
# settings file). The matrix still shows every known runtime; only the exit code is gated. vLLM is where these
# drafts are served, and a draft correct for it must pass by default: SGLang's Qwen3 DSpark has no reduced-vocab
# support at all (any d2t is an error), so gating on it would fail every pruned draft that loads on every vLLM.
# Naming runtimes (`--runtime sglang`, `--runtime all`, or `runtime = [...]`) gates on exactly the ones named.
# Either way, a release older than the draft's architecture (it does not register the name, a later release of the
# same runtime does: vLLM 0.22 or SGLang 0.5.10 and a DSpark draft) is shown but does not gate unless pinned with
# `==`: no draft of that kind can load there, as `fix --for vllm` does not repair for it. That holds for every
# runtime alike, so `--runtime all` and `runtime = ["vllm", "sglang"]` are green on a correct draft.
DEFAULT_GATE: tuple[str, ...] = ("vllm",)
PREDATES = "releases older than the draft's architecture"  # how the verdict line names those entries
NO_VERDICT_ALLOWED = "releases without a verdict, --allow-no-verdict"


@dataclass(frozen=True, slots=True)
class Policy:
    """The resolved policy. `select` already includes extend-select; prefixes are upper-case."""

    select: tuple[str, ...] = ALL
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.ERROR
    exit_zero: bool = False
    gate: tuple[str, ...] | None = None  # runtimes whose contract findings fail the run; None: every one evaluated
    # releases named one by one (`--runtime vllm==0.22.0`): they gate even where older than the draft's architecture
    exact: frozenset[str] = frozenset()
    # (checkpoint source, its policy) where a settings file nearer the checkpoint, or a `per-path` entry, set
    # another one than the run's (cli/run.py `Runs`); every other checkpoint has this one
    per_source: tuple[tuple[str, Policy], ...] = ()
    # --allow-no-verdict / `allow-no-verdict = true`: a release dspark-ckpt could not judge (DSP368) is shown, not gated
    allow_no_verdict: bool = False

    def accepting_no_verdict(self, allowed: bool) -> Policy:
        """This policy, and every checkpoint's own, with the releases without a verdict outside the gate (allowed)
        or in it: the command line's choice over every settings file's."""
        return replace(self, allow_no_verdict=allowed,
                       per_source=tuple((s, replace(p, allow_no_verdict=allowed)) for s, p in self.per_source))

    def for_(self, checkpoint: CheckpointReport) -> Policy:
        """The policy that decides this checkpoint's findings."""
        for source, policy in self.per_source:
            if source == checkpoint.source:
                return policy
        return self

    def is_selected(self, code: str) -> bool:
        """Longest matching prefix wins; a tie goes to ignore, as in flake8's DecisionEngine."""
        chosen = _longest(code, self.select)
        if chosen is None:
            return False
        ignored = _longest(code, self.ignore)
        return ignored is None or len(chosen) > len(ignored)

    def fails(self, finding: Finding) -> bool:
        return finding.severity.rank >= self.fail_on.rank

    def gates(self, finding: Finding, checkpoint: CheckpointReport) -> bool:
        """It fails the run: at or above --fail-on, and in the gate (`in_gate`), by the checkpoint's policy."""
        own = self.for_(checkpoint)
        return own.fails(finding) and own.in_gate(finding, checkpoint)

    def in_gate(self, finding: Finding, checkpoint: CheckpointReport) -> bool:
        """Not a problem of runtimes outside the gate only, whatever its severity (the verdict's counts).

        A finding whose code some runtime of the matrix reports (its load error or a silent problem) belongs to those
        runtimes; any other finding (headers, layout, config, mapping contents) is the draft's own and always counts.
        """
        own = self.for_(checkpoint)
        if own.allow_no_verdict and finding.code == NO_VERDICT:
            return False
        named = [o for o in _outcomes(checkpoint) if finding.code in o.codes]
        return not named or any(own.counts(o, checkpoint) for o in named)

    def counts(self, outcome: ReleaseOutcome, checkpoint: CheckpointReport) -> bool:
        """This runtime release's outcome (its load, or its start-up with --speculative-config) gates the run: a
        release of a gated runtime (every runtime named, else vLLM), except a release older than the draft's
        architecture (registered.predates, for every runtime alike) that was not pinned with `==`: no draft of its
        kind can load there."""
        runtime, version = outcome.runtime, outcome.version
        if self.gate is not None and runtime not in self.gate:
            return False
        return f"{runtime}=={version}" in self.exact or not predates(runtime, version, checkpoint.architecture)

    def failing(self, report: Report) -> tuple[Finding, ...]:
        """The findings that decide exit 1 (before --exit-zero)."""
        return tuple(f for c in report.checkpoints for f in c.findings if self.gates(f, c))

    def outside_gate(self, report: Report) -> tuple[Finding, ...]:
        """At or above --fail-on, but only on runtimes the run shows without gating on them."""
        return tuple(f for c in report.checkpoints for f in c.findings
                     if self.for_(c).fails(f) and not self.gates(f, c))

    def ungated_runtimes(self, report: Report) -> tuple[str, ...]:
        """The runtimes in the matrix that do not gate (for the verdict line): `sglang` for a runtime outside the
        gate, `vllm, sglang releases older than the draft's architecture` for the rest."""
        outside: dict[str, None] = {}
        older: dict[str, None] = {}
        for c in report.checkpoints:
            own = self.for_(c)
            for o in _outcomes(c):
                if not own.counts(o, c):
                    (outside if own.gate is not None and o.runtime not in own.gate else older)[o.runtime] = None
        named = list(outside)
        if older:
            named.append(f"{', '.join(older)} {PREDATES}")
        if any(own.allow_no_verdict and f.code == NO_VERDICT for c in report.checkpoints
               for own in (self.for_(c),) for f in c.findings):
            named.append(NO_VERDICT_ALLOWED)
        return tuple(named)


@dataclass(frozen=True, slots=True)
class ReleaseOutcome:
    """One release's load (or, with a deploy preflight, start-up) in a report, and the codes it reports."""

    runtime: str
    version: str
    codes: tuple[str | None, ...]


def _outcomes(checkpoint: CheckpointReport) -> list[ReleaseOutcome]:
    """Every release's load and, with a deploy preflight, start-up."""
    out = [ReleaseOutcome(e.runtime, e.version, (e.error_code, *e.silent_codes)) for e in checkpoint.compatibility]
    if checkpoint.deploy is not None:
        out += [ReleaseOutcome(d.runtime, d.version, (d.error_code, *d.note_codes))
                for d in checkpoint.deploy.runtimes]
    return out


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
    return replace(report, checkpoints=tuple(selected(c, policy) for c in report.checkpoints))


def selected(checkpoint: CheckpointReport, policy: Policy) -> CheckpointReport:
    """`apply` for one checkpoint (verify keeps each checkpoint's report beside what torch observed)."""
    own = policy.for_(checkpoint)
    return replace(checkpoint, findings=tuple(f for f in checkpoint.findings if own.is_selected(f.code)))


def hidden_count(before: Report, after: Report) -> int:
    return len(before.findings) - len(after.findings)
