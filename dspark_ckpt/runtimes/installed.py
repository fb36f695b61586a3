"""The runtimes installed in this environment, from package metadata only: `check` never imports vLLM or SGLang."""

from __future__ import annotations

from dataclasses import dataclass

# runtime name -> the distribution that installs it
DISTRIBUTIONS = {"vllm": "vllm", "sglang": "sglang"}


@dataclass(frozen=True, slots=True)
class Installed:
    """A runtime installed in this environment, as its distribution metadata names it."""

    runtime: str
    version: str  # as the distribution's metadata states it (e.g. 0.30.0, 0.34.0rc1, 0.31.1+cpu)
    location: str | None  # the folder holding its metadata, for messages


def installed_runtime(runtime: str) -> Installed | None:
    """The installed distribution of `runtime` (the first one sys.path finds, as `import` would), or None."""
    from importlib import metadata  # only for `--runtime installed`: it costs ~20 ms of imports (email, ...)

    try:
        dist = metadata.distribution(DISTRIBUTIONS[runtime])
    except metadata.PackageNotFoundError:
        return None
    version = dist.version
    if not isinstance(version, str) or not version:
        return None  # a dist-info without a Version field: not a usable install
    location = dist.locate_file("")
    return Installed(runtime, version, str(location) if location is not None else None)


def installed_runtimes() -> list[Installed]:
    return [found for r in DISTRIBUTIONS if (found := installed_runtime(r)) is not None]
