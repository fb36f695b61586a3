"""Findings (DSP6xx) from what a verify run observed: broken runtime mappings, illegal rows winning, skipped probes."""

from __future__ import annotations

from dspark_ckpt.check.ranges import spans
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.output.interval import rate
from dspark_ckpt.output.verify_records import ProbeStats, VerifyResult


def _mapping_findings(result: VerifyResult) -> list[Finding]:
    found = []
    for m in result.mappings:
        # An unloaded all-zero table is already the DSP302 silent issue of those runtimes.
        failures = [f for f in m.failures if m.source == "d2t" or not f.startswith("all-zero")]
        if failures:
            found.append(finding("DSP603", f"on {spans(m.runtimes)}, map_draft_to_target(arange({m.width})) "
                                           f"({m.source}): {'; '.join(failures)}."))
    return found


def _describe(s: ProbeStats) -> str:
    margin = f", largest margin {s.max_margin:+.4g} (row {s.max_margin_row})" if s.max_margin is not None else ""
    return (f"{s.source} [{s.logits}]: argmax illegal {rate(s.argmax_illegal, s.probes)}, an illegal row in the "
            f"top-{s.top_k} {rate(s.topk_any_illegal, s.probes)}{margin}")


def _probe_findings(result: VerifyResult) -> list[Finding]:
    p = result.probe
    if not p.ran:
        if p.reason and "quantised" in p.reason:
            return [finding("DSP604", f"padded-row probe skipped on {p.runtime}: {p.reason}.")]
        return []
    detail = "; ".join(_describe(s) for s in p.stats)
    where = f"on {p.runtime}'s loaded lm_head ({p.illegal_rows} illegal rows, seed {p.seed})"
    if p.stats and all(s.probes and s.tied == s.probes for s in p.stats):  # 0 illegal argmax would mean nothing
        return [finding("DSP608", f"the padded-row probe could not discriminate {where}: every probe's logits "
                                  f"tie ({', '.join(f'{s.tied:,} of {s.probes:,} {s.source} [{s.logits}]' for s in p.stats)}), "
                                  "so the argmax is the first row whatever the rows hold and the probe measured "
                                  "nothing.")]
    if any(s.argmax_illegal for s in p.stats):
        return [finding("DSP601", f"illegal rows win the argmax {where}: {detail}.")]
    if any(s.topk_any_illegal for s in p.stats):
        return [finding("DSP602", f"illegal rows enter the top-k but never win the argmax {where}: {detail}.")]
    return []


def verify_findings(result: VerifyResult) -> list[Finding]:
    found = _mapping_findings(result) + _probe_findings(result)
    if result.check_disagreements:
        found.append(finding("DSP605", "the torch run and check disagree: " + "; ".join(result.check_disagreements)
                             + "."))
    return found
