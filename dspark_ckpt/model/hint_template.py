"""Pure: the command markers a hint text holds (`{fix --strategy trim}`), as data, and their documentation form.

A rule's `fix` text names the dspark-ckpt command that repairs it with a marker, never with a literal command line:
check and verify fill each marker in with the checkpoint, the target and the runtimes of the run
(check/hints.py), so the hint a report prints can be pasted as it is. `dspark-ckpt explain` shows the markers with
the placeholders DRAFT (the checkpoint) and T (the target vocab size), named in PLACEHOLDER_NOTE.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

VERBS = ("fix", "check", "verify")
# `{verb}` or `{verb --flag value ...}`: flags and plain values only, so no other braces in prose ever match.
MARKER = re.compile(r"\{(fix|check|verify)((?: --?[a-z][a-z0-9-]*(?: [A-Za-z0-9_.=<>-]+)?)*)\}")
DRAFT, T = "DRAFT", "T"
PLACEHOLDER_NOTE = (f"{DRAFT} stands for the checkpoint and {T} for the target vocab size; check and verify "
                    "print each command filled in for the checkpoint they report on.")


@dataclass(frozen=True, slots=True)
class Command:
    """One marker: the dspark-ckpt subcommand and the flags the rule itself fixes (a `--strategy`, an `--engine`)."""

    verb: str
    strategy: str | None = None
    extra: tuple[str, ...] = ()  # other flags, after the checkpoint, target and runtime flags

    @property
    def flags(self) -> tuple[str, ...]:
        """The flags the marker itself gives, after the checkpoint and target: its --strategy, then the rest."""
        return (*(("--strategy", self.strategy) if self.strategy else ()), *self.extra)

    def words(self, checkpoint: str, target: tuple[str, ...]) -> list[str]:
        return ["dspark-ckpt", self.verb, checkpoint, *target, *self.flags]


def parse(marker: re.Match[str]) -> Command:
    words = marker[2].split()
    strategy = None
    if "--strategy" in words and words.index("--strategy") + 1 < len(words):
        i = words.index("--strategy")
        strategy = words[i + 1]
        words = words[:i] + words[i + 2:]
    return Command(marker[1], strategy, tuple(words))


def has_markers(text: str | None) -> bool:
    return text is not None and MARKER.search(text) is not None


def fill(template: str, render: Callable[[Command], str]) -> str:
    """The template with each marker replaced by `render(command)` (which supplies its own backticks)."""
    return MARKER.sub(lambda m: render(parse(m)), template)


def documented(command: Command) -> str:
    """The documentation form: `dspark-ckpt fix DRAFT --target-vocab-size T --strategy trim`."""
    target = ("--target-vocab-size", T) if command.verb in ("fix", "verify") else ()
    return f"`{' '.join(command.words(DRAFT, target))}`"


def generic(template: str) -> str:
    return fill(template, documented)


def documented_fix(template: str) -> str:
    """What `explain`, `rules` and SARIF's rule help print: the placeholders, and what they stand for."""
    return f"{generic(template)} ({PLACEHOLDER_NOTE})" if has_markers(template) else template


def with_repair(template: str, repair: str | None) -> str:
    """A bare `{fix}` is the rule's own repair: `{fix --strategy <repair>}` (`{fix --any}` lets fix choose)."""
    text = template.replace("{fix}", f"{{fix --strategy {repair}}}" if repair else "{fix}")
    return text.replace("{fix --any}", "{fix}")
