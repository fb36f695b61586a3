"""Pure: the dspark-ckpt commands a hint suggests, filled in for one checkpoint of one run, ready to paste.

A finding's hint names its command with a marker (model/hint_template.py). Here each marker becomes the command
line: the checkpoint as the user gave it, the target as given (or the T the report used), the runtimes the
finding is about, shell-quoted. Every renderer prints the hint as it leaves here, so text, JSON, SARIF, GitHub,
JUnit and Markdown carry the same command.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from dspark_ckpt.check.policy import DEFAULT_GATE
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import Finding
from dspark_ckpt.model.hint_template import MARKER, Command, fill, parse
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.runtimes.selectors import parse_selectors
from dspark_ckpt.sources.local import is_in_hf_cache

TARGET_FLAGS = "--target DIR or --target-vocab-size N"
RUNTIME_FLAG = {"fix": "--for", "check": "--runtime", "verify": "--runtime"}


def release_runs(runtime: str, names: Sequence[str]) -> list[list[str]]:
    """The known releases of `runtime` among `names`, split into runs of consecutive known releases."""
    known = [str(r) for r in parse_selectors([runtime])]
    runs: list[list[str]] = []
    for name in sorted((n for n in names if n in known), key=known.index):
        if runs and known.index(runs[-1][-1]) == known.index(name) - 1:
            runs[-1].append(name)
        else:
            runs.append([name])
    return runs


def release(name: str) -> str:
    return name.split("==", 1)[1]


@dataclass(frozen=True, slots=True)
class Group:
    """Runtimes named together: every known release of `runtime` (`every`), a run of three or more consecutive known
    releases (`first`..`last`, each None at the known ends), or releases listed one by one (`names`)."""

    runtime: str
    names: tuple[str, ...]
    every: bool = False
    first: str | None = None
    last: str | None = None

    @property
    def span(self) -> bool:
        return not self.every and len(self.names) >= 3


def release_groups(runtimes: Sequence[str]) -> tuple[list[Group], list[str]]:
    """The runtimes grouped per runtime and run of consecutive known releases, and the rest (selectors as the
    user gave them), in order: what `selectors` and sentences (repair/hints.spans) both name."""
    names = list(dict.fromkeys(runtimes))
    out: list[Group] = []
    taken: set[str] = set()
    for runtime in ("vllm", "sglang"):
        known = [str(r) for r in parse_selectors([runtime])]
        for run in release_runs(runtime, names):
            taken |= set(run)
            out.append(Group(runtime, tuple(run), every=run == known,
                             first=None if run[0] == known[0] else release(run[0]),
                             last=None if run[-1] == known[-1] else release(run[-1])))
    return out, [n for n in names if n not in taken]


def selectors(runtimes: Sequence[str]) -> list[str]:
    """The shortest selectors naming exactly these runtimes: `vllm` / `sglang` for every known release of it, and a
    run of three or more consecutive known releases as one PEP 440 range over the known ones (`vllm>=0.30.0`,
    `sglang>=0.5.16,<=0.5.21`); anything else (a selector as the user gave it) as it is."""
    grouped, rest = release_groups(runtimes)
    out: list[str] = []
    for g in grouped:
        if g.every:
            out.append(g.runtime)
        elif g.span:
            bounds = (f">={g.first}" if g.first else "", f"<={g.last}" if g.last else "")
            out.append(g.runtime + ",".join(b for b in bounds if b))
        else:
            out += g.names
    return out + rest


def command_line(verb: str, checkpoint: str, target: Sequence[str], runtimes: Sequence[str], *extra: str,
                 options: Sequence[str] = ()) -> str:
    """`dspark-ckpt VERB CHECKPOINT TARGET-FLAGS OPTIONS --for/--runtime R ... EXTRA`, every word shell-quoted."""
    words = ["dspark-ckpt", verb, checkpoint, *target, *options]
    for name in selectors(runtimes):
        words += [RUNTIME_FLAG[verb], name]
    return " ".join(shlex.quote(w) for w in [*words, *extra])


def target_flags(target: str | None, size: int | None) -> tuple[str, ...] | None:
    """The target as the user named it (flag or settings file), for a suggested command to repeat."""
    if target is not None:
        return ("--target", target)
    return ("--target-vocab-size", str(size)) if size is not None else None


def target_words(given: tuple[str, ...] | None, target_vocab_size: int | None) -> tuple[str, ...] | None:
    """The target flags a suggested command names: as the user gave them, else the T the run used; None: unknown."""
    return given or target_flags(None, target_vocab_size)


@dataclass(frozen=True, slots=True)
class Named:
    """A checkpoint and its target as a suggested command names them: the path as the user typed it (relative
    stays relative), the target flags as given (else `--target-vocab-size T`; None where T is unknown)."""

    checkpoint: str
    target: tuple[str, ...] | None = None

    def command(self, verb: str, runtimes: Sequence[str], *extra: str, options: Sequence[str] = ()) -> str:
        return command_line(verb, self.checkpoint, self.target or (), runtimes, *extra, options=options)


@dataclass(frozen=True, slots=True)
class HintInputs:
    """What the run resolved once that a suggested command repeats (cli/run.py builds it in resolve_run)."""

    target: tuple[str, ...] | None = None  # ("--target", as given) or ("--target-vocab-size", "N"); None: not given
    runtimes: tuple[str, ...] | None = None  # the selectors chosen (--runtime or the settings file); None: default


@dataclass(frozen=True, slots=True)
class Place:
    """The checkpoint as a command names it, and how a fix of it must be run."""

    checkpoint: str
    kind: str  # "local" | "hub" (fix --dry-run, then --push) | "cache" (an HF-cache snapshot: fix writes --out)
    out: str | None = None


def place(spec: str, revision: str | None) -> Place:
    """A Hub repo pinned at the commit that was checked; an HF-cache snapshot fixed into a folder of its own."""
    if not os.path.lexists(spec) and revision is not None:
        return Place(spec if "@" in spec else f"{spec}@{revision}", "hub")
    if is_in_hf_cache(Path(spec)):
        repo = next((p for p in reversed(Path(spec).absolute().parts) if p.startswith("models--")), "models--draft")
        return Place(spec, "cache", f"{repo.rsplit('--', 1)[-1]}-fixed")
    return Place(spec, "local")


def runtimes_about(report: CheckpointReport, code: str) -> list[str]:
    """The runtimes whose verdict names `code` (a load error, a first-step error or a silent problem)."""
    return [f"{c.runtime}=={c.version}" for c in report.compatibility
            if code in (c.error_code, c.first_step_error_code) or code in c.silent_codes]


def render(command: Command, where: Place, target: tuple[str, ...] | None, runtimes: Sequence[str]) -> str:
    """One marker as the text that replaces it: the command in backticks, and what to add where T is unknown."""
    out = ("--out", where.out) if where.out and command.verb == "fix" else ()
    line = command_line(command.verb, where.checkpoint, target or (), runtimes, *out, options=command.flags)
    if command.verb != "fix":
        return f"`{line}`"
    if target is None:
        return f"`{line}`, with {TARGET_FLAGS} added"
    if where.kind == "hub":
        return f"`{line} --dry-run` to see the plan, then `{line} --push` to open a pull request"
    return f"`{line}`"


# A finding's code, one of its hint's fix markers and the runtimes the command names -> None where that fix
# repairs this checkpoint, else the hint to give instead (markers allowed): another strategy, or what to re-export.
# repair/suggest.py builds it from the checkpoint's analysis (check cannot import repair).
# A list instead of a text: the same command, for those runtimes only (the others no repair makes load).
Suggest = Callable[[FindingCode, Command, Sequence[str]], "str | list[str] | None"]


@cache
def _order(selected: tuple[str, ...]) -> list[str]:
    return [str(r) for r in parse_selectors(list(selected))]


@cache
def _releases(selected: tuple[str, ...]) -> frozenset[str]:
    """The releases a selection names (`vllm` -> every vLLM release), for hints (`installed` names none here)."""
    if any(s.strip().lower() == "installed" for s in selected):
        return frozenset()
    return frozenset(str(r) for r in parse_selectors(list(selected)))


def runnable(f: Finding, report: CheckpointReport, where: Place, inputs: HintInputs,
             suggest: Suggest | None = None) -> Finding:
    if f.template is None:
        return f
    target = target_words(inputs.target, report.target_vocab_size)
    about = runtimes_about(report, f.code)

    gate = list(inputs.runtimes or DEFAULT_GATE)  # what fix repairs for by default: what check gates on

    def chosen(c: Command) -> list[str]:  # a fix repairs for the gate; a check or verify shows what the run showed
        if c.verb == "fix" and about and set(about) <= (every := _releases(tuple(gate))):
            return sorted(every, key=_order(tuple(gate)).index)  # one command for one repair, whichever hint names it
        return about or list(inputs.runtimes or (DEFAULT_GATE if c.verb == "fix" else ()))

    template = f.template
    narrowed: dict[Command, list[str]] = {}
    if suggest is not None:
        for c in (c for c in map(parse, MARKER.finditer(template)) if c.verb == "fix"):
            said = suggest(f.code, c, chosen(c))
            if isinstance(said, list):
                narrowed[c] = said
            elif said is not None:
                template = said
                break
    return replace(f, hint=fill(template, lambda c: render(c, where, target, narrowed.get(c) or chosen(c))))


def with_runnable_hints(report: CheckpointReport, spec: str, inputs: HintInputs,
                        suggest: Suggest | None = None) -> CheckpointReport:
    """The report with every hint's command filled in for `spec`, the checkpoint as the user gave it; with
    `suggest`, a fix command only where it repairs this checkpoint."""
    where = place(spec, report.revision)
    return replace(report, findings=tuple(runnable(f, report, where, inputs, suggest) for f in report.findings))
