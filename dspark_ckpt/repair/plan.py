"""Pure: what was read from a draft -> a frozen repair plan for the chosen runtimes, or a refusal saying why not."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from dspark_ckpt.check.hints import Named
from dspark_ckpt.model.classify import VocabKind
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.model.rule_catalog import RULES, blocks_fix
from dspark_ckpt.model.severity import Severity
from dspark_ckpt.repair import actions as a
from dspark_ckpt.repair import hints
from dspark_ckpt.repair.files import file_changes, lone_surrogates
from dspark_ckpt.repair.simulate import Steps, after_facts, mapping_problems, problem_codes, score, simulate
from dspark_ckpt.repair.situation import Situation
from dspark_ckpt.repair.strategies import (
    BY_NAME,
    CONFIG_FIRST,
    OPTIONAL_FIRST,
    STRATEGIES,
    TABLE,
    step_actions,
)
from dspark_ckpt.runtimes.records import DraftFacts
from dspark_ckpt.runtimes.registered import predates
from dspark_ckpt.runtimes.selectors import RuntimeVersion, parse_selectors

# check's findings of a d2t's contents
D2T_CONTENT_CODES: frozenset[FindingCode] = frozenset({"DSP402", "DSP403", "DSP405"})
Option = tuple[tuple[int, int, int], int, Steps, tuple[a.Predicted, ...]]  # (score, preference, steps, outcomes)


def applicable(s: Situation) -> dict[str, str | None]:
    """Each strategy -> None when it applies to this draft, else why it does not. The config-only repairs come
    first (CONFIG_FIRST): the others are judged on the draft as those leave it."""
    assert s.facts is not None
    first = {x.name: x.why_not(s, s.facts) for x in TABLE if x.name in CONFIG_FIRST}
    f = after_facts(s.facts, tuple(n for n, why in first.items() if why is None))
    return {**{x.name: x.why_not(s, f) for x in TABLE if x.name not in CONFIG_FIRST}, **first}


def candidates(why: dict[str, str | None], names: Sequence[str] = STRATEGIES) -> list[Steps]:
    """Each applicable strategy, in preference order; an output trim also with trim-input, right after it alone
    (so the plain trim wins whenever the chosen runtimes do not need V = T)."""
    needed = tuple(n for n in CONFIG_FIRST if why.get(n) is None and n not in OPTIONAL_FIRST)
    optional = tuple(n for n in OPTIONAL_FIRST if why.get(n) is None)
    out: list[Steps] = []
    for first in [needed] + ([(*needed, *optional)] if optional else []):  # config-only repairs lead each candidate
        if first and any(n in names for n in first):
            out.append(first)
        for name in (n for n in names if why[n] is None and n not in CONFIG_FIRST):
            out.append((*first, name))
            if BY_NAME[name].with_input_trim and why[a.TRIM_INPUT] is None:
                out.append((*first, name, a.TRIM_INPUT))
    return out


def label(steps: Steps) -> str:
    return " + ".join(steps)


def lead(steps: Steps) -> str:
    """The strategy a plan is named by: its first step that is not a config-only prelude."""
    return next((step for step in steps if step not in CONFIG_FIRST), steps[0])


def _resolved(before: set[FindingCode], after: set[FindingCode]) -> list[FindingCode]:
    return sorted(before - after, key=lambda c: (-RULES[c].severity.rank, c))


def strategy_actions(s: Situation, steps: Steps, resolved: Sequence[FindingCode]) -> tuple[a.Action, ...]:
    return tuple(x for step in steps for x in step_actions(s, step, resolved))


def d2t_content(s: Situation) -> tuple[FindingCode, ...]:
    """The errors check found in a shipped d2t's contents (DSP401 is counted by mapping_problems itself)."""
    return tuple(x.code for x in s.findings if x.code in D2T_CONTENT_CODES)


def _blocking(s: Situation) -> list[Finding]:
    """Errors fix does not repair: a broken header, layout or config must be fixed first."""
    return [x for x in s.findings if blocks_fix(x.code, x.severity)]


def _fails(results: Sequence[a.Predicted]) -> str:
    return ", ".join(f"{r.runtime} ({r.error_code})" for r in results if not r.loads)


def plan_repair(s: Situation, runtimes: Sequence[RuntimeVersion], strategy: str | None = None, *,
                best_effort: bool = False, required: Sequence[str] = (), pinned: Sequence[str] = ()) -> a.FixPlan:
    """Pick the repair whose result loads on every chosen runtime with the fewest silent problems. `best_effort`
    (`--for all`, `--for sglang`): runtimes no repair can make load are left out, named in a DSP505 warning, and the
    repair is planned for the others. `required`: releases named with `==`, never left out, and runtimes named bare
    (`sglang`), of which at least one release must stay. Releases older than the draft's architecture (they do not
    register it: vLLM 0.22 and a DSpark draft) are left out, named in a DSP505 warning, unless every chosen release
    is one (`--for vllm==0.22.0` alone: refused, as it can never load there), or it is `pinned` (named with `==`:
    check gates on it, so fix must not leave it out)."""
    older = [r for r in _older(s, runtimes) if r not in pinned]
    if older and len(older) < len(runtimes):
        plan = plan_repair(s, [r for r in runtimes if str(r) not in older], strategy, best_effort=best_effort,
                           required=required, pinned=pinned)
        if plan.refusal is not None:
            return plan
        warning = finding("DSP505", f"not repaired for {hints.spans(older)}, older than the draft's architecture "
                                    f"{_architecture(s)}: no release before its registration can load it")
        return replace(plan, warnings=(*plan.warnings, warning),
                       not_repaired_for=(*older, *plan.not_repaired_for), older_than_architecture=tuple(older))
    if not best_effort:  # the unreachable runtimes matter only to a refused plan of fix's own choosing
        plan = _plan(s, runtimes, strategy)
        if strategy is None and plan.refusal is not None and (dropped := unreachable(s, runtimes)):
            return replace(plan, refusal=_unreachable_refusal(s, runtimes, dropped))
        return plan
    dropped = unreachable(s, runtimes)
    kept_of = {r.runtime for r in runtimes if str(r) not in dropped}
    if any(name in dropped or (name in {r.runtime for r in runtimes} and name not in kept_of) for name in required):
        best_effort = False
    if not best_effort or not dropped or len(dropped) == len(runtimes):
        plan = _plan(s, runtimes, strategy)
        if dropped and strategy is None and plan.refusal is not None:
            return replace(plan, refusal=_unreachable_refusal(s, runtimes, dropped))
        return plan
    kept = [r for r in runtimes if str(r) not in dropped]
    plan = _plan(s, kept, strategy)
    assert s.facts is not None
    reasons = _reasons(dropped)
    kept_names = ", ".join(hints.selectors([str(r) for r in kept]))
    warning = finding("DSP505", f"not repaired for {hints.spans(list(dropped))}, which no repair can make load. {reasons}. "
                                f"Planned for {kept_names} only (--for all and --for sglang are best effort; name a "
                                "release with --for runtime==X to require it)",
                      hint="see what fails there: `" + hints.command("check", s.named, list(dropped)) + "`")
    return replace(plan, warnings=(warning,), not_repaired_for=tuple(dropped))


def _architecture(s: Situation) -> str | None:
    names = s.config.get("architectures")
    return names[0] if isinstance(names, list) and names and isinstance(names[0], str) else None


def _older(s: Situation, runtimes: Sequence[RuntimeVersion]) -> list[str]:
    """The chosen releases that predate the draft's architecture (registered.predates), of every runtime alike, as
    check's gate leaves them out (issue 41)."""
    arch = _architecture(s)
    return [str(r) for r in runtimes if predates(r.runtime, r.version, arch)]


def _reasons(dropped: dict[str, str]) -> str:
    by_reason: dict[str, list[str]] = {}
    for name, why in dropped.items():
        by_reason.setdefault(why, []).append(name)
    if len(by_reason) == 1:
        return next(iter(by_reason))
    return "; ".join(f"{hints.spans(names)}: {why}" for why, names in by_reason.items())


def _unreachable_refusal(s: Situation, runtimes: Sequence[RuntimeVersion], dropped: dict[str, str]) -> a.Refusal:
    """DSP502 for runtimes named explicitly that no repair can satisfy, with the command that repairs for the
    others (among those named, else among every known runtime)."""
    assert s.facts is not None
    reasons = _reasons(dropped)
    pool = [r for r in runtimes if str(r) not in dropped]
    if not pool:
        every = parse_selectors(["all"])
        pool = [r for r in every if str(r) not in unreachable(s, every)]
    rest = [str(r) for r in pool]
    # every one fails on an edit only the draft's trainer can make (its rule's fix: the mask token id, DSP373)
    by_hand = _by_hand(s, runtimes, dropped)
    there = f"for {hints.spans(list(dropped))}, " + (by_hand[0].lower() + by_hand[1:] if by_hand else
                                                     "re-export the draft in the layout those releases load")
    if not rest:
        hint = there if by_hand else "no runtime can load this draft: re-export it"
    elif not _plan(s, pool, None).changes_anything:  # a `fix --for` those releases would do nothing
        loads = all(p.loads for p in simulate(s.facts, (), pool))
        where = ", ".join(hints.selectors(rest))
        hint = f"{f'it loads on {where} as it is' if loads else f'no repair improves it on {where} either'}; {there}"
    else:
        hint = f"`{hints.command('fix', s.named, rest)}` repairs it for {', '.join(hints.selectors(rest))}" + \
            (f"; {there}" if by_hand else "")
    return a.Refusal("DSP502", f"no repair makes this draft load on {hints.spans(list(dropped))}: {reasons}", hint)


def _by_hand(s: Situation, runtimes: Sequence[RuntimeVersion], dropped: dict[str, str]) -> str | None:
    """The hand edit that makes the `dropped` releases load, where each fails as it is with the same finding and
    that finding's rule names no repair strategy but a plain edit of the config (its documented fix, no command in
    it). The draft as it is on `runtimes`: the question unreachable() asked (simulate keeps its answer)."""
    assert s.facts is not None
    codes = {p.error_code for p in simulate(s.facts, (), runtimes) if p.runtime in dropped}
    code = next(iter(codes)) if len(codes) == 1 else None
    rule = RULES.get(code) if code else None
    if rule is None or rule.repair is not None or "dspark-ckpt" in rule.fix or "`fix`" in rule.fix:
        return None
    return rule.fix


def unreachable(s: Situation, runtimes: Sequence[RuntimeVersion]) -> dict[str, str]:
    """Each runtime that neither the draft as it is nor any applicable repair loads on -> why, in words."""
    f = s.facts
    if f is None or _blocking(s) or (f.draft_vocab_size < f.target_vocab_size and not s.vocab.lm_head
                                      and f.honoured_draft_vocab is None):
        return {}
    # by release: a release with no verdict for the draft (a class it rewrites the draft to that is not modelled,
    # vLLM 0.34's DFlash2 with no_rope_layers) has no prediction, so the tuples do not line up with `runtimes`
    before = {p.runtime: p for p in simulate(f, (), runtimes)}
    why = applicable(s)
    tried = [(label(steps), {p.runtime: p for p in simulate(f, steps, runtimes)}) for steps in candidates(why)]
    kind = f.kind
    return {r: hints.unreachable_reason(r, f.family, kind, was, [(n, o[r]) for n, o in tried if r in o], why)
            for r, was in before.items() if not was.loads and not any(o[r].loads for _, o in tried if r in o)}


def _plan(s: Situation, runtimes: Sequence[RuntimeVersion], strategy: str | None) -> a.FixPlan:
    names = tuple(str(r) for r in runtimes)
    f = s.facts
    base = {"source": s.source, "runtimes": names, "fingerprints": s.fingerprints,
            "target_omni": f.target_is_omni if f else False, "target": s.target, "runtime_versions": tuple(runtimes),
            "named_as": s.named}
    if f is None or _blocking(s):
        shown = "; ".join(f"{x.code} {x.message}" for x in _blocking(s)[:3]) or "family, vocab sizes or T unknown"
        check = hints.command("check", s.named, names)
        return a.FixPlan(**base, target_vocab_size=f.target_vocab_size if f else 0, strategy=strategy,  # type: ignore[arg-type]
                         actions=(), before=(), after=(),
                         refusal=a.Refusal("DSP501", f"cannot plan a repair: {shown}",
                                           f"fix the checkpoint's structure or config first: `{check}` lists it"))
    pruned = f.kind is VocabKind.PRUNED
    before = simulate(f, (), runtimes)

    def extra(steps: Steps) -> tuple[FindingCode, ...]:
        return mapping_problems(steps, s.d2t_all_zero, pruned, d2t_content(s))

    def plan(**kw: Any) -> a.FixPlan:
        return a.FixPlan(**base, target_vocab_size=f.target_vocab_size, before=before, **kw)  # type: ignore[arg-type]

    why = applicable(s)
    if pruned and not s.vocab.lm_head and why[a.SET_DRAFT_VOCAB] is not None:
        return plan(strategy=strategy, actions=(), after=before, refusal=a.Refusal(
            "DSP501", "cannot be repaired: a pruned draft (D < T) without its own lm_head; the trained head weights "
                      "do not exist and the target's T-row head cannot stand in for a D-row one",
            "re-export the draft with its lm_head"))
    current = score(before, extra(()))
    ctx = _Context(s.named, names)
    if strategy is not None:
        return _forced(s, strategy, why, runtimes, before, current.failing == 0 and not extra(()), plan, ctx)
    options = _options(f, candidates(why), runtimes, extra)  # all of them unless one is clean (then it wins)
    loading = sorted(o for o in options if o[0][0] == 0)
    if current.clean or (loading and loading[0][0] >= current.key()) or (not loading and current.failing == 0
                                                                          and not current.silent_errors):
        note = "nothing to repair for " + ", ".join(names) if current.clean else "no repair improves this draft"
        return plan(strategy=None, actions=(), after=before, note=note)
    if not loading:  # if it already loads everywhere, name the silent errors no repair removes
        input_note = why[a.TRIM_INPUT] if f.vocab_size > f.target_vocab_size else None
        refusal = _left(before, extra(()), ctx) if current.failing == 0 else _conflict(before, options, ctx,
                                                                                        input_note)
        return plan(strategy=None, actions=(), after=before, refusal=refusal)
    key, _, steps, after = loading[0]
    if key[1]:
        return plan(strategy=None, actions=(), after=after, refusal=_left(after, extra(steps), ctx))
    return _planned(s, steps, before, after, extra, plan, ctx)


@dataclass(frozen=True, slots=True)
class _Context:
    """What a runnable hint needs: the checkpoint and target as given, and the runtimes chosen."""

    named: Named
    runtimes: tuple[str, ...]

    def fix(self, runtimes: Sequence[str] | None = None, *extra: str) -> str:
        return f"`{hints.command('fix', self.named, runtimes or self.runtimes, *extra)}`"

    def check(self) -> str:
        return f"`{hints.command('check', self.named, self.runtimes)}`"


def _option(f: DraftFacts, steps: Steps, preference: int, runtimes: Sequence[RuntimeVersion],
            extra: Callable[[Steps], tuple[FindingCode, ...]]) -> Option:
    after = simulate(f, steps, runtimes)
    return score(after, extra(steps)).key(), preference, steps, after


def _options(f: DraftFacts, steps: Sequence[Steps], runtimes: Sequence[RuntimeVersion],
             extra: Callable[[Steps], tuple[FindingCode, ...]]) -> list[Option]:
    """Each candidate's option, in preference order, up to the first clean one: a clean score (0, 0, 0) is the
    lowest there is, so no later candidate can win over it (ties go to the preferred) and none is simulated."""
    options: list[Option] = []
    for i, st in enumerate(steps):
        options.append(_option(f, st, i, runtimes, extra))
        if options[-1][0] == (0, 0, 0):
            break
    return options


def _best(f: DraftFacts, steps: Sequence[Steps], runtimes: Sequence[RuntimeVersion],
          extra: Callable[[Steps], tuple[FindingCode, ...]]) -> Option:
    return min(_options(f, steps, runtimes, extra))


def _left(after: Sequence[a.Predicted], extra: Sequence[FindingCode], ctx: _Context) -> a.Refusal:
    left = sorted({c for r in after for c in r.silent_codes if RULES[c].severity is Severity.ERROR} | set(extra))
    return a.Refusal("DSP501", f"cannot be fully repaired: {', '.join(left)} would remain (see {ctx.check()})",
                     f"re-export the draft; {hints.explain(left)} says why")


def _planned(s: Situation, steps: Steps, before: Sequence[a.Predicted], after: Sequence[a.Predicted],
             extra: Callable[[Steps], tuple[FindingCode, ...]], plan: Callable[..., a.FixPlan],
             ctx: _Context) -> a.FixPlan:
    """The plan's strategy is the leading step: a trim that also trims the input side is still `trim`."""
    resolved = _resolved(problem_codes(before, extra(())), problem_codes(after, extra(steps)))
    actions = strategy_actions(s, steps, resolved)
    changes = file_changes(s, actions)
    if unwritable := lone_surrogates(changes):
        return plan(strategy=lead(steps), actions=(), after=after, refusal=a.Refusal(
            "DSP506", f"cannot write the repair: {'; '.join(unwritable)}, which is not a Unicode character and "
                      "cannot be written to a UTF-8 JSON file; nothing was written",
            f"replace that escape by the text it stands for (or remove it), then run {ctx.fix()}"))
    return plan(strategy=lead(steps), actions=actions, after=after, changes=changes)


def _conflict(before: Sequence[a.Predicted], options: Sequence[Option], ctx: _Context,
              input_note: str | None = None) -> a.Refusal:
    if not options:
        codes = [r.error_code for r in before if r.error_code]
        return a.Refusal("DSP501", f"no repair applies: it fails on {_fails(before)}, which fix cannot repair",
                         f"{hints.explain(codes)} says why")
    parts = [f"as it is, it fails on {_fails(before)}"]
    parts += [f"{label(steps)} fails on {_fails(after)}" for _, _, steps, after in options]
    parts += [f"trim-input does not apply ({input_note})"] if input_note else []
    tried = [(label(steps), after) for _, _, steps, after in options]
    return a.Refusal("DSP502", "no single repair loads on every chosen runtime: " + "; ".join(parts),
                     hints.per_group_commands(ctx.named, ctx.runtimes, before, tried))


def _errors_left(s: Situation, before: Sequence[a.Predicted], extra: Sequence[FindingCode]) -> list[FindingCode]:
    """The errors of the draft as it is that a repair could be asked for: load failures, error-level silent
    problems, and check's findings of the d2t's contents."""
    codes = problem_codes(before, extra) | {x.code for x in s.findings if x.code in D2T_CONTENT_CODES}
    return sorted(c for c in codes if c in RULES and RULES[c].severity is Severity.ERROR)


def _applicable_for(why: dict[str, str | None], errors: Sequence[FindingCode]) -> list[str]:
    """The strategies that apply to this draft and resolve one of `errors`, in the table's preference order."""
    return [x.name for x in TABLE if why.get(x.name) is None and set(x.resolves) & set(errors)]


def _forced(s: Situation, strategy: str, why: dict[str, str | None], runtimes: Sequence[RuntimeVersion],
            before: tuple[a.Predicted, ...], loads_now: bool, plan: Callable[..., a.FixPlan], ctx: _Context) -> a.FixPlan:
    f = s.facts
    assert f is not None
    pruned = f.kind is VocabKind.PRUNED

    def extra(steps: Steps) -> tuple[FindingCode, ...]:
        return mapping_problems(steps, s.d2t_all_zero, pruned, d2t_content(s))

    if why[strategy] is not None:
        errors = _errors_left(s, before, extra(()))
        if loads_now and not errors:
            return plan(strategy=strategy, actions=(), after=before,
                        note=f"{strategy} does not apply ({why[strategy]}); nothing to do")
        instead = next((name for name in _applicable_for(why, errors) if _forced(
            s, name, why, runtimes, before, loads_now, plan, ctx).changes_anything), None)
        left = f", while errors remain ({', '.join(errors)})" if errors else ""
        if instead is None:
            return plan(strategy=strategy, actions=(), after=before, refusal=a.Refusal(
                "DSP503", f"{strategy} does not apply: {why[strategy]}{left}; no strategy applies to this draft",
                f"{BY_NAME[strategy].reexport}; {hints.explain(errors)} says why"))
        return plan(strategy=strategy, actions=(), after=before, refusal=a.Refusal(
            "DSP503", f"{strategy} does not apply: {why[strategy]}{left}; {instead} applies",
            f"{ctx.fix(None, '--strategy', instead)} repairs it"))
    # A forced trim still takes trim-input along when (and only when) that scores better for the chosen runtimes.
    _, _, steps, after = _best(f, candidates(why, (strategy,)), runtimes, extra)
    if any(not r.loads for r in after):
        loads = [r.runtime for r in after if r.loads]
        narrower = f"{ctx.fix(loads, '--strategy', strategy)} repairs for the runtimes it loads on, or " if loads \
            else ""
        return plan(strategy=strategy, actions=(), after=after, refusal=a.Refusal(
            "DSP503", f"{label(steps)} would break {_fails(after)}",
            f"{narrower}omit --strategy to let fix choose: {ctx.fix()}"))
    if score(after, extra(steps)).silent_errors:
        return plan(strategy=strategy, actions=(), after=after, refusal=_left(after, extra(steps), ctx))
    return _planned(s, steps, before, after, extra, plan, ctx)
