"""`dspark-ckpt diff`: what changes in behaviour if a deployment moves from one runtime release to another."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from dspark_ckpt.cli import options as o
from dspark_ckpt.errors import UsageError

Release = Annotated[str, typer.Argument(metavar="RELEASE", show_default=False, help=(
    "A runtime release as runtime==version: vllm==0.32.0, sglang==0.5.9."))]
Quiet = Annotated[bool, typer.Option(
    "--quiet", "-q", help="Print the summary line and the architectures that behave otherwise, one a line.")]
Verbose = Annotated[bool, typer.Option(
    "--verbose", "-v", help="Also list the architectures that behave alike (text output).")]


def _release(text: str) -> tuple[str, str]:
    from dspark_ckpt.runtimes.selectors import parse_selector

    if "==" not in text:
        raise UsageError(f"{text!r} is not one release; write it as runtime==version (vllm==0.33.0)",
                         code="DSP-E001", hint="dspark-ckpt diff vllm==0.32.0 vllm==0.33.0")
    (found,) = parse_selector(text)
    return found.runtime, found.version


def diff(
    old: Release,
    new: Release,
    output_format: o.Doc = o.DOC_TEXT,
    quiet: Quiet = False,
    verbose: Verbose = False,
    color: o.Color = o.ColorChoice.AUTO,
    no_color: o.NoColor = False,
) -> None:
    """Print what changes in behaviour from one release to another.

    From the releases' generated data: the draft architectures each registers, and for each architecture
    both register, every fact of its behaviour that differs (the keys it reads, its parameters' shapes, what
    its loader does with each name and with a tensor one row off, in its words, what a missing key falls back
    to); for vLLM also SpeculativeConfig's fields and methods and the rules its code has. Line numbers are
    left out. A release without data of its own reads its minor's, as check does.
    """
    from dspark_ckpt.output.documents import release_diff_document
    from dspark_ckpt.output.release_diff import head, lines
    from dspark_ckpt.output.write import stdout_console
    from dspark_ckpt.runtimes import release_diff
    from dspark_ckpt.runtimes.release_model import generated_releases

    o.check_loudness(quiet, verbose)
    (runtime, before), (other, after) = _release(old), _release(new)
    if runtime != other:
        raise UsageError(f"{old} and {new} are releases of two runtimes; compare two releases of one",
                         code="DSP-E001", hint=f"dspark-ckpt diff {old} {runtime}==X.Y.Z")
    try:
        found = release_diff.diff(runtime, before, after)
    except KeyError as missing:
        known = ", ".join(generated_releases(runtime))
        raise UsageError(f"{runtime}=={missing.args[0]}: no generated data answers it (a release older than "
                         "every release dspark-ckpt was generated from)", code="DSP-E007",
                         hint=f"the {runtime} releases with data: {known}") from None
    console = stdout_console(o.color_choice(color, no_color).value)
    if output_format is o.DOC_JSON:
        console.file.write(json.dumps(release_diff_document(found), indent=2) + "\n")
        return
    shown = [head(found), *found.changed] if quiet else lines(found)
    if verbose:
        shown.append(f"alike: {', '.join(found.alike) or 'none'}")
    for line in shown:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
