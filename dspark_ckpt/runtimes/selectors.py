"""Parse runtime selectors (`vllm==0.29.0`, `vllm`, `sglang`, `all`) into the (runtime, version) pairs to evaluate."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dspark_ckpt.errors import UsageError
from dspark_ckpt.runtimes.table import CONTRACTS, RUNTIMES, VLLM_VERSIONS, version_key

_SELECTOR = re.compile(r"^(?P<runtime>[a-z]+)(?:==(?P<version>\d+\.\d+(?:\.\d+)?))?$")


@dataclass(frozen=True, slots=True, order=True)
class RuntimeVersion:
    runtime: str
    version: str

    def __str__(self) -> str:
        return f"{self.runtime}=={self.version}" if self.version != "*" else self.runtime


def _known(runtime: str) -> tuple[str, ...]:
    if runtime == "vllm":
        return VLLM_VERSIONS
    return ("*",) if any(c.runtime == runtime for c in CONTRACTS) else ()


def parse_selector(text: str) -> list[RuntimeVersion]:
    text = text.strip().lower()
    if text in ("all", ""):
        return [RuntimeVersion(r, v) for r in RUNTIMES for v in _known(r)]
    match = _SELECTOR.match(text)
    if not match or match["runtime"] not in RUNTIMES:
        raise UsageError(f"unknown runtime {text!r}; use vllm==X.Y.Z, vllm, sglang or all",
                         code="DSP-E001", hint=f"known vLLM versions: {', '.join(VLLM_VERSIONS)}")
    runtime, version = match["runtime"], match["version"]
    if version is None:
        return [RuntimeVersion(runtime, v) for v in _known(runtime)]
    if runtime == "sglang":
        return [RuntimeVersion("sglang", "*")]  # one contract describes every SGLang release we know
    if version.count(".") == 1:
        version += ".0"
    minors = {version_key(v)[:2] for v in VLLM_VERSIONS}
    if version_key(version)[:2] not in minors:
        raise UsageError(f"vLLM {version} is outside the versions dspark-ckpt knows ({VLLM_VERSIONS[0]} to "
                         f"{VLLM_VERSIONS[-1][:-2]}.x)", code="DSP-E002",
                         hint="its contract may differ; check against the nearest known version explicitly")
    return [RuntimeVersion(runtime, version)]


def parse_selectors(texts: list[str] | None) -> list[RuntimeVersion]:
    chosen: list[RuntimeVersion] = []
    for text in texts or ["all"]:
        chosen += [rv for rv in parse_selector(text) if rv not in chosen]
    return chosen
