"""The hostile corpus, round two (issue 14): files that are not what their name says, inputs huge to process,
untrusted text, JSON edge cases, permissions, verify sizes and the value guard. Each case builds real files and
names the finding (or operational error) code and exit status the CLI must give under RLIMIT_AS and 5 s."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus import (
    CONFIG,
    INDEX,
    TARGET_VOCAB,
    TENSORS,
    WEIGHTS,
    Case,
    entry,
    folder,
    header_file,
    raw_file,
    safetensors_bytes,
    sharded,
)

from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header

SPARSE = 3 * 2**30  # a "multi-GiB" file that costs no disk: only its size is ever looked at
T = ["--target-vocab-size", str(TARGET_VOCAB)]


# --- building blocks -------------------------------------------------------------------------------------------


def baseline(root: Path) -> Path:
    return folder(root, weights=safetensors_bytes())


def sparse(path: Path, size: int = SPARSE, head: bytes = b"{") -> Path:
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def unix_socket(path: Path) -> Path:
    """A socket file at `path`, bound by its name from its own folder: an AF_UNIX address holds at most 107 bytes,
    which a deep temporary folder (TMPDIR set, a long test name) passes."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.getcwd()
    try:
        os.chdir(path.parent)
        sock.bind(path.name)
    finally:
        os.chdir(here)
        sock.close()  # the socket file stays, nobody listens
    return path


def single_file_with_config(config: Callable[[Path], Path | str]) -> tuple[Callable[[Path], Path],
                                                                          Callable[[Path], list[str]]]:
    """A single .safetensors checked with `--config X`, X built (or named) by `config`."""
    made: dict[Path, str] = {}

    def build(root: Path) -> Path:
        ckpt = folder(root, config=None, weights=safetensors_bytes())
        made[ckpt] = str(config(root))
        return ckpt

    return build, lambda ckpt: [str(ckpt / WEIGHTS), "--config", made[ckpt], *T]


def replaced(name: str, make: Callable[[Path], Path]) -> Callable[[Path], Path]:
    """The baseline (sharded when the index is involved) with `name` replaced by what `make` builds there."""
    def build(root: Path) -> Path:
        ckpt = sharded(root) if name == INDEX else baseline(root)
        (ckpt / name).unlink(missing_ok=True)
        make(ckpt / name)
        return ckpt
    return build


def config_bytes(raw: bytes) -> Callable[[Path], Path]:
    return lambda root: folder(root, config=raw, weights=safetensors_bytes())


def config_with(**changes: Any) -> Callable[[Path], Path]:
    return config_bytes(json.dumps({**CONFIG, **changes}).encode())


def index_bytes(raw: bytes) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        ckpt = sharded(root)
        (ckpt / INDEX).write_bytes(raw)
        return ckpt
    return build


_INDEX_TEXT = json.dumps({"metadata": {"total_size": 1},
                          "weight_map": {t.name: "model-00001-of-00002.safetensors" for t in TENSORS}})
_CONFIG_TEXT = json.dumps(CONFIG)


def target_case(make: Callable[[Path], Path | str]) -> tuple[Callable[[Path], Path], Callable[[Path], list[str]]]:
    """The baseline checked with `--target X`, X built (or named) by `make`."""
    made: dict[Path, str] = {}

    def build(root: Path) -> Path:
        ckpt = baseline(root)
        made[ckpt] = str(make(root))
        return ckpt

    return build, lambda ckpt: [str(ckpt), "--target", made[ckpt]]


def target_bytes(raw: bytes) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        (root / "target.json").write_bytes(raw)
        return root / "target.json"
    return make


def settings_case(make: Callable[[Path], Path | str]) -> tuple[Callable[[Path], Path], Callable[[Path], list[str]]]:
    made: dict[Path, str] = {}

    def build(root: Path) -> Path:
        ckpt = baseline(root)
        made[ckpt] = str(make(root))
        return ckpt

    return build, lambda ckpt: [str(ckpt), *T, "--settings", made[ckpt]]


def settings_bytes(raw: bytes) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        (root / "dspark-ckpt.toml").write_bytes(raw)
        return root / "dspark-ckpt.toml"
    return make


def weights(specs: list[TensorSpec] | tuple[TensorSpec, ...], metadata: dict[str, str] | None = None,
            data: int | None = None) -> bytes:
    head = encode_header(list(specs), metadata)
    return head + bytes(sum(t.nbytes for t in specs) if data is None else data)


def weights_case(data: bytes | Callable[[], bytes]) -> Callable[[Path], Path]:
    return lambda root: folder(root, weights=data() if callable(data) else data)


def with_tensor(spec_entry: dict[str, Any], name: str, data_len: int) -> Callable[[Path], Path]:
    """The baseline plus one extra shard holding a single hand-written header entry."""
    def build(root: Path) -> Path:
        ckpt = baseline(root)
        (ckpt / "extra.safetensors").write_bytes(header_file({name: spec_entry}, data_len))
        return ckpt
    return build


# --- class 2: huge to process ----------------------------------------------------------------------------------


def index_million_entries(root: Path) -> Path:
    """A weight_map of a million tensors, all in a shard whose header lacks them: a million DSP105s, capped."""
    ckpt = sharded(root)
    shard = "model-00001-of-00002.safetensors"
    body = ",".join(f'"layers.{i}.mlp.w": "{shard}"' for i in range(1_000_000))
    (ckpt / INDEX).write_text('{"metadata": {"total_size": 1}, "weight_map": {' + body + "}}")
    return ckpt


def index_million_shards(root: Path) -> Path:
    """A million tensors, each in its own (missing) shard: more shards than are ever looked at."""
    ckpt = sharded(root)
    body = ",".join(f'"t{i}": "s{i}.safetensors"' for i in range(1_000_000))
    (ckpt / INDEX).write_text('{"weight_map": {' + body + "}}")
    return ckpt


def many_tensors(count: int, dtype: str = "U8") -> bytes:
    """`count` one-byte tensors (a bad dtype makes each one a finding)."""
    doc = {f"t.{i}": {"dtype": dtype, "shape": [1], "data_offsets": [i, i + 1]} for i in range(count)}
    return raw_file(json.dumps(doc, separators=(",", ":")).encode(), bytes(count))


def strings_header(count: int, pairs: bool) -> bytes:
    """A header whose __metadata__ is `count` JSON strings: as key/value pairs or as one list."""
    body = (",".join(f'"k{i}":""' for i in range(count // 2)) if pairs else ",".join(['""'] * count))
    inner = "{" + body + "}" if pairs else '{"list": [' + body + "]}"
    doc = '{"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}, "__metadata__": ' + inner + "}"
    return raw_file(doc.encode(), b"\0")


def big_mapping(name: str, dtype: str, length: int) -> Callable[[Path], Path]:
    """The baseline plus a d2t/t2d whose header claims `length` entries (the file is sparse, the data zeros)."""
    def build(root: Path) -> Path:
        ckpt = baseline(root)
        spec = TensorSpec(name, dtype, (length,))
        path = ckpt / "mapping.safetensors"
        with open(path, "wb") as f:
            f.write(encode_header([spec]))
            f.truncate(len(encode_header([spec])) + spec.nbytes)
        return ckpt
    return build


# --- class 3: untrusted text -----------------------------------------------------------------------------------

ANSI_NAME = "\x1b[2J\x1b]0;owned\x07lm_head\x1b[0m.weight"
BIDI_NAME = "embed\u202etokens\u2066.weight"


def hostile_tensor(name: str) -> Callable[[Path], Path]:
    """An extra shard with one tensor of that name and an unknown dtype (so the case fails, and names it)."""
    return with_tensor(entry("F128"), name, 16)


def odd_file_name(name: bytes) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        ckpt = baseline(root)
        with open(os.path.join(os.fsencode(ckpt), name), "wb") as f:
            f.write(b"\x01\x02")  # 2 bytes: shorter than a header length (DSP001)
        return ckpt
    return build


def index_names_with_newline(root: Path) -> Path:
    return sharded(root, {"extra.weight": "evil\n::error title=x::pwned.safetensors"})


# --- class 5: permissions --------------------------------------------------------------------------------------


def shard_in_unreadable_subfolder(root: Path) -> Path:
    ckpt = folder(root)
    sub = ckpt / "sub"
    sub.mkdir()
    (sub / "model.safetensors").write_bytes(safetensors_bytes())
    (ckpt / INDEX).write_text(json.dumps({"weight_map": {t.name: "sub/model.safetensors" for t in TENSORS}}))
    sub.chmod(0)
    return ckpt


def target_in_unreadable_folder(root: Path) -> Path:
    sub = root / "target"
    sub.mkdir()
    (sub / "config.json").write_text(json.dumps({"vocab_size": TARGET_VOCAB}))
    sub.chmod(0)
    return sub / "config.json"


# --- the cases -------------------------------------------------------------------------------------------------

_cfg_zero = single_file_with_config(lambda root: "/dev/zero")
_cfg_fifo = single_file_with_config(lambda root: fifo(root / "config.json"))
_cfg_proc = single_file_with_config(lambda root: "/proc/self/status")
_cfg_dir = single_file_with_config(lambda root: root)
_t_fifo = target_case(lambda root: fifo(root / "target.json"))
_t_zero = target_case(lambda root: "/dev/zero")
_t_sparse = target_case(lambda root: sparse(root / "target.json"))
_t_proc = target_case(lambda root: "/proc/self/environ")
_t_dir_fifo = target_case(lambda root: (root / "tgt").mkdir() or fifo(root / "tgt" / "config.json").parent)
_t_bignum = target_case(target_bytes(b'{"vocab_size": ' + b"9" * 5000 + b"}"))
_t_bom = target_case(target_bytes(b"\xef\xbb\xbf" + json.dumps({"vocab_size": 96}).encode()))
_t_surrogate = target_case(target_bytes(b'{"vocab_size": 96, "name": "\\udc00"}'))
_t_utf16 = target_case(target_bytes(json.dumps({"vocab_size": 96}).encode("utf-16")))
_t_locked = target_case(target_in_unreadable_folder)
_s_fifo = settings_case(lambda root: fifo(root / "s.toml"))
_s_zero = settings_case(lambda root: "/dev/zero")
_s_sparse = settings_case(lambda root: sparse(root / "s.toml", head=b"#"))
_s_bignum = settings_case(settings_bytes(b"target-vocab-size = " + b"9" * 5000 + b"\n"))
_s_utf16 = settings_case(settings_bytes('fail-on = "error"\n'.encode("utf-16")))
_s_deep = settings_case(settings_bytes(b"select = " + b"[" * 5000 + b"]" * 5000 + b"\n"))
_s_bom = settings_case(settings_bytes(b'\xef\xbb\xbffail-on = "error"\n'))
_warn = lambda ckpt: [str(ckpt), *T, "--fail-on", "warning"]  # noqa: E731 - a table of small lambdas

CASES2: tuple[Case, ...] = (
    # 1. files that are not what their name says: stat-checked, read with a bound, never blocking
    Case("config-arg-dev-zero", _cfg_zero[0], "DSP202", args=_cfg_zero[1], klass=1),
    Case("config-arg-fifo", _cfg_fifo[0], "DSP202", args=_cfg_fifo[1], klass=1),
    Case("config-arg-proc-file", _cfg_proc[0], "DSP202", args=_cfg_proc[1], klass=1,
         note="a /proc file: regular, size 0, read up to the bound"),
    Case("config-arg-directory", _cfg_dir[0], "DSP202", args=_cfg_dir[1], klass=1),
    Case("config-sparse-3-gib", replaced("config.json", sparse), "DSP213", klass=1),
    Case("config-is-socket", replaced("config.json", unix_socket), "DSP202", klass=1),
    Case("index-sparse-3-gib", replaced(INDEX, sparse), "DSP112", klass=1),
    Case("index-is-socket", replaced(INDEX, unix_socket), "DSP102", klass=1),
    Case("weights-sparse-3-gib-trailing", replaced(WEIGHTS, lambda p: sparse(p, head=safetensors_bytes())),
         "DSP015", klass=1, note="only the header is read"),
    Case("target-is-fifo", _t_fifo[0], "DSP-E035", exit=2, args=_t_fifo[1], klass=1),
    Case("target-dev-zero", _t_zero[0], "DSP-E035", exit=2, args=_t_zero[1], klass=1),
    Case("target-sparse-3-gib", _t_sparse[0], "DSP-E035", exit=2, args=_t_sparse[1], klass=1),
    Case("target-proc-file", _t_proc[0], "DSP-E035", exit=2, args=_t_proc[1], klass=1),
    Case("target-folder-config-fifo", _t_dir_fifo[0], "DSP-E035", exit=2, args=_t_dir_fifo[1], klass=1),
    Case("settings-fifo", _s_fifo[0], "DSP-E023", exit=2, args=_s_fifo[1], klass=1),
    Case("settings-dev-zero", _s_zero[0], "DSP-E023", exit=2, args=_s_zero[1], klass=1),
    Case("settings-sparse-3-gib", _s_sparse[0], "DSP-E023", exit=2, args=_s_sparse[1], klass=1),
    # 2. inputs that parse but are huge to process: linear work, bounded memory, findings capped
    Case("index-million-entries", index_million_entries, "DSP105", klass=2),
    Case("index-million-shards", index_million_shards, "DSP111", klass=2),
    Case("header-100k-bad-dtypes", weights_case(lambda: many_tensors(100_000, "F128")), "DSP009", klass=2),
    Case("header-200k-tiny-tensors", weights_case(lambda: many_tensors(200_000)), "DSP019", klass=2),
    Case("shape-of-3m-dimensions", weights_case(lambda: raw_file(
        b'{"w":{"dtype":"F32","data_offsets":[0,4],"shape":[' + b"1234567," * 3_200_000 + b"1]}}", bytes(4))),
         "DSP011", klass=2, note="just under the value guard: the most expensive header still decoded (~1.4 s)"),
    Case("t2d-64-mib", big_mapping("t2d", "BOOL", 64 * 2**20), "DSP406", klass=2),
    Case("d2t-3m-entries", big_mapping("d2t", "I64", 3_000_000), "DSP406", klass=2),
    # 3. untrusted text reaching a terminal (every format is checked for raw control characters too)
    Case("tensor-name-ansi-escapes", hostile_tensor(ANSI_NAME), "DSP009", klass=3),
    Case("tensor-name-bidi-override", hostile_tensor(BIDI_NAME), "DSP009", klass=3),
    Case("tensor-name-rich-markup", hostile_tensor("[/bold][link=file:///etc/passwd]x[/link]"), "DSP009", klass=3),
    Case("tensor-name-workflow-command", hostile_tensor("x\n::error file=a::forged\n::stop-commands::t"), "DSP009",
         klass=3),
    Case("architecture-ansi-and-markup", config_with(architectures=["\x1b]8;;http://x\x07[/red]Evil\x1b[0m"]),
         "DSP203", args=_warn, klass=3),
    Case("architecture-10-mb", config_with(architectures=["A" * 10_000_000]), "DSP203", args=_warn, klass=3),
    Case("index-file-name-newline", index_names_with_newline, "DSP104", klass=3),
    Case("file-name-not-utf8", odd_file_name(b"\xff\xfe.safetensors"), "DSP001", klass=3,
         note="a surrogate-escaped name must not break a strict JSON reader"),
    Case("file-name-with-ansi-escape", odd_file_name(b"\x1b[31mred\x1b[0m.safetensors"), "DSP104", klass=3,
         note="never opened: a name with a control character is not a plain file name"),
    # 4. JSON edge cases: one strict reader for every document
    Case("config-utf8-bom", config_bytes(b"\xef\xbb\xbf" + _CONFIG_TEXT.encode()), "DSP211", klass=4),
    Case("config-utf16-le-bom", config_bytes(_CONFIG_TEXT.encode("utf-16")), "DSP211", klass=4),
    Case("config-utf16-be-no-bom", config_bytes(_CONFIG_TEXT.encode("utf-16-be")), "DSP211", klass=4),
    Case("config-utf32", config_bytes(_CONFIG_TEXT.encode("utf-32")), "DSP211", klass=4),
    Case("config-lone-surrogate-value", config_bytes(_CONFIG_TEXT[:-1].encode() + b', "note": "\\ud800"}'),
         "DSP211", klass=4),
    Case("config-lone-surrogate-key", config_bytes(_CONFIG_TEXT[:-1].encode() + b', "\\udfff": 1}'), "DSP211",
         klass=4),
    Case("config-raw-nul-byte", config_bytes(_CONFIG_TEXT[:-1].encode() + b', "x": "\x00"}'), "DSP211", klass=4),
    Case("config-bignum-nested", config_bytes(_CONFIG_TEXT[:-1].encode() + b', "rope": {"f": ' + b"7" * 4301
                                              + b"}}"), "DSP202", klass=4),
    Case("config-too-dense", config_bytes(b'{"a": [' + b"[]," * 3_100_000 + b"[]]}"), "DSP213", klass=4),
    Case("index-utf8-bom", index_bytes(b"\xef\xbb\xbf" + _INDEX_TEXT.encode()), "DSP110", klass=4),
    Case("index-utf16", index_bytes(_INDEX_TEXT.encode("utf-16")), "DSP110", klass=4),
    Case("index-lone-surrogate", index_bytes(_INDEX_TEXT[:-2].encode() + b', "\\ud834x": "a.safetensors"}}'),
         "DSP110", klass=4),
    Case("target-bignum-vocab", _t_bignum[0], "DSP-E035", exit=2, args=_t_bignum[1], klass=4),
    Case("target-utf8-bom", _t_bom[0], "DSP-E035", exit=2, args=_t_bom[1], klass=4),
    Case("target-lone-surrogate", _t_surrogate[0], "DSP-E035", exit=2, args=_t_surrogate[1], klass=4),
    Case("target-utf16", _t_utf16[0], "DSP-E035", exit=2, args=_t_utf16[1], klass=4),
    Case("arg-bignum-target-vocab", baseline, "DSP-E003", exit=2,
         args=lambda ckpt: [str(ckpt), "--target-vocab-size", "9" * 5000], klass=4),
    Case("arg-target-vocab-not-a-number", baseline, "DSP-E003", exit=2,
         args=lambda ckpt: [str(ckpt), "--target-vocab-size", "\x1b[2J96"], klass=4),
    Case("arg-target-vocab-fullwidth-digits", baseline, "DSP-E003", exit=2,
         args=lambda ckpt: [str(ckpt), "--target-vocab-size", "\uff19\uff16"], klass=4),
    Case("settings-bignum-target-vocab", _s_bignum[0], "DSP-E023", exit=2, args=_s_bignum[1], klass=4),
    Case("settings-utf16", _s_utf16[0], "DSP-E023", exit=2, args=_s_utf16[1], klass=4),
    Case("settings-utf8-bom", _s_bom[0], "DSP-E023", exit=2, args=_s_bom[1], klass=4),
    Case("settings-nested-5000-deep", _s_deep[0], "DSP-E023", exit=2, args=_s_deep[1], klass=4),
    Case("architectures-empty-list", config_with(architectures=[]), "DSP212", klass=4),
    Case("architectures-bare-string", config_with(architectures="Qwen3DSparkModel"), "DSP212", klass=4),
    Case("architectures-null", config_with(architectures=None), "DSP212", klass=4),
    Case("architectures-non-strings", config_with(architectures=[1, None]), "DSP212", klass=4),
    Case("architectures-object", config_with(architectures={"name": "Qwen3DSparkModel"}), "DSP212", klass=4),
    Case("architectures-empty-string", config_with(architectures=[""]), "DSP212", klass=4),
    Case("architectures-second-not-string", config_with(architectures=["Qwen3DSparkModel", 7]), "DSP212",
         klass=4),
    # 5. permissions
    Case("shard-in-unreadable-subfolder", shard_in_unreadable_subfolder, "DSP018", unreadable=True, klass=5),
    Case("target-in-unreadable-folder", _t_locked[0], "DSP-E035", exit=2, args=_t_locked[1], unreadable=True,
         klass=5),
    # 9. the value guard counts what the decoder builds
    Case("header-8m-strings-as-pairs", weights_case(lambda: strings_header(8_000_000, pairs=True)), "DSP019",
         klass=9),
    Case("header-8m-strings-in-a-list", weights_case(lambda: strings_header(8_000_000, pairs=False)), "DSP019",
         klass=9),
    Case("header-1m-empty-objects", weights_case(raw_file(b'{"__metadata__": {"a": [' + b"{}," * 1_000_000
                                                          + b"{}]}}")), "DSP019", klass=9),
)
