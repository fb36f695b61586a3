"""`dspark-ckpt fix`: plan repairs for the chosen runtimes (pure), then apply them atomically (apply.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dspark_ckpt.check.hints import HintInputs, Named, target_words
from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.repair_catalog import NAMES as STRATEGIES
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.repair.actions import FixPlan, Refusal
from dspark_ckpt.runtimes.selectors import RuntimeVersion, parse_selectors
from dspark_ckpt.runtimes.serving_method import ServingMethod
from dspark_ckpt.sources.target import resolve_target

if TYPE_CHECKING:
    from dspark_ckpt.check.deploy import DeployRequest
    from dspark_ckpt.repair.apply import FixResult, apply_fix


def __getattr__(name: str) -> Any:
    """The executor (file I/O, locks) loads only when a repair is applied: planning and the CLI start without it."""
    if name in ("FixResult", "apply_fix"):
        from dspark_ckpt.repair import apply

        return getattr(apply, name)
    raise AttributeError(f"module 'dspark_ckpt.repair' has no attribute {name!r}")


__all__ = ["STRATEGIES", "FixPlan", "FixResult", "apply_fix", "fix_runtimes", "plan_fix", "plan_for"]


def fix_runtimes(selectors: Sequence[str] | None) -> list[RuntimeVersion]:
    """`all` (the default) means what it means for check: every known vLLM version and SGLang."""
    return parse_selectors(list(selectors or ["all"]))


def check_strategy(strategy: str | None) -> None:
    if strategy is not None and strategy not in STRATEGIES:
        raise UsageError(f"unknown strategy {strategy!r}", code="DSP-E060", hint=f"one of {', '.join(STRATEGIES)}")


def checked_inputs(strategy: str | None, target: TargetVocab | None) -> TargetVocab:
    """What every plan needs: a known strategy (or none) and T."""
    check_strategy(strategy)
    if target is None:
        raise UsageError("fix needs the target vocabulary T", code="DSP-E061",
                         hint="pass --target DIR or --target-vocab-size N")
    return target


def best_effort(selectors: Sequence[str] | None) -> bool:
    """`--for all` (the default) and `--for sglang` (every known SGLang release: Qwen3 DSpark is not registered
    before 0.5.16, DFlash before 0.5.11) repair for every release some repair can satisfy; a release named with `==`,
    and every vLLM version of `--for vllm`, is required."""
    return not selectors or any(s.strip().lower() in ("all", "sglang") for s in selectors)


def pinned_runtimes(selectors: Sequence[str] | None) -> tuple[str, ...]:
    """The releases named with `==`: check gates on them even where older than the draft's architecture."""
    return tuple(str(r) for text in selectors or () if "==" in text for r in parse_selectors([text]))


def required_runtimes(selectors: Sequence[str] | None) -> tuple[str, ...]:
    """What best effort may not leave out: every release named with `==` or a range, and each runtime named bare
    (at least one of its releases)."""
    required: list[str] = []
    for text in selectors or ():
        name = text.strip().lower()
        if name == "sglang":  # at least one of its releases
            required.append(name)
        elif name != "all":
            required += [str(r) for r in parse_selectors([text])]
    return tuple(dict.fromkeys(required))


def plan_for(checkpoint: str | Path, target: TargetVocab | None, runtimes: Sequence[RuntimeVersion],
             strategy: str | None = None, *, selectors: Sequence[str] | None = None,
             hints: HintInputs | None = None, served: DeployRequest | None = None) -> FixPlan:
    """Plan the repair of a draft folder from resolved inputs (the CLI resolves them once, as for check).
    `selectors`: the --for values as given (None: the default, all), which decide whether the plan is best effort.
    `hints`: the target as the user gave it, which the commands a refusal suggests repeat with the checkpoint as
    given (without it: --target-vocab-size T). `served`: the deploy's --speculative-config where it goes with this
    checkpoint (check's DeployPlan.applies): the plan, and the re-check after applying, route the draft by its method
    as check does; one that is no JSON object refuses the plan with check's code for it (DSP801, DSP802)."""
    from dspark_ckpt.repair.journal import recover_interrupted
    from dspark_ckpt.repair.plan import plan_repair
    from dspark_ckpt.repair.read import read_situation

    target = checked_inputs(strategy, target)
    folder = Path(checkpoint).absolute()
    recovered = recover_interrupted(folder)  # a half-done in-place fix is finished before anything is read
    named = Named(str(checkpoint), target_words(hints.target if hints else None, target.size))
    situation = replace(read_situation(folder, target, runtimes, served.spec if served else None), named_as=named)
    plan = plan_repair(situation, runtimes, strategy, best_effort=best_effort(selectors),
                       required=required_runtimes(selectors), pinned=pinned_runtimes(selectors))
    plan = for_deploy(plan, served, situation.method)
    return replace(plan, recovered=recovered.message()) if recovered else plan


def for_deploy(plan: FixPlan, served: DeployRequest | None, method: ServingMethod | None) -> FixPlan:
    """The plan with the deploy's speculative config it was made with (the re-check after applying is handed it)
    and the serving method its analysis derived; refused with check's code (DSP801, DSP802) where that config is
    no JSON object, for the method the draft is served with is then unknown. A folder's and a Hub repo's plan."""
    if served is None:
        return plan
    plan = replace(plan, speculative=served.spec, method=method if served.spec is not None else None)
    if served.problem is None:
        return plan
    return replace(plan, actions=(), changes=None, after=plan.before, refusal=Refusal(
        served.problem.code, f"cannot plan for the deploy: {served.problem.message}",
        "give --speculative-config the JSON object vLLM gets, or the path of a .json file holding it"))


def plan_fix(checkpoint: str | Path, *, target: str | None = None, target_vocab_size: int | None = None,
             runtimes: Sequence[str] | None = None, strategy: str | None = None) -> FixPlan:
    """Read a draft folder and plan its repair for the chosen runtimes; nothing is written."""
    check_strategy(strategy)
    return plan_for(checkpoint, resolve_target(target, target_vocab_size), fix_runtimes(runtimes), strategy,
                    selectors=runtimes)
