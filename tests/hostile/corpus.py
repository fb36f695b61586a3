"""The hostile corpus as code: each case builds a broken checkpoint and names the finding code and exit it must give."""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header

TARGET_VOCAB = 96  # every case is checked with --target-vocab-size 96, which the baseline draft matches exactly
WEIGHTS = "model.safetensors"
INDEX = "model.safetensors.index.json"
BIG_HEADER_BYTES = 99_000_000

CONFIG: dict[str, Any] = {"architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "vocab_size": 96,
                          "draft_vocab_size": 96, "hidden_size": 16, "markov_rank": 4, "markov_head_type": "vanilla",
                          "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
                          "intermediate_size": 16, "mask_token_id": 0}
# The baseline loads on every vLLM release that registers Qwen3DSparkModel (registry.py @ v0.25.0 L597 first; an
# older one refuses it); SGLang's own limits are not the point
RUNTIMES = ("--runtime", "vllm>=0.25.0")
TENSORS = (
    TensorSpec("embed_tokens.weight", "F32", (96, 16)),
    *(TensorSpec(f"layers.0.{name}.weight", "F32", shape) for name, shape in (  # one complete Qwen3 layer
        ("self_attn.q_proj", (16, 16)), ("self_attn.k_proj", (8, 16)), ("self_attn.v_proj", (8, 16)),
        ("self_attn.o_proj", (16, 16)), ("self_attn.q_norm", (8,)), ("self_attn.k_norm", (8,)),
        ("mlp.gate_proj", (16, 16)), ("mlp.up_proj", (16, 16)), ("mlp.down_proj", (16, 16)),
        ("input_layernorm", (16,)), ("post_attention_layernorm", (16,)))),
    TensorSpec("hidden_norm.weight", "F32", (16,)),
    TensorSpec("norm.weight", "F32", (16,)),
    TensorSpec("markov_head.markov_w1.weight", "F32", (96, 4)),
    TensorSpec("markov_head.markov_w2.weight", "F32", (96, 4)),
    TensorSpec("lm_head.weight", "F32", (96, 16)),
    TensorSpec("fc.weight", "F32", (16, 16)),  # [hidden, num_hidden_layers x target hidden]: the landing judges it
)


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    build: Callable[[Path], Path]  # writes under an empty folder, returns what to pass to `check`
    code: str  # a finding code the JSON report must contain, or the DSP-E code of the error on stderr
    exit: int = 1
    unreadable: bool = False  # needs a file the checking process may not read (see needs_dac_drop)
    note: str = ""
    # The arguments after `check`, from what `build` returned; None: that path and --target-vocab-size 96.
    args: Callable[[Path], list[str]] | None = None
    klass: int = 0  # the class of issue 14 it belongs to (0: the first corpus)


# --- building blocks -------------------------------------------------------------------------------------------


def safetensors_bytes(specs: tuple[TensorSpec, ...] = TENSORS, metadata: dict[str, str] | None = None) -> bytes:
    return encode_header(specs, metadata) + bytes(sum(t.nbytes for t in specs))


def raw_file(body: bytes, data: bytes = b"", length: int | None = None) -> bytes:
    """8-byte length (the body's unless given) + body + data: any framing, honest or not."""
    return struct.pack("<Q", len(body) if length is None else length) + body + data


def entry(dtype: Any = "F32", shape: Any = (4,), offsets: Any = (0, 16)) -> dict[str, Any]:
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


def header_file(doc: dict[str, Any], data_len: int) -> bytes:
    return raw_file(json.dumps(doc).encode(), bytes(data_len))


def folder(root: Path, *, config: Any = CONFIG, weights: bytes | None = None) -> Path:
    """A checkpoint folder with the baseline config and weights, either replaceable."""
    ckpt = root / "ckpt"
    ckpt.mkdir()
    if config is not None:
        (ckpt / "config.json").write_bytes(config if isinstance(config, bytes) else json.dumps(config).encode())
    if weights is not None:
        (ckpt / WEIGHTS).write_bytes(weights)
    return ckpt


def weights_case(data: bytes) -> Callable[[Path], Path]:
    return lambda root: folder(root, weights=data)


def config_case(config: Any) -> Callable[[Path], Path]:
    return lambda root: folder(root, config=config, weights=safetensors_bytes())


def config_value(key: str, value: Any) -> Callable[[Path], Path]:
    return config_case({**CONFIG, key: value})


def sharded(root: Path, weight_map_extra: dict[str, str] | None = None) -> Path:
    """Two honest shards split the baseline tensors, plus an index that may name extra (hostile) files."""
    ckpt = folder(root)
    halves = (TENSORS[:3], TENSORS[3:])
    weight_map: dict[str, str] = {}
    for i, part in enumerate(halves, 1):
        name = f"model-{i:05d}-of-00002.safetensors"
        (ckpt / name).write_bytes(safetensors_bytes(part))
        weight_map.update({t.name: name for t in part})
    weight_map.update(weight_map_extra or {})
    (ckpt / INDEX).write_text(json.dumps({"metadata": {"total_size": sum(t.nbytes for t in TENSORS)},
                                          "weight_map": weight_map}))
    return ckpt


def index_names(shard: str) -> Callable[[Path], Path]:
    return lambda root: sharded(root, {"extra.weight": shard})


def index_doc(raw: bytes) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        ckpt = sharded(root)
        (ckpt / INDEX).write_bytes(raw)
        return ckpt
    return build


# --- builders that need more than bytes ------------------------------------------------------------------------


def baseline(root: Path) -> Path:
    return folder(root, weights=safetensors_bytes())


def big_header(root: Path) -> Path:
    """A 99 MB header: valid JSON whose __metadata__ string fills it; the data buffer it declares is missing."""
    head = json.dumps({"w": entry("U8", (8,), (0, 8)), "__metadata__": {"pad": ""}}).encode()[:-3]
    body = head + b"x" * (BIG_HEADER_BYTES - len(head) - 3) + b'"}}'
    return folder(root, weights=raw_file(body))


def weights_is_directory(root: Path) -> Path:
    ckpt = folder(root)
    (ckpt / WEIGHTS).mkdir()
    return ckpt


def weights_is_fifo(root: Path) -> Path:
    ckpt = folder(root)
    os.mkfifo(ckpt / WEIGHTS)  # opening it would block forever: the check must not open it
    return ckpt


def fifo_named(name: str) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        ckpt = baseline(root)
        (ckpt / name).unlink(missing_ok=True)
        os.mkfifo(ckpt / name)
        return ckpt
    return build


def weights_link(target: Callable[[Path], Path]) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        ckpt = folder(root)
        (ckpt / WEIGHTS).symlink_to(target(root))
        return ckpt
    return build


def outside_file(root: Path) -> Path:
    """An honest safetensors file next to (not inside) the checkpoint folder."""
    path = root / "outside.safetensors"
    path.write_bytes(safetensors_bytes())
    return path


def index_link_leaves(root: Path) -> Path:
    ckpt = sharded(root, {"extra.weight": "model-extra.safetensors"})
    (ckpt / "model-extra.safetensors").symlink_to(outside_file(root))
    return ckpt


def index_names_directory(root: Path) -> Path:
    ckpt = sharded(root, {"extra.weight": "sub"})
    (ckpt / "sub").mkdir()
    return ckpt


def tensor_in_two_shards(root: Path) -> Path:
    ckpt = sharded(root)
    shard2 = ckpt / "model-00002-of-00002.safetensors"
    shard2.write_bytes(safetensors_bytes((TENSORS[2], *TENSORS[3:])))  # norm.weight is in both shards now
    return ckpt


def unreadable(name: str) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        ckpt = baseline(root)
        (ckpt / name).chmod(0)
        return ckpt
    return build


def config_is_directory(root: Path) -> Path:
    ckpt = folder(root, config=None, weights=safetensors_bytes())
    (ckpt / "config.json").mkdir()
    return ckpt


def config_link_leaves(root: Path) -> Path:
    ckpt = folder(root, config=None, weights=safetensors_bytes())
    outside = root / "outside-config.json"
    outside.write_text(json.dumps(CONFIG))
    (ckpt / "config.json").symlink_to(outside)
    return ckpt


def config_link(target: Callable[[Path], Path]) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        ckpt = folder(root, config=None, weights=safetensors_bytes())
        (ckpt / "config.json").symlink_to(target(ckpt))
        return ckpt
    return build


def loop_link(root: Path) -> Path:
    ckpt = folder(root)
    (ckpt / WEIGHTS).symlink_to(ckpt / WEIGHTS)
    return ckpt


# --- the cases -------------------------------------------------------------------------------------------------

_F32x4 = entry()
_DEEP = b"[" * 100_000 + b"]" * 100_000

CASES: tuple[Case, ...] = (
    # framing of the 8-byte length
    Case("empty-file", weights_case(b""), "DSP001"),
    Case("file-of-7-bytes", weights_case(b"\x10" * 7), "DSP001"),
    Case("header-length-0", weights_case(raw_file(b"")), "DSP005", note="an empty header is not JSON"),
    Case("header-length-2-pow-63", weights_case(raw_file(b"{}", length=2**63)), "DSP002"),
    Case("header-length-u64-max", weights_case(raw_file(b"{}", length=2**64 - 1)), "DSP002"),
    Case("header-beyond-file", weights_case(raw_file(b"{}", length=4096)), "DSP003"),
    Case("git-lfs-pointer", weights_case(b"version https://git-lfs.github.com/spec/v1\noid sha256:"
                                         + b"0" * 64 + b"\nsize 1234\n"), "DSP016"),
    Case("header-99-mb", big_header, "DSP015", note="valid length, huge header: read once, parsed in bounded time"),
    # the JSON text
    Case("header-invalid-utf8", weights_case(raw_file(b'{"\xff\xfe": 1}')), "DSP004"),
    Case("header-truncated-json", weights_case(raw_file(b'{"w": {"dtype": "F3')), "DSP005"),
    Case("header-nested-100000-deep", weights_case(raw_file(_DEEP)), "DSP005"),
    Case("header-lone-surrogate", weights_case(raw_file(b'{"w\\ud800": 1}')), "DSP005"),
    Case("header-nan-constant", weights_case(raw_file(b'{"w": NaN}')), "DSP005"),
    Case("header-json-array", weights_case(raw_file(b"[1, 2]")), "DSP006"),
    Case("header-json-string", weights_case(raw_file(b'"weights"')), "DSP006"),
    Case("entry-not-object", weights_case(header_file({"w": 3}, 0)), "DSP006"),
    Case("entry-missing-offsets", weights_case(header_file({"w": {"dtype": "F32", "shape": [4]}}, 16)), "DSP006"),
    Case("duplicate-tensor-names",
         weights_case(raw_file(b'{"w": ' + json.dumps(_F32x4).encode() + b', "w": '
                               + json.dumps(entry(offsets=(16, 32))).encode() + b"}", bytes(32))), "DSP007"),
    Case("metadata-non-string-value", weights_case(header_file({"__metadata__": {"format": 1}, "w": _F32x4}, 16)),
         "DSP008"),
    Case("metadata-not-object", weights_case(header_file({"__metadata__": ["pt"], "w": _F32x4}, 16)), "DSP008"),
    # entries
    Case("unknown-dtype", weights_case(header_file({"w": entry("F128")}, 16)), "DSP009"),
    Case("dtype-not-string", weights_case(header_file({"w": entry(7)}, 16)), "DSP009"),
    Case("shape-negative", weights_case(header_file({"w": entry(shape=(-4,))}, 16)), "DSP010"),
    Case("shape-float", weights_case(header_file({"w": entry(shape=(4.0,))}, 16)), "DSP010"),
    Case("shape-bool", weights_case(header_file({"w": entry(shape=(True, 4))}, 16)), "DSP010"),
    Case("shape-not-list", weights_case(header_file({"w": {**_F32x4, "shape": "4"}}, 16)), "DSP010"),
    Case("shape-huge", weights_case(header_file({"w": entry("U8", (2**58,), (0, 16))}, 16)), "DSP014",
         note="declares 256 PiB: must be reported, never allocated"),
    Case("shape-overflows-u64", weights_case(header_file({"w": entry(shape=(2**32, 2**32, 16))}, 16)), "DSP011"),
    Case("shape-bignum", weights_case(header_file({"w": entry(shape=(10**300,))}, 16)), "DSP011"),
    Case("subbyte-ends-mid-byte", weights_case(header_file({"w": entry("F4", (3,), (0, 2))}, 2)), "DSP017"),
    # offsets and the data buffer
    Case("offsets-reversed", weights_case(header_file({"w": entry(offsets=(16, 0))}, 16)), "DSP012"),
    Case("offsets-negative", weights_case(header_file({"w": entry(offsets=(-16, 0))}, 16)), "DSP012"),
    Case("offsets-three-values", weights_case(header_file({"w": entry(offsets=(0, 8, 16))}, 16)), "DSP012"),
    Case("offsets-beyond-u64", weights_case(header_file({"w": entry(offsets=(0, 2**64))}, 16)), "DSP012"),
    Case("offsets-gap", weights_case(header_file({"a": _F32x4, "b": entry(offsets=(32, 48))}, 48)), "DSP013"),
    Case("offsets-overlap", weights_case(header_file({"a": _F32x4, "b": entry(offsets=(8, 24))}, 24)), "DSP013"),
    Case("offsets-not-from-zero", weights_case(header_file({"w": entry(offsets=(16, 32))}, 32)), "DSP013"),
    Case("offsets-beyond-buffer", weights_case(header_file({"w": entry(shape=(2**20,), offsets=(0, 2**22))}, 16)),
         "DSP015"),
    Case("trailing-bytes", weights_case(header_file({"w": _F32x4}, 16 + 5)), "DSP015"),
    # the file itself
    Case("weights-is-directory", weights_is_directory, "DSP018"),
    Case("weights-is-fifo", weights_is_fifo, "DSP018", note="a real unreadable file, even for root"),
    Case("weights-unreadable", unreadable(WEIGHTS), "DSP018", unreadable=True),
    Case("weights-dangling-symlink", weights_link(lambda root: root / "nowhere.safetensors"), "DSP018"),
    Case("weights-symlink-loop", loop_link, "DSP018"),
    Case("weights-symlink-leaves-folder", weights_link(outside_file), "DSP104"),
    Case("weights-symlink-to-etc-passwd", weights_link(lambda root: Path("/etc/passwd")), "DSP104"),
    Case("no-weights-at-all", lambda root: folder(root), "DSP101"),
    # the shard index
    Case("index-names-etc-passwd", index_names("../../etc/passwd"), "DSP104"),
    Case("index-absolute-path", index_names("/etc/passwd"), "DSP104"),
    Case("index-backslash-path", index_names("..\\..\\evil.safetensors"), "DSP104"),
    Case("index-empty-file-name", index_names(""), "DSP104"),
    Case("index-symlink-leaves-folder", index_link_leaves, "DSP104"),
    Case("index-missing-shard", index_names("model-00003-of-00002.safetensors"), "DSP103"),
    Case("index-names-directory", index_names_directory, "DSP018"),
    Case("index-tensor-in-two-shards", tensor_in_two_shards, "DSP106"),
    Case("index-not-json", index_doc(b"{weight_map: nope"), "DSP102"),
    Case("index-weight-map-list", index_doc(b'{"weight_map": ["a"]}'), "DSP102"),
    Case("index-nested-100000-deep", index_doc(_DEEP), "DSP102"),
    Case("index-bignum-digits", index_doc(b'{"metadata": {"total_size": ' + b"9" * 5000 + b"}}"), "DSP102"),
    Case("index-is-fifo", fifo_named(INDEX), "DSP102"),
    # config.json
    Case("config-missing", lambda root: folder(root, config=None, weights=safetensors_bytes()), "DSP201"),
    Case("config-not-json", config_case(b"{'vocab_size': 96}"), "DSP202"),
    Case("config-invalid-utf8", config_case(b'{"vocab_size": "\xff"}'), "DSP202"),
    Case("config-is-list", config_case([CONFIG]), "DSP202"),
    Case("config-nested-100000-deep", config_case(_DEEP), "DSP202"),
    Case("config-bignum-digits", config_case(b'{"vocab_size": ' + b"9" * 5000 + b"}"), "DSP202"),
    Case("config-is-directory", config_is_directory, "DSP202"),
    Case("config-is-fifo", fifo_named("config.json"), "DSP202"),
    Case("config-symlink-leaves-folder", config_link_leaves, "DSP202"),
    Case("config-dangling-symlink", config_link(lambda ckpt: ckpt / "nowhere.json"), "DSP202"),
    Case("config-symlink-loop", config_link(lambda ckpt: ckpt / "config.json"), "DSP202"),
    Case("config-unreadable", unreadable("config.json"), "DSP202", unreadable=True),
    Case("draft-vocab-size-minus-1", config_value("draft_vocab_size", -1), "DSP205"),
    Case("draft-vocab-size-0", config_value("draft_vocab_size", 0), "DSP205"),
    Case("draft-vocab-size-1.5", config_value("draft_vocab_size", 1.5), "DSP205"),
    Case("draft-vocab-size-string", config_value("draft_vocab_size", "32000"), "DSP205"),
    Case("draft-vocab-size-true", config_value("draft_vocab_size", True), "DSP205"),
    Case("draft-vocab-size-above-2-pow-40", config_value("draft_vocab_size", 2**40 + 1), "DSP205"),
    Case("vocab-size-nan", config_case(b'{"architectures": ["Qwen3DSparkModel"], "vocab_size": NaN}'), "DSP204"),
)

BASELINE = Case("baseline", baseline, "", exit=0, note="the control: every case differs from it in one way")
