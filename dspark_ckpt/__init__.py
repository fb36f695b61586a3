"""dspark-ckpt: check and repair speculative-decoding draft checkpoints from config.json and safetensors headers."""

from __future__ import annotations

from dspark_ckpt.findings import Finding, Severity
from dspark_ckpt.inspect import TargetVocab, inspect_checkpoint
from dspark_ckpt.report import CheckpointReport, Compatibility, Report

__version__ = "0.1.0"

__all__ = [
    "CheckpointReport",
    "Compatibility",
    "Finding",
    "Report",
    "Severity",
    "TargetVocab",
    "__version__",
    "inspect_checkpoint",
]
