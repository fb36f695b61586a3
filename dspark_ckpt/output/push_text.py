"""`fix --push`'s words: the pull request's title and description, the text it prints, and its -q line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from rich.console import Console

from dspark_ckpt.model.report import CheckpointReport, FixState, Report
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.model.severity import Severity
from dspark_ckpt.output.fix_records import FixRecord
from dspark_ckpt.output.fix_text import quiet_line, render_plan_text
from dspark_ckpt.version import __version__

TITLE_LIMIT = 250  # the Hub's commit summary is one line; keep it short


@dataclass(frozen=True, slots=True)
class PushRecord:
    """What `fix --push` did, as output renders it: cli/push.py fills it from repair/hub.py's PushResult."""

    checkpoint: str  # the repo as given
    fix: FixRecord  # the plan made on `parent`
    parent: str  # the commit checked and repaired
    pr_url: str | None = None  # None: nothing was pushed
    pr_revision: str | None = None
    commit: str | None = None
    files: tuple[str, ...] = ()  # uploaded
    deleted: tuple[str, ...] = ()
    report: CheckpointReport | None = None  # the check of the pull request's revision

    @property
    def status(self) -> str:
        return "refused" if self.fix.refusal else "pushed" if self.pr_url else "nothing-to-do"

    @property
    def errors(self) -> int:
        """Errors the check of the pull request's revision still finds."""
        return sum(f.severity is Severity.ERROR for f in self.report.findings) if self.report else 0


def fixed_codes(fix: FixRecord) -> list[str]:
    """The finding codes that fail or misbehave on a chosen runtime before the repair and not after."""
    def codes(states: Sequence[FixState]) -> set[str]:
        return {c for s in states for c in ((s.error_code,) if s.error_code else ()) + tuple(s.silent_codes)}
    return sorted(codes([r.before for r in fix.compatibility]) - codes([r.after for r in fix.compatibility]))


def pull_request_text(fix: FixRecord, parent: str, files: Sequence[str], deleted: Sequence[str]) -> tuple[str, str]:
    """The PR title and description: the rule codes repaired, the runtimes targeted, and what changed."""
    codes = fixed_codes(fix)
    title = f"dspark-ckpt fix: {', '.join(codes) or 'repair'} for {', '.join(fix.runtimes)}"
    lines = [f"Automated repair by dspark-ckpt {__version__}.", "",
             f"Checked commit: {parent}", f"Target vocab T: {fix.target_vocab_size}",
             f"Runtimes targeted: {', '.join(fix.runtimes)}", "", "Findings repaired:"]
    lines += [f"- {c} {RULES[c].slug}: {RULES[c].summary}" for c in codes if c in RULES] or ["- (none)"]
    lines += ["", "Actions:"] + [f"- {a.text}" for a in fix.actions]
    lines += ["", "Files changed:"] + [f"- {n}" for n in files] + [f"- {n} (deleted)" for n in deleted]
    lines += ["", "Verify: `dspark-ckpt check <repo>@<this PR's revision> --runtime ...` before merging."]
    return title[:TITLE_LIMIT], "\n".join(lines) + "\n"


def _check_verdict(push: PushRecord) -> str:
    return f"check of {push.pr_revision} " + ("passes" if not push.errors else f"FAILS with {push.errors} error(s)")


def render_push_text(push: PushRecord, console: Console) -> None:
    """The plan made on the checked commit, then the pull request and the check of its revision."""
    from dspark_ckpt.output.render import render_text

    render_plan_text(replace(push.fix, source=f"{push.checkpoint} @ {push.parent}"), console, diff=False)
    if push.pr_url is None:
        console.print("nothing pushed" + ("" if push.fix.refusal else ": nothing to repair"), markup=False)
        return
    files = ", ".join([*push.files, *(f"{n} (deleted)" for n in push.deleted)])
    console.print(f"opened pull request: {push.pr_url}", markup=False)
    console.print(f"commit {push.commit} on {push.pr_revision}, parent {push.parent}: {files}", markup=False)
    if push.report is not None:
        console.print(f"check of {push.pr_revision}:", markup=False)
        render_text(Report((push.report,), runtimes=tuple(push.fix.runtimes)), console)


def push_quiet_line(push: PushRecord) -> str | None:
    """`fix --push -q`: one line for a refusal or a pull request; nothing when there was nothing to repair."""
    named = replace(push.fix, source=f"{push.checkpoint} @ {push.parent}")
    if push.pr_url is None:
        return quiet_line(named)
    return (f"{named.source}: opened pull request {push.pr_url} ({push.commit} on {push.pr_revision}); "
            + _check_verdict(push))


def render_hub_dry_run(fix: FixRecord, console: Console, *, quiet: bool) -> None:
    """`fix org/repo --dry-run`: the plan and its JSON diffs at the pinned commit (-q: fix's one line)."""
    if quiet:
        if (line := quiet_line(fix)) is not None:
            console.print(line, markup=False, highlight=False)
        return
    render_plan_text(fix, console, diff=True)
    if fix.status == "planned":
        console.print("dry run: nothing was written or pushed; --push opens a pull request with this plan",
                      style="dim", markup=False)
