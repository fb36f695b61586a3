"""Pure: runtime releases named in a sentence by range (`sglang 0.5.1-0.5.15`), from check/hints.py's grouping."""

from __future__ import annotations

from collections.abc import Sequence

from dspark_ckpt.check.hints import release, release_groups


def spans(runtimes: Sequence[str]) -> str:
    """Runtimes for a sentence: every known release of a runtime as its name, a run of three or more consecutive
    known releases as one span (`sglang 0.5.1-0.5.15`, `vllm 0.30.0-0.33.0`)."""
    grouped, rest = release_groups(runtimes)
    out: list[str] = []
    for g in grouped:
        out += [g.runtime] if g.every else [f"{g.runtime} {release(g.names[0])}-{release(g.names[-1])}"] \
            if g.span else list(g.names)
    return ", ".join(out + rest)
