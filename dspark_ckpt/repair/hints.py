"""Pure: commands a refusal or a warning suggests, complete enough to paste (path, T, runtimes; built by
check/hints.py, as every hint's command is), and why a runtime cannot be satisfied by any repair."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dspark_ckpt.check.hints import Named, selectors
from dspark_ckpt.check.ranges import spans
from dspark_ckpt.model.classify import VocabKind
from dspark_ckpt.model.families import Family
from dspark_ckpt.model.repair_catalog import repairs_for
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.repair import actions as a

HUB_PREFIX = "hf://"
# selectors lives in check/hints.py (one derivation of every suggested command) and spans in check/ranges.py (verify
# names ranges too); the planner takes them from here.
__all__ = ["HUB_PREFIX", "command", "explain", "group_label", "groups", "out_args", "per_group_commands", "selectors",
           "spans", "unreachable_reason"]


def command(verb: str, named: Named, runtimes: Sequence[str], *extra: str) -> str:
    """`dspark-ckpt fix|check CHECKPOINT TARGET-FLAGS --for/--runtime R ... EXTRA`, shell-quoted: the checkpoint and
    the target as the user gave them (the target left out where it is unknown: check then runs its structural
    checks). check/hints.py builds it, as for every hint."""
    return named.command(verb, runtimes, *extra)


def group_label(runtimes: Sequence[str]) -> str:
    label = "+".join(selectors(runtimes)).replace("==", "-")
    return label.replace(">=", "-from-").replace(",<=", "-to-").replace("<=", "-to-")  # a folder name, no shell chars


def out_args(source: str, runtimes: Sequence[str]) -> tuple[str, ...]:
    """Where a per-group fix writes: its own folder beside the draft (a Hub repo: a dry run to see the plan)."""
    if source.startswith(HUB_PREFIX):
        return ("--dry-run",)
    return ("--out", f"{source.rstrip('/')}-fixed-{group_label(runtimes)}")


def explain(codes: Sequence[str]) -> str:
    shown = [c for c in dict.fromkeys(codes) if c in RULES]
    return " and ".join(f"`dspark-ckpt explain {c}`" for c in shown) or "`dspark-ckpt rules`"


def groups(runtimes: Sequence[str], before: Sequence[a.Predicted],
           options: Sequence[tuple[str, Sequence[a.Predicted]]]) -> list[tuple[str | None, list[str]]]:
    """Split the runtimes into groups one repair (or the draft as it is: None) loads on, largest first."""
    left = list(runtimes)
    out: list[tuple[str | None, list[str]]] = []
    candidates: list[tuple[str | None, Sequence[a.Predicted]]] = [*options, (None, before)]  # a tie goes to a repair
    while left:
        best: tuple[str | None, list[str]] = (None, [])
        for label, outcomes in candidates:
            loads = [o.runtime for o in outcomes if o.loads and o.runtime in left]
            if len(loads) > len(best[1]):
                best = (label, loads)
        if not best[1]:
            break
        out.append(best)
        left = [r for r in left if r not in best[1]]
    return out


def per_group_commands(named: Named, runtimes: Sequence[str], before: Sequence[a.Predicted],
                       options: Sequence[tuple[str, Sequence[a.Predicted]]]) -> str:
    parts, as_is = [], []
    for label, members in groups(runtimes, before, options):
        if label is None:
            as_is += members
        else:
            parts.append(f"`{command('fix', named, members, *out_args(named.checkpoint, members))}`")
    text = "fix once per group of runtimes, each into its own folder: " + " and ".join(parts) if parts else \
        "no repair loads on any of them"
    if as_is:
        text += f"; {', '.join(selectors(as_is))} load(s) the draft as it is"
    return text


_NO_REDUCED_VOCAB = ("SGLang's Qwen3 DSpark drafts with the target's lm_head and sizes markov_w1 and markov_w2 "
                     "by vocab_size (V): a pruned draft's D-row markov_w2 cannot be widened by any repair")


def unreachable_reason(runtime: str, family: Family, kind: VocabKind | None, before: a.Predicted,
                       tried: Sequence[tuple[str, a.Predicted]], why_not: Mapping[str, str | None]) -> str:
    """Why no repair makes `runtime` load: the known cases in words, else the codes each attempt fails with, and
    why each repair that resolves the failing code does not apply to this draft (`why_not`: plan.applicable's)."""
    # The one known case: SGLang refuses the markov_w2 of D rows that no repair can widen to V (DSP323).
    if runtime.startswith("sglang") and family is Family.QWEN3_DSPARK and kind is VocabKind.PRUNED and \
            before.error_code == "DSP323":
        return _NO_REDUCED_VOCAB
    code = before.error_code or "?"
    why = f"as it is it fails with {code} ({RULES[code].summary.rstrip('.')})" if code in RULES else "it fails"
    attempts = [f"{label} fails with {o.error_code}" for label, o in tried if o.error_code]
    refused = [f"{name} does not apply: {reason}" for name in repairs_for(code) if (reason := why_not.get(name))]
    return why + ("; " + "; ".join(attempts + refused) if attempts or refused else "; no repair applies to this draft")
