"""Pure: what the covered releases register under the config's architecture, where no family contract applies.

A target model's own config passed as the draft gets DSP231 (never DSP203/DSP309: a runtime may well register the
class, it is just not a draft); a draft class a release registers but dspark-ckpt does not model gets DSP232 (never
DSP309, which stays for a release that really lacks the name), plus what the release's code is known to do to it
without an error (SGLANG_FRESH_HEAD).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dspark_ckpt.formats.vocab_tensors import VocabTensors
from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.draft_config import DraftConfig
from dspark_ckpt.model.families import target_architecture
from dspark_ckpt.model.findings import Finding, finding
from dspark_ckpt.runtimes.generated_verdict import is_generated, not_modelled
from dspark_ckpt.runtimes.records import Verdict
from dspark_ckpt.runtimes.registered import RELEASES, Registration, registration, registrations
from dspark_ckpt.runtimes.release_model import architecture_model, modelled_release
from dspark_ckpt.runtimes.selectors import RuntimeVersion, folded
from dspark_ckpt.runtimes.serving_method import ServingMethod

# What a registration finding says instead: a target model's config (DSP231) is neither an unknown draft family
# (DSP203) nor an unsupported one (DSP309); a registered draft class dspark-ckpt does not model (DSP232) is not an
# unknown family, and its verdicts stay.
REPLACED_BY_TARGET: frozenset[FindingCode] = frozenset({"DSP203", "DSP309"})
REPLACED_BY_REGISTERED: frozenset[FindingCode] = frozenset({"DSP203"})
# SGLang EAGLE-3 classes that build a fresh ParallelLMHead(draft_vocab_size) when the config is untied and declares
# draft_vocab_size, and load the target's only when draft_vocab_size is null (load_lm_head_from_target, read by
# speculative/eagle_worker_v2.py:357 @ 0.5.23): without an lm_head in the checkpoint the head stays random.
# Eagle3DeepseekV2ForCausalLM: sglang/srt/models/kimi_k25_eagle3.py:299-312 @ 0.5.12, :335-348 @ 0.5.14,
# :347-360 @ 0.5.18-0.5.22, :350-363 @ 0.5.23 (the same code in every release that registers it, 0.5.12-0.5.23).
# Where a release's generated model built the class, its own `load_lm_head_from_target` decides instead
# (tools/sglang_release_model_worker.py head_from_target); this table stands for the releases without one.
SGLANG_FRESH_HEAD: dict[str, str] = {
    "Eagle3DeepseekV2ForCausalLM": "sglang/srt/models/kimi_k25_eagle3.py:350-363 @ 0.5.23",
}


def _spans(regs: Sequence[Registration]) -> str:
    """`vllm 0.27.0-0.33.0 (file:line @ newest)`, one run of consecutive releases at a time."""
    parts: list[str] = []
    for runtime, releases in RELEASES.items():
        mine = {r.release: r for r in regs if r.runtime == runtime}
        run: list[Registration] = []
        for release in [*releases, None]:
            if release is not None and release in mine:
                run.append(mine[release])
                continue
            if run:
                span = run[0].release if len(run) == 1 else f"{run[0].release}-{run[-1].release}"
                parts.append(f"{runtime} {span} ({run[-1].where} @ {run[-1].release})")
                run = []
    return ", ".join(parts)


def _generated_head(version: str, architecture: str) -> tuple[bool, str] | None:
    """Whether the release's generated model (runtimes/release_data/sglang-X) says the class keeps its own head
    when draft_vocab_size is declared (its `load_lm_head_from_target` False after __init__), with where it says
    so; None where no generated model built the class."""
    release = modelled_release("sglang", version)
    model = architecture_model("sglang", release, architecture) if release is not None else None
    declared = model.head_from_target.get("declared") if model is not None and model.not_built is None else None
    if model is None or not isinstance(declared, bool):
        return None
    said = f"{model.where} @ {release}: load_lm_head_from_target is {declared} with draft_vocab_size declared"
    return not declared, f"{said}, generated"


def _fresh_head(cfg: DraftConfig, raw: Mapping[str, Any], vocab: VocabTensors,
                runtimes: Sequence[RuntimeVersion]) -> list[Finding]:
    arch = cfg.architecture or ""
    # the DeepSeek/Kimi/Llama config classes default tie_word_embeddings to False (inferred from transformers)
    if vocab.lm_head is not None or raw.get("tie_word_embeddings") is True or raw.get("draft_vocab_size") is None:
        return []
    hit: list[RuntimeVersion] = []
    cites: list[str] = []
    for rv in runtimes:
        if rv.runtime != "sglang" or not registration("sglang", rv.version, arch):
            continue
        observed = _generated_head(rv.version, arch)  # the release's own class, where it was built on CPU
        own, where = observed if observed is not None else (arch in SGLANG_FRESH_HEAD, SGLANG_FRESH_HEAD.get(arch))
        if own and where is not None:
            hit.append(rv)
            cites += [where] if where not in cites else []
    if not hit:
        return []
    names = ", ".join(str(rv) for rv in hit)
    return [finding("DSP315", f"loads on {names} but the checkpoint has no lm_head: {cfg.architecture} builds a "
                              f"fresh ParallelLMHead({raw.get('draft_vocab_size')}) because draft_vocab_size is "
                              "declared and the config is untied, and nothing loads it: the head stays random "
                              f"(acceptance 0) ({'; '.join(cites)}).", file="config.json",
                    template="Ship the draft's trained lm_head, or set draft_vocab_size to null so SGLang loads "
                             "the target's head (load_lm_head_from_target).")]


def _generated_text(architecture: str, runtimes: Sequence[RuntimeVersion], verdicts: Sequence[Verdict]) -> str:
    """Where the releases' generated models judged the draft anyway (runtimes/generated_verdict.py), and where
    no verdict is given."""
    judged = [RuntimeVersion(v.runtime, v.version) for v in verdicts if is_generated(v.contract)]
    left = [rv for rv in runtimes if registration(rv.runtime, rv.version, architecture) and rv not in judged]
    text = ""
    if judged:
        text += (f": on {folded(judged)} every tensor is judged on the release's generated model (its own "
                 "__init__ and load_weights, run on CPU), the vocabulary tensors' shapes included")
    if left:
        text += f"{';' if judged else ','} no verdict is given on {folded(left)}"
        whys = list(dict.fromkeys(why for rv in left if (why := not_modelled(rv.runtime, rv.version, architecture))))
        text += f" ({'; '.join(whys)})" if whys else ""
    elif not judged:
        text += ", so no verdict is given where a release registers it"
    return text + "."


def registration_findings(raw: Mapping[str, Any] | None, cfg: DraftConfig | None, vocab: VocabTensors,
                          runtimes: Sequence[RuntimeVersion], findings: Sequence[Finding],
                          verdicts: tuple[Verdict, ...], method: ServingMethod | None = None,
                          ) -> tuple[list[Finding], tuple[Verdict, ...]]:
    """The findings and verdicts, with DSP231/DSP232 in place of what they replace; "not a draft" (DSP231) only
    where no serving method was named (runtimes/serving_method.py)."""
    if raw is None or cfg is None:
        return list(findings), verdicts
    target = target_architecture(dict(raw)) if method is None or not method.named else None
    if target is not None:
        models = [r for r in registrations(target) if not r.draft]
        known = f"; registered as a model by {_spans(models)}" if models else ""
        found = finding("DSP231", f"not a draft: config.json names the target model {target}{known}. Pass the "
                                  "draft's folder as the checkpoint and this folder as --target; a draft exported "
                                  "under a base class (an EAGLE-1 head as LlamaForCausalLM) is judged as served "
                                  "when --speculative-config names its method.", file="config.json")
        return [*(f for f in findings if f.code not in REPLACED_BY_TARGET), found], ()
    if cfg.family is not None or cfg.architecture is None:
        return list(findings), verdicts
    drafts = [r for r in registrations(cfg.architecture) if r.draft]
    if not drafts:
        return list(findings), verdicts
    found = finding("DSP232", f"registered, not modelled: {cfg.architecture} is a draft class registered by "
                              f"{_spans(drafts)}; dspark-ckpt models no vocab contract for it"
                              f"{_generated_text(cfg.architecture, runtimes, verdicts)}", file="config.json")
    kept = [f for f in findings if f.code not in REPLACED_BY_REGISTERED]
    return [*kept, found, *_fresh_head(cfg, raw, vocab, runtimes)], verdicts
