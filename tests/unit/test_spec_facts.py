"""runtimes/spec_facts.py: SpeculativeConfig's generated columns (spec.json), the behaviour changes and their
citations, and a release appended to VLLM_RELEASES with its generated files needing no other edit (issue 20)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dspark_ckpt.runtimes import release_lines, release_store, spec_facts, vllm_release, vllm_rows
from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.versions import VLLM_RELEASES

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))  # the generator's inputs: not in the package
import release_anchors as anchors
import release_changes

PACKAGE = ROOT / "dspark_ckpt"
APPENDED = "0.99.0"  # a made-up release: the newest listed release's files under another name


def _before(release: str) -> str | None:
    i = VLLM_RELEASES.index(release)
    return VLLM_RELEASES[i - 1] if i else None


@pytest.mark.parametrize("change", release_changes.CHANGES, ids=lambda c: c.since)
def test_each_change_holds_where_its_citations_appear_or_go(change: release_changes.Change) -> None:
    """A change's `since` is the release its anchors' bounds flip at: the generated lines cite it."""
    if change.since not in VLLM_RELEASES:
        assert release_key(change.since) > release_key(VLLM_RELEASES[-1])  # past the list: covers no release
        return
    before = _before(change.since)
    assert before is not None, "the first release read has no change: it is where the data starts"
    for key in change.appear:
        assert release_lines.cited(change.since, key) is not None and release_lines.cited(before, key) is None, key
    for key in change.gone:
        assert release_lines.cited(change.since, key) is None and release_lines.cited(before, key) is not None, key
    assert all(anchors.ANCHORS[key] for key in change.appear + change.gone)


def test_the_changes_are_in_order_and_each_shows_in_the_citations() -> None:
    sinces = [release_key(c.since) for c in release_changes.CHANGES]
    assert sinces == sorted(sinces) and len(set(sinces)) == len(sinces)
    assert all(c.appear or c.gone for c in release_changes.CHANGES)


def test_every_anchor_bound_inside_the_list_is_a_change() -> None:
    """A rule that appears or goes at a listed release is a behaviour change: the changelog names it there."""
    named = {(c.since, key) for c in release_changes.CHANGES for key in c.appear + c.gone}
    for key, anchor in anchors.ANCHORS.items():
        if not key.startswith("spec."):
            continue
        for bound, shift in ((anchor.since, 0), (anchor.until, 1)):
            if bound is None:
                continue
            # bounds are by minor (anchors.covers): a rule until 0.27.0 holds in 0.27.1 too
            at = bound if shift == 0 else next((v for v in VLLM_RELEASES if release_key(v, precision=2)
                                                > release_key(bound, precision=2)), None)
            if at in VLLM_RELEASES[1:]:
                assert (at, key) in named, f"{key} changes at {at}: add it to that release's Change"


def test_rows_are_built_on_first_use_and_kept() -> None:
    rules = vllm_release.RELEASE_RULES
    assert tuple(rules) == VLLM_RELEASES and len(rules) == len(VLLM_RELEASES)
    assert rules[VLLM_RELEASES[-1]] is rules[VLLM_RELEASES[-1]]
    with pytest.raises(KeyError):
        rules[APPENDED]  # not listed: no row


@pytest.mark.parametrize("release", VLLM_RELEASES)
def test_spec_json_is_as_the_tool_writes_it(release: str) -> None:
    """Each release's spec.json as tools/release_spec.py reads it from the wheel and tools/release_lines.py writes it
    (the upstream tier regenerates it from the wheel and compares: tests/producers/test_release_lines_data.py): the
    class's line, its fields, and every draft registered at a line of registry.py."""
    text = (release_store.DATA / f"vllm-{release}" / spec_facts.FILE_NAME).read_text()
    doc = json.loads(text)
    assert text == json.dumps(doc, indent=1) + "\n", "not as tools/release_lines.py writes it"
    spec = doc["speculative_config"]
    assert spec["file"] == "vllm/config/speculative.py" and re.fullmatch(r"L[1-9]\d*", spec["class_line"])
    assert spec["fields"] and len(set(spec["fields"])) == len(spec["fields"]), release
    assert spec_facts.drafts(release), release


def _copy_with_appended_release(tmp: Path) -> Path:
    """The package as a maintainer leaves it after appending APPENDED: the one list edited, the generated data
    written (here: the newest release's spec.json and lines.json under APPENDED's name, and registered_architectures
    .json as tools/registry_data.py writes it for a release whose registry.py equals the newest one's)."""
    newest = VLLM_RELEASES[-1]
    copy = tmp / "dspark_ckpt"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("release_data", "__pycache__"))
    data = copy / "runtimes" / "release_data"
    data.mkdir()
    for folder in (PACKAGE / "runtimes" / "release_data").iterdir():
        (data / folder.name).symlink_to(folder)
    (data / f"vllm-{APPENDED}").symlink_to(PACKAGE / "runtimes" / "release_data" / f"vllm-{newest}")
    versions = copy / "runtimes" / "versions.py"
    # the newest release closes VLLM_RELEASES' tuple, with or without a trailing comma and line break
    text, appended = re.subn(rf'"{re.escape(newest)}"(,?\s*\))', rf'"{newest}", "{APPENDED}"\1', versions.read_text())
    assert appended == 1
    versions.write_text(text)
    registry = copy / "runtimes" / "registered_architectures.json"
    doc = json.loads(registry.read_text())
    doc["vllm"]["releases"].append(APPENDED)
    for entry in doc["vllm"]["architectures"].values():
        where = entry["where"]
        for span in [s for s in where if s.rpartition("..")[2] == newest]:
            where[f"{span.partition('..')[0]}..{APPENDED}"] = where.pop(span)
    sys.path.insert(0, str(ROOT / "tools"))
    from registry_data import (
        render,  # tools/ is not a package; one architecture a line, as registered.py reads it
    )

    registry.write_text(render(doc))
    return tmp


CHECK_APPENDED = textwrap.dedent('''\
    import dataclasses, sys
    from dspark_ckpt.model.families import Family
    from dspark_ckpt.runtimes import releases, table, vllm_release
    new, old = sys.argv[1], sys.argv[2]
    assert vllm_release.VERSIONS[-1] == new and vllm_release.rules_for(new) is vllm_release.RELEASE_RULES[new]
    # the same generated data, so the same row (every behaviour flag follows from the files)
    assert vllm_release.RELEASE_RULES[new] == dataclasses.replace(vllm_release.RELEASE_RULES[old], version=new)
    assert vllm_release.nearest_rules(new) == (vllm_release.RELEASE_RULES[new], True)
    assert vllm_release.RELEASE_RULES[new].registers("Qwen3DSparkModel")
    for family in Family:
        row, before = table.contract_for("vllm", new, family), table.contract_for("vllm", old, family)
        if before is None or not table.covers(before, old):
            continue
        assert table.covers(row, new) and releases.assumed_from(row, new) is None, family
        assert row == dataclasses.replace(before, source=before.source.replace(f"-v{old}", f"-v{new}")), family
    print("ok")
''')


def test_a_release_appended_with_its_generated_files_needs_no_other_edit(tmp_path: Path) -> None:
    """VLLM_RELEASES plus one release whose wheel equals the newest one's, with only its generated files: its
    SpeculativeConfig row, build rules, registry and every family's contract row follow, without an edit of any
    other module; and the release-list tests pass on that tree."""
    tree = _copy_with_appended_release(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    run = subprocess.run([sys.executable, "-c", CHECK_APPENDED, APPENDED, VLLM_RELEASES[-1]], env=env,
                         capture_output=True, text=True, timeout=120, cwd=tree, check=False)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                            str(ROOT / "tests/unit/test_release_list.py")], env=env, capture_output=True,
                           text=True, timeout=300, cwd=tree, check=False)
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert str(tree) in subprocess.run([sys.executable, "-c", "import dspark_ckpt; print(dspark_ckpt.__file__)"],
                                       env=env, capture_output=True, text=True, cwd=tree, check=False).stdout
    assert vllm_rows.NEWEST == VLLM_RELEASES[-1]
