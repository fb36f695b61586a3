"""dspark-ckpt: check and repair speculative-decoding draft checkpoints from config.json and safetensors headers."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dspark_ckpt.check.analysis import inspect_checkpoint
    from dspark_ckpt.model.findings import Finding, Severity
    from dspark_ckpt.model.report import CheckpointReport, Compatibility, Report
    from dspark_ckpt.model.target import TargetVocab
    from dspark_ckpt.repair import apply_fix, plan_fix

from dspark_ckpt.version import __version__ as __version__

# The public names, loaded on first use: `import dspark_ckpt` (which every CLI start does) costs nothing, and
# `--version`/`--help` never load the analysis stage; plan_fix/apply_fix load the repair package only when asked.
_LAZY = {"inspect_checkpoint": "dspark_ckpt.check.analysis", "Finding": "dspark_ckpt.model.findings",
         "Severity": "dspark_ckpt.model.findings", "CheckpointReport": "dspark_ckpt.model.report",
         "Compatibility": "dspark_ckpt.model.report", "Report": "dspark_ckpt.model.report",
         "TargetVocab": "dspark_ckpt.model.target", "plan_fix": "dspark_ckpt.repair", "apply_fix": "dspark_ckpt.repair"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'dspark_ckpt' has no attribute {name!r}")


def check(*checkpoints: str, target: str | None = None, target_vocab_size: int | None = None,
          runtime: list[str] | None = None) -> Report:
    """Library form of `dspark-ckpt check`: the same report the CLI renders, as data."""
    from dspark_ckpt.check.analysis import inspect_checkpoint
    from dspark_ckpt.model.report import Report
    from dspark_ckpt.runtimes.selectors import parse_selectors
    from dspark_ckpt.sources.resolve import open_source
    from dspark_ckpt.sources.target import resolve_target

    runtimes = parse_selectors(runtime)
    target_vocab = resolve_target(target, target_vocab_size)
    reports = tuple(inspect_checkpoint(open_source(spec), target=target_vocab, runtimes=runtimes)
                    for spec in checkpoints)
    return Report(reports, runtimes=tuple(str(r) for r in runtimes))


__all__ = [
    "CheckpointReport",
    "Compatibility",
    "Finding",
    "Report",
    "Severity",
    "TargetVocab",
    "__version__",
    "apply_fix",
    "check",
    "inspect_checkpoint",
    "plan_fix",
]
