"""Every hint true for the case at hand: each finding check (or verify, or fix) reports, on checkpoints of every
family it applies to, carries a hint whose claims hold for that checkpoint.

Two corpora go through the real CLI (`check --format json`, and verify/fix where that command emits the code):

- the vocab-shape grid: each family x each vocab shape the tests know how to build, checked against every known
  runtime;
- the trigger table: for every rule in the catalog, the smallest checkpoint (or invocation: a speculative config
  for the deploy rules, a verify run, a fix run) that makes it fire, run for each family the rule applies to. A
  rule no test here can make fire is in EXEMPT with the reason; a new rule with neither fails the coverage test.

For every finding that fires, its hint is held to what it claims: a command it names parses as a shell would
(shlex), names the checkpoint path as the user typed it (relative, with a space) and the target as given
(`--target DIR`); a `--strategy` exists in repair/strategies.py; and it names no architecture of another family
(no EAGLE-3 name in a DSpark draft's hint).
"""

from __future__ import annotations

import dataclasses

import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest
from conftest import (
    ARCH,
    backbone_tensors,
    draft_tensors,
    edit_config,
    make_checkpoint,
    run_cli,
    write_safetensors,
)
from deploy.test_deploy_rules import OMNI_DRAFT, OMNI_TEXT, speculators
from fakehub.server import FakeHub
from hostile.corpus import entry, header_file, raw_file

from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header

# tests/producers/producers.py as the producer tests import it (`from producers import ...`): importing it as
# `producers.producers` would bind `producers` to the folder (a namespace package) for every later test module.
sys.path.insert(0, str(Path(__file__).parents[1] / "producers"))
from producers import materialise

from dspark_ckpt.model.families import _DRAFT_KEYS, ARCHITECTURE_FAMILY
from dspark_ckpt.model.rule_catalog import RULES
from dspark_ckpt.repair import apply
from dspark_ckpt.repair.strategies import STRATEGIES

T = 96
INDEX = "model.safetensors.index.json"
DRAFT, TARGET = "my draft", "the target"
COMMAND = re.compile(r"`(dspark-ckpt [^`]+)`")
DSPARK = ("qwen3-dspark", "qwen3-omni-dspark", "gemma4-dspark")
DFLASH = ("dflash", "dflash2")
EAGLE3 = ("eagle3-llama", "eagle3-qwen3")
FAMILIES = (*DSPARK, *DFLASH, *EAGLE3)
SGLANG = {"markov_head_type": "vanilla", "mask_token_id": 0, "model_type": "llama", "num_hidden_layers": 1}
LLAMA = {"model_type": "llama"}
UNKNOWN = ("unknown",)  # config.json unreadable or naming no known architecture: no family to hold a hint to
ARCHITECTURE = {**ARCH, "dflash2": "DFlash2DraftModel"}
BUILDS: dict[str, dict[str, Any]] = {
    "equal": {},
    "padded": {"vocab": T + 4, "draft_vocab": T + 4},
    "padded-no-lm-head": {"vocab": T + 4, "draft_vocab": T + 4, "lm_head": False},
    "pruned-no-d2t": {"draft_vocab": 32, "t2d": True},
    "pruned-zero-d2t": {"draft_vocab": 32, "d2t": "zeros", "t2d": True},
    "equal-with-d2t": {"d2t": True},
    "nested-settings": {"config": {"dflash_config": {"markov_rank": 4}}},
}
# What each family's hints must not name: the architectures vLLM registers for the other families.
FOREIGN = {f: sorted(a for a, fam in ARCHITECTURE_FAMILY.items() if fam.value != f) for f in FAMILIES}
FOREIGN["unknown"] = []  # no family, so no other family: a generic example architecture is no false claim
# Findings whose point is that the draft looks like another family: their hint names that family on purpose.
ABOUT_ANOTHER_FAMILY = {
    "DSP350": "a DSpark markov_head in a draft of another family: if it was trained as DSpark, name it so",
    "DSP807": "another method's name in the draft's path: the hint says which names to keep out of it",
}
# What a finding's hint must say for a draft of each family (the method it is served with).
METHOD = {**dict.fromkeys(DSPARK, "dspark"), **dict.fromkeys(DFLASH, "dflash"), **dict.fromkeys(EAGLE3, "eagle3")}


# --- running the CLI and holding each hint to its claims -------------------------------------------------------


def findings_in(doc: Any) -> Iterator[dict[str, Any]]:
    """Every finding-like object of a JSON report (check's and verify's findings, fix's refusal and warnings)."""
    if isinstance(doc, dict):
        if isinstance(doc.get("code"), str) and doc["code"].startswith("DSP") and "hint" in doc:
            yield doc
        for value in doc.values():
            yield from findings_in(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from findings_in(value)


def run_json(cwd: Path, argv: list[str], env: dict[str, str] | None = None,
             exits: tuple[int, ...] = (0, 1)) -> list[dict[str, Any]]:
    result = run_cli(*argv, "--format", "json", "--isolated", cwd=cwd, env=env)
    assert result.returncode in exits, (argv, result.stdout[-2000:], result.stderr[-2000:])
    return list(findings_in(json.loads(result.stdout)))


def given_target(argv: list[str]) -> list[str]:
    return [w for i, word in enumerate(argv[:-1]) if word in ("--target", "--target-vocab-size")
            for w in (word, argv[i + 1])]


def assert_true_for(family: str, f: dict[str, Any], path: str = DRAFT, target: list[str] | None = None) -> None:
    """The hint's claims hold: its commands name `path` and the `target` flags as the user gave them."""
    target = ["--target", TARGET] if target is None else target
    hint = f["hint"] or ""
    where = f"{f['code']} on {family}: {hint}"
    for text in COMMAND.findall(hint):
        argv = shlex.split(text)
        assert argv[1] in ("fix", "check", "verify", "explain", "rules"), where
        if argv[1] in ("explain", "rules"):
            continue
        assert argv[2] == path, where  # the path as typed: relative, the space kept by quoting
        if target:
            assert given_target(argv) == target, where
        if "--strategy" in argv:
            assert argv[argv.index("--strategy") + 1] in STRATEGIES, where
    if f["code"] in ("DSP804", "DSP807") and family in METHOD:
        assert f'"method": "{METHOD[family]}"' in hint, where  # the family's own method, not a list of all
    if f["code"] in ABOUT_ANOTHER_FAMILY:
        return
    named = [arch for arch in FOREIGN[family] if re.search(rf"\b{arch}\b", hint)]
    assert not named, f"{where} names another family's architecture {named}"
    if family in FAMILIES and not family.startswith("eagle3"):
        # `eagle_config` is a config key the release reads for every family (DSP366 names where it reads a key)
        assert "EAGLE" not in hint.upper().replace("EAGLE_CONFIG", ""), where
    for weight in ("lm_head", "embed_tokens"):  # a finding about one weight is not answered about another
        if f["code"] == "DSP307" and weight in f["message"]:
            assert weight in hint, where


# --- builders: the smallest checkpoint that makes a rule fire ----------------------------------------------------


def target(cwd: Path, vocab: int = T, **config: Any) -> None:
    (cwd / TARGET).mkdir(exist_ok=True)
    (cwd / TARGET / "config.json").write_text(json.dumps({"vocab_size": vocab, "hidden_size": 16, **config}))


def draft(cwd: Path, family: str, *, at: str = DRAFT, config: dict[str, Any] | None = None, **what: Any) -> Path:
    """A tiny checkpoint of `family` at cwd/`at` (an unknown family: a Qwen3 DSpark one, its config broken later)."""
    known = family if family in ARCHITECTURE else "qwen3-dspark"
    what.setdefault("markov", known in DSPARK)
    if "tensors" not in what:
        what.setdefault("target_vocab", T)
    return make_checkpoint(cwd / at, family=known if known in ARCH else "dflash",
                           config_extra={"architectures": [ARCHITECTURE[known]], **(config or {})}, **what)


Build = Callable[[Path, str], list[str]]


def check(*flags: str, at: str = DRAFT, **what: Any) -> Build:
    """`check DRAFT --target TARGET FLAGS` of draft(**what)."""
    def build(cwd: Path, family: str) -> list[str]:
        draft(cwd, family, at=at, **what)
        target(cwd)
        return ["check", at, "--target", TARGET, *flags]
    return build


def then(first: Build, change: Callable[[Path, str], None]) -> Build:
    """`first`, then `change(checkpoint folder, family)` before the run."""
    def build(cwd: Path, family: str) -> list[str]:
        argv = first(cwd, family)
        change(cwd / DRAFT, family)
        return argv
    return build


def with_config(first: Build, **changes: Any) -> Build:
    return then(first, lambda folder, _: edit_config(folder, **changes))


def with_file(first: Build, name: str, data: bytes) -> Build:
    return then(first, lambda folder, _: (folder / name).write_bytes(data))


def sparse(first: Build, name: str, size: int = 65 * 2**20) -> Build:
    """`name` grown (sparsely: it costs nothing) past what dspark-ckpt reads."""
    def grow(folder: Path, _: str) -> None:
        with open(folder / name, "r+b") as f:
            f.truncate(size)
    return then(first, grow)


def without(first: Build, *names: str) -> Build:
    return then(first, lambda folder, _: [(folder / n).unlink() for n in names])


def retensor(first: Build, **changes: Any) -> Build:
    """`first`, then its model.safetensors rewritten with tensors replaced (an array) or dropped (None)."""
    def change(folder: Path, _: str) -> None:
        from safetensors.numpy import load_file

        found = dict(load_file(str(folder / "model.safetensors")))
        for name, value in changes.items():
            if value is None:
                found.pop(name.replace("__", "."), None)
            else:
                found[name.replace("__", ".")] = value
        write_safetensors(folder / "model.safetensors", found)
    return then(first, change)


def tensors(**changes: Any) -> Callable[..., dict[str, np.ndarray]]:
    """draft_tensors(...) with tensors replaced (an array) or dropped (None)."""
    def make(**kw: Any) -> dict[str, np.ndarray]:
        out = draft_tensors(**{"vocab": T, "draft_vocab": T, "target_vocab": T, **kw})
        for name, value in changes.items():
            name = name.replace("__", ".")
            if value is None:
                out.pop(name, None)
            else:
                out[name] = value
        return out
    return make


# Header rules: one broken shard each, all in one folder (each shard gets its own finding).
_F32x4 = entry()
BROKEN_SHARDS: dict[str, bytes] = {
    "DSP001": b"",
    "DSP002": raw_file(b"{}", length=2**63),
    "DSP003": raw_file(b"{}", length=4096),
    "DSP004": raw_file(b'{"\xff\xfe": 1}'),
    "DSP005": raw_file(b'{"w": {"dtype": "F3'),
    "DSP006": raw_file(b"[1, 2]"),
    "DSP007": raw_file(b'{"w": ' + json.dumps(_F32x4).encode() + b', "w": '
                       + json.dumps(entry(offsets=(16, 32))).encode() + b"}", bytes(32)),
    "DSP008": header_file({"__metadata__": {"format": 1}, "w": _F32x4}, 16),
    "DSP009": header_file({"w": entry("F128")}, 16),
    "DSP010": header_file({"w": entry(shape=(-4,))}, 16),
    "DSP011": header_file({"w": entry(shape=(2**32, 2**32, 16))}, 16),
    "DSP012": header_file({"w": entry(offsets=(16, 0))}, 16),
    "DSP013": header_file({"a": _F32x4, "b": entry(offsets=(32, 48))}, 48),
    "DSP014": header_file({"w": entry("U8", (2**58,), (0, 16))}, 16),
    "DSP015": header_file({"w": _F32x4}, 16 + 5),
    "DSP016": b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 1234\n",
    "DSP017": header_file({"w": entry("F4", (3,), (0, 2))}, 2),
    "DSP019": raw_file(b'{"__metadata__":{"a":[' + b"[]," * 1_200_000 + b'[]]}}'),
}


def broken_shards(cwd: Path, family: str) -> list[str]:
    argv = check()(cwd, family)
    folder = cwd / DRAFT
    (folder / "model.safetensors").unlink()
    for code, data in BROKEN_SHARDS.items():
        (folder / f"{code}.safetensors").write_bytes(data)
    (folder / "DSP018.safetensors").mkdir()  # a name no file can be read from
    return argv


def index_edits(cwd: Path, family: str) -> list[str]:
    """A two-shard draft whose index names a missing shard and a path outside, misplaces one tensor, forgets
    another, miscounts total_size, and a third shard holds a tensor again, unindexed."""
    argv = check(shards=2)(cwd, family)
    folder = cwd / DRAFT
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    weights = index["weight_map"]
    first, second = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
    moved = next(n for n, f in weights.items() if f == first)
    weights[moved] = second
    del weights[next(n for n, f in weights.items() if f == second and n != moved)]
    weights |= {"a.weight": "../../etc/passwd", "b.weight": "model-00003-of-00002.safetensors"}
    index["metadata"]["total_size"] += 1
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    write_safetensors(folder / "extra.safetensors", {"norm.weight": np.ones(16, dtype=np.float32)})
    return argv


def index_of(body: bytes) -> Build:
    return with_file(check(shards=2), "model.safetensors.index.json", body)


def many_shards(cwd: Path, family: str) -> list[str]:
    argv = check(shards=2)(cwd, family)
    names = ",".join(f'"t{i}": "s{i}.safetensors"' for i in range(4097))
    (cwd / DRAFT / "model.safetensors.index.json").write_text('{"weight_map": {' + names + "}}")
    return argv


DOMINO = {"projector_type": "domino", "shift_label": True, "pure_draft_prefix_len": 1, "gru_hidden_dim": 8,
          "emb_dim": 8}


def domino() -> dict[str, np.ndarray]:
    """A DFlash draft's tensors plus a Domino GRU and its embed_proj (tests/acceptance/test_check_sglang_mask_domino.py)."""
    out = draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, markov=False)
    shapes = {"prefix_gru.weight_ih_l0": (24, 16), "prefix_gru.weight_hh_l0": (24, 8),
              "embed_proj.0.weight": (8, 24), "embed_proj.2.weight": (T, 8)}
    return out | {name: np.zeros(shape, np.float32) for name, shape in shapes.items()}


def flipped_t2d() -> dict[str, np.ndarray]:
    """A pruned draft whose t2d marks one id more than d2t maps."""
    out = draft_tensors(vocab=T, draft_vocab=32, target_vocab=T, d2t=True, t2d=True)
    out["t2d"] = out["t2d"].copy()
    out["t2d"][np.flatnonzero(~out["t2d"])[0]] = True
    return out


def big_mapping(path: Path) -> None:
    """A d2t whose header claims 3M entries (the file sparse): more than dspark-ckpt reads to validate it."""
    spec = TensorSpec("d2t", "I64", (3_000_000,))
    with open(path, "wb") as f:
        f.write(encode_header([spec]))
        f.truncate(len(encode_header([spec])) + spec.nbytes)


def deploy(*, at: str = DRAFT, config: dict[str, Any] | None = None, vocab: int = T,
           draft_vocab: int | None = T, **spec: Any) -> Build:
    """`check --runtime vllm --speculative-config SPEC` (model: the checkpoint, method dspark, 8 tokens, unless
    `spec` drops one with None or replaces it)."""
    keys = {k: v for k, v in {"model": at, "method": "dspark", "num_speculative_tokens": 8, **spec}.items()
            if v is not None}
    return check("--runtime", "vllm", "--speculative-config", json.dumps(keys), at=at, config=config,
                 vocab=vocab, draft_vocab=draft_vocab)


def run_as(verb: str, *flags: str, **what: Any) -> Build:
    """`VERB DRAFT --target TARGET FLAGS` of draft(**what)."""
    def build(cwd: Path, family: str) -> list[str]:
        return [verb, *check(*flags, **what)(cwd, family)[1:]]
    return build


# Producer layouts (tests/producers/layouts): a checkpoint laid out as that producer's own code writes it.
def producer(name: str, *flags: str, **edits: Any) -> Build:
    """`check DRAFT --target TARGET --runtime vllm FLAGS` of producer layout `name` (T = 96 as recorded)."""
    def build(cwd: Path, family: str) -> list[str]:
        materialise(cwd / DRAFT, name, **edits)
        target(cwd)
        return ["check", DRAFT, "--target", TARGET, "--runtime", "vllm", *flags]
    return build


def draft_vocab_40(cfg: dict[str, Any]) -> None:
    cfg["draft_vocab_size"] = 40


# verify: the probe's lm_head, a fake installed vLLM.
def top_k_but_never_argmax() -> dict[str, np.ndarray]:
    """A padded draft (D = T + 4) whose final norm keeps one dimension: every logit is c * h0, legal rows have
    c = +1, -1 and 0, the padded rows c = 0.5 (second for h0 > 0, never first either way): in the top-k, never the
    argmax (DSP602). The Markov head adds nothing (w2 zero)."""
    out = draft_tensors(vocab=T + 4, draft_vocab=T + 4, target_vocab=T, markov=True)
    head = np.zeros((T + 4, 16), np.float32)
    head[0, 0], head[1, 0], head[T:, 0] = 1.0, -1.0, 0.5
    norm = np.zeros(16, np.float32)
    norm[0] = 1.0
    out |= {"lm_head.weight": head, "norm.weight": norm}
    if "markov_head.markov_w2.weight" in out:
        out["markov_head.markov_w2.weight"] = np.zeros_like(out["markov_head.markov_w2.weight"])
    return out


def d2t_not_increasing() -> dict[str, np.ndarray]:
    """A pruned draft's d2t with one step back (tests/unit/test_verify_mapping.py)."""
    out = draft_tensors(vocab=T, draft_vocab=32, target_vocab=T, d2t=True, t2d=True)
    out["d2t"] = out["d2t"].copy()
    out["d2t"][5] = out["d2t"][4] - 1
    return out


def fp8_head(folder: Path, _: str) -> None:
    """lm_head as FP8 bytes with its scale (tests/unit/test_verify_probe.py): verify cannot probe it."""
    out = draft_tensors(vocab=T + 4, draft_vocab=T + 4, target_vocab=T, markov=False)
    out["lm_head.weight"] = np.full((T + 4, 16), 0x38, dtype=np.uint8)
    out["lm_head.weight_scale"] = np.ones(1, dtype=np.float32)
    write_safetensors(folder / "model.safetensors", out, dtypes={"lm_head.weight": "F8_E4M3"})
    edit_config(folder, quantization_config={"quant_method": "fp8"})


def zero_head(folder: Path, family: str) -> None:
    """lm_head and markov_w2 all zero: every probe's logits tie, the probe measures nothing (DSP608)."""
    out = draft_tensors(vocab=T + 4, draft_vocab=T + 4, target_vocab=T)
    out["lm_head.weight"] = np.zeros_like(out["lm_head.weight"])
    out["markov_head.markov_w2.weight"] = np.zeros_like(out["markov_head.markov_w2.weight"])
    config = json.loads((folder / "config.json").read_text())
    write_safetensors(folder / "model.safetensors", {**backbone_tensors(family, config), **out})


def torch_run_sees_v_rows(cwd: Path, stack: ExitStack) -> dict[str, str]:
    """The torch run's lm_head made V rows high where the release's record (check) builds D: the two disagree
    (DSP605; tests/unit/test_verify_runtime.py)."""
    from dspark_ckpt.verify import runtime_load

    real = runtime_load.param_specs
    stack.enter_context(mock.patch.object(runtime_load, "param_specs",
                                          lambda k, dims: real(replace(k, lm_head_rows="V"), dims)))
    return {}


VLLM_RAISES = {  # a fake installed vLLM 0.30.0: what engine_vllm.py imports, and a model whose loader raises
    "vllm-0.30.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: vllm\nVersion: 0.30.0\n",
    "vllm/__init__.py": "__version__ = '0.30.0'\n",
    "vllm/platforms/__init__.py": "_current_platform = None\n",
    "vllm/platforms/cpu.py": "class CpuPlatform:\n    pass\n",
    "vllm/distributed/__init__.py": "",
    "vllm/distributed/parallel_state.py": "def init_distributed_environment(**kw):\n    pass\n\n\n"
                                          "def initialize_model_parallel(*a):\n    pass\n",
    "vllm/config.py": "import contextlib\n\n\nclass VllmConfig:\n    load_config = cache_config = "
                      "parallel_config = compilation_config = None\n\n\n"
                      "@contextlib.contextmanager\ndef set_current_vllm_config(c):\n    yield\n",
    "vllm/model_executor/__init__.py": "",
    "vllm/model_executor/models/__init__.py": "",
    "vllm/model_executor/models/registry.py": "_SPECULATIVE_DECODING_MODELS = {\n" + "".join(
        f"    {arch!r}: ('fake_draft', 'FakeDraft'),\n" for arch in ARCHITECTURE.values()) + "}\n",
    "vllm/model_executor/models/fake_draft.py": "from torch import nn\n\n\nclass FakeDraft(nn.Module):\n"
        "    def __init__(self, *, vllm_config, prefix=''):\n        super().__init__()\n\n"
        "    def load_weights(self, weights):\n        raise RuntimeError('CUDA error: no kernel image')\n",
    "transformers/__init__.py": "class PretrainedConfig:\n    def __init__(self, **kw):\n"
        "        self.__dict__.update(kw)\n\n\nclass AutoConfig:\n    @staticmethod\n"
        "    def for_model(model_type, **kw):\n        raise ValueError(model_type)\n",
}
VLLM_BROKEN = {  # installed by its metadata, not importable (tests/acceptance/test_verify_engine.py)
    "vllm-0.31.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: vllm\nVersion: 0.31.0\n",
    "vllm/__init__.py": "raise ImportError('this vllm build needs libcudart.so.12')\n",
}


def installed_vllm(files: dict[str, str]) -> Callable[[Path, ExitStack], dict[str, str]]:
    """This tree installed for the run: on sys.path (where verify reads the metadata) and PYTHONPATH (the engine's
    worker), both set around the in-process CLI, which a PYTHONPATH of the run's own would move to a subprocess."""
    def env(cwd: Path, stack: ExitStack) -> dict[str, str]:
        for name, text in files.items():
            (cwd / "site" / name).parent.mkdir(parents=True, exist_ok=True)
            (cwd / "site" / name).write_text(text)
        path = os.pathsep.join([str(cwd / "site"), *filter(None, [os.environ.get("PYTHONPATH")])])
        stack.enter_context(mock.patch.dict(os.environ, {"PYTHONPATH": path}))
        stack.enter_context(mock.patch.object(sys, "path", [str(cwd / "site"), *sys.path]))
        return {}
    return env


def verify(*flags: str, **what: Any) -> Build:
    return run_as("verify", "--device", "cpu", "--runtime", "vllm==0.30.0", *flags, **what)


# fix: its refusals and warnings.
def fix(*flags: str, **what: Any) -> Build:
    return run_as("fix", "--dry-run", *flags, **what)


def staged_result_changed(cwd: Path, stack: ExitStack) -> dict[str, str]:
    """A shard that turns up broken in the staged result, as if the draft changed while fix ran (DSP504)."""
    write = apply._write_changes

    def and_a_broken_shard(files: Any, out: Path, *args: Any, **kwargs: Any) -> None:
        write(files, out, *args, **kwargs)
        (out / "extra.safetensors").write_bytes(b"")
    stack.enter_context(mock.patch.object(apply, "_write_changes", and_a_broken_shard))
    return {}


# The Hub: a FakeHub on 127.0.0.1 (tests/fakehub) serving the draft as REPO.
REPO = "org/draft"


def on_hub(*flags: str, **what: Any) -> Build:
    def build(cwd: Path, family: str) -> list[str]:
        draft(cwd, family, **what)
        target(cwd)
        return ["check", REPO, "--target", TARGET, *flags]
    return build


def hub(change: Callable[[FakeHub], None]) -> Callable[[Path, ExitStack], dict[str, str]]:
    """A FakeHub holding cwd/DRAFT as REPO, bent by `change`; the environment that points the CLI at it."""
    def env(cwd: Path, stack: ExitStack) -> dict[str, str]:
        server = stack.enter_context(FakeHub())
        server.add_repo(REPO, {p.name: p.read_bytes() for p in sorted((cwd / DRAFT).iterdir()) if p.is_file()})
        change(server)
        return {**server.client_vars(cwd / "hf"), "DSPARK_CKPT_HUB_BACKOFF": "0.01"}
    return env


# deploy: Qwen3-Omni and speculators-format drafts.
def omni_target(cwd: Path) -> None:
    (cwd / TARGET).mkdir(exist_ok=True)
    (cwd / TARGET / "config.json").write_text(json.dumps({
        "model_type": "qwen3_omni_moe", "architectures": ["Qwen3OmniMoeForConditionalGeneration"],
        "thinker_config": {"text_config": OMNI_TEXT}}))


def omni(tokens: int | None = 8, **config: Any) -> Build:
    """An Omni draft (tests/deploy/test_deploy_rules.py's OMNI_DRAFT, edited) for an Omni target, vLLM 0.29+."""
    def build(cwd: Path, family: str) -> list[str]:
        argv = deploy(num_speculative_tokens=tokens, config={**OMNI_DRAFT, **config})(cwd, family)
        edit_config(cwd / DRAFT, **config)
        omni_target(cwd)
        return argv
    return build


def speculators_draft(verifier: str, *flags: str, **spec: Any) -> Build:
    """A speculators-format draft recording `verifier` (tests/deploy/test_deploy_rules.py)."""
    def build(cwd: Path, family: str) -> list[str]:
        speculators(cwd / DRAFT, "dspark", verifier=verifier)
        target(cwd)
        return ["check", DRAFT, "--target", TARGET, "--runtime", "vllm", *flags,
                "--speculative-config", json.dumps(spec)]  # no model: vLLM takes the checkpoint served
    return build


@dataclass(frozen=True)
class Trigger:
    codes: tuple[str, ...]  # what the run must report, for each family
    build: Build  # writes the case under an empty folder; returns the command line after `dspark-ckpt`
    families: tuple[str, ...] = FAMILIES
    path: str | None = None  # the checkpoint a hint's command names, where not the one given
    env: Callable[[Path, ExitStack], dict[str, str]] | None = None  # what the run needs around it (a fake Hub)
    exits: tuple[int, ...] = (0, 1)


TRIGGERS: dict[str, Trigger] = {
    # --- safetensors headers and layout ---
    "broken-shards": Trigger((*BROKEN_SHARDS, "DSP018"), broken_shards),
    "no-weights": Trigger(("DSP101",), without(check(), "model.safetensors")),
    "index-not-json": Trigger(("DSP102",), index_of(b"{weight_map: nope")),
    "index-edited": Trigger(("DSP103", "DSP104", "DSP105", "DSP106", "DSP107", "DSP109"), index_edits),
    "index-total-size": Trigger(("DSP108",), then(check(shards=2), lambda f, _: (f / INDEX).write_text(
        (f / INDEX).read_text().replace('"total_size": ', '"total_size": 1')))),
    "index-bom": Trigger(("DSP110",), index_of(b'\xef\xbb\xbf{"weight_map": {}}')),
    "index-4097-shards": Trigger(("DSP111",), many_shards),
    "index-sparse": Trigger(("DSP112",), sparse(check(shards=2), "model.safetensors.index.json")),
    # --- config.json ---
    "no-config": Trigger(("DSP201",), without(check(), "config.json"), UNKNOWN),
    "config-list": Trigger(("DSP202",), with_file(check(), "config.json", b"[1]"), UNKNOWN),
    "config-bom": Trigger(("DSP211",), then(check(), lambda f, _: (f / "config.json").write_bytes(
        b"\xef\xbb\xbf" + (f / "config.json").read_bytes())), UNKNOWN),
    "config-sparse": Trigger(("DSP213",), sparse(check(), "config.json"), UNKNOWN),
    "no-architectures": Trigger(("DSP212",), with_config(check(), architectures=[]), UNKNOWN),
    "unknown-architecture": Trigger(("DSP203",), with_config(check(), architectures=["FooDraftModel"]), UNKNOWN),
    "registered-not-modelled": Trigger(("DSP232",), with_config(
        check(), architectures=["Eagle3DeepseekV2ForCausalLM"]), UNKNOWN),
    # issue 42: a requested release the tool cannot judge has a row that says so, and fails the run (DSP368)
    "no-verdict": Trigger(("DSP368",), with_config(check("--runtime", "vllm==0.28.0"),
                                                   architectures=["Eagle3DeepseekV2ForCausalLM"]), UNKNOWN),
    # Laguna's DFlash draft refuses a draft vocabulary other than the target's (its record's refused_apart)
    "config-values-refused-apart": Trigger(("DSP370",), with_config(
        check("--runtime", "vllm==0.33.0"), architectures=["DFlashLagunaForCausalLM"], model_type="laguna",
        draft_vocab_size=T // 2), UNKNOWN),
    # SGLang's DeepSeek/Kimi EAGLE-3 refuses a second layer whatever else the config says (its record's samples)
    "config-value-refused": Trigger(("DSP372",), with_config(
        check("--runtime", "sglang==0.5.23"), architectures=["Eagle3DeepseekV2ForCausalLM"], model_type="deepseek_v3",
        num_hidden_layers=2), UNKNOWN),
    # vLLM's proposer needs the id its masked slots are fed (runtimes/drafting_token.py): none in the config
    "drafting-token-missing": Trigger(("DSP373",), with_config(
        check("--runtime", "vllm==0.34.0"), mask_token_id=None, dflash_config=None), ("qwen3-dspark", "dflash")),
    "target-as-draft": Trigger(("DSP231",), with_config(check(), architectures=["Qwen2ForCausalLM"], model_type="qwen2",
                                                        **dict.fromkeys(_DRAFT_KEYS)), UNKNOWN),
    # issue 40: a base class served as an EAGLE-3 draft, which SGLang builds as the target class (DSP369)
    "target-class-as-draft": Trigger(("DSP369",), with_config(
        check("--runtime", "sglang==0.5.23", "--speculative-config", '{"method": "eagle3"}'),
        architectures=["LlamaForCausalLM"], model_type="llama", **dict.fromkeys(_DRAFT_KEYS)), UNKNOWN),
    "no-vocab-size": Trigger(("DSP204",), with_config(check(), vocab_size="many")),
    "bad-draft-vocab": Trigger(("DSP205",), with_config(check(), draft_vocab_size=-1)),
    "bad-hidden-size": Trigger(("DSP208",), with_config(check(), hidden_size="x")),
    "no-target": Trigger(("DSP206",), lambda cwd, fam: [draft(cwd, fam) and "check", DRAFT, "--allow-no-target"]),
    "target-from-t2d": Trigger(("DSP217",), lambda cwd, fam: [
        draft(cwd, fam, draft_vocab=32, d2t=True, t2d=True) and "check", DRAFT]),
    "method-in-path": Trigger(("DSP207",), check(at="eagle-runs/my draft")),
    "topk-in-config": Trigger(("DSP209",), check(config={"dspark_draft_topk": 200}), DSPARK[:2]),
    "nested-settings": Trigger(("DSP215",), then(check(), lambda f, _: edit_config(
        f, markov_rank=None, dflash_config={"markov_rank": 4})), DSPARK[:2]),
    "draft-vocab-contradicts": Trigger(("DSP216",), check(draft_vocab=32, tensors=tensors(lm_head__weight=None)())),
    "dspark-draft-name": Trigger(("DSP218",), check(config={"architectures": ["DSparkDraftModel"]}),
                                 ("qwen3-dspark",)),
    "a-shard-given": Trigger(("DSP230",), lambda cwd, fam: [
        draft(cwd, fam, shards=2) and target(cwd) or "check", f"{DRAFT}/model-00001-of-00002.safetensors",
        "--target", TARGET], path=DRAFT),
    # --- runtime contracts, per vocab shape ---
    "equal": Trigger(("DSP307",), check()),
    "padded": Trigger(("DSP302", "DSP305"), check(vocab=T + 4, draft_vocab=T + 4)),
    "padded-dspark-head": Trigger(("DSP305",), check(vocab=T + 4, draft_vocab=T + 4)),
    "padded-no-lm-head": Trigger(("DSP306",), check(vocab=T + 4, draft_vocab=T + 4, lm_head=False)),
    "pruned-no-d2t": Trigger(("DSP302",), check(draft_vocab=32, t2d=True)),
    "pruned-no-lm-head": Trigger(("DSP301",), check(draft_vocab=32, d2t=True, t2d=True, lm_head=False)),
    "pruned-zero-d2t": Trigger(("DSP401",), check(draft_vocab=32, d2t="zeros", t2d=True)),
    "equal-with-d2t": Trigger(("DSP303",), check(d2t=True)),
    "wide-input-no-embed": Trigger(("DSP304",), check(vocab=T + 24, embed=False)),
    "omni-mask": Trigger(("DSP308",), check(config={"mask_token_id": T})),
    "unknown-release": Trigger(("DSP220",), check("--runtime", "vllm==9.9.9")),
    "mask-hidden": Trigger(("DSP312",), check(tensors=tensors(mask_hidden=np.zeros(16, np.float32))())),
    "model-prefix": Trigger(("DSP313",), then(check(), lambda f, fam: write_safetensors(
        f / "model.safetensors", {("model." + k if k.startswith("norm") else k): v for k, v in draft_tensors(
            vocab=T, draft_vocab=T, target_vocab=T, markov=fam in DSPARK).items()}))),
    "markov-in-another-family": Trigger(("DSP350", "DSP351"), check(markov=True)),
    "markov-in-eagle3-qwen3": Trigger(("DSP350",), check(markov=True)),
    "unregistered": Trigger(("DSP309",), check()),
    "unregistered-eagle3-llama": Trigger(("DSP309",), check("--runtime", "sglang==0.5.20", config={
        "architectures": ["Eagle3LlamaForCausalLM"], "model_type": "llama"})),
    "dflash2-config": Trigger(("DSP333",), check()),
    "dspark-markov-config": Trigger(("DSP344",), check()),
    "one-layer": Trigger(("DSP341",), check(config={"num_hidden_layers": 2})),
    # --- every tensor, against the release's generated model (runtimes/release_data) ---
    "tensor-no-parameter": Trigger(("DSP360",), retensor(check(), layers__0__self_attn__extra_proj__weight=np.zeros(
        (16, 16), np.float32))),
    "tensor-shape": Trigger(("DSP361",), retensor(check(), layers__0__mlp__down_proj__weight=np.zeros(
        (16, 12), np.float32))),
    "tensor-cut": Trigger(("DSP362",), then(check(), lambda f, _: edit_config(f, head_dim=4))),
    "parameter-unfilled": Trigger(("DSP363",), retensor(check(), layers__0__self_attn__q_proj__weight=None)),
    "gemma4-fused-kv": Trigger(("DSP364",), then(check(), lambda f, _: edit_config(f, attention_k_eq_v=False))),
    "parameter-required": Trigger(("DSP367",), retensor(check(), layers__0__post_attention_layernorm__weight=None)),
    "aux-unsaid": Trigger(("DSP357",), check()),
    # --- SGLang's own contracts ---
    "sglang-padded": Trigger(("DSP340",), check("--runtime", "sglang", vocab=128, draft_vocab=128, config=SGLANG)),
    # V = T below a padded target head (W = 128): 0.5.22+ mask [V, W); with V < T the lookup fails instead (DSP340)
    "sglang-narrow": Trigger(("DSP349",), then(check("--runtime", "sglang", config=SGLANG),
                                               lambda f, _: target(f.parent, padded_vocab_size=128))),
    "sglang-mask": Trigger(("DSP343",), check("--runtime", "sglang==0.5.17", config={**SGLANG, "mask_token_id": 100})),
    "sglang-no-markov-w2": Trigger(("DSP345",), check("--runtime", "sglang", config=SGLANG,
                                                      tensors=tensors(markov_head__markov_w2__weight=None)())),
    "sglang-no-draft-vocab": Trigger(("DSP342",), check("--runtime", "sglang", draft_vocab=None, config=SGLANG)),
    "sglang-layers-0": Trigger(("DSP346",), check("--runtime", "sglang", draft_vocab=64, d2t=True, config=SGLANG)),
    "sglang-kept-embed": Trigger(("DSP347",), check("--runtime", "sglang", embed=False,
                                                    config={**SGLANG, "target_hidden_size": 32})),
    "sglang-speculators": Trigger(("DSP348",), then(check("--runtime", "sglang", config=SGLANG), lambda f, _: edit_config(
        f, vocab_size=None, hidden_size=None, speculators_model_type="eagle3",
        transformer_layer_config={"model_type": "llama", "vocab_size": T, "hidden_size": 16}))),
    "sglang-own-head": Trigger(("DSP315",), check("--runtime", "sglang", lm_head=False, config=SGLANG)),
    "domino-undeclared": Trigger(("DSP352", "DSP354"), check("--runtime", "sglang==0.5.19", "--runtime", "sglang==0.5.23",
                                                             tensors=domino())),
    "domino-vocab": Trigger(("DSP353",), then(check("--runtime", "sglang==0.5.21", config={"dflash_config": DOMINO},
                                                    tensors=domino()), lambda f, _: target(f.parent, T + 8))),
    "domino-config": Trigger(("DSP355",), check("--runtime", "sglang==0.5.21", tensors=domino(),
                                                config={"dflash_config": {**DOMINO, "gru_hidden_dim": 0}})),
    # --- EAGLE-3 aux layers ---
    "aux-four-layers": Trigger(("DSP329", "DSP356"), check(
        config={"eagle_aux_hidden_state_layer_ids": [1, 5, 9, 13]},
        tensors=tensors(fc__weight=np.zeros((16, 64), np.float32))()), EAGLE3),
    # an input vocabulary wider than D = T: vLLM 0.30+ loads it, then compute_logits asserts (*, V) on [*, T]
    "vllm-first-step": Trigger(("DSP371",), check("--runtime", "vllm==0.34.0", vocab=128, draft_vocab=T),
                               EAGLE3),  # the recorded matrix holds both EAGLE-3 families
    "target-hidden-null": Trigger(("DSP358",), check("--runtime", "vllm", config={"target_hidden_size": None}), EAGLE3),
    "target-hidden-wider": Trigger(("DSP359",), then(check("--runtime", "vllm"),
                                                     lambda f, _: target(f.parent, hidden_size=32)), EAGLE3),
    # vLLM 0.20-0.21 refuse eagle3 and dflash for a target model type outside their list (speculative.py L905-932 @
    # v0.20.0); EAGLE-3 Qwen3 and DFlash2 are registered only after 0.22 dropped the check
    "aux-target-mistral": Trigger(("DSP365",), then(check("--runtime", "vllm==0.20.0"),
                                                    lambda f, _: target(f.parent, model_type="mistral")),
                                  ("eagle3-llama", "dflash")),
    # eagle_config.norm_before_fc: read by llama_eagle3.py from 0.22 (L153-157 @ v0.22.0), not by 0.15-0.21;
    # qwen3_eagle3.py reads it in every release that registers it (0.24+), so EAGLE-3 Qwen3 gets no DSP366
    "nested-norm-before-fc": Trigger(("DSP366",), check("--runtime", "vllm", config={"eagle_config": {
        "norm_before_fc": True}}), ("eagle3-llama",)),
    # --- tensor shapes ---
    "lm-head-shape": Trigger(("DSP320",), check(tensors=tensors(lm_head__weight=np.zeros((50, 16), np.float32))())),
    "embed-shape": Trigger(("DSP321",), check(tensors=tensors(embed_tokens__weight=np.zeros((50, 16), np.float32))())),
    "markov-w1-shape": Trigger(("DSP322",), check(tensors=tensors(
        markov_head__markov_w1__weight=np.zeros((50, 4), np.float32))()), DSPARK),
    "markov-w2-shape": Trigger(("DSP323",), check(tensors=tensors(
        markov_head__markov_w2__weight=np.zeros((50, 4), np.float32))()), DSPARK),
    "d2t-short": Trigger(("DSP324",), check(tensors=tensors(d2t=np.zeros(40, np.int64))(draft_vocab=64),
                                            draft_vocab=64)),
    "d2t-float": Trigger(("DSP325",), check(tensors=tensors(d2t=np.zeros(T, np.float32))())),
    "d2t-int32": Trigger(("DSP326",), check(tensors=tensors(d2t=np.zeros(T, np.int32))())),
    "t2d-not-bool": Trigger(("DSP327",), check(tensors=tensors(t2d=np.ones(T, np.int64))())),
    "confidence-shape": Trigger(("DSP328",), check(config={"enable_confidence_head": True}, tensors=tensors(
        confidence_head__proj__weight=np.zeros((2, 16), np.float32),
        confidence_head__proj__bias=np.zeros(2, np.float32))()), DSPARK),
    # --- mapping contents ---
    "d2t-out-of-range": Trigger(("DSP402", "DSP403"), check(
        tensors=tensors(d2t=np.array([0, 5, 98, 97] + [0] * 28, np.int64))(draft_vocab=32), draft_vocab=32)),
    "t2d-disagrees": Trigger(("DSP404", "DSP405"), check(tensors=flipped_t2d())),
    "mapping-too-big": Trigger(("DSP406",), then(check(), lambda f, _: big_mapping(f / "mapping.safetensors"))),
    # --- deploy: check --speculative-config ---
    "spec-not-json": Trigger(("DSP801",), check("--runtime", "vllm", "--speculative-config", "{not json")),
    "spec-not-object": Trigger(("DSP802",), check("--runtime", "vllm", "--speculative-config", "[1]")),
    # refused from vLLM 0.16 (extra="forbid"), dropped by 0.15 (a plain pydantic dataclass: DSP828)
    "spec-typo": Trigger(("DSP803", "DSP828"), deploy(num_speculative_token=8)),
    "spec-zero-tokens": Trigger(("DSP804",), deploy(num_speculative_tokens=0)),
    "spec-no-model": Trigger(("DSP805",), deploy(model=None)),
    "spec-tensor-parallel": Trigger(("DSP824",), deploy(tensor_parallel_size=2)),
    "spec-topk-range": Trigger(("DSP816",), deploy(dspark_draft_topk=97)),
    "spec-block-minimum": Trigger(("DSP813",), deploy(num_speculative_tokens=5, config={"dspark_block_size": 7}),
                                  ("qwen3-dspark", "gemma4-dspark", "dflash", *EAGLE3)),
    "spec-no-tokens": Trigger(("DSP811",), deploy(num_speculative_tokens=None, config={"block_size": 8}),
                              ("qwen3-dspark", "qwen3-omni-dspark", *DFLASH, *EAGLE3)),
    "spec-method-in-path": Trigger(("DSP807", "DSP809"), deploy(method=None, at="eagle3-ablation/d"),
                                   ("qwen3-dspark",)),
    "spec-deepseek-v4": Trigger(("DSP808",), deploy(config={"architectures": ["DSparkDraftModel"]}),
                                ("qwen3-dspark",)),
    "spec-mtp": Trigger(("DSP810",), deploy(method="mtp", num_speculative_tokens=3, config=LLAMA), EAGLE3[:1]),
    "spec-draft-model-vocab": Trigger(("DSP814",), deploy(method=None, num_speculative_tokens=3, vocab=64,
                                                          draft_vocab=64, config=LLAMA), EAGLE3[:1]),
    "spec-topk-not-dspark": Trigger(("DSP815",), deploy(method="eagle3", num_speculative_tokens=3,
                                                        dspark_draft_topk=4, config=LLAMA), EAGLE3[:1]),
    "spec-gemma4-n-predict": Trigger(("DSP812",), deploy(method=None, num_speculative_tokens=10,
                                                         config={"block_size": 7}), ("gemma4-dspark",)),
    "spec-gemma4-topk": Trigger(("DSP817",), deploy(method=None, dspark_draft_topk=4, config={"block_size": 8}),
                                ("gemma4-dspark",)),
    # --- verify's and fix's own findings ---
    "verify-padded": Trigger(("DSP601",), run_as("verify", "--runtime", "vllm==0.27.0", vocab=T + 4,
                                                 draft_vocab=T + 4), ("qwen3-dspark",)),
    "fix-forced-strategy": Trigger(("DSP503",), run_as("fix", "--strategy", "drop-d2t", vocab=T + 4,
                                                       draft_vocab=T + 4), ("qwen3-dspark",)),
    "verify-topk-not-argmax": Trigger(("DSP602",), verify("--probe", "64", vocab=T + 4, draft_vocab=T + 4,
                                                          tensors=top_k_but_never_argmax()), ("qwen3-dspark",)),
    "verify-d2t-not-increasing": Trigger(("DSP603",), verify("--probe", "0", draft_vocab=32,
                                                             tensors=d2t_not_increasing())),
    "verify-fp8-head": Trigger(("DSP604",), then(verify("--probe", "8", vocab=T + 4, draft_vocab=T + 4), fp8_head),
                               ("qwen3-dspark",)),
    "verify-tied-logits": Trigger(("DSP608",), then(verify("--probe", "8", vocab=T + 4, draft_vocab=T + 4),
                                                     zero_head), ("qwen3-dspark",)),
    "verify-disagrees": Trigger(("DSP605",), verify("--probe", "0", draft_vocab=64, d2t=True), ("qwen3-dspark",),
                                env=torch_run_sees_v_rows),
    # One family of each method, for both: the engine's worker imports torch (seconds a case), and neither hint
    # names a family (DSP606's and DSP607's fix_template; no family_fix).
    "verify-engine-fallback": Trigger(("DSP606",), verify("--probe", "0", "--engine", "installed"),
                                      ("qwen3-dspark", "dflash", "eagle3-llama"), env=installed_vllm(VLLM_BROKEN)),
    "verify-engine-raises": Trigger(("DSP607",), verify("--probe", "0", "--engine", "installed"),
                                    ("qwen3-dspark", "dflash", "eagle3-llama"), env=installed_vllm(VLLM_RAISES)),
    "fix-unrepairable": Trigger(("DSP501",), fix(draft_vocab=32, t2d=True, lm_head=False)),
    "fix-left-out": Trigger(("DSP505",), fix(draft_vocab=32, t2d=True, config={"markov_head_type": "vanilla",
                                                                             "mask_token_id": 0}), ("qwen3-dspark",)),
    "fix-named-runtime-refused": Trigger(("DSP502",), fix("--for", "vllm==0.29.0", "--for", "sglang",
                                                                   vocab=T + 4, draft_vocab=T + 4,
                                                                   config={"mask_token_id": T + 3}),
                                         ("qwen3-dspark",)),
    # It fires (DSP-E083 on stderr, exit 1), but `fix --format json` prints no document holding the DSP504 finding
    # yet: no family until it does (EXEMPT says so); then give it ("qwen3-dspark",).
    "fix-result-fails-check": Trigger(("DSP504",), run_as("fix", "--out", "fixed", vocab=T + 4, draft_vocab=T + 4),
                                      (), env=staged_result_changed),
    # --- producer layouts ---
    "gemma4-pruned-v-row-head": Trigger(("DSP311",), check(draft_vocab=32, d2t=True, t2d=True, tensors=tensors(
        lm_head__weight=np.zeros((T, 16), np.float32))(draft_vocab=32, d2t=True, t2d=True)), ("gemma4-dspark",)),
    "peagle-no-mask-hidden": Trigger(("DSP314",), producer("speculators-0.9.0-peagle-qwen3-pruned",
                                                           drop=("mask_hidden",)), ("eagle3-qwen3",)),
    "speculators-dflash2": Trigger(("DSP330",), producer("speculators-0.9.0-dflash2-equal"), ("dflash2",)),
    "dflash2-codebooks": Trigger(("DSP331",), producer("dflash-0.1.0-dflash2"), ("dflash2",)),
    "dflash2-pruned-no-head": Trigger(("DSP332",), producer("speculators-0.9.0-dflash2-equal", config=draft_vocab_40),
                                      ("dflash2",)),
    # --- the Hub ---
    "hub-range-ignored": Trigger(("DSP701",), on_hub(), ("qwen3-dspark",),
                                 env=hub(lambda server: server.set_knobs(ignore_range=True))),
    "hub-one-of-two-fails": Trigger(("DSP702",), lambda cwd, fam: [*check()(cwd, fam)[:2], "org/missing",
                                                                   "--target", TARGET], ("qwen3-dspark",),
                                    path="org/missing", env=hub(lambda server: None), exits=(2,)),
    "hub-listing-entry-ignored": Trigger(("DSP703",), on_hub(), ("qwen3-dspark",), env=hub(
        lambda server: server.mutate_info(REPO, lambda d: d["siblings"].append({"size": 3})))),
    # --- deploy: the model named, Qwen3-Omni, speculators ---
    "spec-another-model": Trigger(("DSP806",), deploy(model="elsewhere/draft")),
    "spec-omni-no-block-size": Trigger(("DSP818",), omni(block_size=None), ("qwen3-omni-dspark",)),
    "spec-omni-tokens": Trigger(("DSP819",), omni(4), ("qwen3-omni-dspark",)),
    "spec-omni-markov-head": Trigger(("DSP820",), omni(markov_head_type="gated"), ("qwen3-omni-dspark",)),
    "spec-speculators-verifier": Trigger(("DSP821", "DSP823"), speculators_draft(
        "Qwen/Qwen3-8B", method="eagle3", num_speculative_tokens=5), ("qwen3-dspark",)),
    "spec-speculators-local-verifier": Trigger(("DSP822",), speculators_draft(TARGET, "--runtime", "vllm==0.33.0"),
                                               ("qwen3-dspark",)),
    # --- deploy: the draft's max_position_embeddings against max_model_len ---
    "spec-max-model-len": Trigger(("DSP825",), deploy(max_model_len=4096, config={"max_position_embeddings": 2048}),
                                  ("qwen3-dspark", "dflash", "eagle3-llama")),
    "spec-context-short": Trigger(("DSP826", "DSP827"), lambda cwd, fam: [
        *deploy(config={"max_position_embeddings": 2048})(cwd, fam), "--max-model-len", "8192"], ("qwen3-dspark",)),
}

# The families each trigger fires for (the rule's contract covers those; the others' lack it).
FIRES_FOR: dict[str, tuple[str, ...]] = {
    "equal": ("gemma4-dspark", "dflash", "eagle3-llama"),
    "padded": ("qwen3-dspark",),
    "padded-dspark-head": ("gemma4-dspark", "dflash", "eagle3-llama", "eagle3-qwen3"),
    "padded-no-lm-head": ("qwen3-dspark", "gemma4-dspark", "dflash", "eagle3-llama", "eagle3-qwen3"),
    "pruned-no-d2t": ("qwen3-dspark", "qwen3-omni-dspark", "dflash", "eagle3-llama", "eagle3-qwen3"),
    "pruned-no-lm-head": ("qwen3-dspark", "qwen3-omni-dspark", "gemma4-dspark", "dflash", *EAGLE3),
    "equal-with-d2t": ("qwen3-dspark", "qwen3-omni-dspark", "dflash", "eagle3-llama", "eagle3-qwen3"),
    "wide-input-no-embed": ("qwen3-dspark", "qwen3-omni-dspark", "dflash", "eagle3-llama", "eagle3-qwen3"),
    "omni-mask": ("qwen3-omni-dspark",),
    "mask-hidden": ("dflash",),
    "model-prefix": DSPARK[:2],
    "markov-in-another-family": ("dflash", "eagle3-llama"),
    "markov-in-eagle3-qwen3": ("eagle3-qwen3",),
    "sglang-padded": ("qwen3-dspark",), "sglang-narrow": ("qwen3-dspark",), "sglang-mask": ("qwen3-dspark",),
    "sglang-no-markov-w2": ("qwen3-dspark",),
    "sglang-no-draft-vocab": ("eagle3-llama",), "sglang-layers-0": ("eagle3-llama",),
    "sglang-kept-embed": ("eagle3-llama",), "sglang-speculators": ("eagle3-llama",),
    "sglang-own-head": ("eagle3-llama",),
    "domino-undeclared": ("dflash",), "domino-vocab": ("dflash",), "domino-config": DFLASH,
    "aux-four-layers": ("eagle3-llama",),
    "markov-w2-shape": DSPARK[:2],
    "unregistered": ("qwen3-dspark", "qwen3-omni-dspark", "gemma4-dspark", "dflash", "dflash2", "eagle3-qwen3"),
    "unregistered-eagle3-llama": ("eagle3-llama",),
    "dflash2-config": ("dflash2",), "dspark-markov-config": ("qwen3-dspark", "dflash2"),
    "one-layer": ("eagle3-llama",), "aux-unsaid": EAGLE3, "tensor-cut": ("eagle3-llama",),
    # DFlash2's fixture lacks its dflash_config (DSP333 comes first). Gemma4 DSpark's load_weights skips a name it
    # has no parameter for (gemma4_dspark.py: `if name in params`), so a stray tensor raises nothing there, and its
    # q/k projections follow per-layer head sizes the release model could not fit, so a missing q_proj is not judged
    "tensor-no-parameter": tuple(f for f in FAMILIES if f not in ("dflash2", "gemma4-dspark")),
    "tensor-shape": tuple(f for f in FAMILIES if f != "dflash2"),
    "parameter-unfilled": tuple(f for f in FAMILIES if f not in ("dflash2", "gemma4-dspark")),
    "gemma4-fused-kv": ("gemma4-dspark",),
    # Gemma4 DSpark's load_weights reports what it loaded, and vLLM's loader refuses a norm it did not (0.27+); the
    # other families' report nothing (EAGLE-3, DFlash) or their norms load alike
    "parameter-required": ("gemma4-dspark",),
    "verify-d2t-not-increasing": DSPARK[:2],
}

# Rules no test here can make fire, and why.
EXEMPT: dict[str, str] = {
    "DSP020": "a shard rewritten between two reads of one run: only a concurrent writer makes it "
              "(tests/hostile/test_outputs.py drives read_mapping directly)",
    "DSP210": "retired: an unusable target config stops the run with DSP-E035 (exit 2); the code is kept",
    "DSP310": "reserved: no released runtime refuses t2d, so it is never reported",
    "DSP504": "fix reports it as the operational error DSP-E083 on stderr; `fix --format json` writes no document "
              "with the finding or its hint (the trigger fix-result-fails-check makes it fire)",
    "DSP506": "unreachable from the CLI: check reports a lone surrogate in config.json (DSP211) or the index "
              "(DSP110) and fix refuses with DSP501 before it plans a write (tests/unit/test_repair_unwritable_json.py "
              "hands the planner such a config directly)",
}

def families_of(name: str) -> tuple[str, ...]:
    return FIRES_FOR.get(name, TRIGGERS[name].families)


CASES = [(name, family) for name in TRIGGERS for family in families_of(name)]


# --- the tests ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "family"), CASES, ids=[f"{n}-{f}" for n, f in CASES])
def test_each_rules_hint_holds_where_it_fires(tmp_path: Path, name: str, family: str) -> None:
    trigger = TRIGGERS[name]
    argv = trigger.build(tmp_path, family)
    with ExitStack() as stack:
        env = trigger.env(tmp_path, stack) if trigger.env else None
        found = run_json(tmp_path, argv, env, trigger.exits)
    missing = set(trigger.codes) - {f["code"] for f in found}
    assert not missing, f"{name} on {family} no longer reports {sorted(missing)}"
    for f in found:
        assert_true_for(family, f, trigger.path or argv[1], given_target(argv))


def test_triggers_on_fewer_families_are_hints_that_name_no_family() -> None:
    """The engine's triggers run one family of each method (seconds a case): only true while their hints name no
    family. A family-specific hint for them must widen the trigger to every family."""
    for name in ("verify-engine-fallback", "verify-engine-raises"):
        assert set(families_of(name)) < set(FAMILIES)
        for code in TRIGGERS[name].codes:
            assert RULES[code].family_fix == (), f"{code}'s hint names a family: trigger {name} on every family"
            assert not any(f in RULES[code].fix_template for f in FAMILIES), code


def test_every_rule_is_triggered_or_exempt() -> None:
    triggered = {code for name in TRIGGERS for code in TRIGGERS[name].codes if families_of(name)}
    assert not set(EXEMPT) & triggered, "an exempt rule is triggered: drop it from EXEMPT"
    left = set(RULES) - triggered - set(EXEMPT)
    assert not left, f"rules no trigger makes fire and no reason exempts: {sorted(left)}"
    assert set(EXEMPT) | triggered <= set(RULES)


@pytest.mark.parametrize("build", list(BUILDS))
@pytest.mark.parametrize("family", FAMILIES)
def test_every_hint_holds_for_the_checkpoint(tmp_path: Path, family: str, build: str) -> None:
    for f in report(tmp_path, family, BUILDS[build]):
        assert_true_for(family, f)


def report(tmp_path: Path, family: str, build: dict[str, Any], *runtime: str) -> list[dict[str, Any]]:
    draft(tmp_path, family, **{"markov": True, **build})
    target(tmp_path)
    result = run_cli("check", DRAFT, "--target", TARGET, *runtime, "--format", "json", "--isolated", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    (checkpoint,) = json.loads(result.stdout)["checkpoints"]
    findings: list[dict[str, Any]] = checkpoint["findings"]
    return findings


@pytest.mark.parametrize(("family", "runtime"), [
    ("qwen3-dspark", "sglang==0.5.15"), ("qwen3-omni-dspark", "vllm==0.28.0"), ("gemma4-dspark", "sglang==0.5.20"),
    ("dflash", "sglang==0.5.10"), ("eagle3-qwen3", "sglang==0.5.20"),
])
def test_an_unsupported_architecture_hint_is_about_that_family(tmp_path: Path, family: str, runtime: str) -> None:
    """DSP309 on a DSpark draft said to rename it to SGLang's EAGLE-3 class; each family now has its own."""
    (f,) = [f for f in report(tmp_path, family, {}, "--runtime", runtime) if f["code"] == "DSP309"]
    assert_true_for(family, f)
    assert "LlamaForCausalLMEagle3" not in f["hint"]


def test_the_eagle3_llama_hint_names_sglangs_class(tmp_path: Path) -> None:
    config = {"architectures": ["Eagle3LlamaForCausalLM"], "model_type": "llama"}
    findings = report(tmp_path, "eagle3-llama", {"config": config}, "--runtime", "sglang==0.5.20")
    (f,) = [f for f in findings if f["code"] == "DSP309"]
    assert "LlamaForCausalLMEagle3" in f["hint"]


def test_an_unread_release_hint_names_that_release_and_no_uninstalled_tool(tmp_path: Path) -> None:
    """DSP220 for `--runtime vllm==9.9.9`: the version asked for, and what an installed user can run."""
    (f,) = [f for f in report(tmp_path, "qwen3-dspark", {}, "--runtime", "vllm==9.9.9") if f["code"] == "DSP220"]
    assert "9.9.9" in f["hint"] and "0.34.0" not in f["hint"] and "tools/" not in f["hint"]
    assert_true_for("qwen3-dspark", f)
    (cmd,) = COMMAND.findall(f["hint"])
    argv = shlex.split(cmd)
    assert argv[1] == "verify" and argv[argv.index("--runtime") + 1] == "vllm==9.9.9"
