"""Pure: what each release makes of an EAGLE-3 draft's aux-hidden-state keys -> the DSP356 / DSP357 warnings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.runtimes.records import BuiltConfig
from dspark_ckpt.runtimes.table import SGLANG_VERSIONS, VLLM_VERSIONS

if TYPE_CHECKING:
    from dspark_ckpt.runtimes.eagle3_aux import AuxRead


def _texts() -> tuple[tuple[FindingCode, Callable[[AuxRead], str | None]], ...]:
    """What each code says of a release's aux facts (eagle3_aux.py, imported only for a draft that has them)."""
    from dspark_ckpt.runtimes import eagle3_aux

    return (("DSP356", eagle3_aux.ignored_text), ("DSP356", eagle3_aux.runner_text),
            ("DSP357", eagle3_aux.absent_text))


def vllm_releases(versions: Sequence[str]) -> str:
    """vLLM releases, a run of consecutive releases the table knows written as one range."""
    known = [v for v in VLLM_VERSIONS if v in versions]
    parts: list[str] = []
    run: list[str] = []
    for v in known:
        if run and VLLM_VERSIONS.index(run[-1]) != VLLM_VERSIONS.index(v) - 1:
            parts.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}")
            run = []
        run.append(v)
    if run:
        parts.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}")
    parts += [v for v in versions if v not in VLLM_VERSIONS]
    return "vLLM " + ", ".join(parts)


def _sglang(versions: Sequence[str]) -> str:
    known = [v for v in SGLANG_VERSIONS if v in versions]
    if len(known) >= 3 and SGLANG_VERSIONS.index(known[-1]) - SGLANG_VERSIONS.index(known[0]) == len(known) - 1:
        return f"SGLang {known[0]}-{known[-1]}"
    return "SGLang " + ", ".join(versions)


def aux_findings(builds: Sequence[BuiltConfig]) -> list[Finding]:
    """One finding per code: each distinct statement with the releases it holds for, and the lines it cites."""
    by_code: dict[FindingCode, dict[tuple[str, str], list[BuiltConfig]]] = {}
    with_aux = [(built, built.aux) for built in builds if built.aux is not None]
    texts = _texts() if with_aux else ()
    for built, aux in with_aux:
        for code, text in texts:
            said = text(aux)
            if said is not None:
                by_code.setdefault(code, {}).setdefault((built.runtime, said), []).append(built)
    found = []
    for code, statements in sorted(by_code.items()):
        said_by: dict[str, list[str]] = {}  # one statement once, with every runtime that makes it (issue 41)
        for (runtime, said), group in statements.items():
            said_by.setdefault(said, []).append(
                (_sglang if runtime == "sglang" else vllm_releases)([b.version for b in group]))
        parts = [f"{' and '.join(labels)} {_plural(said) if len(labels) > 1 else said}"
                 for said, labels in said_by.items()]
        found.append(finding(code, "; ".join(parts) + ".", file="config.json"))
    return found


def _plural(said: str) -> str:
    """The statement's verb for several runtimes: `finds no ...` -> `find no ...`."""
    verb, _, rest = said.partition(" ")
    return f"{verb[:-1]} {rest}".replace(" and takes ", " and take ") if verb in ("finds", "reads") else said
