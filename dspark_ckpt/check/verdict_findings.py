"""Pure: per-runtime verdicts -> one finding per problem code, and the method-detection finding for a path."""

from __future__ import annotations

from collections.abc import Sequence

from dspark_ckpt.model.draft_config import DraftConfig
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.runtimes.compatibility import Verdict
from dspark_ckpt.runtimes.releases import assumed_from, assumption_findings
from dspark_ckpt.runtimes.selectors import RuntimeVersion

METHOD_PATH_MARKERS = (("eagle-", "eagle"), ("eagle3", "eagle3"), ("dflash", "dflash"))

# Where the right repair depends on the vocab kind, the registry's generic hint is replaced.
KIND_HINTS: dict[tuple[str, str], str] = {
    ("DSP302", "padded"): "Trim lm_head/markov_w2 to T rows and set draft_vocab_size = T (`dspark-ckpt fix "
                          "--strategy trim`, loads everywhere); an explicit zero d2t loads on vLLM 0.27-0.29 only.",
    ("DSP303", "padded"): "Trim to T rows (`dspark-ckpt fix --strategy trim`), or drop the d2t for vLLM 0.30+ only.",
    ("DSP303", "equal"): "Drop the d2t: an equal-vocab draft maps by identity (`dspark-ckpt fix --strategy drop-d2t`).",
}


def _versions(vs: Sequence[Verdict]) -> str:
    return ", ".join(str(RuntimeVersion(v.runtime, v.version)) for v in vs)


def verdict_findings(vs: Sequence[Verdict], already: set[str], kind: str | None = None) -> list[Finding]:
    """One finding per problem code, naming every runtime that fails or misbehaves because of it."""
    by_code: dict[str, tuple[list[Verdict], list[tuple[Verdict, str]]]] = {}
    for v in vs:
        if v.error is not None:
            by_code.setdefault(v.error.code, ([], []))[0].append(v)
        for issue in v.silent:
            by_code.setdefault(issue.code, ([], []))[1].append((v, issue.text))
    findings = []
    for code, (failing, silent) in sorted(by_code.items()):
        if code in already:
            continue
        parts = []
        if failing:
            parts.append(f"fails to load on {_versions(failing)}: {failing[0].error.text}")  # type: ignore[union-attr]
        for text in dict.fromkeys(t for _, t in silent):
            parts.append(f"loads on {_versions([v for v, t in silent if t == text])} but {text}")
        findings.append(finding(code, "; ".join(parts), hint=KIND_HINTS.get((code, kind or ""))))
    assumed = [(v.version, row) for v in vs if (row := assumed_from(v.contract, v.version)) is not None]
    return findings + ([] if "DSP220" in already else assumption_findings(assumed))


def method_findings(display: str, cfg: DraftConfig) -> list[Finding]:
    lowered = display.lower()
    family = cfg.family.value if cfg.family else ""
    for marker, method in METHOD_PATH_MARKERS:
        if marker in lowered:
            if not family.startswith(method) or (method == "eagle" and family.startswith("eagle3")):
                return [finding("DSP207", f"the path contains {marker!r}, so vLLM without an explicit method "
                                          f"loads this {family or 'draft'} as {method}.")]
            return []
    return []
