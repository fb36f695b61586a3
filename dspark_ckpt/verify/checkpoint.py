"""`verify_checkpoint`: check's analysis of one local checkpoint, then the torch run (verify/run.py) on it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dspark_ckpt.check.analysis import analyze
from dspark_ckpt.model.report import CheckpointReport
from dspark_ckpt.model.target import TargetVocab
from dspark_ckpt.runtimes.selectors import RuntimeVersion
from dspark_ckpt.sources.base import CheckpointSource
from dspark_ckpt.verify.torch_loader import (
    VerifyOptions,
    device_label,
    import_torch,
    local_folder,
    resolve_device,
)

if TYPE_CHECKING:
    import torch

    from dspark_ckpt.check.deploy import BoundDeploy
    from dspark_ckpt.output.verify_records import VerifyResult


def verify_checkpoint(source: CheckpointSource, *, target: TargetVocab | None,
                      runtimes: Sequence[RuntimeVersion], options: VerifyOptions,
                      device: torch.device | None = None,
                      deploy: BoundDeploy | None = None) -> tuple[CheckpointReport, VerifyResult]:
    """Check's analysis (read once), with its compatibility replaced by what torch observed. `deploy`: the run's
    --speculative-config with this checkpoint, as check_one takes it: the analysis routes the draft by its serving
    method, and the report gets the deploy record and findings check's does."""
    torch = import_torch()  # DSP-E040 when torch is missing, before verify/run.py (which imports it) is loaded
    from dspark_ckpt.verify.run import run_verify

    device = device or resolve_device(options.device)
    folder = local_folder(source)
    analysis = analyze(source, target=target, runtimes=runtimes,
                       speculative=deploy.speculative if deploy is not None else None)
    report, result = run_verify(analysis, folder, options=options, device=device, label=device_label(device),
                                torch_version=torch.__version__)
    return (deploy.publish(report, analysis) if deploy is not None else report), result
