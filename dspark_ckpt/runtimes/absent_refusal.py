"""Pure: a class's refusal of a key left out or set to null, from its generated record (`absent_keys`).

A key a class takes only together with others (`with_absent`: SGLang's DFlash2 grouped convolution reads
`dflash_config.conv_kernel_size` and `conv_group_size` with `.get(key, 0)` and refuses one without the other,
speculative/dflash_utils.py parse_dflash_draft_config) is recorded with what the class does when the draft leaves it
out, or sets it to null, while the others hold their sampled (positive) values (`refused_alone`,
`refused_null_alone`), and what a null does alone (`null`: "as_absent", or the refusal). The record's words carry
the others' values as placeholders (`{dflash_config.conv_group_size}`); the draft's values fill them. Where the
record says a null builds what the absence builds, the landing pass already reads a null as absent
(landing.left_out), which is what the release does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.runtimes.records import Issue
from dspark_ckpt.runtimes.release_model import ArchitectureModel

CODE: FindingCode = "DSP372"  # config-value-refused: the release refuses the draft's value of a config key
ABSENT, NULL = "absent", "null"


def state(config: Mapping[str, Any], key: str) -> Any:
    """The draft's value of `key` (`section.entry` for a nested one), or ABSENT / NULL."""
    head, _, sub = key.partition(".")
    holder: Any = config
    if sub:
        holder = config.get(head)
        if not isinstance(holder, Mapping):
            return ABSENT
        head = sub
    if head not in holder:
        return ABSENT
    return NULL if holder[head] is None else holder[head]


def _count(value: Any) -> int | None:
    """A positive count as the release parses it (`int(value)`), the kind of value the record saw the others hold;
    None for anything else (the record has no observation for it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if value >= 1 and float(value).is_integer() else None


def _issue(said: Mapping[str, Any], key: str, how: str, others: Mapping[str, int]) -> Issue:
    message = str(said.get("message", ""))
    for other, value in others.items():
        message = message.replace(f"{{{other}}}", str(value))
    beside = "".join(f", {other} {value}" for other, value in others.items())
    return Issue(CODE, f"{said.get('raises')}: {message} ({said.get('where')}, in __init__: {key} {how}{beside})")


def refused_absence(model: ArchitectureModel, config: Mapping[str, Any]) -> Issue | None:
    """The class's refusal of a key the draft leaves out or sets to null, where its record observed one; None
    elsewhere (a key it does not take together with others, or others at values the record did not see)."""
    for key, seen in sorted(model.absent_keys.items()):
        companions = tuple(seen.get("with_absent", ()))
        mine = state(config, key)
        if not companions or mine not in (ABSENT, NULL):
            continue
        others = {c: state(config, c) for c in companions}
        if all(v in (ABSENT, NULL) for v in others.values()):
            null = seen.get("null")
            if mine == NULL and isinstance(null, Mapping):
                return _issue(null, key, "null", {})
            continue
        counts = {c: n for c, v in others.items() if (n := _count(v)) is not None}
        said = seen.get("refused_alone" if mine == ABSENT else "refused_null_alone")
        if isinstance(said, Mapping) and len(counts) == len(others):
            return _issue(said, key, "left out" if mine == ABSENT else "null", counts)
    return None
