"""The deploy preflight's published records: what each vLLM release builds from `--speculative-config`.

Beside the report (model/report.py), not in it: a check without a speculative config never creates these classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class DeployRuntime:
    """What one vLLM release builds from `--speculative-config` (runtimes/speculative_config.py), published."""

    runtime: str
    version: str
    method: str | None
    method_from: str | None
    architecture: str | None
    model_class: str | None
    num_speculative_tokens: int | None
    num_speculative_tokens_from: str | None
    draft_vocab_size: int | None  # `draft_vocab_size or vocab_size` of the draft config, as that release computes it
    error: str | None  # the first start-up error, None when it starts
    error_code: str | None
    notes: tuple[str, ...]  # what goes wrong without an error (wrong method, rewritten architecture, ignored keys)
    note_codes: tuple[str, ...]
    source: str  # where the error (or the method) was read: file @ version lines


@dataclass(frozen=True, slots=True)
class Deploy:
    """The deploy preflight of one checkpoint: the speculative config as given, and each release's outcome."""

    source: str  # the file it was read from, or "--speculative-config" for inline JSON
    speculative_config: Mapping[str, Any] | None  # None: not a JSON object (its finding says why)
    model: str | None  # the config's `model`
    runtimes: tuple[DeployRuntime, ...] = ()
