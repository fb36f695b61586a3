"""How a runtime version is named: the one spelling of `vllm==0.29.0` (selector) and `vllm 0.29.0` (display)."""

from __future__ import annotations

ANY_VERSION = "*"  # a row or selection that is not one version


def selector(runtime: str, version: str) -> str:
    """As `--runtime` takes it, and as JSON and findings name it: `vllm==0.29.0`, or `sglang` for every release."""
    return f"{runtime}=={version}" if version != ANY_VERSION else runtime


def display(runtime: str, version: str) -> str:
    """As the text and Markdown tables show it: `vllm 0.29.0`."""
    return f"{runtime} {version}" if version != ANY_VERSION else runtime
