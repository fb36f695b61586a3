"""Pure: the config one SGLang release builds from a draft's config.json, before any weight is read.

SGLang takes config.json as written (AutoConfig by model_type; no speculators conversion, no method rewrite) and
resolves `architectures[0]` against the EntryClass names of that release's `sglang/srt/models/` (models/registry.py);
a name none registers, with no `auto_map.AutoModel`, fails in model_loader/utils.py:get_model_architecture with
"Cannot find model module ..." (sglang_rows.py cites the line per release). That is the build's own error, so a
draft whose family dspark-ckpt does not model (a speculators config, say) still gets SGLang's verdict. The config
as written is also what the class is built from (`hf`): the release's generated model (runtimes/landing.py) judges
every other tensor against it, as for vLLM.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from dspark_ckpt.model.draft_config import positive_int
from dspark_ckpt.model.families import Family, family_for
from dspark_ckpt.model.findings import shown_name
from dspark_ckpt.runtimes import registered as entry_classes
from dspark_ckpt.runtimes import sglang_target_class, strict_config
from dspark_ckpt.runtimes.config_classes import config_class
from dspark_ckpt.runtimes.records import AUX_FAMILIES, BuiltConfig, Issue
from dspark_ckpt.runtimes.release import covers
from dspark_ckpt.runtimes.sglang_config import SPECULATORS_UNREAD as UNREAD_TEXT
from dspark_ckpt.runtimes.sglang_config import unread_speculators
from dspark_ckpt.runtimes.sglang_rows import SGLANG_ROWS, nearest_row, refusal_messages

SOURCE = "sglang/srt/model_loader/utils.py get_model_architecture (architectures[0] against the EntryClass names)"


def _entry_class(arch: str, family: Family | None, version: str) -> bool:
    """A name no family models is the release's own EntryClass question (registered_architectures.json): a class
    it lists resolves, whether a draft dspark-ckpt does not model or a target model passed as the draft."""
    return family is None and entry_classes.registration("sglang", version, arch) is not None


def registered(version: str) -> frozenset[str]:
    """Every draft architecture name an EntryClass of this release lists (the rows' `architectures`); a release
    outside the table takes the nearest row of each family."""
    names: set[str] = set()
    for family in Family:
        row = next((c for c in SGLANG_ROWS if c.family == family and covers("sglang", c.first, c.last, version)),
                   None) or nearest_row(version, family)
        if row is not None and row.supported:
            names |= set(row.architectures)
    return frozenset(names)


# The same words as the rows' own check (sglang_eval.registration), given here too so that a speculators config whose
# class no family describes (a DSparkDraftModel without model_type) is answered, not left without a row.
SPECULATORS_UNREAD = Issue("DSP348", UNREAD_TEXT, verbatim=False)


# One message per wording and name, shared by every release that words it so (a hostile name may be megabytes long).
@functools.cache
def _unregistered(wording: str, verbatim: bool, arch: str) -> Issue:
    return Issue("DSP309", wording.format(arch=shown_name(arch)), verbatim)


def build_sglang(raw: Mapping[str, Any], version: str, method: str | None = None) -> BuiltConfig:
    """`method`: the serving method the deploy or producer named (vLLM's spelling of SGLang's algorithm), or None."""
    archs = raw.get("architectures")
    arch = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    model_type = raw.get("model_type") if isinstance(raw.get("model_type"), str) else None
    vocab = positive_int(raw.get("vocab_size"))
    error = None
    if arch is None:
        error = Issue("DSP309", "config.json names no architecture: SGLang cannot resolve a model class",
                      verbatim=False)
    family = family_for(arch, model_type)
    if arch is not None and arch not in registered(version) and not _entry_class(arch, family, version):
        said = refusal_messages(version)
        error = _unregistered(said.unregistered, said.unregistered_verbatim, arch)
    elif arch is not None and unread_speculators(raw):
        error = SPECULATORS_UNREAD  # the class resolves, but from sizes SGLang never reads
    if arch is not None and (null := strict_config.refused_null("sglang", version, raw)) is not None:
        error = null  # get_config's AutoConfig refuses it first, before the class is looked up
    silent: tuple[Issue, ...] = ()
    if error is None and family is None and sglang_target_class.routed_as_target(version, arch, method):
        found = sglang_target_class.issue(version, str(arch), str(method), raw)
        error, silent = (found, ()) if sglang_target_class.raises(str(method)) else (None, (found,))
    aux = None
    if family in AUX_FAMILIES and error is None:
        from dspark_ckpt.runtimes import eagle3_aux_sglang  # here: only an EAGLE-3 draft has aux facts

        aux = eagle3_aux_sglang.read_aux(raw, family, version)
    return BuiltConfig("sglang", version, arch, model_type, config_class("sglang", model_type) or "PretrainedConfig",
                       method, family, vocab, positive_int(raw.get("draft_vocab_size")) or vocab,
                       error=error, source=SOURCE, aux=aux, hf=dict(raw), silent=silent)
