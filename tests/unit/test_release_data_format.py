"""The generated release data is readable by a reviewer (issue 39, part 3): behaviour apart from line numbers,
no copy of a class that behaves as in the release before, nothing of the machine or the generator in any file,
and a `dspark-ckpt diff` that prints behaviour only."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from dspark_ckpt.runtimes import release_store
from dspark_ckpt.runtimes.release_diff import diff
from dspark_ckpt.runtimes.release_model import architecture_model, generated_releases, release_record
from dspark_ckpt.runtimes.release_store import CITATIONS_FILE, DATA, RELEASE_FILE, join, split

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import release_layout
from release_model import normalised

PACKAGE_DATA = [*sorted(DATA.glob("*/*.json")), DATA.parent / "registered_architectures.json"]
# What no data file may hold: where a machine keeps things, a version inside a URL, the generator's own names.
FORBIDDEN = {
    "a home folder": re.compile(r"/home/|/root/|/Users/|~/"),
    "a cache folder": re.compile(r"\.cache/|dspark-ckpt/probe"),
    "a temporary folder": re.compile(r"(?<![\w.])/tmp/|/var/folders/"),
    "an installation folder": re.compile(r"site-packages|dist-packages"),
    "a versioned URL": re.compile(r"https?://[^\s\"']*?/v?\d+(?:\.\d+)+/"),
    "the worker's module name": re.compile(r"__main__|release_model_worker|sglang_worker|release_worker"),
    "the probe's recording class": re.compile(r"\bRecorded[A-Z]\w*"),
}
RELEASES = [(runtime, r) for runtime in ("vllm", "sglang") for r in generated_releases(runtime)]


def _wheres(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "where":
                yield release_store.at(prefix, key), value
            else:
                yield from _wheres(value, release_store.at(prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _wheres(value, release_store.at(prefix, str(i)))


@pytest.mark.parametrize("what", sorted(FORBIDDEN))
def test_no_data_file_holds_machine_or_generator_strings(what: str) -> None:
    found = [f"{p.relative_to(DATA.parent)}: {m.group(0)!r}" for p in PACKAGE_DATA
             for m in [FORBIDDEN[what].search(p.read_text(encoding="utf-8"))] if m]
    assert not found, f"{what} in {len(found)} files (normalise it in tools/release_model.py): {found[:5]}"


def test_the_generator_writes_strings_as_any_machine_would() -> None:
    seen = {"message": "cannot import name 'x' (/root/.cache/dspark-ckpt/probe/vllm-0.28.0/vllm/v1/fa.py)",
            "other": "'RecordedPreTrainedConfig' object has no attribute 'head_dim'",
            "pydantic": "input_value=<__main__.Recording object>, input_type=Recording]\n    For further "
                        "information visit https://errors.pydantic.dev/2.14/v/dataclass_type\nnext",
            "url": "see https://docs.example.org/1.2.3/page",
            "list": ["/usr/lib/python3/site-packages/torch/nn.py"],
            "where": "vllm/model_executor/layers/linear.py:408",
            "command": "python tools/release_model.py 0.33.0"}
    assert normalised(seen) == {
        "message": "cannot import name 'x' (vllm/v1/fa.py)",
        "other": "'PreTrainedConfig' object has no attribute 'head_dim'",
        "pydantic": "input_value=<Recording object>, input_type=Recording]\nnext",
        "url": "see https://docs.example.org/page", "list": ["torch/nn.py"],
        "where": "vllm/model_executor/layers/linear.py:408",
        "command": "python tools/release_model.py 0.33.0"}


def test_split_and_join_give_the_record_back() -> None:
    outcome = {"raises": "E", "where": "vllm/l.py:408"}
    record = {"class": "X", "where": "vllm/m.py:12", "tensors": {"a/b": {"off_by_one": {"0+": outcome}}},
              "not_built": {"where": "?"}, "list": [{"where": "s.py:3"}]}
    behaviour, lines = split(record)
    assert lines == {"where": 12, "tensors/a~1b/off_by_one/0+/where": 408, "list/0/where": 3}
    assert "408" not in json.dumps(behaviour) and behaviour["not_built"] == {"where": "?"}
    assert join(behaviour, lines, "") == record


@pytest.mark.parametrize(("runtime", "release"), RELEASES, ids=lambda v: str(v))
def test_behaviour_files_hold_no_line_and_citations_hold_only_lines(runtime: str, release: str) -> None:
    """Every `where` of a behaviour file names a file of the wheel alone; the release's citations.json gives a
    line to `where`s of the behaviour files it reads, and to nothing else."""
    record = release_record(runtime, release)
    assert record is not None and record["schema"] == 2
    cited = json.loads((DATA / f"{runtime}-{release}" / CITATIONS_FILE).read_text(encoding="utf-8"))
    assert set(cited) <= set(record["architectures"])
    for name, holder in record["architectures"].items():
        doc = release_store.behaviour(runtime, holder, name)
        assert doc is not None, (release, name, holder)
        wheres = dict(_wheres(doc))
        assert not [w for w in wheres.values() if isinstance(w, str) and re.search(r":\d+$", w)], name
        lines = cited.get(name, {})
        assert set(lines) <= set(wheres), (name, sorted(set(lines) - set(wheres))[:3])
        assert all(isinstance(n, int) and n > 0 for n in lines.values())


@pytest.mark.parametrize("runtime", ["vllm", "sglang"])
def test_a_class_that_behaves_as_in_the_release_before_is_stored_once(runtime: str) -> None:
    """The folders are what tools/release_layout.py lays out for what they say: a behaviour file only in the
    first release of a run that behaves alike, the others pointing at it, and no file nobody reads."""
    releases = {r: release_layout.read(DATA / f"{runtime}-{r}") for r in generated_releases(runtime)}
    assert None not in releases.values()
    laid_out = release_layout.layout(releases)  # type: ignore[arg-type]
    for release, files in laid_out.items():
        folder = DATA / f"{runtime}-{release}"
        held = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.json")
                if p.name not in release_layout.OTHER_COMMANDS}
        assert held == files, f"{folder.name}: not as tools/release_layout.py lays it out"
    records = [release_record(runtime, r) for r in generated_releases(runtime)]
    holders = {(name, holder) for record in records if record
               for name, holder in record["architectures"].items()}
    stored = {(p.stem, p.parent.name.removeprefix(f"{runtime}-")) for p in DATA.glob(f"{runtime}-*/*.json")
              if p.name not in {RELEASE_FILE, CITATIONS_FILE, *release_layout.OTHER_COMMANDS}}
    assert stored == holders


def test_a_class_reads_its_own_release_s_lines_from_a_shared_file() -> None:
    """Two releases whose Qwen3 DSpark class behaves alike share its behaviour file, and each cites its own
    wheel's lines."""
    shared = [(r, h) for r in generated_releases("vllm")
              if (h := release_record("vllm", r)["architectures"].get("Qwen3DSparkModel")) not in (None, r)]
    release, holder = shared[-1]
    ours, theirs = architecture_model("vllm", release, "Qwen3DSparkModel"), \
        architecture_model("vllm", holder, "Qwen3DSparkModel")
    assert ours is not None and theirs is not None and ours is not theirs
    assert ours.tensors.keys() == theirs.tensors.keys()
    lines = json.loads((DATA / f"vllm-{release}" / CITATIONS_FILE).read_text())["Qwen3DSparkModel"]
    shared_file = json.loads((DATA / f"vllm-{holder}" / "Qwen3DSparkModel.json").read_text())
    assert ours.where == f"{shared_file['where']}:{lines['where']}"


def test_diff_prints_behaviour_and_no_line() -> None:
    found = diff("vllm", "0.32.0", "0.33.0")
    assert {"MedusaModel", "Step5MTP"} <= set(found.changed)
    assert ("registry", "MedusaModel") in {(c.scope, c.path) for c in found.changes if c.after is None}
    assert not [c for c in found.changes if re.search(r"\.py:\d+|\bL\d+", json.dumps(c.as_json()))]
    same = diff("vllm", "0.33.0", "0.33.0")
    assert same.changes == () and same.changed == ()
    assert diff("vllm", "0.27.1", "0.27.1").old_data == "0.27.1"


def test_diff_command_text_and_json() -> None:
    text = run_cli("diff", "vllm==0.32.0", "vllm==0.33.0")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("vllm 0.32.0 -> 0.33.0: ") and "  - MedusaModel: " in text.stdout
    doc = json.loads(run_cli("diff", "sglang==0.5.8", "sglang==0.5.9", "--format", "json").stdout)
    assert doc["command"] == "diff" and doc["schema_version"] == 1 and doc["changed"]
    assert set(doc["changes"][0]) == {"scope", "path", "before", "after"}
    refused = ((["vllm", "vllm==0.33.0"], "DSP-E001"), (["vllm==0.33.0", "sglang==0.5.9"], "DSP-E001"),
               (["vllm==0.1.0", "vllm==0.33.0"], "DSP-E007"))
    for argv, code in refused:
        done = run_cli("diff", *argv)
        assert done.returncode == 2 and code in done.stderr, done.stderr


def test_writing_one_release_lays_out_its_runtime_again(tmp_path: Path) -> None:
    """A regenerated release that now behaves otherwise takes its own copy, and so does the next release that
    had shared the earlier one's; what each release says is unchanged by the order of writing."""
    def release(version: str, x: str, y: str) -> release_layout.Release:
        head = {"schema": 2, "runtime": "vllm", "release": version}
        return release_layout.from_record({**head, "architectures": {
            "X": {"where": f"vllm/x.py:{len(version)}", "reads": [x]},
            "Y": {"where": "vllm/y.py:7", "reads": [y]}}})

    first = {"0.1.0": release("0.1.0", "a", "b"), "0.2.0": release("0.2.0", "a", "b"),
             "0.3.0": release("0.3.0", "a", "c")}
    release_layout.write("vllm", first, tmp_path)
    held = {p.relative_to(tmp_path).as_posix() for p in tmp_path.glob("*/[XY].json")}
    assert held == {"vllm-0.1.0/X.json", "vllm-0.1.0/Y.json", "vllm-0.3.0/Y.json"}
    holders = json.loads((tmp_path / "vllm-0.3.0" / RELEASE_FILE).read_text())["architectures"]
    assert holders == {"X": "0.1.0", "Y": "0.3.0"}
    again = release("0.2.0", "z", "b")
    release_layout.write("vllm", {"0.2.0": again}, tmp_path)
    held = {p.relative_to(tmp_path).as_posix() for p in tmp_path.glob("*/[XY].json")}
    assert held == {"vllm-0.1.0/X.json", "vllm-0.1.0/Y.json", "vllm-0.2.0/X.json", "vllm-0.3.0/X.json",
                    "vllm-0.3.0/Y.json"}
    assert release_layout.read(tmp_path / "vllm-0.2.0") == again
    assert release_layout.read(tmp_path / "vllm-0.3.0") == first["0.3.0"]
    assert release_layout.check(tmp_path / "vllm-0.3.0", first["0.3.0"]) == []
    assert release_layout.check(tmp_path / "vllm-0.1.0", again) == ["release.json", "X.json"]


def test_merging_regenerated_classes_keeps_every_other_class(tmp_path: Path) -> None:
    """`release_model.py V --only A --merge`: the committed release with A's behaviour and citations replaced, every
    other class and the head as they were, and what the partial run stubbed added once to the release's list."""
    head = {"schema": 2, "runtime": "vllm", "release": "0.1.0", "stubbed": ["op a"]}
    held = release_layout.from_record({**head, "architectures": {
        "A": {"where": "vllm/a.py:1", "not_built": {"type": "E", "message": "m", "where": "vllm/a.py:2"}},
        "B": {"where": "vllm/b.py:3", "reads": ["x"]}}})
    part = release_layout.from_record({**head, "stubbed": ["op a", "op b"], "architectures": {
        "A": {"where": "vllm/a.py:5", "reads": ["y"]}}})
    whole = release_layout.merged(held, part)
    assert whole.behaviour == {"A": part.behaviour["A"], "B": held.behaviour["B"]}
    assert whole.citations == {"A": part.citations["A"], "B": held.citations["B"]}
    assert whole.head["stubbed"] == ["op a", "op b"]
    assert whole.differences(held) == ["release.json", "A.json", "citations.json of A"]


VLLM_STEPS = sorted(DATA.glob("vllm-*/first_step.json"))


@pytest.mark.parametrize("path", VLLM_STEPS, ids=[p.parent.name for p in VLLM_STEPS])
def test_a_vllm_first_step_file_is_lined_and_each_cell_reads_alone(path: Path) -> None:
    """vLLM's first_step.json holds a cell a line (release_store.lined_text), as the probe writes it, so that check
    parses only the cells a draft asks for: each read alone is the whole document's, and no other is read."""
    text = path.read_text(encoding="utf-8")
    doc = json.loads(text)
    assert release_store.lined_text(doc, "cells") == text  # what tools/probe_vllm_first_step.py writes
    runtime, _, release = path.parent.name.partition("-")
    head = release_store.lined_head(runtime, release, path.name, "cells")
    assert head == {k: v for k, v in doc.items() if k != "cells"}
    names = sorted(doc["cells"])
    for name in (names[0], names[len(names) // 2], names[-1]):
        assert release_store.lined_entry(runtime, release, path.name, "cells", name) == doc["cells"][name]
        assert release_store.lined_prefixed(runtime, release, path.name, "cells", name.split("-")[0] + "-")
    assert release_store.lined_entry(runtime, release, path.name, "cells", "no-such-cell") is None
    assert not release_store.lined_prefixed(runtime, release, path.name, "cells", "no-such-family-")
    # a key of the head is not an entry
    assert not release_store.lined_prefixed(runtime, release, path.name, "cells", "relations")


def test_lined_text_round_trips_awkward_names_and_values() -> None:
    doc = {"b": [1, {"x": None}], "a": "h\u00e9", "cells": {'q"uote': {"t": "a\nb"}, "plain": 1, "\\back": [2]}}
    text = release_store.lined_text(doc, "cells")
    assert json.loads(text) == doc
    data = text.encode()
    for name, value in doc["cells"].items():
        assert release_store.entry(data, name) == value
