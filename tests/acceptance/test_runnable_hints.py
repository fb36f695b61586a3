"""Every hint that suggests a command gives a runnable one: take it from check's JSON report, run it, check the result.

Each case builds a real tiny checkpoint, runs the real CLI (`check --format json`), takes the command out of the
finding's hint, splits it as a shell would (shlex) and runs it. Runnable means: fix accepts it, writes the repair,
and `check` of what it wrote no longer reports the finding for the runtimes the command named.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conftest import draft_tensors, make_checkpoint, run_cli
from test_fix_unnest_weights import LAYOUT as ZLAB_DFLASH2
from test_fix_unnest_weights import materialise

T = 96
COMMAND = re.compile(r"`(dspark-ckpt (?:fix|check|verify) [^`]+)`")
SNAPSHOT = "models--org--my-draft/snapshots/0123456789abcdef0123456789abcdef01234567"


def check_json(cwd: Path, *args: str) -> dict[str, Any]:
    result = run_cli("check", *args, "--format", "json", "--isolated", cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def finding(doc: dict[str, Any], code: str) -> dict[str, Any]:
    found = [f for c in doc["checkpoints"] for f in c["findings"] if f["code"] == code]
    assert len(found) == 1, [f["code"] for c in doc["checkpoints"] for f in c["findings"]]
    return found[0]


def commands(hint: str) -> list[list[str]]:
    found = [shlex.split(c) for c in COMMAND.findall(hint)]
    assert found, f"no command in the hint: {hint}"
    return found


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    assert argv[0] == "dspark-ckpt"
    return run_cli(*argv[1:], "--isolated", cwd=cwd)


def values(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == flag]


def written_to(argv: list[str], cwd: Path) -> Path:
    """Where the fix wrote: its --out, else fix's default, NAME-fixed beside the checkpoint."""
    out = values(argv, "--out")
    return cwd / out[0] if out else cwd / f"{argv[2].rstrip('/')}-fixed"


def target_flags(argv: list[str]) -> list[str]:
    return [w for flag in ("--target", "--target-vocab-size") for v in values(argv, flag) for w in (flag, v)]


def nested_settings(root: Path) -> Path:
    """A SpecForge-style export: markov_rank only inside dflash_config (DSP215)."""
    make_checkpoint(root)
    config = json.loads((root / "config.json").read_text())
    config["dflash_config"] = {"markov_rank": config.pop("markov_rank")}
    (root / "config.json").write_text(json.dumps(config))
    return root


BUILDS: dict[str, Any] = {
    "padded": lambda root: make_checkpoint(root, vocab=T + 4, draft_vocab=T + 4, target_vocab=T),
    "pruned-no-d2t": lambda root: make_checkpoint(root, vocab=T, draft_vocab=32, target_vocab=T, t2d=True),
    "pruned-zero-d2t": lambda root: make_checkpoint(root, vocab=T, draft_vocab=32, target_vocab=T, d2t="zeros",
                                                    t2d=True),
    "padded-no-lm-head": lambda root: make_checkpoint(root, vocab=T + 4, draft_vocab=T + 4, target_vocab=T,
                                                      lm_head=False),
    "equal-with-d2t": lambda root: make_checkpoint(root, d2t=True),
    "nested-settings": nested_settings,
    "contradicting-d2v": lambda root: make_checkpoint(
        root, draft_vocab=32, tensors=draft_tensors(vocab=T, draft_vocab=T, target_vocab=T, lm_head=False)),
    "dspark-draft-name": lambda root: make_checkpoint(root, config_extra={"architectures": ["DSparkDraftModel"]}),
    "dflash2-codebooks": lambda root: materialise(root, ZLAB_DFLASH2),  # z-lab's `<name>.weight` codebooks
}

# The hint names the releases the finding is on: for these Qwen3 DSpark drafts, the releases that register
# Qwen3DSparkModel (registry.py @ v0.25.0 L597 first; an older release refuses it with DSP309 whatever the repair)
VLLM = "vllm>=0.25.0"
# (build, code, strategy the hint names, the --for it names); every case also in a folder whose name has a space.
# A fix command repairs for what check gates on, `--for vllm` by default, whichever releases the finding is on
# (issue 41: two hints naming one repair give one command; fix leaves the releases older than Qwen3DSparkModel out
# with a DSP505 warning, and check does not gate on them unless pinned)
CASES = [
    ("padded", "DSP302", "trim", ["vllm"]),
    # a padded draft loads silently on 0.25-0.28 and from 0.30 (test_contract_matrix: 0.25/0.26 as 0.27, probe_runtime
    # 0.25.0, 0.26.0 384/384); 0.29 refuses it (DSP302): the same trim, the same command
    ("padded", "DSP305", "trim", ["vllm"]),
    ("pruned-no-d2t", "DSP302", "rebuild-d2t", ["vllm"]),
    ("pruned-zero-d2t", "DSP401", "rebuild-d2t", ["vllm"]),
    ("padded-no-lm-head", "DSP306", "share-target-head", ["vllm"]),
    ("equal-with-d2t", "DSP303", "drop-d2t", ["vllm"]),
    ("nested-settings", "DSP215", "hoist-dspark-settings", ["vllm"]),
    ("contradicting-d2v", "DSP216", "set-draft-vocab", ["vllm"]),
    # a config finding (no release reports it): the hint repairs for vLLM, whose releases before Qwen3DSparkModel's
    # registration fix leaves out with a DSP505 warning and check does not gate on unless named with ==
    ("dspark-draft-name", "DSP218", "name-qwen3-dspark", ["vllm"]),
    # DFlash2 registers in vLLM 0.28: the older releases are left out (DSP505) and not gated, as above
    ("dflash2-codebooks", "DSP331", "unnest-weights", ["vllm"]),
]


def assert_repairs(argv: list[str], cwd: Path, code: str) -> None:
    """Run the hint's command; then check what it wrote, for the runtimes it named: clean, and without `code`."""
    fixed = run(argv, cwd)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    out = written_to(argv, cwd)
    assert (out / "config.json").is_file(), fixed.stdout
    runtimes = [w for r in values(argv, "--for") for w in ("--runtime", r)]
    after = run_cli("check", str(out), *target_flags(argv), *runtimes, "--format", "json", "--isolated", cwd=cwd)
    assert after.returncode == 0, after.stdout
    assert code not in {f["code"] for c in json.loads(after.stdout)["checkpoints"] for f in c["findings"]}


@pytest.mark.parametrize(("build", "code", "strategy", "runtimes"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_the_hint_command_repairs_the_draft(tmp_path: Path, build: str, code: str, strategy: str,
                                            runtimes: list[str]) -> None:
    BUILDS[build](tmp_path / "my draft")
    hint = finding(check_json(tmp_path, "my draft", "--target-vocab-size", str(T)), code)["hint"]
    (argv,) = commands(hint)
    assert argv[:3] == ["dspark-ckpt", "fix", "my draft"]  # the path as given, quoted so the space survives
    assert target_flags(argv) == ["--target-vocab-size", str(T)]
    assert values(argv, "--strategy") == [strategy] and values(argv, "--for") == runtimes
    assert_repairs(argv, tmp_path, code)


def test_a_target_folder_is_repeated_as_given(tmp_path: Path) -> None:
    """--target DIR, not the number it resolved to: fix reads the same target (an Omni one keeps its checks)."""
    BUILDS["padded"](tmp_path / "draft")
    (tmp_path / "the target").mkdir()
    (tmp_path / "the target" / "config.json").write_text(json.dumps({"vocab_size": T}))
    hint = finding(check_json(tmp_path, "draft", "--target", "the target"), "DSP302")["hint"]
    (argv,) = commands(hint)
    assert target_flags(argv) == ["--target", "the target"]
    assert "'the target'" in hint  # shell-quoted in the text itself
    assert_repairs(argv, tmp_path, "DSP302")


def test_a_runtime_range_is_one_quoted_selector(tmp_path: Path) -> None:
    """The runtimes a finding is about, as check names them; the command quotes a `>=` selector."""
    BUILDS["padded"](tmp_path / "draft")
    doc = check_json(tmp_path, "draft", "--target-vocab-size", str(T), "--runtime", "vllm>=0.30")
    hint = finding(doc, "DSP305")["hint"]
    (argv,) = commands(hint)
    assert values(argv, "--for") == ["vllm>=0.30.0"] and "'vllm>=0.30.0'" in hint  # the known 0.30.0-0.33.0
    assert_repairs(argv, tmp_path, "DSP305")


def test_without_a_target_the_hint_says_what_to_add(tmp_path: Path) -> None:
    """No T: fix would refuse (DSP-E061), so the hint names the flags to add instead of a command that fails."""
    nested_settings(tmp_path / "draft")
    hint = finding(check_json(tmp_path, "draft"), "DSP215")["hint"]
    (argv,) = commands(hint)
    assert target_flags(argv) == [] and "with --target DIR or --target-vocab-size N added" in hint
    assert_repairs([*argv, "--target-vocab-size", str(T)], tmp_path, "DSP215")


def test_an_hf_cache_snapshot_is_fixed_into_a_folder_of_its_own(tmp_path: Path) -> None:
    """fix refuses to write into the HF cache (DSP-E063): the hint names an --out outside it."""
    snapshot = tmp_path / "hub" / SNAPSHOT
    BUILDS["padded"](snapshot)
    (tmp_path / "hub" / "models--org--my-draft" / "blobs").mkdir()
    given = f"hub/{SNAPSHOT}"
    hint = finding(check_json(tmp_path, given, "--target-vocab-size", str(T)), "DSP302")["hint"]
    (argv,) = commands(hint)
    assert argv[2] == given and values(argv, "--out") == ["my-draft-fixed"]
    before = sorted(p.name for p in snapshot.iterdir())
    assert_repairs(argv, tmp_path, "DSP302")
    assert sorted(p.name for p in snapshot.iterdir()) == before and not (snapshot.parent / f"{snapshot.name}-fixed").exists()


def test_the_shard_note_names_the_folder_check(tmp_path: Path) -> None:
    """DSP230 (a shard was given): the suggested check of the folder runs, with the same target and runtimes."""
    make_checkpoint(tmp_path / "draft", draft_vocab=32, d2t=True, t2d=True, shards=2)
    doc = check_json(tmp_path, "draft/model-00001-of-00002.safetensors", "--target-vocab-size", str(T),
                     "--runtime", VLLM)
    (argv,) = commands(finding(doc, "DSP230")["hint"])
    assert argv == ["dspark-ckpt", "check", "draft", "--target-vocab-size", str(T), "--runtime", VLLM]
    result = run([*argv, "--format", "json"], tmp_path)
    assert result.returncode == 0, result.stdout
    assert "DSP230" not in {f["code"] for c in json.loads(result.stdout)["checkpoints"] for f in c["findings"]}


def _unescape_markdown(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def test_every_format_carries_the_same_command(tmp_path: Path) -> None:
    """One derivation, many renderers: the JSON hint's command is in the text, SARIF, GitHub, JUnit and Markdown."""
    BUILDS["padded"](tmp_path / "my draft")
    args = ("check", "my draft", "--target-vocab-size", str(T), "--runtime", "vllm==0.29.0", "--isolated")
    hint = finding(check_json(tmp_path, *args[1:]), "DSP302")["hint"]
    (argv,) = commands(hint)
    line = shlex.join(argv)
    assert line in hint

    def rendered(fmt: str) -> str:
        result = run_cli(*args, "--format", fmt, cwd=tmp_path, env={"COLUMNS": "1000"})
        assert result.returncode == 1, result.stderr
        return result.stdout

    assert line in rendered("text")
    sarif = json.loads(rendered("sarif"))
    assert any(line in r["message"]["text"] for r in sarif["runs"][0]["results"] if r["ruleId"] == "DSP302")
    assert any(line in a for a in rendered("github").splitlines() if a.startswith("::error") and "DSP302" in a)
    junit = ET.fromstring(rendered("junit"))
    assert any(line in (f.text or "") for f in junit.iter("failure"))
    assert any(line in _unescape_markdown(row) for row in rendered("markdown").splitlines() if "DSP302" in row)


def test_explain_keeps_the_placeholders_and_says_so(tmp_path: Path) -> None:
    result = run_cli("explain", "DSP305", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "`dspark-ckpt fix DRAFT --target-vocab-size T --strategy trim`" in result.stdout
    assert "DRAFT stands for the checkpoint and T for the target vocab size" in result.stdout


def test_verify_hints_are_filled_in_too(tmp_path: Path) -> None:
    """verify's own findings (DSP601: a padded row wins the argmax) carry the same runnable command."""
    pytest.importorskip("torch")
    BUILDS["padded"](tmp_path / "my draft")
    result = run_cli("verify", "my draft", "--target-vocab-size", str(T), "--runtime", "vllm==0.30.0",
                     "--probe", "256", "--format", "json", "--isolated", cwd=tmp_path)
    assert result.returncode == 0, result.stderr  # warnings only: DSP305, DSP601
    (argv,) = commands(finding(json.loads(result.stdout), "DSP601")["hint"])
    assert argv[2] == "my draft" and values(argv, "--for") == ["vllm==0.30.0"]
    assert_repairs(argv, tmp_path, "DSP305")
