"""`dspark-ckpt rules` and `explain`: both registries (finding codes, DSP-Exxx error codes), as the user reads them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from dspark_ckpt.cli import options as o
from dspark_ckpt.errors import UsageError
from dspark_ckpt.model.error_catalog import ERRORS
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.output.documents import codes_document

SECTIONS = ("What it means", "Why it matters", "Example", "How to fix")

# -q/-v say what they do here (check's text, about findings and stderr notes, is not true of a listing).
RulesQuiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print the codes only, one a line (text output).")]
RulesVerbose = Annotated[bool, typer.Option(
    "--verbose", "-v", help="Add each code's category, which decides what fix, verify and the reports do with it "
                            "(text output).")]
ExplainQuiet = Annotated[bool, typer.Option(
    "--quiet", "-q", help="Print each code's heading and summary line only, without its four sections (text "
                          "output).")]
ExplainVerbose = Annotated[bool, typer.Option(
    "--verbose", "-v", help="Add each code's category after its sections (text output).")]


@dataclass(frozen=True, slots=True)
class Doc:
    """A finding code or an operational error code, in the one shape both commands print."""

    code: str
    kind: str  # "finding" | "error"
    severity: str  # a finding's severity; "exit 2" for an operational error
    slug: str
    summary: str
    what: str
    why: str
    example: str
    fix: str
    category: str
    retired: bool = False

    def sections(self) -> tuple[str, ...]:
        return self.what, self.why, self.example, self.fix

    def as_json(self, *, full: bool) -> dict[str, Any]:
        head = {"code": self.code, "kind": self.kind, "severity": self.severity, "slug": self.slug,
                "summary": self.summary, "category": self.category, "retired": self.retired}
        if not full:
            return head
        from dspark_ckpt.model.repair_catalog import repairs_for  # explain only: the repair table's names

        return {**head, "what": self.what, "why": self.why, "example": self.example, "fix": self.fix,
                "repairs": list(repairs_for(self.code)) if self.kind == "finding" else []}


def all_docs() -> list[Doc]:
    findings = [Doc(r.code, "finding", r.severity.value, r.slug, r.summary, r.what, r.why, r.example, r.fix,
                    r.category.value) for r in RULES.values()]
    errors = [Doc(e.code, "error", "exit 2", e.slug, e.summary, e.what, e.why, e.example, e.fix, "operational",
                  e.retired) for e in ERRORS.values()]
    return sorted(findings, key=lambda d: d.code) + errors


def matching(prefix: str | None) -> list[Doc]:
    """Every code starting with `prefix` (case-insensitive; `DSP3`, `DSP-E05`), or the one whose slug it is."""
    docs = all_docs()
    if prefix is None:
        return docs
    wanted = prefix.strip().upper()
    found = ([d for d in docs if d.code.startswith(wanted)]
             or [d for d in docs if d.slug == prefix.strip().lower()])
    if not found:
        raise UsageError(f"{prefix!r} is no finding code, error code or prefix of one", code="DSP-E005",
                         hint="`dspark-ckpt rules` lists them; DSP3 lists the runtime-contract findings, DSP-E the "
                              "operational errors")
    return found


def _console(color: o.ColorChoice, no_color: bool) -> Any:
    from dspark_ckpt.output.write import stdout_console

    return stdout_console(o.color_choice(color, no_color).value)


Prefix = Annotated[str | None, typer.Argument(metavar="[PREFIX]", show_default=False, help=(
    "Only the codes starting with this (DSP3, DSP30, DSP-E05), case-insensitive."))]


def rules(
    prefix: Prefix = None,
    output_format: o.Doc = o.DOC_TEXT,
    quiet: RulesQuiet = False,
    verbose: RulesVerbose = False,
    color: o.Color = o.ColorChoice.AUTO,
    no_color: o.NoColor = False,
) -> None:
    """List the finding and error codes, or those under a prefix.

    One line per code: code, severity (`exit 2` for an operational error), slug and summary; -q prints the codes
    only, -v adds the category. `explain CODE` shows the full documentation.
    """
    o.check_loudness(quiet, verbose)
    docs = matching(prefix)
    console = _console(color, no_color)
    if output_format is o.DOC_JSON:
        console.file.write(json.dumps(codes_document([d.as_json(full=False) for d in docs]), indent=2) + "\n")
        return
    for d in docs:
        if quiet:
            line = d.code
        else:
            line = f"{d.code:<9} {d.severity:<7}  {d.slug:<36} {d.summary}"
            if verbose:
                line += f"  [{d.category}]"
            if d.retired:
                line += " (retired)"
        console.print(line, markup=False, highlight=False)


def explain(
    code: Annotated[str, typer.Argument(metavar="CODE", show_default=False, help=(
        "A finding code (DSP301), an error code (DSP-E071), a prefix of codes (DSP30), or a slug."))],
    output_format: o.Doc = o.DOC_TEXT,
    quiet: ExplainQuiet = False,
    verbose: ExplainVerbose = False,
    color: o.Color = o.ColorChoice.AUTO,
    no_color: o.NoColor = False,
) -> None:
    """Show the documentation of a code, or of a prefix's codes.

    Findings and operational errors (DSP-Exxx, exit 2) have the same four sections: what it means, why it
    matters, an example and how to fix it. -q prints the summary lines only, -v adds the category.
    """
    o.check_loudness(quiet, verbose)
    docs = matching(code)
    console = _console(color, no_color)
    if output_format is o.DOC_JSON:
        console.file.write(json.dumps(codes_document([d.as_json(full=True) for d in docs]), indent=2) + "\n")
        return
    from dspark_ckpt.model.repair_catalog import repairs_for

    for n, d in enumerate(docs):
        if n:
            console.print()
        kind = f"{d.severity}" if d.kind == "finding" else "operational error, exit 2"
        console.print(f"{d.code} {d.slug} ({kind}{', retired' if d.retired else ''})", style="bold", markup=False)
        console.print(d.summary, markup=False)
        if quiet:
            continue
        repairs = repairs_for(d.code) if d.kind == "finding" else ()
        fix = d.fix + (f" [repair: {', '.join(repairs)}]" if repairs else "")
        for title, body in zip(SECTIONS, (d.what, d.why, d.example, fix), strict=True):
            console.print()
            console.print(title, style="bold", markup=False)
            console.print(f"  {body}", markup=False)
        if verbose:
            console.print(f"\ncategory: {d.category}", markup=False)
