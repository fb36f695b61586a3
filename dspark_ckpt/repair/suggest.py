"""Pure: the fix a finding's hint may name for this checkpoint: its own strategy where fix plans a change with it,
else the first strategy of the table that does (for that code), else none, and then what to re-export instead."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from dspark_ckpt.check.analysis import Analysis
from dspark_ckpt.check.hints import selectors
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.families import traits
from dspark_ckpt.model.hint_template import Command
from dspark_ckpt.repair import best_effort, pinned_runtimes, required_runtimes
from dspark_ckpt.repair.actions import FixPlan
from dspark_ckpt.repair.plan import plan_repair, unreachable
from dspark_ckpt.repair.read import situation_from
from dspark_ckpt.repair.simulate import problem_codes
from dspark_ckpt.repair.situation import Situation
from dspark_ckpt.repair.strategies import BY_NAME, TABLE, repairs_for
from dspark_ckpt.runtimes.selectors import parse_selectors

Suggest = Callable[[FindingCode, Command, Sequence[str]], str | list[str] | None]
# A command a refusal names for the folder planning saw: in a hint it becomes a marker, which check fills in with
# the checkpoint and target as the user gave them (the planner here knows neither).
_PLANNED_COMMAND = re.compile(r"`dspark-ckpt (check|fix) [^`]*`")


def _plan(s: Situation, strategy: str | None, chosen: tuple[str, ...]) -> FixPlan:
    """What `fix --strategy strategy --for <chosen>` would plan (nothing is written)."""
    named = selectors(chosen)
    return plan_repair(s, parse_selectors(named), strategy, best_effort=best_effort(named),
                       required=required_runtimes(named), pinned=pinned_runtimes(named))


def _changes(plan: FixPlan, code: FindingCode) -> tuple[bool, str]:
    """Whether the plan writes a repair that leaves no `code` behind (as planning simulates it), and else what fix
    would say."""
    why = plan.refusal.message if plan.refusal else plan.note or "nothing to do"
    why = _PLANNED_COMMAND.sub(lambda m: "{" + m[1] + "}", why)
    return plan.changes_anything and code not in problem_codes(plan.after), why


def _order(code: FindingCode) -> list[str]:
    """Every strategy of the table, those that resolve `code` first, each group in the table's preference order."""
    first = repairs_for(code)
    return [*first, *(x.name for x in TABLE if x.name not in first)]


def suggester(analysis: Analysis) -> Suggest | None:
    """check/hints.py asks it for each fix marker: None keeps the hint, a text (markers allowed) replaces it."""
    if analysis.facts is None:
        return None
    s = situation_from(analysis)
    plans: dict[tuple[str | None, tuple[str, ...]], FixPlan] = {}  # one plan per (strategy, runtimes), any code

    def planned(strategy: str | None, chosen: Sequence[str]) -> FixPlan:
        key = (strategy, tuple(chosen))
        if key not in plans:
            plans[key] = _plan(s, *key)
        return plans[key]

    def suggest(code: FindingCode, command: Command, chosen: Sequence[str]) -> str | list[str] | None:
        works, why = _changes(planned(command.strategy, chosen), code)
        if works:
            return None
        # releases no repair can make load (EAGLE-3 Llama's fc fixed at three before vLLM 0.22): the same command,
        # for the others, where it repairs them
        releases = parse_selectors(selectors(tuple(chosen)))
        out = unreachable(s, releases)
        rest = [str(r) for r in releases if str(r) not in out]
        if out and rest and _changes(planned(command.strategy, tuple(rest)), code)[0]:
            return rest
        for name in _order(code):
            if name != command.strategy and _changes(planned(name, chosen), code)[0]:
                summary = BY_NAME[name].summary
                return f"{summary[0].upper()}{summary[1:]} ({{fix --strategy {name}}})."
        reexport = BY_NAME[command.strategy].reexport if command.strategy else "re-export the draft"
        if s.facts is not None and not traits(s.facts.family).markov_head:  # name only what the draft has
            reexport = reexport.replace("lm_head and markov_w2", "lm_head").replace("markov_w2 of", "lm_head of")
        return f"fix cannot repair this checkpoint ({why.rstrip('.')}): {reexport}."

    return suggest
