"""Every finding code dspark-ckpt can emit, with its severity and documentation; codes are never reused."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from dspark_ckpt.model.codes import FindingCode
from dspark_ckpt.model.hint_template import documented_fix, with_repair
from dspark_ckpt.model.repair_catalog import HINT_REPAIR
from dspark_ckpt.model.severity import Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


class Category(StrEnum):
    """What a finding is about; what it means for fix, verify and the reports follows from the category table."""

    HEADER = "safetensors-header"
    LAYOUT = "layout"
    CONFIG = "config"
    CONTRACT = "runtime-contracts"
    SHAPE = "tensor-shapes"
    MAPPING = "mapping-contents"
    REPAIR = "fix"
    VERIFY = "verify"
    HUB = "hub"
    DEPLOY = "deploy"

    @property
    def blocks_fix(self) -> bool:
        """An error here is structural: fix refuses until it is mended, since a repair would build on it."""
        return self in (Category.HEADER, Category.LAYOUT, Category.CONFIG)


# Layout problems that stop every loader before any model code runs (the whole header category does too).
_STOPS_LOADING: frozenset[FindingCode] = frozenset({"DSP101", "DSP102", "DSP103", "DSP104", "DSP110", "DSP112"})


@dataclass(frozen=True, slots=True)
class Rule:
    """One finding code: its severity, category and the documentation `explain` prints."""

    code: FindingCode
    slug: str
    severity: Severity
    summary: str
    what: str
    why: str
    example: str
    fix: str
    repair: str | None = None  # the fix strategy its hint names: set from model/repair_catalog.py's hint_for
    category: Category = Category.CONTRACT  # set by the section the rule is declared in
    stops_loading: bool = False  # the file cannot be read by any runtime: nothing else about it can load
    # `fix` as written, command markers kept (model/hint_template.py): a finding's default hint, filled in for the
    # checkpoint by check/verify. `fix` itself is the documentation form (DRAFT, T placeholders), set by _section.
    fix_template: str = ""
    # (family, fix) where the right fix depends on the draft's family (model/families.py values; markers as in
    # `fix`): a finding about a draft of that family gets it as its hint instead of `fix`.
    family_fix: tuple[tuple[str, str], ...] = ()
    # The runtime sizes the tensor (or the check) from draft_vocab_size: a contradicting draft_vocab_size explains
    # the error (DSP216 takes its place), and a shape finding of this kind is not repeated beside DSP216.
    d_sized: bool = False
    # The contract verdicts report it for the draft already: the deploy preflight does not repeat it.
    also_a_verdict: bool = False

    def fix_for(self, family: str | None) -> str:
        """The hint template for a draft of `family` (None: unknown): its own text where the rule has one."""
        return next((with_repair(text, self.repair) for name, text in self.family_fix if name == family),
                    self.fix_template)


def _section(category: Category, *rules: Rule) -> tuple[Rule, ...]:
    """A rule's repair is the one whose `hint_for` names its code (model/repair_catalog.py), never its own."""
    if declared := [r.code for r in rules if r.repair is not None]:
        raise ValueError(f"{', '.join(declared)}: name the repair in model/repair_catalog.py (hint_for)")
    return tuple(_in_section(r, category, HINT_REPAIR.get(r.code)) for r in rules)


def _in_section(r: Rule, category: Category, repair: str | None) -> Rule:
    return replace(r, category=category, repair=repair, fix=documented_fix(with_repair(r.fix, repair)),
                   fix_template=with_repair(r.fix, repair),
                   stops_loading=category is Category.HEADER or r.code in _STOPS_LOADING)


def _rules(*rules: Rule) -> dict[str, Rule]:
    table: dict[str, Rule] = {}
    for r in rules:
        if r.code in table:
            raise ValueError(f"duplicate rule code {r.code}")
        table[r.code] = r
    return table


_REF = "The reference safetensors reader (safetensors/src/tensor.rs) rejects such a file, so no runtime loads it."

RULES: dict[str, Rule] = _rules(
    # --- DSP0xx: one code per rule of the safetensors header format, in the reference reader's order ---
    *_section(Category.HEADER,
    Rule("DSP001", "file-too-small", ERROR, "Shard is shorter than the 8-byte header length",
         "The file has fewer than 8 bytes, so it cannot hold the little-endian header length.", _REF,
         "An empty `model.safetensors` left by an interrupted upload.", "Re-upload or regenerate the shard."),
    Rule("DSP002", "header-too-large", ERROR, "Declared header length exceeds 100,000,000 bytes",
         "The first 8 bytes declare a JSON header longer than the 100 MB limit.", _REF,
         "A header length of 2**63 in a corrupted or hostile file.", "Regenerate the shard with a safetensors writer."),
    Rule("DSP003", "header-beyond-file", ERROR, "Header extends past the end of the file",
         "8 + the declared header length is larger than the file.", _REF,
         "A shard truncated inside its JSON header.", "Re-download or regenerate the shard."),
    Rule("DSP004", "header-not-utf8", ERROR, "Header is not valid UTF-8",
         "The header bytes do not decode as UTF-8.", _REF,
         "A binary blob renamed to `.safetensors`.", "Regenerate the shard."),
    Rule("DSP005", "header-not-json", ERROR, "Header is not valid JSON",
         "The header is not parseable JSON (or nests deeper than any real header).", _REF,
         "A header cut off mid-string, or 100,000 nested brackets.", "Regenerate the shard."),
    Rule("DSP006", "header-not-object", ERROR, "Header is not a JSON object of tensor entries",
         "The header must be a JSON object starting with `{`, each entry an object with dtype, shape and data_offsets.",
         _REF, 'A header of `[1, 2]` or an entry `"w": 3`.', "Regenerate the shard."),
    Rule("DSP007", "duplicate-key", ERROR, "Header repeats a key",
         "A tensor name (or a field inside an entry or `__metadata__`) appears twice in the JSON header.",
         "JSON parsers silently keep one of the two, so different tools see different tensors.",
         'Two `"lm_head.weight"` entries.', "Regenerate the shard so every tensor appears once."),
    Rule("DSP008", "bad-metadata", ERROR, "`__metadata__` is not an object of string to string",
         "The optional `__metadata__` entry must map strings to strings.", _REF,
         '`"__metadata__": {"format": 1}`.', "Store metadata values as strings."),
    Rule("DSP009", "unknown-dtype", ERROR, "Tensor has a dtype the format does not define",
         "The entry's dtype is not one of the safetensors dtypes.", _REF, '`"dtype": "F128"`.',
         "Store the tensor in a supported dtype."),
    Rule("DSP010", "bad-shape", ERROR, "Tensor shape is not a list of non-negative integers",
         "A shape entry is negative, fractional, boolean or not a number.", _REF, '`"shape": [-1, 8]`.',
         "Regenerate the shard."),
    Rule("DSP011", "size-overflow", ERROR, "Tensor size overflows a 64-bit integer",
         "prod(shape) * bits per element does not fit in 64 bits.", _REF, '`"shape": [4294967296, 4294967296, 16]`.',
         "Regenerate the shard."),
    Rule("DSP012", "bad-offsets", ERROR, "data_offsets is not a [begin, end] pair with begin <= end",
         "The entry's data_offsets must be two non-negative integers, begin <= end.", _REF,
         '`"data_offsets": [16, 8]`.', "Regenerate the shard."),
    Rule("DSP013", "offsets-not-contiguous", ERROR, "Tensor data ranges have gaps or overlaps",
         "Sorted by offset, each tensor must start where the previous one ended, the first at 0.", _REF,
         "Two tensors sharing bytes, or a hole between them.", "Regenerate the shard."),
    Rule("DSP014", "size-mismatch", ERROR, "Tensor byte range does not match its shape and dtype",
         "end - begin differs from prod(shape) * itemsize.", _REF,
         "An F32 [4, 4] tensor with a 32-byte range.", "Regenerate the shard."),
    Rule("DSP015", "buffer-size-mismatch", ERROR, "File size does not match the header (truncated or trailing bytes)",
         "8 + header length + the last tensor's end offset must equal the file size exactly.", _REF,
         "A shard cut short by a failed download.", "Re-download or regenerate the shard."),
    Rule("DSP016", "git-lfs-pointer", ERROR, "Shard is a Git-LFS pointer, not the weights",
         "The file is the small text pointer Git-LFS stores in place of a large file.",
         "The weights were never fetched; every loader fails on this file.",
         "`version https://git-lfs.github.com/spec/v1` in `model.safetensors`.",
         "Run `git lfs pull` or download with huggingface_hub."),
    Rule("DSP017", "misaligned-subbyte", ERROR, "Sub-byte tensor does not end on a byte boundary",
         "An F4/F6 tensor's element count times its bit width is not a multiple of 8.", _REF,
         "An F4 tensor of shape [3].", "Pad the tensor to a whole number of bytes."),
    Rule("DSP018", "unreadable-file", ERROR, "A checkpoint file cannot be read",
         "The file is missing permissions, is a directory, or the read failed.",
         "Every loader fails on it.", "A folder named `model.safetensors`.", "Fix the file's permissions or replace it."),
    Rule("DSP019", "header-too-complex", ERROR, "Header holds more JSON values than dspark-ckpt will decode",
         "The header would decode into more than 3,300,000 weighted JSON values (about 110,000 tensor entries): "
         "every separator outside strings counts, a key/value pair or an object four times, a list twice, since "
         "that is what each costs the decoder. This is dspark-ckpt's own resource guard, not a rule of the format: "
         "decoded JSON costs 15-40x its text in memory.",
         "Real shards hold a few thousand tensors; a header this dense is almost always hostile (millions of empty "
         "lists, millions of short strings, a shape with millions of dimensions) and would cost gigabytes and tens "
         "of seconds to decode.",
         "A 99 MB header of `[],[],[],...` or of 8 million `\"k\": \"v\"` pairs inside `__metadata__`.",
         "Split the tensors over more shards; if this is a real checkpoint, report it."),
    Rule("DSP020", "file-changed", ERROR, "A file changed while it was being checked",
         "Between two reads of the same file (its header, then its d2t/t2d bytes) its size, modification time or "
         "inode changed: another process rewrote, truncated or replaced it while dspark-ckpt read it.",
         "The header and the bytes read later may come from different files, so nothing reported about the file "
         "is reliable; a runtime loading it at that moment would read a torn file.",
         "`huggingface-cli download` (or `fix --in-place` in another shell) writing the shard while `check` runs.",
         "Wait for the writer to finish, then check again."),
    ),
    # --- DSP1xx: checkpoint layout and the shard index ---
    *_section(Category.LAYOUT,
    Rule("DSP101", "no-weights", ERROR, "The checkpoint has no safetensors weights",
         "No `*.safetensors` file and no index was found.", "Nothing can be loaded.",
         "A folder with only `config.json` or `pytorch_model.bin`.", "Convert the weights to safetensors."),
    Rule("DSP102", "bad-index", ERROR, "`model.safetensors.index.json` is malformed",
         "The index is not JSON, or `weight_map` is not an object of tensor name to file name.",
         "Loaders choose shards from the weight_map; a broken index fails every load.",
         '`{"weight_map": ["a"]}`.', "Regenerate the index from the shards."),
    Rule("DSP103", "missing-shard", ERROR, "The index names a shard that does not exist",
         "A file named in `weight_map` is not in the checkpoint.", "Loading fails with a missing-file error.",
         "`model-00002-of-00002.safetensors` never uploaded.", "Upload the shard or regenerate the index."),
    Rule("DSP104", "path-escapes", ERROR, "A shard path leaves the checkpoint folder",
         "A weight_map entry is absolute, contains `..`, or is a symlink resolving outside the folder.",
         "A checkpoint must be self-contained; a path that escapes it reads files it does not own.",
         '`"weight_map": {"w": "../../etc/passwd"}`.', "Use plain file names inside the checkpoint folder."),
    Rule("DSP105", "tensor-not-in-named-shard", ERROR, "A tensor is not in the shard the index names",
         "The index maps a tensor to a shard whose header does not contain it.",
         "Loaders open only the named shard and miss the tensor.", '`"lm_head.weight": "model-00001..."` but it lives in shard 2.',
         "Regenerate the index from the shards."),
    Rule("DSP106", "tensor-in-two-shards", ERROR, "A tensor appears in more than one shard",
         "Two shards both contain a tensor of the same name.",
         "Which copy a runtime loads depends on file order; they may differ.", "`d2t` in two shards after a partial fix.",
         "Remove the stale copy."),
    Rule("DSP107", "shard-not-in-index", WARNING, "A safetensors file is not referenced by the index",
         "A `*.safetensors` file in the folder is not named in `weight_map`.",
         "Its tensors are ignored by index-driven loaders and read by glob-driven ones.",
         "A leftover `model.safetensors` beside sharded files.", "Delete the file or add it to the index."),
    Rule("DSP108", "total-size-mismatch", WARNING, "Index `total_size` differs from the shards' tensor bytes",
         "`metadata.total_size` is not the sum of the tensor byte sizes.",
         "It betrays a stale index, usually after shards were replaced.", '`"total_size": 123` for 4 GB of shards.',
         "Regenerate the index."),
    Rule("DSP109", "tensor-missing-from-index", WARNING, "A tensor is in a shard but not in the index",
         "A shard named by the index holds a tensor the `weight_map` does not list.",
         "Index-driven loaders never load it.", "A `d2t` appended to a shard without updating the index.",
         "Regenerate the index."),
    Rule("DSP110", "index-encoding", ERROR, "`model.safetensors.index.json` is not plain UTF-8 JSON",
         "The index starts with a byte-order mark, is UTF-16 or UTF-32, holds a NUL byte, or "
         "holds a lone surrogate escape (`\\ud800` without its pair). Python's `json.loads` on bytes guesses "
         "such encodings silently; the loaders do not.",
         "vLLM and transformers open the index as UTF-8 text and `json.load` it: a BOM or UTF-16 raises, so the "
         "checkpoint does not load; a lone surrogate is not a character and no UTF-8 tool can write it back.",
         "An index saved by an editor as \"UTF-8 with BOM\" or as UTF-16 LE.",
         "Save the index as UTF-8 without a BOM, or regenerate it."),
    Rule("DSP111", "too-many-shards", ERROR, "The checkpoint names more safetensors files than dspark-ckpt checks",
         "The index names, or the folder holds, more than 4,096 distinct `*.safetensors` files; only the first "
         "4,096 (sorted by name) were looked at, so findings about the others are missing.",
         "Real checkpoints have at most a few hundred shards and a draft one to a few; thousands are a broken or "
         "hostile index, and checking each would cost a stat (or a Hub request).",
         "An index whose weight_map puts each of a million tensors in its own file.",
         "Regenerate the index with the tool that wrote the shards."),
    Rule("DSP112", "index-too-large", ERROR, "The index is larger or denser than dspark-ckpt reads",
         "`model.safetensors.index.json` is above 64 MiB, or would decode into more than 6,000,000 weighted JSON "
         "values (about 1.2 million weight_map entries); it was not decoded.",
         "A real index is a few MB (10^5 entries at most); decoding a hostile one would cost gigabytes.",
         "A 2 GB index of padding, or one listing ten million tensors.",
         "Regenerate the index with the tool that wrote the shards."),
    ),
    # --- DSP2xx: configuration ---
    *_section(Category.CONFIG,
    Rule("DSP201", "no-config", ERROR, "The checkpoint has no `config.json`",
         "`config.json` is missing (or, for a single file, `--config` was not given).",
         "The vocab sizes and the architecture come from it; nothing can be classified.",
         "Only `model.safetensors` uploaded.", "Add the draft's config.json, or pass `--config`."),
    Rule("DSP202", "bad-config", ERROR, "`config.json` is not a JSON object",
         "The config could not be read as a JSON object.", "Every runtime fails to parse it.",
         "A config that is a list, or truncated JSON.", "Fix the JSON."),
    Rule("DSP203", "unknown-family", WARNING, "The draft architecture is not one dspark-ckpt knows",
         "`architectures` names no known draft family (Qwen3 DSpark, Qwen3-Omni DSpark, Gemma4 DSpark, DFlash, "
         "DFlash2, EAGLE-3, P-EAGLE; or a speculators type eagle3, peagle, dflash, dflash2, dspark).",
         "No family contract can be evaluated. Where a vLLM release has no class for the name at all, its verdict is "
         "the registry's error (DSP309); a name vLLM registers as a plain model gets no verdict.",
         '`"architectures": ["MyDraft"]`.', "Check the architecture name, or report the family to dspark-ckpt."),
    Rule("DSP204", "bad-vocab-size", ERROR, "Draft `vocab_size` is missing or not a positive integer",
         "The draft input vocabulary V must be a positive integer (at most 2**40).",
         "Runtimes size embed_tokens from it.", '`"vocab_size": "32000"` or `-1`.', "Set the real input vocab size."),
    Rule("DSP205", "bad-draft-vocab-size", ERROR, "`draft_vocab_size` is not a positive integer",
         "`draft_vocab_size` must be absent, null, or a positive integer (at most 2**40).",
         "Runtimes size lm_head and d2t from it.", '`"draft_vocab_size": 1.5` or `true`.',
         "Set it to the lm_head row count, or remove it for an un-pruned draft."),
    Rule("DSP206", "target-vocab-unknown", INFO, "The target vocabulary is unknown: classification skipped",
         "Neither `--target` nor `--target-vocab-size` was given, so pruned/equal/padded cannot be decided.",
         "The runtime contracts all depend on T; only structural checks ran.", "`dspark-ckpt check ./draft`.",
         "Pass `--target DIR` or `--target-vocab-size N`."),
    Rule("DSP207", "method-misdetected", WARNING, "The checkpoint path makes vLLM pick the wrong method",
         "vLLM infers the method from the path first: `eagle-`, `eagle3`, `dflash` in it win over the architecture.",
         "A DSpark draft in a folder named `*eagle3*` is loaded as EAGLE-3 and fails or misbehaves.",
         "`/models/qwen3-eagle3-dspark/`.", "Rename the folder, or pass `method` explicitly in the speculative config."),
    Rule("DSP208", "bad-config-field", WARNING, "A config field used by the checks is invalid",
         "`hidden_size`, `markov_rank` or a confidence-head flag has the wrong type.",
         "Shape checks that need it are skipped.", '`"markov_rank": "16"`.', "Fix the field."),
    Rule("DSP209", "topk-out-of-range", ERROR, "`dspark_draft_topk` is outside [1, draft vocab]",
         "vLLM 0.28+ requires 1 <= dspark_draft_topk <= draft_vocab_size.",
         "The speculative config is rejected at start-up.", '`"dspark_draft_topk": 0`.', "Choose k in [1, D].",
         also_a_verdict=True),
    Rule("DSP210", "target-config-unusable", ERROR, "The target config has no usable vocab_size",
         "The target's config.json (or its text sub-config) has no positive integer vocab_size.",
         "T cannot be known, so the draft cannot be classified.", "A target config without `vocab_size`.",
         "Pass `--target-vocab-size N`. (Retired as a finding: an unusable target stops the run, so it is the "
         "operational error DSP-E035, exit 2; the code is kept so it is never reused.)"),
    Rule("DSP211", "config-encoding", ERROR, "`config.json` is not plain UTF-8 JSON",
         "config.json starts with a byte-order mark, is UTF-16 or UTF-32, holds a NUL byte, "
         "or holds a lone surrogate escape (`\\ud800` without its pair). Python's `json.loads` on bytes guesses "
         "such encodings silently; the loaders do not.",
         "transformers reads config.json as UTF-8 text (`open(..., encoding=\"utf-8\")`, then `json.loads`): a BOM "
         "or UTF-16 raises, so no runtime starts; a lone surrogate is not a character and breaks any rewrite.",
         "A config.json saved by an editor as \"UTF-8 with BOM\".",
         "Save config.json as UTF-8 without a BOM; replace a lone surrogate escape by the text it stood for."),
    Rule("DSP212", "bad-architectures", ERROR, "`architectures` is empty, a string, or holds non-strings",
         "config.json's `architectures` must be a non-empty list of strings whose first names the model class; "
         "here it is an empty list, a bare string, another JSON type, or a list whose entries are not strings.",
         "vLLM resolves the model class from this list: an empty list fails at start-up ('No model architectures "
         "are specified'), a bare string is read character by character, other values crash; dspark-ckpt cannot "
         "tell the family either, so no runtime contract was evaluated.",
         '`"architectures": "Qwen3DSparkModel"`, `"architectures": []` or `"architectures": [null]`.',
         'Write it as a list of class names: `"architectures": ["Qwen3DSparkModel"]`.'),
    Rule("DSP213", "config-too-large", ERROR, "`config.json` is larger or denser than dspark-ckpt reads",
         "config.json is above 64 MiB, or would decode into more than 6,000,000 weighted JSON values; it was not "
         "decoded.",
         "A real config.json is a few KB; decoding a hostile one would cost gigabytes, so every check that needs "
         "the config was skipped.",
         "A config.json of a million nested empty lists.",
         "Replace it with the config the draft was trained with."),
    Rule("DSP230", "shard-given", INFO, "A shard of a sharded checkpoint was given: its folder was checked",
         "The file named on the command line is one shard of a sharded checkpoint: "
         "`model.safetensors.index.json` is beside it, or its name says `-0000i-of-0000n`. dspark-ckpt checked "
         "the folder holding it instead (once, however many of its shards were given, as a shell glob gives them).",
         "A shard alone lacks the tensors the other shards hold: checked by itself it would seem to have no "
         "lm_head or no d2t, fail on runtimes where the whole checkpoint loads, and invite a repair that would "
         "break the real checkpoint.",
         "`dspark-ckpt check draft/model-00001-of-00003.safetensors`, or `dspark-ckpt check draft/*.safetensors`.",
         "Nothing to fix in the checkpoint: give the folder ({check}) to skip this note."),
    Rule("DSP231", "not-a-draft", ERROR, "The folder given as the draft holds a target model",
         "config.json names a plain model class (e.g. `Qwen2ForCausalLM`) and nothing of a draft: no draft "
         "architecture, no draft-only key (draft_vocab_size, speculators_config, eagle_config, ...). It is a target "
         "model's folder passed where the draft belongs.",
         "A runtime may well register the class (SGLang lists every target model in its EntryClass table), so "
         "'not a registered model' would be false; the real problem is that nothing here drafts: the vocab "
         "contracts of a draft do not apply to it.",
         "`dspark-ckpt check Qwen2.5-7B-Instruct --target Qwen2.5-7B-Instruct`.",
         "Pass the draft's folder as the checkpoint to check, and give this folder as --target: it is the target "
         "the draft is checked against."),
    Rule("DSP232", "registered-not-modelled", WARNING, "A draft architecture the runtimes register, not modelled here",
         "`architectures` names a draft class that a covered release registers (vLLM's "
         "`_SPECULATIVE_DECODING_MODELS`, an SGLang `EntryClass`; runtimes/registered_architectures.json, generated "
         "from the wheels), but dspark-ckpt models no vocab contract for it (EAGLE-1, EAGLE-3 on DeepSeek/Kimi, "
         "Llama4 or MiniMax backbones, Medusa, separately shipped MTP heads, DeepSeek/K3/Muse DSpark ...). The "
         "message names the class and the releases that register it.",
         "The runtimes will build it, so it is not 'unsupported'; but no contract verdict (lm_head, d2t, row "
         "counts) can be given, and a problem only its loader knows stays unchecked.",
         "An EAGLE-3 draft for Kimi-K2.5 with `architectures: [\"Eagle3DeepseekV2ForCausalLM\"]`.",
         "Nothing to fix from this note alone; test the draft on the runtime you deploy (acceptance rate), and read "
         "the silent findings beside it."),
    Rule("DSP215", "dspark-settings-nested", ERROR, "DSpark settings are only in a nested dflash_config/dspark_config",
         "config.json holds markov_rank (or another DSpark setting: markov_head_type, enable_confidence_head, "
         "confidence_head_with_markov, dspark_draft_topk, block_size) only inside `dflash_config`, `dspark_config` or "
         "`eagle_config`. vLLM's Qwen3 DSpark reads them from the top level only, in every release 0.27-0.33: "
         "Qwen3DSparkModel.__init__ reads `config.markov_rank` as a plain attribute, the others with defaults.",
         "Without a top-level markov_rank every vLLM version fails before loading a weight (`AttributeError: "
         "'Qwen3Config' object has no attribute 'markov_rank'`); a nested confidence-head flag is silently ignored "
         "and the trained head dropped.",
         "A SpecForge 0.2.0 DSpark export: `\"dflash_config\": {\"markov_rank\": 256, \"enable_confidence_head\": "
         "true, ...}` and no top-level markov_rank.",
         "Write the settings at the top level of config.json, where the runtime reads them ({fix}, config only)."),
    Rule("DSP216", "draft-vocab-contradicts-tensors", ERROR,
         "`draft_vocab_size` disagrees with the rows every D-sized tensor has",
         "config.json declares a draft_vocab_size D, but lm_head, markov_head.markov_w2 and d2t (those present) all "
         "have another row count R. Runtimes never derive D from a tensor: they size those parameters from the "
         "config and then refuse, or misuse, the weights.",
         "The draft looks pruned (or padded) when its weights are not: a missing lm_head or d2t is reported where "
         "none is needed, the row-count assertions fail, and a trim would cut real rows.",
         "SpecForge 0.2.0 with `\"draft_vocab_size\": 32000` copied from an EAGLE-3 template: its DSpark markov_w2 "
         "is built with vocab_size rows (151936) and it has no lm_head.",
         "Set draft_vocab_size to the rows the tensors have ({fix}, config only)."),
    Rule("DSP218", "dspark-draft-model-name", WARNING,
         "A Qwen3 DSpark draft is named DSparkDraftModel: vLLM 0.25-0.28 load the DeepSeek-V4 draft instead",
         "config.json says `architectures: [\"DSparkDraftModel\"]` with `model_type: qwen3` (SpecForge's name for its "
         "DSpark draft). DSparkDraftModel is vLLM's DeepSeek-V4 draft: with method dspark, 0.25 through 0.28 set "
         "model_type deepseek_v4 and build that class; only 0.29+ rename a Qwen3-typed DSparkDraftModel to "
         "Qwen3DSparkModel first (config/speculative.py 0.29 L1360-1368).",
         "The draft fails on vLLM 0.25-0.28 (`AttributeError: 'Qwen3Config' object has no attribute 'hc_mult'`).",
         "A SpecForge 0.2.0 DSpark export.",
         "Name the architecture Qwen3DSparkModel in config.json ({fix}, config only), which every release from "
         "0.25 loads as Qwen3 DSpark."),
    Rule("DSP217", "target-vocab-from-t2d", INFO, "T was taken from the draft's own t2d",
         "No --target or --target-vocab-size was given, and the draft ships a t2d, which has one flag per target "
         "id: its length is the target vocabulary the draft was pruned for. (A speculators config's "
         "transformer_layer_config.vocab_size is not T: vLLM builds the draft's input vocabulary V from it.)",
         "The runtime verdicts are evaluated against that T; the target you deploy may differ.",
         "An EAGLE-3 draft from `speculators` 0.9.0 with t2d [151936] checked without --target.",
         "Pass `--target DIR` (or `--target-vocab-size N`) to check against the target you deploy."),
    ),
    # --- DSP3xx: vocab-side tensors, by what is missing or extra ---
    *_section(Category.CONTRACT,
    Rule("DSP301", "pruned-without-lm-head", ERROR, "Pruned draft (D < T) ships no lm_head of its own",
         "The draft output vocabulary is smaller than the target's, yet the checkpoint has no `lm_head` weight. "
         "The full target head (T rows) cannot stand in for a D-row head.",
         "vLLM 0.29-0.33 refuses to load it (Qwen3 DSpark); 0.34 loads it with lm_head as initialised; older "
         "versions and DFlash/EAGLE-3 share the width-T target head and fail at run time with a shape mismatch, or "
         "leave a random head.",
         "T = 248320, D = 32000, tensors: embed_tokens, layers.*, d2t (no lm_head.weight).",
         "Cannot be repaired: the trained head weights do not exist. Re-export the draft with its lm_head.",
         d_sized=True),
    Rule("DSP302", "reduced-without-d2t", ERROR, "Reduced-vocab draft ships no d2t mapping",
         "The runtime creates a `draft_id_to_target_id` parameter for this draft but the checkpoint has no `d2t`. "
         "SGLang 0.4.4.post2-0.4.8.post1 need one whatever D: their EAGLE worker reads the draft's hot_token_id, "
         "which only a shipped d2t sets (eagle_worker.py:122 @ 0.4.4.post2, :127 @ 0.4.5), so an EAGLE-3 draft "
         "without d2t fails at start-up with `AttributeError: ... has no attribute 'hot_token_id'`.",
         "vLLM 0.29-0.33 Qwen3 DSpark refuses to load it; elsewhere (0.34 included) d2t stays all-zero, so draft id "
         "i is used as target id i: wrong tokens and collapsed acceptance, with no error.",
         "D = 32000 < T = 128256 with lm_head but no d2t.",
         "Rebuild d2t from t2d if the checkpoint has one ({fix}); otherwise re-export it.",
         d_sized=True),
    Rule("DSP303", "unexpected-d2t", ERROR, "The runtime has no d2t parameter for this draft, but it ships one",
         "A `d2t` tensor is present while the runtime's model created no `draft_id_to_target_id` parameter "
         "(D == T in every version; D > T for Qwen3 DSpark from vLLM 0.30).",
         "Loading fails: `There is no module or parameter named 'draft_id_to_target_id' in <Class>`.",
         "A padded draft (T = 200058, D = 201024) with an explicit zero d2t, loaded on vLLM 0.30+.",
         "Drop the d2t ({fix}), or trim a padded draft to T rows."),
    Rule("DSP304", "expanded-without-embed", ERROR, "Input vocab V > T but no embed_tokens of its own",
         "The draft's input vocabulary is larger than the target's and it ships no `embed_tokens`.",
         "vLLM 0.29-0.33 refuses to load it; 0.34 loads it with embed_tokens as initialised (garbage inputs, no "
         "error); earlier versions share the T-row target embedding and index out of range.",
         "V = 201024, T = 200058, no embed_tokens.weight.", "Re-export the draft with its embedding."),
    Rule("DSP305", "padded-rows-samplable", WARNING, "Padded draft can propose ids >= T that are not tokens",
         "D > T and the identity mapping keeps rows [T, D) of lm_head; nothing masks them at sampling time.",
         "Any time an illegal row wins, the draft proposes a non-token: the target rejects it (lost acceptance) or "
         "an out-of-range index is hit.",
         "Inkling-Small DSpark: T = 200058, D = 201024.",
         "Trim lm_head and markov_w2 to T rows and set draft_vocab_size = T ({fix}).",
         # the families with no Markov head: their hint names only what they have (issue 41)
         family_fix=tuple((f, "Trim lm_head to T rows and set draft_vocab_size = T ({fix}).")
                          for f in ("eagle3-llama", "eagle3-qwen3", "dflash", "dflash2"))),
    Rule("DSP306", "padded-without-lm-head", ERROR, "Padded draft (D > T) ships no lm_head of its own",
         "D > T and the checkpoint has no `lm_head`.",
         "vLLM 0.30+ loads it with an uninitialised lm_head (garbage proposals, no error); 0.29 refuses it; "
         "0.25-0.28 share the width-T target head against a width-D markov head.",
         "T = 200058, D = 201024, no lm_head.weight.",
         "Trim markov_w2 to T rows and set draft_vocab_size = T so the target head is shared "
         "({fix}).",
         d_sized=True),
    Rule("DSP307", "own-weights-replaced", INFO, "The runtime replaces the draft's own lm_head/embedding",
         "The runtime uses the target's lm_head or embed_tokens in place of the draft's own: vLLM's Gemma4 DSpark "
         "never marks its own lm_head/embed_tokens as its own and overwrites them with the target's; SGLang drafts "
         "some families with the target's lm_head or embeds with the target's embed_tokens. The message names the "
         "weight replaced.",
         "The trained weights are silently discarded. It is info: nothing in the checkpoint can change it, and the "
         "draft loads and runs as the runtime's design means it to.", "Gemma4 DSpark with D == T and its own lm_head.",
         "Nothing to repair in the checkpoint; be aware that the weight the message names (lm_head, embed_tokens "
         "or both) comes from the target at run time, not from the draft's training."),
    Rule("DSP308", "omni-config-invalid", ERROR, "Qwen3-Omni DSpark needs 0 < D <= T and a mask id in [0, V)",
         "vLLM validates Qwen3-Omni drafts at start-up: draft_vocab_size must not exceed the thinker's text vocab, "
         "and the mask/noise token id must lie in the draft input vocabulary.",
         "The server refuses to start.", "An Omni draft with D = 152064 > T = 151936.",
         "Trim the draft to T rows ({fix}).", also_a_verdict=True),
    Rule("DSP309", "unsupported-architecture", ERROR, "The runtime version does not support this draft architecture",
         "The runtime has no model class for this architecture (e.g. Qwen3OmniDSparkModel before vLLM 0.29: `Model "
         "architectures [...] are not supported for now.`), or rewrites it to a class that cannot load it: vLLM "
         "0.25-0.28 turn a DSparkDraftModel with model_type qwen3 (SpecForge's name) into the DeepSeek-V4 draft, "
         "which fails on the Qwen3 config (`'Qwen3Config' object has no attribute 'hc_mult'`). SGLang says `Cannot find model module. "
         "'<arch>' is not a registered model ...` for a name no EntryClass of that release lists: Qwen3DSparkModel "
         "before 0.5.16, DFlashDraftModel before 0.5.11, and vLLM's names (Eagle3LlamaForCausalLM, "
         "Eagle3Qwen3ForCausalLM, Gemma4DSparkModel, Qwen3OmniDSparkModel) in every release; SGLang before 0.4.7 "
         "refuses such a name in other words, from models/registry.py (`Model architectures [...] are not "
         "supported for now. Supported architectures: ...`, every class the release imported).",
         "It cannot load correctly on that version.",
         "Qwen3OmniDSparkModel on vLLM 0.28.0; an EAGLE-3 draft named Eagle3LlamaForCausalLM on SGLang.",
         "Deploy on a version that supports the architecture; for SGLang's EAGLE-3 name the architecture "
         "LlamaForCausalLMEagle3 in config.json.",
         family_fix=(
             ("qwen3-dspark", ("Deploy on a release that registers the draft's architecture: SGLang registers "
                              "Qwen3DSparkModel from 0.5.16 (DSparkDraftModel from 0.5.17), vLLM from 0.25.0; vLLM 0.25-0.28 load a "
                              "Qwen3 DSpark draft only under the name Qwen3DSparkModel (DSP218 names that "
                              "config-only repair).")),
             ("qwen3-omni-dspark", ("Deploy on vLLM 0.29 or later, the first release with Qwen3OmniDSparkModel; no "
                                   "SGLang release registers it.")),
             ("gemma4-dspark", "Deploy on vLLM: no SGLang release registers Gemma4DSparkModel."),
             ("dflash", "Deploy on a release that registers DFlashDraftModel (SGLang from 0.5.11)."),
             ("dflash2", ("Deploy on a release that registers DFlash2DraftModel (vLLM from 0.28, SGLang from "
                         "0.5.19).")),
             ("eagle3-llama", ("Deploy on a version that supports the architecture; for SGLang name it "
                              "LlamaForCausalLMEagle3 in config.json (SGLang's EAGLE-3 Llama class, which vLLM "
                              "registers too).")),
             ("eagle3-qwen3", "Deploy on vLLM, which registers Eagle3Qwen3ForCausalLM; no SGLang release does."),
         ), also_a_verdict=True),
    Rule("DSP310", "unexpected-t2d", ERROR, "The runtime rejects a t2d tensor",
         "Reserved: a qwen3_dspark.py found only on SGLang's GitHub refused any d2t/t2d tensor; no SGLang release "
         "(0.5.1-0.5.23) contains it, and every released loader ignores t2d, so dspark-ckpt no longer reports this.",
         "Nothing fails on a released runtime.", "A Qwen3 DSpark draft with t2d loaded by SGLang 0.5.16+ (it loads).",
         "Nothing to do."),
    Rule("DSP311", "reduced-vocab-unsupported", ERROR, "The runtime has no reduced-vocab support for this family",
         "The family's lm_head is sized by vocab_size and no d2t is applied (Gemma4 DSpark in vLLM), yet "
         "draft_vocab_size differs from vocab_size.",
         "The markov head and lm_head widths disagree, or d2t is silently ignored: wrong tokens or a run-time error.",
         "Gemma4 DSpark with vocab_size 262144 and draft_vocab_size 32000.",
         "Use a runtime/family with reduced-vocab support, or re-export an un-pruned draft."),
    Rule("DSP312", "dflash-mask-hidden", ERROR, "DFlash checkpoint ships a mask_hidden weight",
         "vLLM's DFlash loader asserts that no weight name contains `mask_hidden`.",
         "Loading fails with an AssertionError.", "`mask_hidden` in a DFlash draft.", "Remove the tensor."),
    Rule("DSP313", "model-prefix", ERROR, "Backbone tensor names carry a `model.` prefix",
         "Qwen3 DSpark checkpoints store backbone names without `model.`; the loader adds it, giving `model.model.*`.",
         "Loading fails: `There is no module or parameter named 'model' in Qwen3DSparkModel`.",
         "`model.embed_tokens.weight`.", "Strip the `model.` prefix from backbone tensor names."),
    Rule("DSP314", "parallel-drafting-without-mask-hidden", ERROR, "EAGLE-3 parallel drafting needs mask_hidden",
         "The config enables parallel drafting but the checkpoint has no `mask_hidden` weight.",
         "vLLM refuses to load it.", '`"parallel_drafting": true` without mask_hidden.', "Ship mask_hidden."),
    Rule("DSP315", "uninitialised-lm-head", ERROR, "The runtime leaves the draft's lm_head uninitialised",
         "The draft ships no lm_head and the runtime does not share the target's either (e.g. DFlash on vLLM 0.31+ "
         "with `has_own_lm_head: true` in config.json).",
         "The draft proposes garbage from uninitialised memory; nothing fails, acceptance collapses.",
         "`has_own_lm_head: true` and no lm_head.weight.", "Ship the lm_head, or drop the config flag."),
    Rule("DSP220", "verdict-assumed", WARNING, "No contract row describes this runtime version: verdict assumed",
         "The selected vLLM version (`--runtime vllm==X.Y.Z`, or the installed one) is newer than every release "
         "dspark-ckpt has read, so it was evaluated with the newest row of the contract table; or it is older "
         "than the first row while the family is already registered there, and the oldest row was used. The "
         "message names the version each verdict was taken from.",
         "A release can change the load path (vLLM 0.30 changed `!=` to `<` for Qwen3 DSpark): the verdict is "
         "probably right, not known to be right. The exit code still follows the other findings, so a new "
         "release never breaks a CI preflight on its own.",
         "`dspark-ckpt check ./draft --target-vocab-size 151936 --runtime vllm==0.34.0` (the table ends at 0.33).",
         "Where that vLLM release is installed, {verify --engine installed} shows what its own loader does; "
         "otherwise upgrade dspark-ckpt (a newer one may have read that release) or report the version to its "
         "maintainers, who generate each release's table from its wheel. For SGLang "
         "the table lists every release it has read (`--runtime sglang`); any other `sglang==X` is evaluated with "
         "the row covering or nearest to it."),
    Rule("DSP340", "head-width-mismatch", ERROR, "The draft's vocab-wide head bias does not match the target "
         "head's width: the first draft step fails",
         "SGLang drafts DSpark and DFlash2 with the target's lm_head (W rows, W = T for Qwen3 targets). DSpark adds a "
         "Markov bias of V = vocab_size columns to those logits and looks the previous token, an id the target "
         "head proposed, up in markov_w1 (V rows); DFlash2 indexes selector codebooks of V rows with the target "
         "head's candidate ids. With V != W the draft loads, then its first draft step fails (with CUDA graphs on, "
         "the default, that step runs at start-up during graph capture). What each release's own step does is "
         "executed and recorded (tools/probe_first_step.py, release_data/sglang-X/first_step.json).",
         "The server does not come up (0.5.16-0.5.21: `The size of tensor a (W) must match the size of tensor b "
         "(V) ...`; 0.5.22+: a bare AssertionError when V > W, and when V < T the first target token >= V fails "
         "markov_w1's lookup, a device-side assert on CUDA), or a DFlash2 draft hits an index error.",
         "An Inkling-shaped padded DSpark draft (V = 201024) for a target whose head has T = 200058 rows.",
         "Trim the input side to T rows together with the output side ({fix --any}: trim + trim-input sets "
         "vocab_size = T and cuts markov_w1/markov_w2 to T rows)."),
    Rule("DSP341", "eagle3-layer-count", ERROR, "SGLang's EAGLE-3 before 0.5.12 needs exactly one layer",
         "LlamaForCausalLMEagle3.__init__ raises `EAGLE3 currently only supports 1 layer` when num_hidden_layers "
         "!= 1 (SGLang 0.5.1-0.5.11); a config without num_hidden_layers gets LlamaConfig's default of 32.",
         "The draft does not load on those releases.", '`"num_hidden_layers": 2`, or no num_hidden_layers at all.',
         "State `num_hidden_layers: 1` for a one-layer draft, or deploy on SGLang 0.5.12+."),
    Rule("DSP342", "draft-vocab-size-unset", ERROR, "SGLang's EAGLE-3 needs draft_vocab_size in config.json",
         "LlamaForCausalLMEagle3 builds its lm_head from config.draft_vocab_size. Absent, it is an AttributeError "
         "(untied drafts in every release, tied ones from 0.5.4.post2); null is a TypeError in 0.5.1, and from "
         "0.5.2 means the target's lm_head and embedding replace the draft's; a tied draft with null fails at "
         "the first draft step from 0.5.15.",
         "The draft does not load, or fails at its first step.", "An EAGLE-3 config.json without draft_vocab_size.",
         "Set draft_vocab_size to the lm_head's row count."),
    Rule("DSP343", "mask-token-invalid", ERROR, "SGLang needs the draft's mask token id below T",
         "SGLang's DSpark worker requires a mask_token_id (`DSpark requires mask_token_id to be set in the draft "
         "model config.`) below the target vocab (`DSpark mask_token_id=N is outside the target vocab size T.`); "
         "DFlash refuses a dflash_config.mask_token_id >= T. The id is read, first found, from dspark_noise_token_id, "
         "dspark_config, text_config, the top level, then dflash_config (0.5.23: dflash_config before the top level).",
         "The server refuses to start after the draft weights loaded.", "A DSpark config.json with no mask_token_id.",
         "Set mask_token_id (the mask token the draft was trained with) in config.json."),
    Rule("DSP344", "draft-head-config-invalid", ERROR, "SGLang refuses the draft's Markov or selector head config",
         "SGLang's DSpark parser needs markov_rank > 0 and, unless a dspark_* key is set, markov_head_type (vanilla, "
         "gated or rnn); the head itself is built from the top-level markov_rank/markov_head_type only, and a "
         "markov_head.* weight that head has no parameter for raises. DFlash2 needs dflash_config.selector_rank "
         "and selector_top_k together.",
         "The server refuses to start, or the draft fails to load.",
         '`"markov_rank": 4` with no markov_head_type; `markov_rank` only inside dspark_config.',
         'Add `"markov_head_type": "vanilla"` (or the head the draft was trained with) at the top level of '
         "config.json, with markov_rank beside it."),
    Rule("DSP345", "draft-head-weights-missing", ERROR, "Part of the draft's Markov head is not in the checkpoint",
         "The release builds markov_head.markov_w1/markov_w2 (nn.Embedding/nn.Linear) and loads what the "
         "checkpoint has; where its loader does not refuse a missing factor (SGLang never; vLLM where its record "
         "saw the load go through), the factor keeps its initial values, with no error. The Markov head's own code "
         "for what DSP363 says of any other parameter.",
         "The draft adds a random bias to every proposal: acceptance collapses.",
         "A DSpark checkpoint without markov_head.markov_w2.weight.", "Re-export the draft with its Markov head."),
    Rule("DSP346", "layer-weights-dropped", ERROR, "The decoder layer's weights are dropped by name",
         "SGLang's EAGLE-3 before 0.5.12 names its one decoder layer `midlayer`; checkpoint names `layers.0.*` (the "
         "vLLM and speculators spelling) match no parameter and are dropped silently. From 0.5.12 both load. "
         "SGLang 0.4.4.post2-0.4.8.post1 are louder: a q/k/v or gate/up tensor named `layers.0.*` is stacked "
         "by LlamaForCausalLM.load_weights onto a parameter that does not exist, a KeyError (`model.layers.0."
         "mlp.gate_up_proj.weight`, llama.py:505 @ 0.4.4.post2, :516 @ 0.4.5) that stops the server.",
         "The layer stays uninitialised: garbage proposals, no error.", "`layers.0.self_attn.q_proj.weight`.",
         "Rename `layers.0.` to `midlayer.` for SGLang 0.5.1-0.5.11, or deploy on 0.5.12+."),
    Rule("DSP347", "uninitialised-embedding", ERROR, "The runtime keeps the draft's embed_tokens, which it lacks",
         "SGLang keeps the draft's own embed_tokens instead of the target's (EAGLE-3 with target_hidden_size != "
         "hidden_size; Nemotron-3.5 NVFP4 DFlash/DSpark drafts from 0.5.19), but the checkpoint has none.",
         "Inputs are embedded with uninitialised memory: garbage proposals, no error.",
         "An EAGLE-3 draft with target_hidden_size 4096, hidden_size 2048 and no embed_tokens.weight.",
         "Ship embed_tokens [V, H]."),
    Rule("DSP348", "speculators-config-not-read", ERROR, "SGLang does not read speculators-format configs",
         "No SGLang release handles speculators_model_type / speculators_config: LlamaConfig takes top-level keys, "
         "so sizes kept in transformer_layer_config are never seen.",
         "The draft is built with the wrong sizes or not at all.",
         "A speculators EAGLE-3 config.json whose architectures name LlamaForCausalLMEagle3.",
         "Convert the draft to SGLang's layout: the sizes at the top level of config.json and an architecture the "
         "release registers for the draft's family.",
         family_fix=(
             *((f, ("Convert the draft to SGLang's layout: the sizes at the top level of config.json, architecture "
                    "LlamaForCausalLMEagle3.")) for f in ("eagle3-llama", "eagle3-qwen3")),
             ("qwen3-dspark", ("Convert the draft to SGLang's layout: the sizes at the top level of config.json, "
                               "architecture Qwen3DSparkModel (or DSparkDraftModel with model_type qwen3).")))),
    Rule("DSP349", "vocab-truncated", WARNING, "The draft can never propose ids >= V",
         "SGLang 0.5.22+ masks the target head's columns [V, W) when the draft's Markov bias has only V columns: "
         "nothing fails there, those ids are simply never proposed. (With V < T the target's own tokens >= V fail "
         "markov_w1's lookup instead: DSP340, from the release's recorded first step.)",
         "Lower acceptance wherever the target would pick such an id.",
         "A DSpark draft with vocab_size = T = 200058 for a target whose head pads to W = 201024 rows.",
         "Re-export the draft with vocab_size = T."),
    Rule("DSP350", "head-without-parameter", ERROR, "The draft ships a head its runtime model has no module for",
         "vLLM's DFlash (DFlashQwen3Model) and EAGLE-3 (LlamaModel, Qwen3Eagle3Model) backbones build no Markov or "
         "confidence head; their nested AutoWeightsLoader refuses a `markov_head.*` or `confidence_head.*` tensor "
         "by name (`There is no module or parameter named 'markov_head' in DFlashQwen3Model. ...`), in every release "
         "0.27-0.33. vLLM's Qwen3 DSpark always builds the vanilla Markov head (markov_w1/markov_w2, whatever "
         "markov_head_type says), so a gated or rnn head's gate_proj/joint_proj is refused the same way "
         "(`... named 'markov_head.gate_up_proj' in Qwen3DSparkModel`). SGLang's DFlash and EAGLE-3 loaders skip "
         "such names instead (DSP351).",
         "The draft fails to load on vLLM. A DFlash/EAGLE-3 checkpoint with a Markov head is often a DSpark draft "
         "whose config names the wrong architecture.",
         "A DFlashDraftModel checkpoint with markov_head.markov_w1.weight and markov_head.markov_w2.weight.",
         "If the draft was trained as DSpark, set its architecture (e.g. Qwen3DSparkModel) and markov_rank in "
         "config.json; a DFlash/EAGLE-3 draft's training-time confidence head the runtime never uses can be "
         "dropped ({fix}; every other tensor is copied unchanged); otherwise re-export it without the head tensors."),
    Rule("DSP351", "head-dropped", INFO, "The runtime drops a head the draft ships",
         "SGLang's DFlash (models/dflash.py, 0.5.11+) and EAGLE-3 (models/llama_eagle3.py) loaders skip every tensor "
         "name with no parameter (`if name in params_dict`), so a shipped `markov_head.*` / `confidence_head.*` is "
         "ignored without a message.",
         "The draft loads and runs without the head: if it was trained with one (a DSpark draft labelled DFlash or "
         "EAGLE-3), its proposals lack the Markov bias and acceptance drops.",
         "An EAGLE-3 checkpoint with markov_head.markov_w1.weight served by SGLang.",
         "Check the architecture in config.json; drop the head tensors if the draft really is DFlash/EAGLE-3.",
         family_fix=tuple((family, ("Check the architecture in config.json; drop the head tensors if the draft "
                                   f"really is {name}."))
                          for family, name in (("dflash", "DFlash"), ("dflash2", "DFlash2"),
                                               ("eagle3-llama", "EAGLE-3"), ("eagle3-qwen3", "EAGLE-3")))),
    Rule("DSP352", "domino-projector-unset", ERROR, "The draft ships Domino projector weights its config does "
         "not declare",
         "From SGLang 0.5.20, DFlash's load_weights (models/dflash.py, also used by DFlash2 and the DSpark backbone) "
         "refuses any `prefix_gru.*` / `embed_proj.*` tensor unless projector_type is \"domino\" "
         "(dflash_config.projector_type, else the top-level key; no other value selects the projector).",
         "The draft fails to load: `DFLASH checkpoint contains Domino projector weights but projector_type=None.`",
         "A DFlash checkpoint with prefix_gru.weight_ih_l0 and embed_proj.2.weight whose config has no "
         "projector_type.",
         "Set dflash_config.projector_type to \"domino\" (with shift_label, pure_draft_prefix_len, gru_hidden_dim "
         "and emb_dim) if the draft was trained with the projector; otherwise re-export it without those tensors."),
    Rule("DSP353", "domino-vocab-mismatch", ERROR, "A Domino draft's vocabulary differs from the target's",
         "SGLang 0.5.20+ validates a Domino DFlash draft at worker start-up (speculative/domino_utils.py "
         "validate_domino_runtime): the draft's vocab_size V must equal the target's T (an embed_proj.2.weight "
         "without V rows is refused at load: the release's generated record, DSP361).",
         "The server does not start: `DFLASH Domino requires identical target and draft vocab sizes, got "
         "target=T, draft=V.`",
         "A Domino DFlash draft with vocab_size 151936 against a target with vocab_size 152064.",
         "Train or export the Domino draft with the target's vocabulary (V = T)."),
    Rule("DSP354", "domino-projector-ignored", INFO, "The runtime ignores the draft's Domino projector",
         "SGLang before 0.5.20 knows no Domino projector: DFlash's loader skips `prefix_gru.*` / `embed_proj.*` as "
         "unexpected weights, without a message.",
         "The draft loads and runs without its projector: if it was trained with one, proposals differ from "
         "training and acceptance drops.",
         "A Domino DFlash checkpoint served by SGLang 0.5.19.",
         "Deploy on SGLang 0.5.20 or newer for the projector to be used."),
    Rule("DSP355", "domino-config-invalid", ERROR, "SGLang refuses the draft's Domino projector config",
         "With projector_type \"domino\", SGLang 0.5.20+ requires dflash_config.shift_label (a bool), "
         "pure_draft_prefix_len = 1, gru_hidden_dim and emb_dim (speculative/dflash_utils.py "
         "parse_dflash_draft_config). The four projector weights those sizes shape are judged by the release's "
         "generated record (a weight of another shape DSP361, a missing one DSP367, in the release's words).",
         "The server does not start: e.g. `DFLASH Domino requires dflash_config.gru_hidden_dim.`",
         "A config with projector_type \"domino\" and no emb_dim.",
         "Add the missing Domino fields to dflash_config."),
    Rule("DSP356", "aux-key-ignored", WARNING, "The runtime ignores an aux-layer key the draft sets and uses "
         "another",
         "The draft's config names its auxiliary target layers (or their number) in a key this vLLM release does not "
         "read where it matters: llama_eagle3.py sizes fc from `num_aux_hidden_states` or "
         "`eagle_config.eagle_aux_hidden_state_layer_ids` (default 3), not the top-level list; the speculators "
         "conversion copies only the top-level list and target_hidden_size; model runner V2 (the default on CUDA for "
         "eagle3 from 0.29, the only runner from 0.34) takes the target's layers from the top-level list and never "
         "from eagle_config's. The "
         "finding names the key ignored and what the release uses instead.",
         "fc is sized, or the target's hidden states are chosen, from something other than what the draft was "
         "trained with: fc.weight fails to load (DSP329), the first draft step fails, or the draft reads the wrong "
         "layers and acceptance drops.",
         "An Eagle3LlamaForCausalLM config with `eagle_aux_hidden_state_layer_ids: [1, 10, 20, 29]` at the top level "
         "and no `num_aux_hidden_states`: vLLM builds fc for 3.",
         "Set `num_aux_hidden_states` to the number of layers the draft names, and keep the list at the top level "
         "(where vLLM's runners read it) and in eagle_config (where SGLang's does) ({fix}, config only)."),
    Rule("DSP357", "aux-layers-unset", INFO, "The draft does not say which target layers it reads",
         "No `eagle_aux_hidden_state_layer_ids` at the top level or in eagle_config: vLLM's model runners (V1 "
         "gpu_model_runner.py until 0.33, V2 eagle3_utils.py) then take the target model's default "
         "get_eagle3_default_aux_hidden_state_layers(), (2, L // 2, L - 3) for Llama and Qwen targets (interfaces.py, "
         "0.27-0.34).",
         "The runtime guesses: that default is the EAGLE-3 reference's convention, but trainers differ (SpecForge "
         "and speculators record the layers they trained on, and their defaults are not vLLM's), and a draft "
         "trained on other layers gets the wrong hidden states: it loads and runs, and its acceptance collapses "
         "with no error. It is info: the usual case, and the draft gives no evidence that the default is wrong (a "
         "layer list written where a release does not read it is DSP356, a warning). With `num_aux_hidden_states` other "
         "than 3 the three default layers do not fit fc and the first draft step fails (DSP329).",
         "An EAGLE-3 head exported without its layer list, trained on layers [1, 16, 29] of a 32-layer target "
         "(vLLM uses 2, 16, 29).",
         "Add `eagle_aux_hidden_state_layer_ids` (the training run's layer ids) to config.json at the top level."),
    Rule("DSP358", "eagle3-target-hidden-null", ERROR, "`target_hidden_size: null` stops vLLM building fc",
         "vLLM's EAGLE-3 models read `target_hidden_size = getattr(self.config, \"target_hidden_size\", "
         "self.config.hidden_size)` and build `fc_input_size = target_hidden_size * n` (llama_eagle3.py, "
         "qwen3_eagle3.py, 0.27-0.33). A key present with the value null is found by getattr, so the fallback to "
         "hidden_size never happens and the multiplication raises.",
         "The draft does not load: the model's __init__ raises `TypeError: unsupported operand type(s) for *: "
         "'NoneType' and 'int'` before any weight is read.",
         "An EAGLE-3 config.json exported with `\"target_hidden_size\": null`.",
         "Set `target_hidden_size` to the hidden size fc was trained for, the target's ({fix}, config only: "
         "fc.weight's width says it), or remove the key (vLLM then uses hidden_size)."),
    Rule("DSP359", "eagle3-target-hidden-mismatch", ERROR, "EAGLE-3 fc is not sized for the target's hidden size",
         "With `--target`, the draft's `target_hidden_size` (its `hidden_size` when absent, as vLLM falls back) is "
         "compared with the target's hidden size (its text config's, as vLLM's get_hidden_size() reads it). vLLM "
         "builds fc for n x target_hidden_size inputs and the model runner hands it n hidden states of the "
         "target's width.",
         "fc loads, since its shape matches the draft's config, and the first draft step fails: combine_hidden_states "
         "feeds fc (or input_norm / fc_norm) an input of n x the target's hidden size, a shape-mismatch "
         "RuntimeError. The draft was trained for another target.",
         "An EAGLE-3 draft with target_hidden_size 4096 served with a target whose hidden_size is 5120.",
         "Serve the draft with the target it was trained for; a draft for this target needs its own fc."),
    Rule("DSP360", "tensor-has-no-parameter", ERROR, "A tensor has no parameter in the release's model",
         "After the release's own name mapping, every checkpoint tensor must land on a parameter the model class "
         "builds. What each release does with each name was observed by running its load_weights "
         "(runtimes/release_data, generated by tools/release_model.py).",
         "load_weights raises, in the release's words (for vLLM usually `There is no module or parameter named "
         "'...'`), and the engine does not start.",
         "An EAGLE-3 Llama draft that ships `layers.0.self_attn.q_norm.weight` (a Qwen3 layer), or tensors under "
         "`model.` where the class adds that prefix itself.",
         "Rename or drop the tensor (match the layout the release loads), or serve the draft with the architecture "
         "it was trained as."),
    Rule("DSP361", "tensor-shape-mismatch", ERROR, "A tensor's shape is not what the release builds from "
         "config.json",
         "Each parameter's shape is an expression of config keys (and the target's), learnt by building the class "
         "at many sizes; a key the config leaves out takes the release's fallback (head_dim = hidden_size // "
         "num_attention_heads for Llama, 128 for Qwen3; intermediate_size 11008 / 22016, ...).",
         "The release's weight loader raises (its words are quoted) and the engine does not start.",
         "A draft whose config.json omits intermediate_size: the release builds down_proj for the default width.",
         "Set the config key the shape follows (the message names the parameter), or re-export the tensor."),
    Rule("DSP362", "tensor-silently-cut", WARNING, "A tensor is silently cut or only partly loaded",
         "Some vLLM loaders narrow the checkpoint tensor to the parameter (row-parallel inputs, the shards of "
         "stacked q/k/v and gate/up projections) instead of checking its size, or pad a shorter one (an attention "
         "sink's rest set to -inf, 0.29+); SGLang's merged gate/up and row-parallel loaders pad a shorter tensor "
         "with zeros on the CUDA branch (from 0.5.3, `pad_or_narrow_weight`), and its fused MoE experts' loader "
         "refuses it (to 0.5.16), leaves the rest as initialised (0.5.17-0.5.22) or zeroes it (0.5.23). Each as "
         "the release's own loader did it when the generator fed it the tensor one row or column off.",
         "The draft loads with part of its weights dropped, left as initialised or zeroed: it runs, and acceptance "
         "collapses without an error.",
         "A Llama-style EAGLE-3 draft whose config head_dim disagrees with the q/k/v weights it ships.",
         "Set the config keys to the sizes the tensors were trained with (head_dim, num_key_value_heads, "
         "intermediate_size)."),
    Rule("DSP363", "parameter-unfilled", WARNING, "Parameters of the release's model are filled by no tensor",
         "A release checks a draft's backbone only in part: vLLM's loader refuses a parameter left unwritten only "
         "where the class's load_weights reports what it loaded (EAGLE-1 and EAGLE-3 do not), and from 0.21 it "
         "exempts linear layers and every other layer with a quantisation method (DSP367 is the refusal); SGLang "
         "does not check. A parameter no shipped tensor fills, where the release does not refuse it, keeps its "
         "initial values, and so do the rows of one that the shipped tensors fill only in part (one expert's "
         "projection missing from a fused MoE parameter, a q/k/v shard). One pass visits each parameter, and at "
         "most one hand-read annotation answers part of its judgement (runtimes/parameter_pass.py): lm_head, "
         "embed_tokens and d2t, which the release may take from the target or map, are the vocab contract's (a "
         "padded draft's draft_id_to_target_id that no d2t fills is said with its DSP305), and an EAGLE-3 fc's "
         "width the aux-state model's (not its presence); the rest, the Markov head (under its own code, DSP345) "
         "and the fc of DFlash and DSpark included, is judged here. A parameter a config key only resizes (a kernel "
         "size, a list of target layers) is still required where the draft sets that key to a value the "
         "release's samples did not cover; one a key may add or drop is not.",
         "The draft loads and proposes from random layers: acceptance is near zero, with no error.",
         "A checkpoint saved with only the trained adapter, an EAGLE-3 or DFlash draft with tensors under names "
         "its release skips, or a MoE layer with experts missing.",
         "Export every tensor of the draft's layers under the names the release loads."),
    Rule("DSP364", "gemma4-fused-kv-layers", ERROR, "vLLM's Gemma4 DSpark load needs every layer to share K and V",
         "vLLM's Gemma4 DSpark load_weights ends in _build_fused_kv_buffers, which asserts that every layer uses "
         "attention_k_eq_v (gemma4_dspark.py, 0.27-0.33; the lines are in each release's lines.json, "
         "build.gemma4_*). A layer does only when it is a full-attention layer (`layer_types`; transformers' Gemma4 "
         "config makes five of every six sliding when the key is absent) and config.json sets "
         "`\"attention_k_eq_v\": true`.",
         "Every weight loads, then load_weights raises `AssertionError: Gemma4 DSpark fused precompute assumes "
         "uniform attention_k_eq_v layers` and the engine does not start. Executed: vLLM 0.33.0's own code raises "
         "it for a draft without the key, with the key false, and with two layers and the default layer_types.",
         "A Gemma4 DSpark config.json exported without attention_k_eq_v.",
         "If the draft was trained with K = V in every layer (it ships no v_proj), add `\"attention_k_eq_v\": true` "
         "and `layer_types` of full_attention only; otherwise vLLM cannot serve it as a DSpark draft: re-export one "
         "trained that way."),
    Rule("DSP365", "aux-target-unsupported", ERROR, "This vLLM refuses the draft's method for the target's model type",
         "vLLM 0.21 and older check, at start-up (SpeculativeConfig._verify_args), that the target of a method fed "
         "the target's aux hidden states is a model type they collect them from: the target's "
         "hf_text_config.model_type must contain one of a list's names. The methods and the list grow by release "
         "(eagle3 with llama, qwen, minicpm and gpt_oss in 0.12; extract_hidden_states from 0.17; dflash, minimax_m2 and "
         "gemma4 in 0.20); 0.22 dropped the check. Each release's list, methods and words are generated from its "
         "speculative.py (spec.json `aux_targets`, the lines in lines.json `spec.aux_targets`). Judged with a "
         "--target whose config.json states the text config's model_type.",
         "The server refuses to start: `ValueError: eagle3 is only supported for ['llama', 'qwen', ...] models. "
         "Got self.target_model_config.hf_text_config.model_type='gemma3_text'`.",
         "An EAGLE-3 draft for Gemma 3 or Mistral served with vLLM 0.20.",
         "Serve the draft with vLLM 0.22 or newer, where the check is gone; the draft itself is not at "
         "fault.", also_a_verdict=True),
    Rule("DSP366", "config-key-ignored", WARNING, "A release does not read a key that shapes the draft elsewhere",
         "The draft sets a config key that changes the parameters one evaluated vLLM release builds (each release's "
         "generated model records them: `structural` in runtimes/release_data), while another release provably "
         "does not read it: a top-level key its __init__ never reads (`fc_norm`, `norm_output` before 0.22; "
         "`norm_before_fc` before 0.18; DSpark's top-level `target_layer_ids` in 0.25-0.26, "
         "`enable_confidence_head` before 0.28), or a nested key where it reads the same name at the top level "
         "instead (`eagle_config.norm_before_fc` on 0.18-0.21). Only the releases the run evaluates are compared. "
         "The finding names the release's own key with the same effect where it has one.",
         "The release builds the draft without what it was trained with (no RMSNorm before fc, say; a shipped "
         "input_norm.weight is skipped or refused): where no tensor then fails to load, proposals degrade and "
         "acceptance falls with no error.",
         "An EAGLE-3 draft with `\"eagle_config\": {\"norm_before_fc\": true}` served with vLLM 0.20.",
         "Set the key where that release reads it (the finding names it, e.g. `norm_before_fc` at the top level "
         "for 0.18-0.21), or serve the draft on a release that reads it."),
    Rule("DSP367", "parameter-required", ERROR, "The release refuses a draft that leaves a parameter unwritten",
         "After load_weights, vLLM's loader (model_loader/default_loader.py, DefaultModelLoader.load_weights) raises "
         "for every parameter the class's load_weights did not report as loaded, when it reports any: before 0.21 "
         "for every parameter, from 0.21 (track_weights_loading) for those outside layers with a quantisation "
         "method: norms, plain parameters, and everything of an MTP head's own modules that is not a linear layer. "
         "Some classes check for themselves (Llama 4's EAGLE head asserts each parameter was loaded, 0.20-0.24). "
         "Which parameters each release refuses to leave unwritten was observed by feeding its own loader a whole "
         "checkpoint less each parameter's tensors (runtimes/release_data, `missing`).",
         "The engine does not start: `ValueError: Following weights were not initialized from checkpoint: "
         "{'model.layers.0.input_layernorm.weight'}`.",
         "A Qwen3-Next MTP head exported without its layer norms; on vLLM 0.20 or older, any draft whose "
         "load_weights reports its loads and that ships no `q_proj`.",
         "Export every tensor of the draft's layers under the names the release loads (the message names the "
         "parameters)."),
    Rule("DSP368", "no-verdict", ERROR, "A requested release was not judged: no verdict, which is not a pass",
         "dspark-ckpt gives this runtime release no load verdict for the draft, and says why in the release's row of "
         "the compatibility matrix (`no verdict`): the class it builds is registered but not modelled and its "
         "generated model does not build it (DSP232), the conversion makes a class no family or generated model "
         "describes, config.json names a target model (DSP231), or no contract row describes the family there. "
         "Every requested release gets a row in every format; this is the row of one that could not be judged.",
         "A release without a verdict is not a release that loads the draft: a gate that stayed green on it would "
         "vouch for a deployment nobody checked. So it fails the run like a load error, on the releases the gate "
         "covers (a release older than the draft's architecture reached through a broad selector still does not "
         "gate), unless the run says it accepts unjudged releases.",
         "A Kimi/DeepSeek-MLA EAGLE-3 draft (`Eagle3DeepseekV2ForCausalLM`) checked with `--runtime vllm==0.28.0`, "
         "a release whose own code stops building the class on CPU (its MLA prefill backend imports a FlashAttention "
         "API the CPU build lacks): the row says so, in those words.",
         "Test the draft on that release yourself; then pass --allow-no-verdict (or `allow-no-verdict = true` in "
         "[tool.dspark-ckpt]) to accept the releases without a verdict, which are then shown but not gated."),
    Rule("DSP369", "target-class-as-draft", ERROR, "SGLang builds the target's own class for a base-class draft",
         "The draft's config.json names a plain model class (`LlamaForCausalLM`) and the deploy serves it as an "
         "EAGLE, EAGLE-3 or DFlash draft (--speculative-config's `method`). vLLM renames the class by method "
         "(EAGLEConfig: EagleLlamaForCausalLM, Eagle3LlamaForCausalLM); SGLang does not: its draft ModelConfig "
         "resolves `architectures[0]` as written (model_config.py `_config_draft_model` rewrites only MTP/NextN "
         "heads), so it builds the target class, whose load_weights skips every tensor it has no parameter for.",
         "The draft's fc and layers land nowhere and it proposes from initial values (acceptance near zero, no "
         "error); under EAGLE3 the draft worker reads `hot_token_id` (DFLASH, 0.5.19+: `candidate_selector`), "
         "which a target class lacks, and the server does not start, whatever the target class (Qwen3, Laguna, "
         "...); DFLASH before 0.5.19 calls the model's `project_target_hidden` at the first request's prefill, "
         "which fails there. Under EAGLE, whose worker reads nothing, said only for a class whose load_weights was "
         "read, LlamaForCausalLM, naming the parameters left at their initial values. Said for the releases whose "
         "files were read (release_data/sglang_target_class.json); another gets no verdict (DSP368).",
         "An EAGLE-1 head from the EAGLE repository (`architectures: [\"LlamaForCausalLM\"]`, un-prefixed "
         "`layers.0.*`, `fc.weight`) served with `--speculative-algorithm EAGLE`.",
         "For SGLang, name the draft class it registers for the method in config.json: `LlamaForCausalLMEagle3` "
         "for EAGLE-3 (vLLM keeps that name too), `LlamaForCausalLMEagle` for EAGLE (vLLM would rename it to "
         "EagleLlamaForCausalLMEagle, which it does not register: keep one config per runtime); or serve it with "
         "vLLM, whose rename routes the base class."),
    Rule("DSP370", "config-values-refused-apart", ERROR, "The release's class refuses two config values that differ",
         "The class the release builds for this draft compares two values in its __init__ and refuses to build when "
         "they differ: Laguna's DFlash draft shares the target's lm_head and requires draft_vocab_size to be the "
         "target's vocabulary; Qwen3 XPress requires a full-vocabulary draft (its vocab_size the target's). Which "
         "pairs each release refuses, and in which words, was observed by building the class with them apart "
         "(runtimes/release_data, `refused_apart`); judged where both values are known (the second one is the "
         "target's: give --target or --target-vocab-size).",
         "The server fails before loading any weight, in the class's words: `ValueError: Laguna DFlash shares the "
         "target lm_head and requires `draft_vocab_size` to match the target vocabulary size (128 != 192).`",
         "A Laguna DFlash draft pruned to a 32k draft vocabulary for a target of 100352 tokens.",
         "Export the draft with the target's vocabulary (the class takes no pruned or padded one), or serve it with "
         "the target it was trained for.", also_a_verdict=True),
    Rule("DSP371", "vllm-first-step-fails", ERROR, "vLLM loads the draft, then its first draft step raises",
         "What vLLM's own propose path does with a loaded draft was executed on CPU, release by release, over the "
         "probe's vocabulary matrix (tools/probe_vllm_first_step.py, release_data/vllm-X/first_step.json): the "
         "release's sharing of the target's embedding and head, then compute_logits (EAGLE-3, DFlash: the d2t "
         "scatter into vocab_size columns; without a d2t parameter an assert that the head's width is "
         "vocab_size) or the DSpark draft logits, Markov bias and map_draft_to_target, the argmax and the "
         "target embedding's lookup. A draft whose shapes that step refuses loads and then fails, at CUDA-graph "
         "capture (start-up) or at the first request. `verify --engine installed` runs the same step with the "
         "installed vLLM on the draft itself (0.30+; EAGLE-3 from 0.22).",
         "The server fails after loading, in the release's words: `AssertionError: Expected logits to have shape "
         "(*, 128), but got torch.Size([2, 96])` (an EAGLE-3 draft with vocab_size 128 and draft_vocab_size = T "
         "= 96: no d2t parameter, and the head's 96 columns are not vocab_size).",
         "An EAGLE-3 draft exported with an expanded input vocabulary (vocab_size > T) and draft_vocab_size = T.",
         "Export the draft with vocab_size = T (the input side trimmed to the target's vocabulary: `fix` does it, "
         "trim-input), or with the d2t of a pruned draft."),
    Rule("DSP372", "config-value-refused", ERROR, "The release refuses the draft's value of a config key",
         "The release refuses one value of one key, whatever the others are. Its config class: transformers 5's "
         "`@strict` config classes type their keys, and a key config.json states as null that the class types "
         "without None fails in AutoConfig (SGLang's get_config), before anything else is read "
         "(runtimes/strict_config_fields.json, generated from the transformers the release pins). Or the draft "
         "class's __init__: SGLang's EAGLE-3 for DeepSeek/Kimi (`Eagle3DeepseekV2ForCausalLM`) builds one layer "
         "only (observed by building the class with each alternate value of the key alone: the record's "
         "single-key `samples_refused`; said only where every alternate value sampled was refused in the same "
         "words, for the draft's value if it is one of them or above consecutive integer ones) and refuses a null "
         "`q_lora_rank` (hand-read, runtimes/sglang_null_refusals.py). Or a key the class takes only together with "
         "another, left out or null beside it (SGLang's DFlash2 `dflash_config.conv_kernel_size` / "
         "`conv_group_size`: the record's `absent_keys` refusals, runtimes/absent_refusal.py).",
         "The server fails before loading any weight, in the release's words: `ValueError: EAGLE3 currently only "
         "supports 1 layer`; `Validation error for field 'sliding_window': TypeError: Field 'sliding_window' "
         "expected int, got NoneType (value: None)`.",
         "A Kimi EAGLE-3 draft exported with `num_hidden_layers: 2`; a Laguna DFlash draft whose config.json, "
         "written from a Qwen3 template, says `sliding_window: null`.",
         "Export the draft with a value the release takes (one decoder layer for EAGLE-3; the key's number, or "
         "no key for its default, where it is null), or serve it with a runtime that takes it.",
         also_a_verdict=True),
    Rule("DSP373", "vllm-drafting-token-missing", ERROR, "vLLM's proposer finds no mask token id in the draft config",
         "DFlash and DSpark (and P-EAGLE, with `parallel_drafting`) draft a block's slots at once and feed the masked "
         "ones a token id that the draft's config names. vLLM's proposer resolves it when the engine builds its "
         "model runner: the V1 proposer's `_init_parallel_drafting_params` (0.16-0.33) and Model Runner V2's "
         "`get_parallel_drafting_token_id` (0.24+), each in its own order of keys (`dflash_config.mask_token_id`, "
         "`mask_token_id`, `dspark_noise_token_id`, `pard_token`, `ptd_token_id`, as the release has them). Both "
         "were executed release by release (tools/release_drafting_token.py, spec.json `drafting_token`); the "
         "draft is refused where every function that runs for it refuses its config, in each one's words: both "
         "where its method turns parallel drafting on (which runner a deployment gets depends on the release and "
         "its features), V1's alone where a deploy's `parallel_drafting: true` does (P-EAGLE: Model Runner V2 "
         "hands parallel drafting for EAGLE to V1). Model Runner V2 also calls `int()` on the id: a text, a list or "
         "an object is refused there.",
         "The server fails to start before loading any weight: `ValueError: For parallel drafting, the draft "
         "model config must have `dflash_config.mask_token_id`, `mask_token_id`, `dspark_noise_token_id`, "
         "`pard_token`, or `ptd_token_id` specified in its config.json.`; Model Runner V2: `ValueError: Model "
         "config must specify ...` (a null id it takes first: `TypeError: int() argument must be ...`).",
         "A DFlash config.json whose `dflash_config` lost its `mask_token_id` when it was rewritten by hand.",
         "Set the mask token the draft was trained with, as an integer, under a key the release reads (the error "
         "names them: `dflash_config.mask_token_id`, `mask_token_id`, `pard_token`, ...) in config.json; in a "
         "speculators-format config, inside its `transformer_layer_config`, which vLLM's conversion keeps.",
         also_a_verdict=True),
    Rule("DSP330", "speculators-conversion-fails", ERROR, "The runtime cannot convert this speculators config",
         "vLLM converts a speculators-format config (no model_type, a speculators_config) with the update_* function "
         "of its `speculators_model_type` before building the draft. The type is not registered in that release "
         "(dflash before 0.20, peagle before 0.22, dspark before 0.25, dflash2 before 0.29; any other than eagle3, "
         "peagle, dflash, dflash2, dspark), the transformer layer's "
         "model_type is neither llama nor qwen3 (EAGLE-3, P-EAGLE), or a key the converter indexes is missing "
         "(aux_hidden_state_layer_ids, mask_token_id); from 0.34 `update_peagle` refuses every P-EAGLE draft "
         "(`P-EAGLE (parallel drafting EAGLE-3) is not supported.`).",
         "The server does not start: `Expected one of: {...}. Please ensure you're loading a speculators-format "
         "model.`, `Unsupported model_type ... for Eagle3 speculator` or a KeyError.",
         "A `speculators` 0.9.0 DFlash2 draft on vLLM 0.28.0; P-EAGLE before vLLM 0.22 (no update_peagle).",
         "Deploy on a release that converts the type, or add the missing key.", also_a_verdict=True),
    Rule("DSP331", "bare-parameter-saved-as-weight", ERROR,
         "A bare parameter is saved as `<name>.weight` (DFlash2's candidate_selector codebooks)",
         "vLLM's DFlash2 builds candidate_selector.predecessor_codebook and successor_codebook as bare nn.Parameters, "
         "so the checkpoint names are `candidate_selector.*_codebook` without `.weight`. A `.weight` name is a "
         "nested weight for a single parameter.",
         "Loading fails: `Attempted to load nested weight 'candidate_selector.predecessor_codebook.weight' into a "
         "single parameter 'candidate_selector.predecessor_codebook'`.",
         "A DFlash2 draft written by z-lab dflash 0.1.0's save_pretrained (its codebooks are nn.Embedding).",
         "Rename the two tensors without `.weight` (the data is unchanged), as the published DFlash2 checkpoints "
         "and speculators 0.9.0 name them: {fix}."),
    Rule("DSP332", "candidates-unmapped", ERROR, "The runtime proposes draft ids without applying d2t",
         "vLLM's DFlash2 speculator takes its candidates from lm_head (get_top_k_tokens) and never reads the d2t the "
         "model loads; a pruned DFlash2 draft (D < T) therefore proposes draft id i as target id i.",
         "Wrong tokens are proposed and acceptance collapses, with no error.",
         "A DFlash2 draft with draft_vocab_size 32000 and a d2t, for a 151936-token target.",
         "Use a DFlash2 draft with the full target vocabulary (D = T)."),
    Rule("DSP333", "config-key-missing", ERROR, "The model's __init__ reads a config key the draft lacks",
         "The class the runtime builds reads a key of config.json as a plain attribute (Qwen3 DSpark: markov_rank; "
         "DFlash2: dflash_config and its conv_kernel_size, conv_group_size, selector_rank, selector_top_k) and "
         "config.json does not hold it anywhere.",
         "The server fails before loading any weight (AttributeError or KeyError).",
         "A Qwen3DSparkModel config without markov_rank.",
         "Add the key with the value the draft was trained with: a Qwen3 DSpark draft's markov_rank is its Markov "
         "head's width ({fix}, config only); DFlash2's dflash_config values are the training run's."),
    ),
    # --- DSP32x: shapes and dtypes of the vocab-relevant tensors ---
    *_section(Category.SHAPE,
    Rule("DSP320", "lm-head-shape", ERROR, "lm_head is not [D, H]",
         "lm_head must have one row per draft output id (or per input id for families sized by vocab_size) and H columns.",
         "vLLM asserts the row count (a bare AssertionError) and fails on a hidden-size mismatch.",
         "lm_head [201024, 4096] with draft_vocab_size 200058.", "Fix draft_vocab_size or re-export lm_head.",
         d_sized=True),
    Rule("DSP321", "embed-shape", ERROR, "embed_tokens is not [V, H]",
         "embed_tokens must have vocab_size rows and hidden_size columns.", "vLLM's row-count assertion fails.",
         "embed_tokens [151936, 4096] with vocab_size 152064.", "Fix vocab_size or re-export the embedding."),
    Rule("DSP322", "markov-w1-shape", ERROR, "markov_head.markov_w1 is not [V, r]",
         "markov_w1 has one row per input id and markov_rank columns.", "Loading fails on the row-count assertion.",
         "markov_w1 [32000, 16] with vocab_size 151936.", "Fix the config or the tensor."),
    Rule("DSP323", "markov-w2-shape", ERROR, "markov_head.markov_w2 is not [D, r]",
         "markov_w2 has one row per draft output id and markov_rank columns.", "Loading fails on the row-count assertion.",
         "markov_w2 [201024, 16] after draft_vocab_size was set to 200058 without trimming.",
         "Trim markov_w2 together with lm_head ({fix --strategy trim}).", d_sized=True),
    Rule("DSP324", "d2t-shape", ERROR, "d2t is not a 1-D tensor of length D",
         "d2t must hold one offset per draft id.",
         "vLLM fails: `Attempted to load weight (torch.Size([N])) into parameter (torch.Size([D]))`.",
         "d2t [32001] with draft_vocab_size 32000.", "Regenerate d2t (from t2d when present).", d_sized=True),
    Rule("DSP325", "d2t-dtype", ERROR, "d2t is not an integer tensor",
         "d2t holds integer offsets; a float or bool d2t cannot be a mapping.", "Mapped ids are wrong or loading fails.",
         "d2t stored as F32.", "Regenerate d2t as int64."),
    Rule("DSP326", "d2t-narrow-int", INFO, "d2t is an integer type other than int64",
         "The runtime parameter is int64; an int32 d2t is copied into it (vLLM 0.31+ logs a dtype warning).",
         "Harmless for vLLM, but other tools may expect int64.", "d2t stored as I32.", "Store d2t as int64."),
    Rule("DSP327", "t2d-shape", ERROR, "t2d is not a bool tensor of length T",
         "t2d marks, for every target id, whether it is in the draft vocabulary.", "It cannot be checked or used to rebuild d2t.",
         "t2d [151936] against a target of 248320.", "Regenerate t2d from the pruning statistics."),
    Rule("DSP328", "confidence-head-shape", ERROR, "confidence_head.proj is not [1, H(+r)] with a [1] bias",
         "With enable_confidence_head the proj weight is [1, H] (+ r with confidence_head_with_markov) and bias [1].",
         "Loading fails on a shape mismatch.", "proj.weight [1, 4096] with confidence_head_with_markov.", "Fix the config or the tensor."),
    Rule("DSP329", "eagle3-fc-shape", ERROR, "EAGLE-3 fc.weight is not [H, n x target_hidden_size] as the runtime "
         "builds fc",
         "vLLM's EAGLE-3 models build `fc = ReplicatedLinear(target_hidden_size * n, hidden_size)`, n being the number "
         "of target hidden states the draft combines: llama_eagle3.py reads `num_aux_hidden_states`, then the length "
         "of `eagle_config.eagle_aux_hidden_state_layer_ids`, else 3 (never the top-level list); qwen3_eagle3.py reads "
         "`num_aux_layers`, `num_aux_hidden_states`, the top-level list, then eagle_config's, else 3 (every release "
         "0.27-0.33). A fc.weight of another shape fails ReplicatedLinear.weight_loader's assert (`Tried to load "
         "weights of size torch.Size([H, 4H])to a parameter of size torch.Size([H, 3H])`). When fc loads but a model "
         "runner hands it another number of target layers, the first draft step fails instead.",
         "The draft does not load, or it loads and fails at its first step. The usual cause is a speculators-trained "
         "Llama head whose 4 aux layers are named only in the top-level `eagle_aux_hidden_state_layer_ids`.",
         "fc.weight [4096, 16384] (4 aux layers) with eagle_aux_hidden_state_layer_ids of 4 ids at the top level "
         "of an Eagle3LlamaForCausalLM config.",
         "Set `num_aux_hidden_states` to the number of aux layers fc was trained on and keep the top-level list, "
         "which both model runners read ({fix}, config only); where fc's width fits no layer list, re-export fc."),
    ),
    # --- DSP4xx: contents of the mapping tensors ---
    *_section(Category.MAPPING,
    Rule("DSP401", "d2t-all-zero", ERROR, "d2t is all zero on a pruned draft",
         "Every offset is 0, so draft id i maps to target id i: the first D target ids.",
         "Almost surely wrong: acceptance collapses with no error.", "D = 32000, d2t = zeros(32000).",
         "Rebuild d2t from t2d ({fix})."),
    Rule("DSP402", "d2t-out-of-range", ERROR, "d2t maps draft ids outside [0, T)",
         "Some i + d2t[i] is negative or >= T.", "The runtime proposes ids that are not target tokens or indexes out of range.",
         "d2t[-1] = 248320 with T = 248320; or d2t holding absolute target ids instead of offsets.",
         "Convert d2t holding absolute target ids to offsets ({fix}); otherwise rebuild it from t2d, or re-export."),
    Rule("DSP403", "d2t-not-increasing", ERROR, "d2t mapped ids are not strictly increasing",
         "i + d2t[i] must be strictly increasing (ids were sorted ascending when the mapping was made).",
         "Duplicates make two draft ids propose the same token; disorder means the table is corrupt.",
         "d2t = [0, -1, ...].",
         "Convert d2t holding absolute target ids to offsets ({fix}); otherwise rebuild it from t2d, or re-export."),
    Rule("DSP404", "t2d-count", ERROR, "t2d marks a number of ids other than D",
         "t2d.sum() must equal the draft vocab size D.", "d2t and t2d disagree on the vocabulary.",
         "t2d with 31999 true entries and D = 32000.", "Regenerate the mapping tensors."),
    Rule("DSP405", "t2d-d2t-mismatch", ERROR, "t2d and d2t describe different vocabularies",
         "nonzero(t2d) must equal arange(D) + d2t.", "One of the two tables is stale.",
         "d2t rebuilt for a new vocabulary without updating t2d.", "Rebuild d2t from t2d ({fix})."),
    Rule("DSP406", "mapping-unreadable", WARNING, "A mapping tensor could not be read for validation",
         "d2t/t2d is larger than the read limit, unreadable, or of a dtype whose contents cannot be decoded.",
         "Its contents were not validated.", "A d2t of 2**31 elements.", "Check the tensor by hand."),
    ),
    # --- DSP5xx: outcomes of `dspark-ckpt fix` (why no repair was made) ---
    *_section(Category.REPAIR,
    Rule("DSP501", "unrepairable", ERROR, "The draft cannot be repaired by fix",
         "What is wrong needs data the checkpoint does not hold (a pruned draft without lm_head, a d2t with no valid "
         "t2d to rebuild it from), or the checkpoint's structure or config is broken.",
         "Any repair would be a fake: it would load and then propose wrong tokens.",
         "T = 248320, D = 32000, no lm_head.weight.", "Re-export the draft from its training run."),
    Rule("DSP502", "runtimes-conflict", ERROR, "No single repair loads on every chosen runtime",
         "Each candidate repair (and the draft as it is) fails on at least one of the --for runtimes.",
         "One checkpoint cannot serve all of them.",
         "A pruned Qwen3 DSpark draft fixed --for all: vLLM needs its d2t, SGLang refuses any d2t.",
         "Fix once per group of runtimes (--for vllm, --for sglang), writing a separate --out for each."),
    Rule("DSP503", "strategy-refused", ERROR, "The forced --strategy does not apply or breaks a chosen runtime",
         "The repair named by --strategy does not fit this draft, or its result fails to load on a --for runtime "
         "(an identity d2t on a padded draft fails on vLLM 0.30+).",
         "Applying it would trade one load failure for another.",
         "--strategy identity-d2t --for vllm==0.30.0.", "Omit --strategy, or choose the runtimes it loads on."),
    Rule("DSP504", "fix-result-fails-check", ERROR, "The repaired checkpoint still fails check",
         "After writing the repair to a staging folder, check still finds errors for the chosen runtimes.",
         "The result would not load or would misbehave; it is not put in place.",
         "A repair planned on a draft whose shards changed while fix ran.",
         "Run {check} and repair the remaining errors first."),
    Rule("DSP505", "runtime-left-out", WARNING, "fix --for all left out runtimes no repair can make load",
         "With --for all (the default), fix repairs for every runtime some repair can satisfy. A runtime that fails "
         "to load the draft as it is and after every repair that fits it is left out of the plan and named here, "
         "with why (SGLang's Qwen3 DSpark, for one, has no reduced-vocabulary support).",
         "The result still does not load on that runtime: deploying there needs another draft, not another fix.",
         "A pruned Qwen3 DSpark draft (D = 32000 < T = 248320) fixed --for all: rebuilt for every vLLM version, "
         "SGLang left out.",
         "Deploy on the runtimes the fix names, or re-export the draft for the one left out; name a runtime with "
         "--for to make fix refuse instead."),
    Rule("DSP506", "json-not-writable", ERROR, "fix cannot write back a JSON file holding a lone surrogate escape",
         "config.json (or the index) holds an escape such as \\ud800: half of a UTF-16 surrogate pair, which is "
         "not a Unicode character. Python's json reads it, but no UTF-8 file can hold it, so the repaired JSON "
         "could not be written.",
         "Writing it would either fail half-way or silently change the value; fix refuses and writes nothing.",
         "`{\"note\": \"\\ud800\"}` in config.json of a padded draft that fix must trim.",
         "Replace the escape by the text it was meant to be (or remove the key), then run fix again."),
    ),
    # --- DSP7xx: remote sources (the Hugging Face Hub) ---
    *_section(Category.HUB,
    Rule("DSP701", "range-ignored", INFO, "The server ignored a ranged read and started sending the whole file",
         "A shard header was fetched with an HTTP Range request, and the server (or a proxy between) answered "
         "200 with the full file instead of 206 with the range. dspark-ckpt read only the bytes it needed and "
         "closed the connection, so the check is complete; nothing was downloaded beyond the header.",
         "Not a checkpoint problem, but every tool that reads this server is downloading whole files where a few "
         "bytes would do; a proxy that strips Range headers is the usual cause.",
         "`HF_ENDPOINT` pointing at a mirror that does not implement Range.",
         "Use an endpoint (or proxy) that honours Range; the Hub itself does."),
    Rule("DSP702", "checkpoint-unavailable", ERROR, "A checkpoint in a multi-checkpoint run could not be checked",
         "When several checkpoints are checked at once, one that cannot be opened (a missing path, a Hub repo that "
         "does not exist or needs a token, a revision that does not exist, the Hub out of reach) is reported with "
         "this code and the operational error code (DSP-E0xx) in its message; the others are still checked. "
         "With a single checkpoint the same failure is an error message and exit code 2.",
         "Nothing is known about that checkpoint; the run exits 2.",
         "`dspark-ckpt check org/draft-a org/missing --jobs 4`.",
         "Follow the hint in the message (fix the name, pass --token, check the network), then re-run."),
    Rule("DSP703", "hub-listing-invalid", ERROR, "The Hub's file listing holds entries dspark-ckpt ignored",
         "model_info listed a file without `rfilename`, a name that is not a plain relative path inside the repo "
         "(absolute, with a `..` part, a backslash, a control character, or empty), or a size that is not a "
         "non-negative integer. Such names are never used to build a path or a request; a file whose size is "
         "unusable is reported unreadable (DSP018).",
         "The Hub never sends such entries: an endpoint that does is broken or hostile, and a name like "
         "`../../x` used as a cache path would write outside HF_HOME.",
         '`{"rfilename": "../../../.bashrc"}` or `{"rfilename": "model.safetensors", "size": "12"}`.',
         "Use the real Hub, or a mirror that answers its API faithfully; report it to whoever runs the endpoint."),
    ),
    # --- DSP6xx: what `dspark-ckpt verify` observed by loading the tensors with torch ---
    *_section(Category.VERIFY,
    Rule("DSP601", "illegal-rows-win-argmax", WARNING, "Padded lm_head rows beat every real token for some probes",
         "`verify` fed probe hidden states (the draft's own embedding rows, RMS-normalised like the final norm, and "
         "Gaussian vectors) through the loaded lm_head (and the Markov bias) and an illegal row [T, D) had the "
         "largest logit for at least one probe.",
         "Greedy drafting proposes that id: it is not a token of the target, so the proposal is wasted or indexes "
         "out of range (the padded-row risk from the review of vLLM PR #55133).",
         "Inkling-Small DSpark (T = 200058, D = 201024) whose rows [200058, 201024) hold large random weights.",
         "Trim lm_head and markov_w2 to T rows and set draft_vocab_size = T ({fix})."),
    Rule("DSP602", "illegal-rows-in-topk", INFO, "Padded lm_head rows enter the top-k but never win the argmax",
         "No probe's argmax was an illegal row [T, D), but some illegal row was among the top-k logits.",
         "Sampling at temperature > 0, or a top-k draft tree, can still propose a non-token.",
         "A padded draft whose illegal rows are small but not negligible.",
         "Trim to T rows ({fix}) to remove the risk entirely."),
    Rule("DSP603", "runtime-mapping-invalid", ERROR, "The mapping a runtime actually uses is not a valid vocab map",
         "After loading the draft the way that runtime version does, map_draft_to_target(arange(D)) produced ids "
         "outside [0, T) (beyond a padded draft's own rows), ids that are not strictly increasing, ids that differ "
         "from nonzero(t2d), or the all-zero identity on a pruned draft from a shipped table.",
         "The draft proposes the wrong target tokens (acceptance collapses) or indexes out of range.",
         "A pruned draft whose d2t was saved with the wrong sign, or a stale d2t beside a newer t2d.",
         "Rebuild d2t from a valid t2d ({fix}) or re-export the draft."),
    Rule("DSP604", "quantised-head-not-probed", INFO, "The lm_head is quantised; the padded-row probe was skipped",
         "The lm_head is stored in an integer, fp8 or packed fp4 format (usually with scale tensors); `verify` "
         "does not guess how to dequantise it, so it reports instead of probing.",
         "The padded-row risk of this draft is unmeasured.", "lm_head.weight F8_E4M3 with lm_head.weight_scale.",
         "Probe a bf16 export of the same draft, or trim the padded rows so there is nothing to probe."),
    Rule("DSP605", "verify-disagrees-with-check", WARNING, "The torch run and the header-only check disagree",
         "For at least one runtime version, the load `verify` observed (loads or the error raised, or the silent "
         "issues) differs from what `check` reasons from config.json and the headers.",
         "One of the two models of the runtime is wrong for this checkpoint; trust neither blindly.",
         "A checkpoint with both a wrong-length d2t and a wrong-row lm_head: the runtime raises for whichever "
         "weight it loads first, check names a fixed one.",
         "Read both errors; report the checkpoint to the dspark-ckpt maintainers."),
    Rule("DSP606", "installed-engine-unavailable", INFO, "The installed runtime's loader could not run; "
         "the modelled loader ran instead",
         "`verify --engine installed` asked for the installed vLLM's own model class, but vLLM is not installed, "
         "cannot be imported here, or its adapter does not support that version or family. The message says "
         "why; every verdict of this run comes from the modelled loader (the contract table run with torch).",
         "The answer is dspark-ckpt's model of the runtime, not the runtime's own words.",
         "`dspark-ckpt verify ./draft --target-vocab-size 96 --engine installed` where vLLM is not installed.",
         "Run it where the deployment's vLLM is installed (its image), or read the verdicts as modelled."),
    Rule("DSP607", "installed-engine-unexpected-error", ERROR, "The installed runtime raised an error the "
         "contract table does not predict",
         "The installed vLLM's real `__init__` and `load_weights` raised an exception whose text matches no error "
         "the table has for that version; it is quoted verbatim, with its type.",
         "The draft does not load on that runtime, and dspark-ckpt's table has no rule for why.",
         "A draft whose d2t is stored as a 2-D tensor, on a release that checks it differently.",
         "Read the runtime's message; fix the checkpoint accordingly and report it to the dspark-ckpt maintainers."),
    Rule("DSP608", "probe-cannot-discriminate", INFO, "Every probe's logits tie: the padded-row probe measured "
         "nothing",
         "For every probe vector the loaded head gives every row the same logit (an all-zero or constant lm_head, "
         "say), so the argmax is the first row whatever the rows hold and no illegal row can be seen to win or "
         "lose. `verify` says so instead of reporting 0 illegal argmax as a result.",
         "The padded-row risk of this draft is unmeasured; a head whose logits all tie also proposes the same "
         "token for every input.", "A padded draft whose lm_head.weight is all zeros.",
         "Check that the lm_head holds the trained weights; then verify again."),
    ),
    # --- DSP8xx: the deploy command (--speculative-config) ---
    *_section(Category.DEPLOY,
    Rule("DSP801", "deploy-not-json", ERROR, "The speculative config is not valid JSON",
         "The `--speculative-config` given (inline, the file it names, or the settings file's `speculative-config`) "
         "does not parse as JSON: a syntax error, text that is not UTF-8, nesting too deep, or an integer longer "
         "than Python parses.",
         "vLLM parses the flag with `json.loads` (engine/arg_utils.py) and refuses to start; nothing else about the "
         "deploy can be checked.",
         "`--speculative-config '{method: dspark}'` (unquoted keys), or a deploy file with a trailing comma.",
         "Write strict JSON: double-quoted keys and strings, no trailing commas."),
    Rule("DSP802", "deploy-not-object", ERROR, "The speculative config is JSON, but not an object",
         "The speculative config parses, but as an array, a string, a number or null instead of an object of "
         "SpeculativeConfig fields.",
         "vLLM builds `SpeculativeConfig(**config)` from it, which needs an object; the server does not start.",
         "`--speculative-config '[\"dspark\", 8]'`.",
         "Give an object: `{\"method\": \"dspark\", \"model\": \"./draft\", \"num_speculative_tokens\": 8}`."),
    Rule("DSP803", "deploy-unknown-key", ERROR, "The speculative config names a key vLLM's SpeculativeConfig lacks",
         "A key (after vLLM rewrites `-` to `_`) is not a field of that release's SpeculativeConfig; the message "
         "names the closest field (difflib), or the release that added the field. SpeculativeConfig is a pydantic "
         "dataclass with `extra=\"forbid\"` (vllm/config/utils.py), so this is an error, not a warning.",
         "pydantic raises `Unexpected keyword argument` and the server does not start; a typo never silently "
         "falls back to a default.",
         "`num_speculative_token` (missing `s`), or `dspark_draft_topk` on vLLM 0.27, which has no such field.",
         "Use the field name the message suggests, or drop the key for releases that do not have it."),
    Rule("DSP804", "deploy-bad-value", ERROR, "A speculative config value has a type or range pydantic refuses",
         "`num_speculative_tokens` is not an integer > 0, `dspark_draft_topk` is not an integer >= 1 (0.28+), "
         "`method` is not one of the release's methods, or `model` is not a string. pydantic's lax mode is "
         "mirrored: `\"8\"`, `8.0` and `true` are accepted as integers, as vLLM accepts them.",
         "SpeculativeConfig's field validation fails before any check of the draft; the server does not start.",
         "`\"num_speculative_tokens\": 0`, `\"method\": \"dpsark\"`.",
         "Give a positive integer and a method the release knows (dspark, dflash, eagle3, eagle, draft_model, ...).",
         family_fix=(*((f, ("Give a positive integer, and the method a DSpark draft is served with: `\"method\": "
                           "\"dspark\"`.")) for f in ("qwen3-dspark", "qwen3-omni-dspark", "gemma4-dspark")),
                     *((f, ("Give a positive integer, and the method a DFlash draft is served with: `\"method\": "
                           "\"dflash\"`.")) for f in ("dflash", "dflash2")),
                     *((f, ("Give a positive integer, and the method an EAGLE-3 draft is served with: `\"method\": "
                           "\"eagle3\"`.")) for f in ("eagle3-llama", "eagle3-qwen3")))),
    Rule("DSP805", "deploy-loads-no-draft", ERROR, "The speculative config does not load this checkpoint",
         "The config names no `model` (and the checkpoint is not a speculators checkpoint served as `--model`), or "
         "its method loads no checkpoint (ngram, suffix, custom_class with `model` read as a class path), or "
         "method dspark/mtp without `model` takes the target's own weights.",
         "The draft checked here is never read by vLLM: the preflight would pass a deploy that serves something "
         "else, or vLLM refuses with `num_speculative_tokens was provided but without speculative model.`",
         "`{\"method\": \"dspark\", \"num_speculative_tokens\": 8}` for a standalone Qwen3 DSpark draft.",
         "Add `\"model\": \"<the draft's path or repo>\"` to the speculative config."),
    Rule("DSP806", "deploy-model-not-checkpoint", WARNING, "The config's model is not the checkpoint checked",
         "The speculative config's `model` names another folder or repo than the checkpoint given on the command "
         "line.",
         "vLLM loads `model`; the findings about the checkpoint checked say nothing about what is deployed.",
         "`dspark-ckpt check ./drafts/v2 --speculative-config deploy/spec.json` where the file says `./drafts/v1`.",
         "Check the checkpoint the config names (omit the checkpoint argument), or fix `model`."),
    Rule("DSP807", "deploy-wrong-method", ERROR, "vLLM serves the draft with a method its family does not use",
         "The method that release settles on (given, or detected from the model path before the architecture: "
         "`eagle-`, `eagle3`, `dflash` win over `dspark`; or `draft_model` when nothing matches; from 0.34 the "
         "class a DSpark or DFlash architecture maps to decides first) is not the draft family's (dspark for "
         "DSpark, dflash for DFlash, eagle3 for EAGLE-3).",
         "The draft is wrapped and renamed for the wrong method (often an unregistered architecture), or runs "
         "as an independent draft model without the hidden states it was trained on: it fails or proposes junk.",
         "A Qwen3 DSpark draft at `/models/eagle3-ablation/` with no `method`: vLLM picks eagle3.",
         "Give `\"method\"` explicitly, and keep `eagle-`, `eagle3` and `dflash` out of a DSpark draft's path.",
         family_fix=(*((f, ("Give `\"method\": \"dspark\"` explicitly, and keep `eagle-`, `eagle3` and `dflash` out "
                           "of a DSpark draft's path.")) for f in ("qwen3-dspark", "qwen3-omni-dspark", "gemma4-dspark")),
                     *((f, ("Give `\"method\": \"dflash\"` explicitly, and keep `eagle-` and `eagle3` out of a DFlash "
                           "draft's path.")) for f in ("dflash", "dflash2")),
                     *((f, ("Give `\"method\": \"eagle3\"` explicitly, and keep `dflash` and `dspark` out of an "
                           "EAGLE-3 draft's path.")) for f in ("eagle3-llama", "eagle3-qwen3")))),
    Rule("DSP808", "deploy-architecture-rewritten", ERROR, "method dspark rewrites the draft to DeepSeek-V4",
         "With method dspark, an architecture outside the release's DSpark list (Qwen3DSparkModel, "
         "Gemma4DSparkModel, K3DSparkModel; Qwen3OmniDSparkModel from 0.29; MuseSparkDSparkModel in 0.33; a "
         "Qwen3-typed DSparkDraftModel is renamed from 0.29) is rewritten to `DSparkDraftModel` with model_type "
         "deepseek_v4 (deepseek_v41 for a DeepSeek-V4.1 target from 0.30); from 0.34 every architecture whose "
         "class declares no DSpark speculator config.",
         "vLLM builds DSparkDeepseekV4ForCausalLM, the DeepSeek-V4 draft whose weights ship inside the target, "
         "for a checkpoint that is something else; nothing says so at start-up.",
         "A Qwen3-typed `DSparkDraftModel` draft on vLLM 0.28, or a DFlash draft with `\"method\": \"dspark\"`.",
         "Use the method of the draft's family, or convert the draft to the architecture the release keeps."),
    Rule("DSP809", "deploy-architecture-unregistered", ERROR, "The architecture vLLM asks its registry for is not there",
         "The draft's architecture, as shipped or after the method's rename (eagle3: `Eagle3<arch>`, dflash: "
         "`DFlash<arch>`, eagle: `Eagle<arch>`), is in no registry of that release.",
         "ModelConfig fails with `Model architectures [...] are not supported for now.`; the server does not "
         "start.",
         "A Qwen3 DSpark draft under method eagle3 (`Eagle3Qwen3DSparkModel`), or Qwen3OmniDSparkModel on 0.28.",
         "Serve the draft with its family's method, on a release that registers the architecture."),
    Rule("DSP810", "deploy-unsupported-method", ERROR, "The method given is not one vLLM can confirm for this draft",
         "A method outside eagle, eagle3, dflash and dspark (mtp, medusa, mlp_speculator) goes through the "
         "detection chain; when nothing there matches the draft, vLLM raises "
         "`NotImplementedError: Unsupported speculative method: '<method>'` (0.14 and older refuse every such "
         "draft, method draft_model included: `Speculative decoding with draft model is not supported yet. ...`). "
         "From 0.34 a configured method is kept "
         "and refused where the draft's class declares another (`speculative_config requested method=...`); a "
         "speculators `peagle` checkpoint is refused (`P-EAGLE (parallel drafting EAGLE-3) is not supported.`).",
         "The server does not start.", "`\"method\": \"mtp\"` with an EAGLE-3 draft.",
         "Use the draft family's method (eagle3, dflash, dspark), or `draft_model` for an independent draft.",
         family_fix=(*((f, "Give `\"method\": \"dspark\"`, the method of the draft's family.")
                       for f in ("qwen3-dspark", "qwen3-omni-dspark", "gemma4-dspark")),
                     *((f, "Give `\"method\": \"dflash\"`, the method of the draft's family.") for f in ("dflash", "dflash2")),
                     *((f, "Give `\"method\": \"eagle3\"`, the method of the draft's family.")
                       for f in ("eagle3-llama", "eagle3-qwen3")))),
    Rule("DSP811", "deploy-tokens-missing", ERROR, "num_speculative_tokens is missing and nothing defaults it",
         "The speculative config has no `num_speculative_tokens`, the draft config has no `n_predict`, and (vLLM "
         "0.31+, method dspark only) no `block_size`/`dspark_block_size` either. DFlash and EAGLE-3 never default "
         "it from `block_size`; Qwen3 DSpark does only from 0.31.",
         "vLLM raises `A speculative model was provided, but `num_speculative_tokens` was not provided`.",
         "A Qwen3 DSpark draft with `block_size: 8` and no num_speculative_tokens, on vLLM 0.27-0.30.",
         "Give `\"num_speculative_tokens\"` explicitly (the draft's trained block size for DSpark)."),
    Rule("DSP812", "deploy-tokens-not-divisible", ERROR, "num_speculative_tokens is not a multiple of n_predict",
         "The draft config sets `n_predict` (Gemma4 DSpark gets `n_predict = block_size` in 0.27-0.30), and "
         "num_speculative_tokens is larger than it but not a multiple of it (from 0.31 method dspark skips this).",
         "vLLM raises `num_speculative_tokens:<n> must be divisible by n_predict=<p>`.",
         "A Gemma4 DSpark draft with block_size 7 served with num_speculative_tokens 10 on vLLM 0.30.",
         "Use n_predict or a multiple of it."),
    Rule("DSP813", "deploy-tokens-below-block", ERROR, "num_speculative_tokens is below dspark_block_size (0.27)",
         "vLLM 0.27 requires num_speculative_tokens >= the draft config's `dspark_block_size` for method dspark "
         "(removed in 0.28).",
         "vLLM 0.27 raises `DSpark requires num_speculative_tokens >= dspark_block_size (...)`: smaller values "
         "give garbled output.",
         "`dspark_block_size: 7` served with num_speculative_tokens 5 on 0.27.",
         "Use num_speculative_tokens >= dspark_block_size."),
    Rule("DSP814", "deploy-draft-model-vocab", ERROR, "method draft_model needs the target's vocabulary size",
         "The draft runs as an independent draft model (method draft_model, given or by default) and its "
         "`vocab_size` differs from the target's, without `use_heterogeneous_vocab`.",
         "vLLM raises `Target and draft model should have the same vocabulary size. ...`.",
         "A pruned EAGLE-3 draft with V = 32000 served without a method against a 128256-token target.",
         "Give the draft family's method; draft_model is for standalone small models of the same tokenizer."),
    Rule("DSP815", "deploy-topk-needs-dspark", ERROR, "dspark_draft_topk is given for a method other than dspark",
         "The speculative config sets `dspark_draft_topk` and the method vLLM settles on is not dspark (0.28+).",
         "vLLM raises `dspark_draft_topk is only supported by DSpark` (0.34: `dspark_draft_topk is not supported "
         "with speculative method '<method>'.`).",
         "`{\"model\": \"./eagle3-dspark\", \"dspark_draft_topk\": 64}`: the path makes the method eagle3.",
         "Remove dspark_draft_topk, or give `\"method\": \"dspark\"`."),
    Rule("DSP816", "deploy-topk-out-of-range", ERROR, "The speculative config's dspark_draft_topk exceeds the draft vocab",
         "`dspark_draft_topk` from the speculative config is not in [1, D], D as vLLM computes it "
         "(`draft_vocab_size or vocab_size` of the draft config). A value from config.json is DSP209.",
         "vLLM raises `dspark_draft_topk must be between 1 and the draft vocabulary size (D)`.",
         "`\"dspark_draft_topk\": 65536` for a draft with draft_vocab_size 32000.", "Choose k in [1, D]."),
    Rule("DSP817", "deploy-topk-architecture", ERROR, "dspark_draft_topk is set for a DSpark architecture without it",
         "`dspark_draft_topk` (from the speculative config or config.json) is set and the architecture after "
         "vLLM's rewrites is not Qwen3DSparkModel (0.28) or Qwen3OmniDSparkModel (0.29+).",
         "vLLM raises `dspark_draft_topk is only supported by Qwen3DSparkModel[ and Qwen3OmniDSparkModel]`.",
         "A Gemma4 DSpark draft with `dspark_draft_topk: 64`.", "Remove dspark_draft_topk for that draft."),
    Rule("DSP818", "deploy-omni-block-size", ERROR, "A Qwen3-Omni DSpark draft has no positive block_size",
         "With a Qwen3-Omni target (0.29+), vLLM reads `block_size` (dflash_config, eagle_config, top level; then "
         "`dspark_block_size`) and requires a positive integer.",
         "vLLM raises `Qwen3-Omni DSpark requires a positive integer block_size in the draft config.`",
         "An Omni draft config without block_size.", "Set the trained block_size in the draft config."),
    Rule("DSP819", "deploy-omni-tokens", ERROR, "num_speculative_tokens differs from the Omni draft's block_size",
         "With a Qwen3-Omni target (0.29+), num_speculative_tokens (given, or defaulted) must equal the trained "
         "`block_size`.",
         "vLLM raises `Qwen3-Omni DSpark requires num_speculative_tokens to match the trained block_size (b); "
         "got n.`",
         "An Omni draft with block_size 8 served with num_speculative_tokens 4.",
         "Serve with num_speculative_tokens = block_size (0.31+ defaults to it when omitted)."),
    Rule("DSP820", "deploy-omni-startup", ERROR, "The Qwen3-Omni DSpark start-up validation refuses the draft",
         "One of `_validate_qwen3_omni_dspark`'s other checks fails (0.29+, Qwen3-Omni target): hidden sizes and "
         "attention shapes against the thinker's text config, target_layer_ids, use_aux_hidden_state, "
         "markov_rank, markov_head_type 'vanilla', sample_from_anchor/dspark_bonus_anchor, vocab_size, "
         "mrope_section. Comparisons need the target config on disk and a value in the draft config.",
         "The server does not start; the message is vLLM's.",
         "A speculators-format Omni draft without `sample_from_anchor: true` (the conversion defaults it to false).",
         "Fix the draft config field the message names."),
    Rule("DSP821", "deploy-verifier-mismatch", WARNING, "A speculators draft's verifier is not the target given",
         "`speculators_config.verifier.name_or_path` names another model than `--target` (compared as a folder, "
         "a repo id, a local copy named like the repo, or the repo's HF cache snapshot).",
         "The draft was trained on another model's hidden states; `vllm serve <draft>` would serve that model.",
         "verifier `Qwen/Qwen3-8B`, target `./models/Llama-3.1-8B`.",
         "Check against the verifier the draft records, or retrain the draft for this target."),
    Rule("DSP822", "deploy-local-verifier", ERROR, "vLLM 0.33 refuses a speculators draft whose verifier is local",
         "Serving a speculators checkpoint as `--model` (the config names no `model`), vLLM 0.33 requires the "
         "recorded verifier to be a valid Hub repo id that is not a local path.",
         "vLLM 0.33 raises `Speculators verifier must name a remote model repository. Select local verifiers "
         "explicitly with --model and --speculative-config.`",
         "`verifier.name_or_path: /models/qwen3-8b` and `vllm serve ./speculator`.",
         "Serve the target as --model and name the draft in the speculative config's `model`."),
    Rule("DSP823", "deploy-config-overridden", WARNING, "The speculators format overrides the speculative config",
         "Serving a speculators checkpoint as `--model`, vLLM 0.27-0.28 build the speculative config from the "
         "speculators config alone (keys given are discarded); 0.29+ merge the keys given but lock `method` to "
         "the speculators format's.",
         "Settings the deploy relies on are silently not applied on those releases.",
         "`{\"num_speculative_tokens\": 4}` with `vllm serve ./speculator` on vLLM 0.28.",
         "Name the draft in `model` and serve the target as --model, or rely only on the speculators config."),
    Rule("DSP824", "deploy-option-refused", ERROR, "The speculative config sets an option this method refuses",
         "An option only some methods take: `tensor_parallel_size` (never: use `draft_tensor_parallel_size`), "
         "`use_heterogeneous_vocab` (draft_model only), `index_share_for_mtp_iteration` (mtp only, 0.29+), "
         "`enable_adaptive_verification` (dspark only: 0.28-0.29 always, 0.30+ with use_local_argmax_reduction), "
         "`xpress_topc` (XPress drafts only, 0.33); from 0.34 each method-specific option the method's config "
         "class does not support (`<option> is not supported with speculative method '<method>'.`), "
         "`parallel_drafting` outside dflash/dspark, `draft_lm_head_quantization` under dspark outside the "
         "DeepSeek-V4/V4.1 drafters.",
         "vLLM raises at start-up with the message quoted; the server does not start.",
         "`{\"model\": \"./eagle3-draft\", \"method\": \"eagle3\", \"tensor_parallel_size\": 2}`.",
         "Drop the option, or use the one the message names."),
    # max_position_embeddings against max_model_len: runtimes/draft_context.py (its LINES cite every release).
    Rule("DSP825", "deploy-max-model-len-refused", ERROR, "The speculative config's max_model_len is refused",
         "The speculative config's own `max_model_len` (the draft's, not the served `--max-model-len`) is larger "
         "than the draft config's `max_position_embeddings` (the draft ModelConfig's `_get_and_verify_max_len`, "
         "vllm/config/model.py), or larger than the served max_model_len "
         "(`SpeculativeConfig._maybe_override_draft_max_model_len`, vllm/config/speculative.py). Every release "
         "0.27-0.33 raises both (model.py @ v0.27.0 L2356-2382, v0.33.0 L2657-2683; speculative.py @ v0.27.0 "
         "L1120-1162, v0.33.0 L1763-1804; each release's lines in docs/upstream-notes.md section 9.1).",
         "vLLM raises at start-up with the message quoted (`User-specified max_model_len (S) is greater than the "
         "derived max_model_len (...)`, or `speculative_max_model_len=S cannot be larger than "
         "target_max_model_len=L`); the server does not start.",
         "`{\"model\": \"./draft\", \"method\": \"dspark\", \"max_model_len\": 8192}` for a draft with "
         "`max_position_embeddings: 4096`, or served with `--max-model-len 4096`.",
         "Drop `max_model_len` from the speculative config (vLLM then takes the smaller of the draft's and the served "
         "length), or give one no larger than both."),
    Rule("DSP826", "deploy-draft-context-short", WARNING, "The draft's context is shorter than the served one",
         "The draft config's `max_position_embeddings` P is below the served max_model_len L (`--max-model-len`, "
         "else vLLM's default from a local target's config), and the release does not raise P for the method it "
         "serves the draft with: `_maybe_override_draft_max_position_embeddings` covers only eagle and eagle3 in "
         "0.27-0.32 (so DSpark and DFlash drafts keep P), and every method but draft_model in 0.33. On 0.33 with "
         "method draft_model, the V2 model runner lowers the served max_model_len to the draft's instead "
         "(`VllmConfig._limit_max_model_len_to_draft`, vllm/config/vllm.py @ v0.33.0 L3025-3051). The call site: "
         "vllm/config/speculative.py @ v0.27.0 L924-931 ... v0.33.0 L1503-1511 (docs/upstream-notes.md section "
         "9.1). Judged only where P alone is the draft's length (no other length key, RoPE default or llama3).",
         "The server starts and its log says nothing of it (0.27-0.32). The proposer feeds the draft positions up to L "
         "while its rotary cos/sin cache has P rows: from position P on the cache is indexed past its end (vLLM's "
         "own docstring: it 'makes that cache gather go out of bounds'), a crash or junk proposals on every long "
         "request; or, on 0.33's V2 runner, requests longer than the draft's length are refused.",
         "A Qwen3 DSpark draft with `max_position_embeddings: 2048` served with `--max-model-len 32768` on vLLM "
         "0.27-0.32.",
         "Serve with `--max-model-len` no larger than the draft's max_position_embeddings, use a draft trained "
         "(and configured) for the served context, or serve it on vLLM 0.33, which raises P for DSpark and DFlash "
         "drafts too."),
    Rule("DSP827", "deploy-draft-context-raised", WARNING, "vLLM stretches the draft's context to the served one",
         "The draft config's `max_position_embeddings` P is below the served max_model_len L, and the release "
         "raises it to L for the method it serves the draft with (`_maybe_override_draft_max_position_embeddings`: "
         "eagle and eagle3 in 0.27-0.32, every method but draft_model in 0.33), logged at info level only "
         "(vllm/config/speculative.py @ v0.27.0 L1165-1196, v0.33.0 L1807-1846; docs/upstream-notes.md section "
         "9.1). Judged only where P alone is the draft's length (no other length key, RoPE default or llama3).",
         "Nothing crashes, and the output stays the target's: but from position P on the draft runs at positions "
         "it was never trained on (its RoPE frequencies are unchanged, only the cache grows), so its proposals on "
         "long requests may be poorer and acceptance may fall where long contexts are the point.",
         "An EAGLE-3 draft with `max_position_embeddings: 2048` (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B's value, "
         "vLLM's own example) served with `--max-model-len 131072`.",
         "Measure acceptance on long prompts; if it falls, train or fine-tune the draft at the served context, or "
         "serve with a `--max-model-len` within the draft's."),
    Rule("DSP828", "deploy-key-ignored", WARNING, "This vLLM drops a speculative-config key it has no field for",
         "vLLM 0.15 and older declare SpeculativeConfig as a pydantic dataclass without `extra=\"forbid\"` "
         "(vllm/config/speculative.py @ v0.15.0 L56-57; the forbid arrives with vllm/config/utils.py's `config` "
         "decorator in 0.16.0): a key that is no field of the release is dropped without a word, where 0.16 and "
         "newer refuse it (DSP803).",
         "The setting never takes effect: a typo (`num_speculative_token`) leaves the real key unset, and a field "
         "of a newer release (`parallel_drafting`, `dspark_draft_topk`) does nothing, with no error to say so.",
         "`{\"num_speculative_token\": 3}` (a missing s) served with vLLM 0.15.1.",
         "Spell the key as the release's SpeculativeConfig does, or drop it for this release."),
    ),
)


def unreadable_code(code: FindingCode) -> bool:
    """A finding whose file no loader can read (its verdict is that error, whatever the contract says)."""
    rule = RULES.get(code)
    return rule is not None and rule.stops_loading


def blocks_fix(code: FindingCode, severity: Severity) -> bool:
    """A structural error blocks fix, unless fix itself repairs it (a config-only repair such as DSP215's)."""
    rule = RULES.get(code)
    return rule is not None and severity is Severity.ERROR and rule.category.blocks_fix and rule.repair is None
