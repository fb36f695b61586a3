"""What changes in behaviour between two releases of a runtime, from their generated data (release_store.py).

Behaviour only: the draft architectures each registers (and the class each maps to), and for an architecture
both register, every fact of its behaviour file that differs (a key it reads, a parameter's shape, what its
loader does with a name or a tensor one row off, in its words, what an optional key falls back to); for vLLM,
the SpeculativeConfig columns of spec.json and which rules lines.json cites. Line numbers, the machine and the
generator's own notes are not behaviour and are left out. The data in, `Change`s out (output/release_diff.py
writes them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from dspark_ckpt.runtimes import release_lines, spec_facts
from dspark_ckpt.runtimes.release_model import modelled_release, release_record
from dspark_ckpt.runtimes.release_store import at, behaviour


@dataclass(frozen=True, slots=True)
class Change:
    """One fact that differs: where (`registry`, an architecture, `spec`, `rules`), the path of the fact
    inside it (`tensors/fc.weight/off_by_one/1+`; empty: the whole thing), and its value before and after
    (None: absent)."""

    scope: str
    path: str
    before: Any
    after: Any

    def as_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "path": self.path, "before": self.before, "after": self.after}


@dataclass(frozen=True, slots=True)
class ReleaseDiff:
    """What changes from one release of a runtime to another: the architectures that behave otherwise, each fact."""

    runtime: str
    old: str  # the releases asked about
    new: str
    old_data: str  # the releases whose data answers them (a patch release may read its minor's)
    new_data: str
    architectures: int  # registered by either
    changed: tuple[str, ...]  # architectures whose behaviour differs, added or removed
    changes: tuple[Change, ...]
    alike: tuple[str, ...] = ()  # architectures both register that behave alike


def _flat(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every fact: a mapping is walked, anything else (a list, a number, words) is one."""
    if isinstance(node, Mapping) and node:
        for key, value in node.items():
            yield from _flat(value, at(prefix, str(key)))
    else:
        yield prefix, node


def facts(before: Any, after: Any, scope: str) -> list[Change]:
    """Every fact that differs between two documents (a part added or removed whole is one change)."""
    if before == after:
        return []
    if not (isinstance(before, Mapping) and isinstance(after, Mapping)):
        return [Change(scope, "", before, after)]
    out = []
    for key in sorted(set(before) | set(after), key=str):
        if key not in after or key not in before:
            out.append(Change(scope, str(key), before.get(key), after.get(key)))
        elif before[key] != after[key]:
            old, new = dict(_flat(before[key], str(key))), dict(_flat(after[key], str(key)))
            out += [Change(scope, path, old.get(path), new.get(path))
                    for path in sorted(set(old) | set(new)) if old.get(path) != new.get(path)]
    return out


def _registry(runtime: str, release: str) -> Mapping[str, Any]:
    record = release_record(runtime, release)
    return record.get("registry", {}) if record is not None else {}


def _architectures(runtime: str, release: str) -> Mapping[str, str]:
    record = release_record(runtime, release)
    return record.get("architectures", {}) if record is not None else {}


def _rules(release: str) -> dict[str, str]:
    """The rules lines.json cites in a vLLM release, with each one's file (their lines are not behaviour)."""
    return {key: file for key, (file, _) in release_lines.lines(release).items()}


def _spec(release: str) -> Mapping[str, Any]:
    try:
        doc = dict(spec_facts.document(release))
    except KeyError:
        return {}
    return _lineless(doc)


def _lineless(node: Any) -> Any:
    """spec.json without its line numbers (`line`, `*_line`: where a fact is read, not what it is)."""
    if isinstance(node, Mapping):
        return {k: _lineless(v) for k, v in node.items() if k != "line" and not k.endswith("_line")}
    if isinstance(node, list):
        return [_lineless(v) for v in node]
    return node


def diff(runtime: str, old: str, new: str) -> ReleaseDiff:
    """What changes from `runtime==old` to `runtime==new`; KeyError where either has no generated data."""
    old_data, new_data = modelled_release(runtime, old), modelled_release(runtime, new)
    if old_data is None or new_data is None:
        raise KeyError(old if old_data is None else new)
    changes = facts(_registry(runtime, old_data), _registry(runtime, new_data), "registry")
    before, after = _architectures(runtime, old_data), _architectures(runtime, new_data)
    changed, alike = [], []
    for name in sorted(set(before) | set(after)):
        if before.get(name) == after.get(name):  # the same behaviour file: nothing differs
            alike.append(name)
            continue
        old_doc = behaviour(runtime, before[name], name) if name in before else None
        new_doc = behaviour(runtime, after[name], name) if name in after else None
        found = facts(old_doc, new_doc, name) if old_doc is not None and new_doc is not None \
            else [Change(name, "", "registered" if old_doc else None, "registered" if new_doc else None)]
        if found:
            changed.append(name)
            changes += found
        else:
            alike.append(name)
    if runtime == "vllm":
        changes += facts(_spec(old_data), _spec(new_data), "spec")
        changes += facts(_rules(old_data), _rules(new_data), "rules")
    return ReleaseDiff(runtime, old, new, old_data, new_data, len(set(before) | set(after)), tuple(changed),
                       tuple(changes), tuple(alike))
