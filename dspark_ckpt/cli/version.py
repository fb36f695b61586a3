"""`dspark-ckpt version` (alias `env`): the versions a bug report needs, read from package metadata, never imported."""

from __future__ import annotations

import json
import platform
import sys
from typing import Annotated, Any

import typer

import dspark_ckpt
from dspark_ckpt.cli import options as o
from dspark_ckpt.version import __version__

# (label, distribution): what decides a verdict or a load. torch, vLLM and SGLang are never imported here: one
# costs seconds and the others may not even import on this machine; their metadata says which is installed.
DISTRIBUTIONS = (
    ("safetensors", "safetensors"),
    ("huggingface_hub", "huggingface_hub"),
    ("torch", "torch"),
    ("vllm", "vllm"),
    ("sglang", "sglang"),
    ("typer", "typer"),
    ("rich", "rich"),
)


def installed(distribution: str) -> tuple[str | None, str | None]:
    """(version, location) of an installed distribution, or (None, None): metadata only."""
    from importlib import metadata

    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        return None, None
    location = dist.locate_file("")
    return dist.version or None, str(location) if location is not None else None


def environment() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {"name": "dspark-ckpt", "version": __version__, "location": dspark_ckpt.__path__[0]},
        {"name": "python", "version": platform.python_version(),
         "location": sys.executable, "implementation": platform.python_implementation(),
         "platform": f"{platform.system()} {platform.machine()}"},
    ]
    for label, distribution in DISTRIBUTIONS:
        version, location = installed(distribution)
        rows.append({"name": label, "version": version, "location": location})
    return rows


# -q/-v say what they do here (check's text, about findings and stderr notes, is not true of a version listing).
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print dspark-ckpt's version only.")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Add where each package is installed (text output).")]


def version(
    output_format: o.Doc = o.DOC_TEXT,
    quiet: Quiet = False,
    verbose: Verbose = False,
    color: o.Color = o.ColorChoice.AUTO,
    no_color: o.NoColor = False,
) -> None:
    """Print the versions a bug report needs.

    Python, dspark-ckpt, safetensors, huggingface_hub, torch and the installed vLLM and SGLang, from package
    metadata (none of them is imported). -q prints dspark-ckpt's version only; -v adds where each is installed.
    """
    from dspark_ckpt.output.documents import version_document
    from dspark_ckpt.output.write import stdout_console

    o.check_loudness(quiet, verbose)
    console = stdout_console(o.color_choice(color, no_color).value)
    if quiet:
        console.print(__version__, markup=False)
        return
    rows = environment()
    if output_format is o.DOC_JSON:
        console.file.write(json.dumps(version_document(rows), indent=2) + "\n")
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        shown = r["version"] or "not installed"
        if r["name"] == "python":
            shown += f" ({r['implementation']}, {r['platform']})"
        if verbose and r["location"]:
            shown += f"  {r['location']}"
        console.print(f"{r['name']:<{width}}  {shown}", markup=False, highlight=False)
