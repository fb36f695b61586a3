"""The deploy's --speculative-config as check, fix and verify read it: one plan per run, paired with the checkpoints
given; loads the deploy preflight (check/deploy.py) only when one is given."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dspark_ckpt.cli.run import Run

if TYPE_CHECKING:
    from dspark_ckpt.check.deploy import DeployPlan


def speculative_text(run: Run, flag: str | None) -> str | None:
    """--speculative-config, else the settings file's `speculative-config` (inline JSON or a path), else None."""
    return flag if flag is not None else run.settings.speculative_config


def deploy_plan(run: Run, flag: str | None, max_model_len: int | None = None) -> DeployPlan | None:
    """--speculative-config, else the settings file's `speculative-config`; the target as --target names it; the
    served max_model_len as --max-model-len (else the settings file's `max-model-len`) gives it."""
    text = speculative_text(run, flag)
    if text is None:
        return None  # no deploy to check: its rules (~12 ms of imports) are not loaded
    from dspark_ckpt.check.deploy import plan_deploy

    c = run.common
    target_spec = c.target if c.target is not None or c.target_vocab_size is not None else run.settings.target
    served = max_model_len if max_model_len is not None else run.settings.max_model_len
    return plan_deploy(text, target=run.target, target_spec=target_spec,
                       runtimes=[(r.runtime, r.version) for r in run.runtimes], max_model_len=served)


def paired_plan(run: Run, flag: str | None, given: Sequence[str], *, hook: bool = False) -> DeployPlan | None:
    """fix's and verify's deploy: the speculative config as check reads it (deploy_plan), paired with the checkpoints
    given as check pairs them, so each analysis gets the serving method check's would (DeployPlan.speculative_for);
    the checkpoint its `model` names is not added: fix and verify work on the checkpoints given."""
    deploy = deploy_plan(run, flag)
    return deploy.pair(given, hook=hook) if deploy is not None else None
