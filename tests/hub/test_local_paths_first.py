"""Local paths first, everywhere a source is resolved (draft arguments of check, fix and verify, --target, a
settings file's target): a missing name shaped like a local path is DSP-E010 at once and the Hub hears nothing; an
`org/name` whose `org/` is no folder here still goes to the Hub (a real FakeHub on 127.0.0.1), and says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_checkpoint

from hub.conftest import cli, publish

# Each shape that makes a missing name a local path (the project below has a `drafts/` folder).
PATH_SHAPED = ["drafts/typo", "./nope", "../nope", "/nope/at/all", "~/nope", "org\\name", "org/name/",
               "a/b/c", "org/name.json", "org/name.safetensors"]


def project(tmp_path: Path) -> Path:
    """A working folder holding one draft (`drafts/good`), one target (`targets/t`) and nothing else."""
    root = tmp_path / "project"
    make_checkpoint(root / "drafts" / "good", vocab=96, draft_vocab=96)
    (root / "targets" / "t").mkdir(parents=True)
    (root / "targets" / "t" / "config.json").write_text(json.dumps({"architectures": ["X"], "vocab_size": 96}))
    return root


def settings(root: Path, target: str) -> None:
    (root / "pyproject.toml").write_text(f'[tool.dspark-ckpt]\ntarget = "{target}"\n')


COMMANDS = {
    "check draft": lambda name: ["check", name, "--target-vocab-size", "96"],
    "check --target": lambda name: ["check", "drafts/good", "--target", name],
    "fix draft": lambda name: ["fix", name, "--target-vocab-size", "96"],
    "fix --dry-run draft": lambda name: ["fix", name, "--target-vocab-size", "96", "--dry-run"],
    "fix --target": lambda name: ["fix", "drafts/good", "--target", name, "--dry-run"],
    "verify draft": lambda name: ["verify", name, "--target-vocab-size", "96"],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", PATH_SHAPED)
def test_a_missing_path_shaped_name_is_dsp_e010_and_the_hub_hears_nothing(tmp_path, hub, command, name):
    root = project(tmp_path)
    run = cli(hub, tmp_path, *COMMANDS[command](name), cwd=root)
    assert run.returncode == 2 and "[DSP-E010]" in run.stderr, run.stderr
    assert f"{name}: no such file or directory" in run.stderr
    assert "the Hub was asked" not in run.stderr
    assert hub.count() == 0


@pytest.mark.parametrize("name", ["drafts/typo", "./nope", "org/name.json", "a/b/c"])
def test_a_settings_files_missing_target_is_dsp_e010_and_the_hub_hears_nothing(tmp_path, hub, name):
    root = project(tmp_path)
    settings(root, name)
    run = cli(hub, tmp_path, "check", "drafts/good", cwd=root)
    assert run.returncode == 2 and "[DSP-E010]" in run.stderr, run.stderr
    assert hub.count() == 0


def test_the_hint_says_why_and_names_what_is_there(tmp_path, hub):
    root = project(tmp_path)
    run = cli(hub, tmp_path, "check", "drafts/god", "--target-vocab-size", "96", cwd=root)
    assert "drafts/ exists here, so drafts/god was taken for a local path" in run.stderr
    assert "write hf://drafts/god" in run.stderr and "did you mean drafts/good?" in run.stderr
    run = cli(hub, tmp_path, "check", "drafts/zzzzzz", "--target-vocab-size", "96", cwd=root)
    assert "drafts/ holds good/" in run.stderr
    run = cli(hub, tmp_path, "check", "org/name.json", "--target-vocab-size", "96", cwd=root)
    assert "it names a .json file, so org/name.json was taken for a local path" in run.stderr
    assert "org/ exists" not in run.stderr  # the reason given is the one that applied
    assert hub.count() == 0


def test_an_org_name_whose_org_is_no_folder_here_goes_to_the_hub(tmp_path, hub):
    root = project(tmp_path)
    publish(hub, "drafts-org/draft", make_checkpoint(tmp_path / "d", vocab=96, draft_vocab=96))
    hub.add_repo("target-org/target", {"config.json": json.dumps({"architectures": ["X"], "vocab_size": 96}).encode()})
    # every vLLM release that registers Qwen3DSparkModel (registry.py @ v0.25.0 L597 first): an older one refuses it
    run = cli(hub, tmp_path, "check", "drafts-org/draft", "--target", "target-org/target", "--runtime", "vllm>=0.25.0",
              "--format", "json", cwd=root)
    assert run.returncode == 0, run.stderr
    [doc] = json.loads(run.stdout)["checkpoints"]
    assert doc["source"] == "drafts-org/draft" and "target-org/target@" in doc["target_vocab_source"]
    asked = hub.count()
    assert asked > 0
    settings(root, "target-org/target")  # a settings file's target: the same rule, relative to its folder
    run = cli(hub, tmp_path, "check", "drafts/good", "--runtime", "vllm>=0.25.0", "--format", "json", cwd=root)
    assert run.returncode == 0, run.stderr
    assert "target-org/target@" in json.loads(run.stdout)["checkpoints"][0]["target_vocab_source"]
    assert hub.count() > asked
    run = cli(hub, tmp_path, "fix", "drafts-org/draft", "--target-vocab-size", "96", "--dry-run", cwd=root)
    assert "[DSP-E010]" not in run.stderr and run.returncode in (0, 1), run.stderr


def test_a_missing_org_says_the_hub_was_asked(tmp_path, hub):
    root = project(tmp_path)
    run = cli(hub, tmp_path, "check", "no-org/no-draft", "--target-vocab-size", "96", cwd=root)
    assert run.returncode == 2 and "no-org/no-draft is no local path, so the Hub was asked" in run.stderr
    assert hub.count() > 0


def test_fix_and_verify_refuse_a_hub_repo_they_cannot_write_or_load(tmp_path, hub):
    root = project(tmp_path)
    run = cli(hub, tmp_path, "fix", "some-org/draft", "--target-vocab-size", "96", cwd=root)
    assert run.returncode == 2 and "[DSP-E062]" in run.stderr and "is no local path but a Hub repo id" in run.stderr
    run = cli(hub, tmp_path, "verify", "some-org/draft", "--target-vocab-size", "96", cwd=root)
    assert run.returncode == 2 and "[DSP-E042]" in run.stderr
    assert hub.count() == 0
