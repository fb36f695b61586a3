"""The text report's first screen, as ruff's: a verdict per checkpoint, one line per finding, each suggested command
once and on its own line; the long form (facts, matrix, whole messages and hints) is behind -v. Pure: lines and
their styles, which output/render.py (rich) and output/plain_text.py (no rich) print alike."""

from __future__ import annotations

import re
from collections.abc import Sequence

from dspark_ckpt.model.findings import Finding, Severity
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.output.context import RenderContext
from dspark_ckpt.output.escape import terminal

OFF_TERMINAL = 200  # no line longer, off a terminal (a CI log, a file): a finding line is cut to fit, with "..."
STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_COMMAND = re.compile(r"`(dspark-ckpt [^`]+)`")
_KIND = {"pruned": "D < T", "equal": "D == T", "padded": "D > T"}
MORE = "-v shows the compatibility matrix, the vocab tensors and every message and hint in full"

Line = tuple[str, str]  # (text, rich style; "" for none)


def commands(hint: str | None) -> list[str]:
    """The dspark-ckpt commands a hint suggests (in backticks), in order."""
    return _COMMAND.findall(hint or "")


def prose(hint: str) -> str:
    """A hint with each suggested command replaced by a pointer to its own line below (so no command is wrapped
    inside a sentence, and a pasted command is whole)."""
    return _COMMAND.sub("the command below", hint)


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:max(limit - 3, 1)].rstrip() + "..."


def verdict(c: CheckpointReport, ctx: RenderContext | None) -> Line:
    """`SOURCE: FAIL (DSP302)`, `SOURCE: ok` or `SOURCE: ok, 2 warning(s) below --fail-on`: what the exit code
    makes of this checkpoint, on its first line."""
    source = terminal(c.source, 500)
    gated = [f for f in c.findings if _gated(c, f, ctx)]
    if gated:
        codes = ", ".join(dict.fromkeys(f.code for f in gated))
        return f"{source}: FAIL ({codes})", "bold red"
    counted = [f for f in c.findings if ctx is None or not ctx.is_outside(c, f)]
    notes = {s: sum(1 for f in counted if f.severity is s) for s in (Severity.WARNING, Severity.INFO)}
    said = ", ".join(f"{n} {s.value}" for s, n in notes.items() if n)
    return f"{source}: ok" + (f" ({said})" if said else ""), "bold green"


def _gated(c: CheckpointReport, f: Finding, ctx: RenderContext | None) -> bool:
    return ctx.is_gated(c, f) if ctx is not None else f.severity is Severity.ERROR


def facts(c: CheckpointReport) -> str:
    """The draft in one line: family, kind and the three vocabularies."""
    family = f"{c.family or 'unknown family'} ({terminal(c.architecture or 'no architecture', 200)})"
    kind = f", {c.vocab_kind} ({_KIND.get(c.vocab_kind, '?')})" if c.vocab_kind else ""
    target = f"T={c.target_vocab_size}" if c.target_vocab_size else "T=unknown"
    revision = f"  revision {terminal(c.revision, 100)}" if c.revision else ""  # a Hub repo: the commit checked
    return f"  {family}{kind}: {target}  V={c.input_vocab_size}  D={c.draft_vocab_size}{revision}"


def _order(c: CheckpointReport, ctx: RenderContext | None) -> list[Finding]:
    """Gated findings first, then the rest, each by severity (the JSON keeps the analysis' order)."""
    def key(f: Finding) -> tuple[int, int]:
        return (0 if _gated(c, f, ctx) else 1 if ctx is None or not ctx.is_outside(c, f) else 2, -f.severity.rank)
    return sorted(c.findings, key=key)


def finding_line(c: CheckpointReport, f: Finding, ctx: RenderContext | None, limit: int) -> str:
    where = terminal(":".join(p for p in (f.file, f.tensor) if p), 200)
    apart = " [not gated]" if ctx is not None and ctx.is_outside(c, f) else ""
    text = f"  {f.severity.value:<7} {f.code}{apart} " + (f"{where}: " if where else "") + terminal(f.message, 4000)
    return clip(text, limit)


def checkpoint_lines(c: CheckpointReport, ctx: RenderContext | None, limit: int, *, quiet: bool = False,
                     most: int = 200) -> list[Line]:
    """One checkpoint's first screen: its verdict, the draft in one line, a line per finding, then each command
    the hints suggest, once, on a line of its own (never cut: a command is pasted whole)."""
    lines: list[Line] = [verdict(c, ctx)]
    if not quiet:
        lines.append((clip(facts(c), limit), "dim"))
    ordered = _order(c, ctx)
    for f in ordered[:most]:
        lines.append((finding_line(c, f, ctx, limit), STYLE[f.severity] if _gated(c, f, ctx) else ""))
    if len(ordered) > most:
        lines.append((f"  ... and {len(ordered) - most:,} more findings not shown; --format json lists every one",
                      "dim"))
    if quiet:
        return lines
    by_command: dict[str, list[str]] = {}
    for f in ordered[:most]:
        for command in commands(f.hint):
            by_command.setdefault(command, []).append(f.code)
    for command, codes in by_command.items():
        verb = command.split(" ", 2)[1] if " " in command else "run"
        lines.append((f"  {verb} ({', '.join(dict.fromkeys(codes))}):", "bold"))
        lines.append((f"    {terminal(command, 4000)}", ""))
    return lines


def long_hint_lines(hint: str) -> tuple[str, Sequence[str]]:
    """The -v form of a hint: its prose (commands pointed to) and its commands, each for a line of its own."""
    found = commands(hint)
    return (prose(hint) if found else hint), found
