"""Shared fixtures: a factory that writes real, tiny draft checkpoints (config.json + safetensors) to tmp_path."""

from __future__ import annotations

import fcntl
import gc
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# Before any dspark_ckpt import: every DsparkCkptError raised in the tests (and in the CLI subprocesses, which
# inherit it) must carry a code registered in model/error_catalog.py.
os.environ.setdefault("DSPARK_CKPT_CHECK_CODES", "1")

from dspark_ckpt.formats.safetensors_writer import TensorSpec, encode_header

sys.path.insert(0, str(Path(__file__).parent))

from cli_runner import run_cli, run_subprocess  # noqa: F401 - re-exported: tests import them from here
from upstream_guard import Guard, UpstreamReached, wheel_caches

# Every test not marked `upstream` runs under the guard (tests/upstream_guard.py): no wheel, no network.
GUARD = Guard(wheel_caches())


def _guarded(item: pytest.Item) -> Any:
    """Runs one phase of a test (setup, call or teardown: a module's fixture may fetch in its setup) under the guard,
    unless the test is in the upstream tier; a refusal the test swallowed still fails it."""
    if item.get_closest_marker("upstream") is not None:
        return (yield)
    children = GUARD.child_environment()
    saved = {key: os.environ.get(key) for key in children}
    os.environ.update(children)
    GUARD.violations.clear()
    GUARD.active = True
    try:
        result = yield
    finally:
        GUARD.active = False
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    if GUARD.violations:
        raise UpstreamReached(f"outside the upstream tier, this test reached for: {GUARD.violations}")
    return result


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--releases", default=os.environ.get("DSPARK_CKPT_UPSTREAM_RELEASES"),
                     help="the upstream tier: only the checks of these releases, comma-separated runtime-X.Y.Z "
                          "(vllm-0.34.0,sglang-0.5.23); 'newest': the newest listed vLLM and SGLang release; "
                          "'vllm' or 'sglang': every release of that runtime (env DSPARK_CKPT_UPSTREAM_RELEASES)")


def pytest_configure(config: pytest.Config) -> None:
    """The garbage collector set as the CLI's own process sets it (cli/app.py _GC_THRESHOLDS): the tests run the
    CLI in this process thousands of times, and at the interpreter's default thresholds about a tenth of their CPU
    time went to collecting the youngest objects again and again.

    The package's bytecode compiled once, before the workers start (the main process only): the suite starts
    the real CLI in about a thousand subprocesses, and under PYTHONDONTWRITEBYTECODE (or in a fresh clone, with
    workers racing to write it) each one compiled every module it imports again, ~0.1 s of CPU a start. An editable
    install has no bytecode until something writes it; `pip install .` compiles it at install, as this does."""
    from dspark_ckpt.cli.app import _GC_THRESHOLDS

    gc.set_threshold(*_GC_THRESHOLDS)
    if hasattr(config, "workerinput"):
        return
    import compileall

    import dspark_ckpt

    compileall.compile_dir(Path(dspark_ckpt.__file__).parent, quiet=2)


@pytest.hookimpl(wrapper=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> Generator[None, int, int]:
    """`-n auto`: one worker more than pytest-xdist counts cores (PYTEST_XDIST_AUTO_NUM_WORKERS, where set, is taken
    as it is). Some tests spend most of their time waiting with the CPU idle (the fake Hub's stalls and deadlines:
    tests/hub, about 50 s of waiting to 26 s of CPU); the extra worker computes meanwhile. 2026-12-07, 2 cores, one
    commit, run after each other under other work: 7 min 29 s with two workers (load 4-5), 6 min 55 s with three
    (load 5-7), 496 and 497 s of CPU."""
    count = yield
    return count if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") else count + 1


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """A run that selects the upstream tier (`-m upstream`) runs in one process, with -n set or not: its tools fill
    the wheel caches without locks (two workers preparing one release, or one transformers pin, would race) and a
    release's worker takes gigabytes of memory; its progress is one line per check (-v) and the tools' own log."""
    from _pytest.mark.expression import Expression

    expr = config.option.markexpr
    if expr and Expression.compile(expr).evaluate(lambda name: name == "upstream") \
            and getattr(config.option, "numprocesses", None):
        config.option.numprocesses = 0


def selected_releases(text: str | None) -> set[str] | None:
    """--releases as a set of runtime-release names; None: every release."""
    if not text:
        return None
    from dspark_ckpt.runtimes.release_model import generated_releases
    from dspark_ckpt.runtimes.versions import SGLANG_RELEASES, VLLM_RELEASES

    names: set[str] = set()
    for part in filter(None, (p.strip() for p in text.split(","))):
        if part == "newest":
            names |= {f"vllm-{VLLM_RELEASES[-1]}", f"sglang-{SGLANG_RELEASES[-1]}"}
            continue
        if part in ("vllm", "sglang"):  # every release of that runtime, listed or generated
            names |= {f"{part}-{r}" for r in (*{"vllm": VLLM_RELEASES, "sglang": SGLANG_RELEASES}[part],
                                              *generated_releases(part))}
            continue
        runtime, _, release = part.partition("-")
        listed = {"vllm": VLLM_RELEASES, "sglang": SGLANG_RELEASES}.get(runtime, ())
        if release not in listed and (runtime not in ("vllm", "sglang") or release not in generated_releases(runtime)):
            raise pytest.UsageError(f"--releases: {part!r} is no listed or generated release (runtime-X.Y.Z, e.g. "
                                    f"vllm-{VLLM_RELEASES[-1]}, or 'newest')")
        names.add(part)
    return names


def upstream_release(item: pytest.Item) -> str | None:
    """The runtime-release an upstream check is about: its `runtime` and `release` parameters, else the marker's
    (`@pytest.mark.upstream(runtime="vllm", release="0.33.0")`; a module's runtime for a `release` parameter)."""
    marker = item.get_closest_marker("upstream")
    params = getattr(getattr(item, "callspec", None), "params", {})
    runtime = params.get("runtime") or (marker.kwargs.get("runtime") if marker else None)
    release = params.get("release") or params.get("version") or (marker.kwargs.get("release") if marker else None)
    return f"{runtime}-{release}" if runtime and release else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The `slow` tests first (a few take tens of seconds: started last, one would run alone at the end while the
    other workers idle); --releases keeps the upstream checks of those releases, the hermetic tests are not its
    business."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: otherwise collection order
    wanted = selected_releases(config.getoption("--releases"))
    if wanted is None:
        return
    keep, drop = [], []
    for item in items:
        upstream = item.get_closest_marker("upstream") is not None
        (drop if upstream and upstream_release(item) not in wanted else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Any:
    return (yield from _guarded(item))

NP_DTYPE = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8", "I32": "<i4", "BOOL": "|b1", "U8": "|u1"}
ARCH = {
    "qwen3-dspark": "Qwen3DSparkModel",
    "qwen3-omni-dspark": "Qwen3OmniDSparkModel",
    "gemma4-dspark": "Gemma4DSparkModel",
    "dflash": "DFlashDraftModel",
    "eagle3-llama": "LlamaForCausalLMEagle3",
    "eagle3-qwen3": "Eagle3Qwen3ForCausalLM",
}
# Keys a family's real config.json carries that its runtime needs beside the sizes: vLLM's Gemma4 DSpark load asserts
# every layer shares K and V (DSP364), so its drafts are exported with attention_k_eq_v (config_extra overrides);
# the token id a parallel drafter feeds its masked slots (DSP373: vLLM's proposer refuses to start without one), where
# the producers write it: z-lab's DFlash under dflash_config, speculators' DSpark at the top level.
FAMILY_KEYS: dict[str, dict[str, Any]] = {
    "gemma4-dspark": {"attention_k_eq_v": True, "mask_token_id": 0},
    "qwen3-dspark": {"mask_token_id": 0}, "qwen3-omni-dspark": {"mask_token_id": 0},
    "dflash": {"dflash_config": {"mask_token_id": 0}}}


def with_drafting_token(config: dict[str, Any], release: str, architecture: str) -> dict[str, Any]:
    """`config` with the mask token id a parallel drafter's producer writes (under dflash_config where the config
    has one, as z-lab does; else at the top level, as speculators does), where vLLM `release`'s proposer would refuse
    it without one (DSP373): a case that must reach the release's own __init__ and load_weights. The method is the
    one the release serves the architecture with (its name's: DFlash's subclasses without a family included)."""
    from dspark_ckpt.runtimes import drafting_token, vllm_hf_config

    if drafting_token.refusal(release, vllm_hf_config.implied_method(architecture), False, config) is None:
        return config
    if isinstance(config.get("dflash_config"), dict):
        return {**config, "dflash_config": {**config["dflash_config"], "mask_token_id": 0}}
    return {**config, "mask_token_id": 0}


def write_safetensors(path: Path, tensors: dict[str, np.ndarray], metadata: dict[str, str] | None = None,
                      dtypes: dict[str, str] | None = None) -> None:
    """Write a real safetensors file; `dtypes` overrides the stored dtype name (e.g. BF16 from uint16 bits)."""
    dtypes = dtypes or {}
    inverse = {v: k for k, v in NP_DTYPE.items() if k != "BF16"}
    specs, blobs = [], []
    for name, array in tensors.items():
        dtype = dtypes.get(name) or inverse[array.dtype.str]
        specs.append(TensorSpec(name, dtype, tuple(array.shape)))
        blobs.append(np.ascontiguousarray(array).tobytes())
    with open(path, "wb") as f:
        f.write(encode_header(specs, metadata))
        f.writelines(blobs)


def mapping_tables(draft: int, target: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A valid (d2t, t2d) pair built the way EAGLE/SpecForge do: D sorted target ids."""
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(target, size=draft, replace=False)).astype(np.int64)
    t2d = np.zeros(target, dtype=bool)
    t2d[ids] = True
    return ids - np.arange(draft, dtype=np.int64), t2d


def draft_tensors(*, vocab: int, draft_vocab: int, target_vocab: int, hidden: int = 16, rank: int = 4,
                  lm_head: bool = True, embed: bool = True, d2t: bool | str = False, t2d: bool = False,
                  markov: bool = True, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    if embed:
        out["embed_tokens.weight"] = rng.standard_normal((vocab, hidden), dtype=np.float32)
    out["layers.0.mlp.down_proj.weight"] = rng.standard_normal((hidden, hidden), dtype=np.float32)
    out["norm.weight"] = np.ones(hidden, dtype=np.float32)
    if markov:
        out["markov_head.markov_w1.weight"] = rng.standard_normal((vocab, rank), dtype=np.float32)
        out["markov_head.markov_w2.weight"] = rng.standard_normal((draft_vocab, rank), dtype=np.float32)
    if lm_head:
        out["lm_head.weight"] = rng.standard_normal((draft_vocab, hidden), dtype=np.float32)
    if d2t:
        if d2t == "zeros" or draft_vocab >= target_vocab:
            out["d2t"] = np.zeros(draft_vocab, dtype=np.int64)
        else:
            out["d2t"] = mapping_tables(draft_vocab, target_vocab, seed)[0]
    if t2d and draft_vocab <= target_vocab:
        out["t2d"] = mapping_tables(draft_vocab, target_vocab, seed)[1]
    return out


# The backbone of a one-layer draft at hidden size H: what make_checkpoint writes beside the vocab tensors.
def layout_checkpoint(model: Any, values: dict[str, int], lengths: dict[str, tuple[int, ...]] | None = None,
                      config: dict[str, Any] | None = None) -> dict[str, tuple[int, ...]] | None:
    """A generated release model's layout as a checkpoint (name -> shape for these values): every name it loads,
    its layers over the span the release builds, its heads over the count it builds, its experts over the count a MoE
    layer loads; a name the release skips (DFlash's mask_embedding, read from its own file) is not shipped. `lengths`: the shape of a name whose
    record leaves its length open (the mapping tables d2t/t2d: D and T); `config`: the draft's config, whose
    structural keys resize what the record says they resize (landing.keyed). None where a shape or count is
    unknown."""
    from dspark_ckpt.runtimes.landing import _keyed_want, built_indices, each_index, head_count, keyed, visit
    from dspark_ckpt.runtimes.release_model import normal

    at_draft = keyed(model, config, values)[0] if config is not None else {}
    span, experts = built_indices(model, values)
    if model.layers is None:
        span = range(1)
    out: dict[str, tuple[int, ...]] = {}
    for name in model.layout:
        rule = model.tensors.get(name)
        if rule is not None and rule.parameter is None and rule.refused is None:
            continue
        if rule is None or rule.shape is None or span is None or ("{e}" in name and not experts):
            return None
        keyed_shape = rule.parameter is not None and at_draft.get(normal(rule.parameter))
        shape = tuple(e.value(values) if e is not None else None for e in rule.shape) if not keyed_shape else \
            _keyed_want(model, rule, keyed_shape, values) or (None,)
        if shape == (None,) and name in (lengths or {}):
            shape = (lengths or {})[name]
        if any(d is None or d <= 0 for d in shape):
            return None
        heads = head_count(model, values)
        every = each_index(name, visit(span, frozenset(span)),  # each layer and head it builds, all shipped
                           visit(range(heads), frozenset(range(heads))) if heads is not None else None)[0]
        for concrete in every:
            for e in range(experts or 0) if "{e}" in name else (0,):
                out[concrete.replace("{e}", str(e))] = shape  # type: ignore[assignment]
    return out


def backbone_config(hidden: int) -> dict[str, Any]:
    return {"num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": hidden // 2,
            "intermediate_size": hidden}


def _open_attention(name: str, config: dict[str, Any]) -> tuple[int, ...] | None:
    """The shape of an attention tensor whose dimensions the release model leaves open (Gemma 4 sizes each layer by
    its type: a full-attention layer, as a lone layer is, by global_head_dim, which the fixtures set to head_dim)."""
    if ".self_attn." not in name:
        return None
    head, hidden = config.get("global_head_dim") or config["head_dim"], config["hidden_size"]
    heads, kv = config["num_attention_heads"] * head, config["num_key_value_heads"] * head
    return {"q_proj.weight": (heads, hidden), "k_proj.weight": (kv, hidden), "v_proj.weight": (kv, hidden),
            "o_proj.weight": (hidden, heads), "q_norm.weight": (head,),
            "k_norm.weight": (head,)}.get(name.split(".self_attn.", 1)[1])


def backbone_tensors(family: str, config: dict[str, Any], release: str = "0.33.0") -> dict[str, np.ndarray]:
    """Every backbone tensor the family's class in vLLM `release` loads (the generated release model's layout,
    runtimes/release_data), shaped from `config`: a draft whose layers are complete (a release's loader may refuse
    one that is not: "Following weights were not initialized from checkpoint"), fc included (an EAGLE-3 class's at
    the record's width, which the aux-state model judges; its absence is the landing's DSP363: parameter_pass.judgement).
    Vocabulary tensors are left to the caller (draft_tensors); attention dimensions the model could not fit (Gemma 4's per-layer heads) are stated by
    _open_attention."""
    from dspark_ckpt.model.families import ARCHITECTURE_FAMILY
    from dspark_ckpt.runtimes.landing import variables
    from dspark_ckpt.runtimes.parameter_pass import is_vocab, judgement
    from dspark_ckpt.runtimes.release_model import architecture_model

    model = architecture_model("vllm", release, ARCH[family])
    if model is None or model.not_built is not None:
        return {}
    values = variables(model, config, target_hidden=config.get("target_hidden_size") or config.get("hidden_size"),
                       target_vocab=config.get("vocab_size"))
    out: dict[str, np.ndarray] = {}
    for name in model.layout:
        rule = model.tensors.get(name)
        if rule is None or rule.parameter is None or rule.shape is None or is_vocab(rule.shape) \
                or not judgement(model, rule.parameter, ARCHITECTURE_FAMILY.get(model.name)).presence:
            continue
        shape = tuple(e.value(values) for e in rule.shape if e is not None) if None not in rule.shape \
            else _open_attention(name, config)
        if shape is not None and None not in shape:
            out[name.replace("{i}", "0")] = np.zeros(shape, dtype=np.float32)
    return out


def make_checkpoint(root: Path, *, family: str = "qwen3-dspark", vocab: int = 96, draft_vocab: int | None = 96,
                    target_vocab: int = 96, hidden: int = 16, rank: int = 4, shards: int = 1,
                    config_extra: dict[str, Any] | None = None, tensors: dict[str, np.ndarray] | None = None,
                    **what: Any) -> Path:
    """Write a checkpoint folder: config.json plus one model.safetensors or `shards` shards with an index."""
    root.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {"architectures": [ARCH[family]], "model_type": "qwen3", "vocab_size": vocab,
                              "hidden_size": hidden, "markov_rank": rank, **backbone_config(hidden)}
    if draft_vocab is not None:
        config["draft_vocab_size"] = draft_vocab
    config.update(FAMILY_KEYS.get(family, {}))
    if family == "gemma4-dspark":  # a lone Gemma 4 layer is a full-attention one, sized by global_head_dim
        config["global_head_dim"] = config["head_dim"]
    config.update(config_extra or {})
    (root / "config.json").write_text(json.dumps(config, indent=2))
    if tensors is None:
        tensors = {**backbone_tensors(family, config),
                   **draft_tensors(vocab=vocab, draft_vocab=draft_vocab or vocab, target_vocab=target_vocab,
                                   hidden=hidden, rank=rank, **what)}
        # fc last: the shards take every `shards`-th name, and the drafts written before fc was shipped keep theirs
        tensors = {n: t for n, t in tensors.items() if n != "fc.weight"} | \
            ({"fc.weight": tensors["fc.weight"]} if "fc.weight" in tensors else {})
    if shards == 1:
        write_safetensors(root / "model.safetensors", tensors)
        return root
    names = list(tensors)
    weight_map, total = {}, 0
    for i in range(shards):
        part = {n: tensors[n] for n in names[i::shards]}
        fname = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        write_safetensors(root / fname, part)
        weight_map.update({n: fname for n in part})
        total += sum(a.nbytes for a in part.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (root / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))
    return root


def edit_config(path: Path, **changes: Any) -> Path:
    """Rewrite a checkpoint's config.json: each key set to its value, a value of None deletes the key."""
    config = json.loads((path / "config.json").read_text())
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    (path / "config.json").write_text(json.dumps(config))
    return path


def fix_refused(cwd: Path, name: str, *args: str) -> str:
    """`dspark-ckpt fix NAME ARGS... --isolated` run in `cwd`, which must refuse and write nothing: its output."""
    done = run_cli("fix", name, *args, "--isolated", cwd=cwd)
    assert done.returncode != 0 and not (cwd / f"{name}-fixed").exists(), done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.fixture
def checkpoint_factory(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(10_000))

    def factory(name: str | None = None, **kwargs: Any) -> Path:
        return make_checkpoint(tmp_path / (name or f"draft{next(counter)}"), **kwargs)

    return factory


def run_on_a_terminal(*args: str, cwd: Path | None = None, timeout: float = 120) -> tuple[int, str, str]:
    """The real CLI with stderr on a pseudo-terminal (as in a shell) and stdout on a file (as in
    `> out.json`): its exit status, stdout, and everything the terminal showed."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-m", "dspark_ckpt", *args], stdout=out, stderr=slave,
                                cwd=cwd, env=env, text=True)
        os.close(slave)
        chunks: list[bytes] = []
        while select.select([master], [], [], timeout)[0]:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        os.close(master)
        rc = proc.wait(timeout=timeout)
        out.seek(0)
        return rc, out.read(), b"".join(chunks).decode(errors="replace")


def wait_stopped(pid: int, timeout: float = 60) -> None:
    """Until the process is stopped (SIGSTOP at a DSPARK_CKPT_CRASH_AT pause point); fails after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
            return
        time.sleep(0.02)
    raise AssertionError("fix never reached its pause point")


def built_models(runtime: str, release: str) -> Iterator[Any]:
    """Every class the committed data of `runtime==release` builds (runtimes/release_data), as ArchitectureModels;
    not the classes the generator could not build."""
    from dspark_ckpt.runtimes.release_model import architecture_model, release_record

    record = release_record(runtime, release)
    assert record is not None, (runtime, release)
    for name in record["architectures"]:
        model = architecture_model(runtime, release, name)
        if model is not None and model.not_built is None:
            yield model


REPO = Path(__file__).parents[1]
HOOK_FILES = ("dspark_ckpt", "pyproject.toml", "README.md", ".pre-commit-hooks.yaml")


def git(cwd: Path, *args: str) -> None:
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="session")
def hook_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One hook repository and one pre-commit cache for every hook test of the run: the hook's environment (a venv
    with this project installed, ~10-30 s) is built once, not per module; the xdist workers share it (the first
    makes the copy under a lock, pre-commit locks its own cache)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    root = shared / "hook-repo"
    with open(shared / "hook-repo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        root.mkdir(exist_ok=True)
        return hook_repo_env(root)


def hook_repo_env(base: Path) -> dict[str, str]:
    """A committed copy of this project under `base` that pre-commit clones as a hook repository (made once), a
    config naming its hooks at that commit, and the environment the hook venv is built and runs in: this
    environment's packages, no index, no build isolation. TOOL_REPO names the copy, HOOK_CONFIG the config."""
    tool, config = base / "tool", base / "pre-commit-config.yaml"
    if not tool.is_dir():
        _committed_copy(tool)
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tool, check=True, capture_output=True,
                             text=True).stdout.strip()
        hooks = "".join(f"  - id: {h}\n" for h in ("dspark-ckpt-check", "dspark-ckpt-fix-safe"))
        config.write_text(f"repos:\n- repo: {tool}\n  rev: {rev}\n  hooks:\n{hooks}")
    site = os.pathsep.join(dict.fromkeys([*filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)),
                                          *(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))]))
    return {**os.environ, "PRE_COMMIT_HOME": str(base / "cache"), "PYTHONPATH": site, "PIP_NO_INDEX": "1",
            "PIP_NO_BUILD_ISOLATION": "0",  # pip's inverted spelling: this turns build isolation off
            "NO_COLOR": "1", "COLUMNS": "100", "TOOL_REPO": str(tool), "HOOK_CONFIG": str(config)}


def pre_commit_run(repo: Path, env: dict[str, str], hook: str, *files: str) -> subprocess.CompletedProcess[str]:
    """`pre-commit run HOOK` in `repo` as a project that lists this one's hooks runs it: the config (outside the
    repo) names the hook repository at its commit. pre-commit keeps one hook environment per repository and commit
    in PRE_COMMIT_HOME, so a test run builds it once (`pre-commit try-repo` built it again in a scratch store on
    every call, ~10-20 s each). `--files` or `--all-files`: no stash, so the config need not be staged."""
    selection = ["--files", *files] if files else ["--all-files"]
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", hook, "--config", env["HOOK_CONFIG"],
                           *selection, "--verbose"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def _committed_copy(tool: Path) -> None:
    staging = tool.with_name(tool.name + ".staging")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    for name in HOOK_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, staging / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, staging / name)
    git(staging, "init", "-q")
    git(staging, "add", "-A")
    git(staging, "commit", "-qm", "tool")
    staging.rename(tool)


def prepared_vllm_env(version: str) -> dict[str, str]:
    """The environment of a worker that runs vLLM `version` on CPU: PYTHONPATH = its extracted wheel, the probe's
    pinned deps, then the caller's; VLLM_TARGET_DEVICE=cpu. Prepared by the probe's own download step (the cache,
    DSPARK_PROBE_CACHE or ~/.cache, makes later runs offline); the test is skipped where that cannot run."""
    cache = os.environ.get("DSPARK_PROBE_CACHE") or str(Path.home() / ".cache" / "dspark-ckpt" / "probe")
    probe = Path(__file__).resolve().parents[1] / "tools" / "probe_runtime.py"
    try:
        done = subprocess.run([sys.executable, str(probe), version, "--prepare-only", "--cache", cache],
                              capture_output=True, text=True, timeout=1800, check=False)
    except subprocess.TimeoutExpired:
        pytest.skip(f"the probe could not fetch vllm=={version} within 30 minutes")
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        pytest.skip(f"the probe could not prepare vllm=={version} (no package index here?): {why}")
    paths = json.loads(done.stdout.strip().splitlines()[-1])
    path = os.pathsep.join([paths["tree"], paths["deps"], *filter(None, [os.environ.get("PYTHONPATH")])])
    return {"PYTHONPATH": path, "VLLM_TARGET_DEVICE": "cpu"}
