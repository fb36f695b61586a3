"""Parse runtime selectors (`vllm==0.29.0`, `vllm>=0.30`, `vllm`, `sglang`, `installed`, `all`) into (runtime,
version) pairs. A version no row describes is still a selection: the table assumes or refuses it per family."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from dspark_ckpt.errors import UsageError
from dspark_ckpt.model import runtime_label
from dspark_ckpt.runtimes.release import InvalidVersion, Release, parse, refusal, within
from dspark_ckpt.runtimes.table import CONTRACTS, RUNTIMES, SGLANG_VERSIONS, VLLM_VERSIONS
from dspark_ckpt.runtimes.versions import SGLANG_POSTS_READ

_SELECTOR = re.compile(r"^(?P<runtime>[a-z]+)\s*(?P<spec>[<>=!~].*)?$")
_EXACT = re.compile(r"^==\s*(?P<version>[^*,\s]+)$")
_USAGE = "use vllm==X.Y.Z, a range such as 'vllm>=0.30' or 'vllm~=0.31', vllm, sglang, installed or all"


@dataclass(frozen=True, slots=True, order=True)
class RuntimeVersion:
    """One runtime release a run evaluates (`vllm==0.29.0`)."""

    runtime: str
    version: str

    @property
    def release(self) -> Release:
        """The typed release (parsed once: release.parse is cached per text)."""
        return parse(self.runtime, self.version)

    def __str__(self) -> str:
        return runtime_label.selector(self.runtime, self.version)


LISTED = {"vllm": VLLM_VERSIONS, "sglang": SGLANG_VERSIONS}


class _Release(Protocol):
    @property
    def runtime(self) -> str: ...
    @property
    def version(self) -> str: ...


def folded(releases: Sequence[_Release]) -> str:
    """The releases, in their order, with a run of three or more consecutive listed releases of one runtime written
    as one range (`vllm 0.18.0-0.24.0`, `sglang 0.5.1-0.5.15`), every other one as its selector (`vllm==0.33.0`)."""
    names: list[str] = []
    run: list[_Release] = []

    def flush() -> None:
        if len(run) >= 3:
            names.append(f"{run[0].runtime} {run[0].version}-{run[-1].version}")
        else:
            names.extend(runtime_label.selector(r.runtime, r.version) for r in run)
        run.clear()

    for r in releases:
        listed = LISTED.get(r.runtime, ())
        if r.version in listed:
            i = listed.index(r.version)
            if run and (run[-1].runtime != r.runtime or listed.index(run[-1].version) != i - 1):
                flush()
            run.append(r)
            continue
        flush()
        names.append(runtime_label.selector(r.runtime, r.version))
    flush()
    return ", ".join(names)


def _known(runtime: str) -> tuple[str, ...]:
    if runtime == "vllm":
        return VLLM_VERSIONS
    if runtime == "sglang":
        return SGLANG_VERSIONS
    return ("*",) if any(c.runtime == runtime for c in CONTRACTS) else ()


def selected(runtime: str, text: str) -> Release:
    """The release a run evaluates for `runtime==text`, parsed here once: rc/dev/local parts dropped, and for vLLM,
    whose rows name minors, the post release too (an SGLang post release is kept: 0.5.4.post2 differs from 0.5.4)."""
    try:
        chosen = parse(runtime, text.strip()).final
    except InvalidVersion as exc:
        raise UsageError(f"{text!r} is not a version", code="DSP-E008", hint=_USAGE) from exc
    return chosen if runtime == "sglang" else chosen.base


def release(text: str) -> str:
    """A vLLM release as the contract table names it: X.Y.Z (a 0.29 is 0.29.0; rc/dev/post/local parts dropped)."""
    return selected("vllm", text).name


def _range(runtime: str, spec: str) -> list[RuntimeVersion]:
    known = _known(runtime)
    try:
        chosen = within(runtime, spec, known) if runtime in LISTED else []
    except InvalidVersion as exc:
        raise UsageError(f"'{runtime}{spec}' is not a version specifier (PEP 440)", code="DSP-E008",
                         hint=_USAGE) from exc
    if not chosen:
        name = "SGLang" if runtime == "sglang" else "vLLM"
        raise UsageError(f"{runtime}{spec} matches none of the {name} versions dspark-ckpt knows", code="DSP-E007",
                         hint=f"known: {', '.join(known)}; a single newer release is accepted as "
                              f"{runtime}==X.Y.Z (its verdict is assumed from the newest row, DSP220)")
    return [RuntimeVersion(runtime, v) for v in chosen]


def installed_selection() -> list[RuntimeVersion]:
    """`--runtime installed`: the vLLM and SGLang this environment's metadata lists (neither is imported)."""
    from dspark_ckpt.runtimes.installed import installed_runtimes  # only for `installed`

    found = installed_runtimes()
    if not found:
        raise UsageError("--runtime installed: neither vLLM nor SGLang is installed in this environment",
                         code="DSP-E006", hint="run dspark-ckpt inside the deployment image (where `pip show vllm` "
                                               "finds it), or name the version: --runtime vllm==X.Y.Z")
    return [RuntimeVersion(i.runtime, selected(i.runtime, i.version).name) for i in found]


def _refuse_no_release(runtime: str, text: str) -> None:
    """DSP-E009 for a version that is no release: malformed (`vllm==033`), or inside the listed range and not
    listed (`vllm==0.33.2`; an SGLang post release of a listed base may be one not read: DSP220's path)."""
    listed = LISTED.get(runtime)
    if not listed:
        return
    refused = refusal(runtime, listed, SGLANG_POSTS_READ if runtime == "sglang" else (), text)
    if refused is None:
        return
    why, nearest = refused
    near = [f"{runtime}=={r}" for r in nearest]
    raise UsageError(f"{runtime}=={text} {why}; the nearest {runtime} releases are {' and '.join(near)}",
                     code="DSP-E009", hint=f"name a release ({' or '.join(near)}), a range such as "
                                           f"'{runtime}>={listed[0]}', or {runtime} for every release")


def parse_selector(text: str) -> list[RuntimeVersion]:
    text = text.strip().lower()
    if text in ("all", ""):
        return [RuntimeVersion(r, v) for r in RUNTIMES for v in _known(r)]
    if text == "installed":
        return installed_selection()
    match = _SELECTOR.match(text)
    if not match or match["runtime"] not in RUNTIMES:
        raise UsageError(f"unknown runtime {text!r}; {_USAGE}", code="DSP-E001",
                         hint=f"known vLLM versions: {', '.join(VLLM_VERSIONS)}")
    runtime, spec = match["runtime"], (match["spec"] or "").strip()
    if not spec:
        return [RuntimeVersion(runtime, v) for v in _known(runtime)]
    exact = _EXACT.match(spec)
    if exact:  # one release, known or newer than all: the table evaluates (or refuses) it per family
        version = exact["version"]
        chosen = selected(runtime, version)
        _refuse_no_release(runtime, version)
        return [RuntimeVersion(runtime, chosen.name)]
    return _range(runtime, spec)


def parse_selectors(texts: list[str] | None) -> list[RuntimeVersion]:
    chosen: list[RuntimeVersion] = []
    for text in texts or ["all"]:
        chosen += [rv for rv in parse_selector(text) if rv not in chosen]
    return chosen
