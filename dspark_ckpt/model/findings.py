"""Findings as data: Severity, Finding, and the rule registry lookup that stamps a finding's severity."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.hint_template import generic, has_markers
from dspark_ckpt.model.rule_catalog import RULES, Rule
from dspark_ckpt.model.severity import Severity

__all__ = ["Finding", "Severity", "finding", "rule", "shown_name", "shown_names"]

NAME_SHOWN = 200  # a class name is tens of characters; a longer one is quoted this far in a message, then its length
NAMES_SHOWN = 16  # a config lists one architecture or a few; a longer list is quoted this far, then its length


def shown_name(name: str) -> str:
    """A name from the user's files as a message quotes it: whole, or its first NAME_SHOWN characters and its length
    (a hostile 10 MB architecture name is one field of the report, not a copy in every release's row)."""
    return name if len(name) <= NAME_SHOWN else f"{name[:NAME_SHOWN]}... ({len(name):,} characters)"


def shown_names(names: Sequence[str]) -> str:
    """A list of names from the user's files as a message quotes it (Python's repr, as the runtimes print it): whole,
    or its first NAMES_SHOWN and its length (a config of a million architectures is not copied into every release's
    row)."""
    shown = repr([shown_name(n) for n in names[:NAMES_SHOWN]])
    return shown if len(names) <= NAMES_SHOWN else f"{shown[:-1]}, ... ({len(names):,} names)]"


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found: a registered code, its severity, the message, where (file, tensor), a hint."""

    code: FindingCode
    severity: Severity
    message: str
    file: str | None = None
    tensor: str | None = None
    hint: str | None = None
    # The hint with its command markers (model/hint_template.py), where it has any: check and verify fill them in
    # for the checkpoint (check/hints.py); `hint` meanwhile reads with the DRAFT and T placeholders.
    template: str | None = field(default=None, compare=False, repr=False)


def rule(code: FindingCode) -> Rule:
    try:
        return RULES[code]
    except KeyError:
        raise KeyError(f"finding code {code} is not registered in rule_catalog.RULES") from None


def finding(
    code: FindingCode, message: str, *, file: str | None = None, tensor: str | None = None, hint: str | None = None,
    template: str | None = None,
) -> Finding:
    """Build a Finding whose severity and default hint come from the registry, so a code means one thing.

    `hint` is literal text (it may quote a path or a runtime's words: never parsed for markers); `template` is a
    hint written by dspark-ckpt itself with command markers; neither: the rule's own `fix`.
    """
    registered = rule(code)
    if hint is None:
        template = template if template is not None else registered.fix_template
        hint = generic(template)
    return Finding(
        code=code,
        severity=registered.severity,
        message=message,
        file=file,
        tensor=tensor,
        hint=hint,
        template=template if has_markers(template) else None,
    )

