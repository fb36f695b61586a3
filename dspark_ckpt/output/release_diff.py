"""`diff`: what changes in behaviour between two releases (runtimes/release_diff.py), as text lines."""

from __future__ import annotations

import json
from typing import Any

from dspark_ckpt.runtimes.release_diff import Change, ReleaseDiff

SCALARS = (str, int, float, bool, type(None))


def head(found: ReleaseDiff) -> str:
    text = f"{found.runtime} {found.old} -> {found.new}"
    if (found.old_data, found.new_data) != (found.old, found.new):
        text += f" (the data of {found.old_data} -> {found.new_data})"
    return f"{text}: {len(found.changed)} of {found.architectures} draft architectures behave otherwise"


def shown(value: Any) -> str:
    """A value on one line: words as they are, lists and mappings as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


def lines(found: ReleaseDiff) -> list[str]:
    """The diff as text, one fact a line: `  path: before -> after`, `+ path: value`, `- path: value`."""
    out = [head(found)]
    scope = None
    for change in found.changes:
        if change.scope != scope:
            scope = change.scope
            out.append(f"{scope}:")
        out.append(_line(change))
    return out


def _line(change: Change) -> str:
    path = f"{change.path}: " if change.path else ""
    if change.before is None:
        return f"  + {path}{shown(change.after)}"
    if change.after is None:
        return f"  - {path}{shown(change.before)}"
    old, new = change.before, change.after
    if isinstance(old, list) and isinstance(new, list) and all(isinstance(v, SCALARS) for v in old + new):
        gone = [v for v in old if v not in new]
        came = [v for v in new if v not in old]
        if gone or came:
            return f"  ~ {path}" + ", ".join([*(f"+{shown(v)}" for v in came),
                                               *(f"-{shown(v)}" for v in gone)])
        return f"  ~ {path}reordered {shown(new)}"
    return f"  ~ {path}{shown(old)} -> {shown(new)}"
