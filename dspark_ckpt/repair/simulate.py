"""Pure: what each runtime would say after a repair, by applying its effect to the DraftFacts and re-evaluating."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from dspark_ckpt.check.analysis import verdicts
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.model.severity import Severity
from dspark_ckpt.repair.actions import Predicted
from dspark_ckpt.repair.strategies import BY_NAME
from dspark_ckpt.runtimes.records import DraftFacts, Verdict
from dspark_ckpt.runtimes.selectors import RuntimeVersion

# The strategies one repair applies, in order: () is the draft as it is, (trim, trim-input) a combined repair.
Steps = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Score:
    """Lower is better: runtimes that fail to load, then error-level silent problems, then warnings."""

    failing: int
    silent_errors: int
    silent_warnings: int

    def key(self) -> tuple[int, int, int]:
        return self.failing, self.silent_errors, self.silent_warnings

    @property
    def clean(self) -> bool:
        return self.key() == (0, 0, 0)


def after_facts(facts: DraftFacts, steps: Steps) -> DraftFacts:
    """The facts a runtime would see once each strategy in `steps` is applied in turn (none: as the draft is now)."""
    before = facts
    for step in steps:
        facts = BY_NAME[step].after(facts)
    return _rebuilt(before, facts) if steps else facts


def _rebuilt(before: DraftFacts, after: DraftFacts) -> DraftFacts:
    """Each release judges the config the repair writes: the sizes it set go into config.json, and the builds
    (runtimes/config_build.py) are made again from it."""
    if after.raw_config is None:
        return after
    edited = dict(after.raw_config)
    if after.draft_vocab_size != before.draft_vocab_size:
        edited["draft_vocab_size"] = after.draft_vocab_size
    if after.vocab_size != before.vocab_size:
        edited["vocab_size"] = after.vocab_size
    if edited == dict(before.raw_config or {}):
        return after  # nothing a build reads has changed
    return replace(after, raw_config=edited, builds=())


def mapping_problems(steps: Steps, d2t_all_zero: bool, pruned: bool,
                     content: Sequence[FindingCode] = ()) -> tuple[FindingCode, ...]:
    """Content problems no verdict sees: an all-zero d2t on a pruned draft, and the `content` findings check made of
    a shipped d2t (out of range, out of order, against t2d), until a step writes or removes the d2t."""
    kept = not any(BY_NAME[step].settles_d2t for step in steps)
    if not kept:
        return ()
    all_zero: tuple[FindingCode, ...] = ("DSP401",) if d2t_all_zero and pruned else ()
    return tuple(dict.fromkeys((*all_zero, *content)))


def outcomes(vs: Sequence[Verdict]) -> tuple[Predicted, ...]:
    """A draft that loads but fails at its first draft step (SGLang) does not work there: fix counts it failing."""
    return tuple(Predicted(v.loads and v.first_step is None,
                           v.error.code if v.error else v.first_step.code if v.first_step else None,
                           tuple(i.code for i in v.silent), runtime=str(RuntimeVersion(v.runtime, v.version)))
                 for v in vs)


# The planner asks the same question again and again within one run (each strategy it tries re-simulates the draft as
# it is; each hint plans anew): the answers for the last few questions, by the facts object's identity, not its
# value: facts that merely compare equal (True and 1 in a config, a build's hf excluded from equality) never share.
_ASKED: OrderedDict[tuple[int, Steps, tuple[RuntimeVersion, ...]], tuple[DraftFacts, tuple[Predicted, ...]]] = \
    OrderedDict()
_KEPT = 32


def simulate(facts: DraftFacts, steps: Steps, runtimes: Sequence[RuntimeVersion]) -> tuple[Predicted, ...]:
    key = (id(facts), tuple(steps), tuple(runtimes))
    asked = _ASKED.get(key)
    if asked is not None and asked[0] is facts:
        _ASKED.move_to_end(key)
        return asked[1]
    answer = outcomes(verdicts(after_facts(facts, steps), runtimes))
    _ASKED[key] = (facts, answer)  # holding `facts` keeps its id from being reused while the answer is kept
    if len(_ASKED) > _KEPT:
        _ASKED.popitem(last=False)
    return answer


def score(results: Sequence[Predicted], extra: Sequence[FindingCode] = ()) -> Score:
    silent = [code for r in results for code in r.silent_codes] + list(extra)
    errors = sum(1 for code in silent if RULES[code].severity is Severity.ERROR)
    warnings = sum(1 for code in silent if RULES[code].severity is Severity.WARNING)
    return Score(sum(1 for r in results if not r.loads), errors, warnings)


def problem_codes(results: Sequence[Predicted], extra: Sequence[FindingCode] = ()) -> set[FindingCode]:
    codes = {r.error_code for r in results if r.error_code} | {c for r in results for c in r.silent_codes}
    return codes | set(extra)
