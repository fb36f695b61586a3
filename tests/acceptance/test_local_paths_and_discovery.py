"""Local paths first (a missing path-shaped name fails at once, without the network; an unambiguous repo id goes
to the Hub, saying so), `check DIR` finds the drafts below DIR and skips targets with a note, and `--runtime`
is fix's runtime selector as it is check's (`--for` stays its alias)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli
from listed import vllm_minors

from dspark_ckpt.model.families import target_architecture
from dspark_ckpt.sources.discover import MAX_DEPTH, discover

REPO = Path(__file__).parents[2]
DRAFT = str(REPO / "examples" / "inkling-small-dspark")
NO_NETWORK = {"HF_ENDPOINT": "http://127.0.0.1:9", "DSPARK_CKPT_HUB_RETRIES": "0", "HF_HUB_OFFLINE": "0"}


def target_folder(path: Path, arch: str = "Qwen2ForCausalLM") -> Path:
    folder = make_checkpoint(path, vocab=96, draft_vocab=None)
    config = json.loads((folder / "config.json").read_text())
    config.pop("markov_rank")
    config["architectures"] = [arch]
    (folder / "config.json").write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize("flag", ["--target", "checkpoint"])
@pytest.mark.parametrize("name", ["examples/nope", "./nope", "nope.json", "a/b/c", "~/nope-at-all", "nope/",
                                  "examples/nope.safetensors"])
def test_a_missing_path_shaped_name_fails_at_once_without_the_network(flag: str, name: str) -> None:
    args = ["check", DRAFT, "--target", name] if flag == "--target" else ["check", name, "--target-vocab-size", "96"]
    done = run_cli(*args, env=NO_NETWORK, cwd=REPO)
    assert done.returncode == 2 and "[DSP-E010]" in done.stderr, done.stderr
    assert "the Hub was asked" not in done.stderr and "cannot reach" not in done.stderr


def test_the_hint_says_why_it_was_taken_for_a_local_path() -> None:
    done = run_cli("check", DRAFT, "--target", "examples/nope", env=NO_NETWORK, cwd=REPO)
    assert "examples/ exists here" in done.stderr and "hf://examples/nope" in done.stderr


@pytest.mark.parametrize("flag", ["--target", "checkpoint"])
def test_an_unambiguous_repo_id_goes_to_the_hub_and_says_so(flag: str, tmp_path: Path) -> None:
    args = (["check", DRAFT, "--target", "some-org/some-target"] if flag == "--target"
            else ["check", "some-org/some-draft", "--target-vocab-size", "96"])
    done = run_cli(*args, env=NO_NETWORK, cwd=tmp_path)
    assert done.returncode == 2 and "[DSP-E054]" in done.stderr, done.stderr
    assert "is no local path, so the Hub was asked" in done.stderr


def test_hf_prefix_forces_the_hub_even_where_the_folder_exists() -> None:
    done = run_cli("check", DRAFT, "--target", "hf://examples/nope", env=NO_NETWORK, cwd=REPO)
    assert "[DSP-E054]" in done.stderr and "so the Hub was asked" not in done.stderr


def test_check_dir_finds_the_drafts_below_it_and_skips_targets(tmp_path: Path) -> None:
    root = tmp_path / "models"
    make_checkpoint(root / "b-draft", vocab=96, draft_vocab=96)
    make_checkpoint(root / "team" / "a-draft", vocab=96, draft_vocab=96)
    target_folder(root / "the-target")
    make_checkpoint(root / ".hidden" / "draft", vocab=96, draft_vocab=96)
    make_checkpoint(root / "__pycache__" / "draft", vocab=96, draft_vocab=96)
    # the releases that register Qwen3DSparkModel (registry.py @ v0.25.0 L597 first): an older one refuses it
    vllm = f"vllm>={vllm_minors('0.25.0')[0]}"
    done = run_cli("check", str(root), "--target-vocab-size", "96", "--runtime", vllm, "--format", "json")
    assert done.returncode == 0, done.stderr
    checked = [c["source"] for c in json.loads(done.stdout)["checkpoints"]]
    assert checked == [str(root / "b-draft"), str(root / "team" / "a-draft")]
    assert f"skipped {root / 'the-target'}: its config names a target model (Qwen2ForCausalLM)" in done.stderr
    quiet = run_cli("check", str(root), "--target-vocab-size", "96", "--runtime", vllm, "-q")
    assert "skipped" not in quiet.stderr


def test_discovery_never_follows_links_stops_at_checkpoints_and_is_bounded(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    outer = make_checkpoint(root / "outer", vocab=96, draft_vocab=96)
    make_checkpoint(outer / "inner", vocab=96, draft_vocab=96)  # inside a checkpoint: not a checkpoint of its own
    elsewhere = make_checkpoint(tmp_path / "elsewhere", vocab=96, draft_vocab=96)
    os.symlink(elsewhere, root / "link", target_is_directory=True)
    os.symlink(root, root / "loop", target_is_directory=True)
    deep = root
    for i in range(MAX_DEPTH + 2):
        deep = deep / f"d{i}"
    make_checkpoint(deep, vocab=96, draft_vocab=96)
    found = discover(str(root))
    assert found.drafts == (str(outer),)


def test_a_folder_with_no_draft_below_it_is_still_not_a_checkpoint(tmp_path: Path) -> None:
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    done = run_cli("check", str(tmp_path / "empty"), "--target-vocab-size", "96")
    assert done.returncode == 2 and "[DSP-E012]" in done.stderr
    target_folder(tmp_path / "only-targets" / "t")
    done = run_cli("check", str(tmp_path / "only-targets"), "--target-vocab-size", "96", "--format", "json")
    assert "skipped" in done.stderr and done.returncode != 0


def test_a_glob_over_drafts_and_targets_checks_the_drafts(tmp_path: Path) -> None:
    drafts = [make_checkpoint(tmp_path / name, vocab=96, draft_vocab=96) for name in ("a", "c")]
    target = target_folder(tmp_path / "b")
    done = run_cli("check", *map(str, sorted([*drafts, target])), "--target-vocab-size", "96", "--runtime", "vllm",
                   "--format", "json")
    assert [c["source"] for c in json.loads(done.stdout)["checkpoints"]] == list(map(str, drafts))
    assert f"skipped {target}" in done.stderr
    alone = run_cli("check", str(target), "--target-vocab-size", "96", "--format", "json")  # named alone: checked
    assert [c["source"] for c in json.loads(alone.stdout)["checkpoints"]] == [str(target)]


@pytest.mark.parametrize("config, expected", [
    ({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}, "Qwen2ForCausalLM"),
    ({"architectures": ["Qwen3OmniMoeForConditionalGeneration"]}, "Qwen3OmniMoeForConditionalGeneration"),
    ({"architectures": ["LlamaForCausalLM"], "draft_vocab_size": 32000}, None),  # an EAGLE head as LlamaForCausalLM
    ({"architectures": ["LlamaForCausalLM"], "eagle_config": {}}, None),
    ({"architectures": ["LlamaForCausalLMEagle3"]}, None),
    ({"architectures": ["Eagle3DeepseekV2ForCausalLM"]}, None),
    ({"architectures": ["DFlashDraftModel"]}, None),
    ({"architectures": ["MedusaModel"]}, None),
    ({"architectures": ["Qwen3ForCausalLM"], "model_type": "speculators"}, None),
    ({"architectures": ["DeepSeekMTPModel"]}, None),
    ({"model_type": "qwen2"}, None),  # no architectures: check judges it
    ({"architectures": "Qwen2ForCausalLM"}, None),  # not a list: check reports the config
    ({"architectures": ["SomethingElse"]}, None),  # not a model class name
])
def test_target_architecture(config: dict[str, object], expected: str | None) -> None:
    assert target_architecture(config) == expected


def test_runtime_is_fixs_selector_and_for_its_alias(tmp_path: Path) -> None:
    runs = []
    for flag in ("--runtime", "--for"):
        draft = make_checkpoint(tmp_path / flag.strip("-") / "draft", vocab=100, draft_vocab=100, target_vocab=96)
        done = run_cli("fix", str(draft), "--target-vocab-size", "96", flag, "vllm==0.30.0", "--dry-run",
                       "--format", "json")
        assert done.returncode in (0, 1), done.stderr
        runs.append(json.loads(done.stdout.replace(f"/{flag.strip('-')}/", "/X/")))
    assert runs[0] == runs[1]
    assert runs[0]["checkpoints"][0]["runtimes"] == ["vllm==0.30.0"]
