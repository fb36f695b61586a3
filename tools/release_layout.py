"""The writer of runtimes/release_data (runtimes/release_store.py says the layout): a release's record, as
tools/release_model.py and tools/sglang_release_model.py build it, split into behaviour files and citations, each
class's behaviour file stored only in the first release of a run of releases that behave alike.

A release is compared (--check) by what it says, whatever folder holds each behaviour file; writing one release
lays out its whole runtime again, so the files are the same whichever order releases were generated in (a release
regenerated with another behaviour gives its successors their own copy, or takes theirs).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from dspark_ckpt.runtimes.release import release_key
from dspark_ckpt.runtimes.release_store import CITATIONS_FILE, DATA, RELEASE_FILE, citation_text, split

# Files of a release's folder that another maintainer command writes (tools/release_lines.py: the rules' citations
# and SpeculativeConfig's columns; tools/probe_first_step.py: SGLang's DSpark first draft step): the layout neither
# compares nor removes them.
OTHER_COMMANDS = frozenset({"lines.json", "spec.json", "first_step.json", "config_rewrites.json", "eagle_renames.json"})


def text(doc: Any) -> str:
    return json.dumps(doc, indent=1) + "\n"


@dataclass(frozen=True)
class Release:
    """One release's data as it reads, wherever it is stored: release.json less `architectures`, each class's
    behaviour file (its text), and each class's citations (pointer -> line)."""

    head: dict[str, Any]
    behaviour: dict[str, str]
    citations: dict[str, dict[str, int]]

    def differences(self, other: Release) -> list[str]:
        """The names (release.json, citations of X, X.json) that differ from `other`'s."""
        out = [] if self.head == other.head else [RELEASE_FILE]
        for name in sorted(set(self.behaviour) | set(other.behaviour)):
            if self.behaviour.get(name) != other.behaviour.get(name):
                out.append(f"{name}.json")
            if self.citations.get(name) != other.citations.get(name):
                out.append(f"{CITATIONS_FILE} of {name}")
        return out


def from_record(record: dict[str, Any]) -> Release:
    """A release as the generator built it (every `where` a file:line)."""
    behaviour, citations = {}, {}
    for name, arch in sorted(record["architectures"].items()):
        doc, lines = split(arch)
        behaviour[name], citations[name] = text(doc), lines
    return Release({k: v for k, v in record.items() if k != "architectures"}, behaviour, citations)


def read(folder: Path) -> Release | None:
    """A release as its committed folder says (None: no release.json); a behaviour file another release holds is
    read from that release's folder beside it."""
    if not (folder / RELEASE_FILE).is_file():
        return None
    doc = json.loads((folder / RELEASE_FILE).read_text(encoding="utf-8"))
    cited = folder / CITATIONS_FILE
    citations = json.loads(cited.read_text(encoding="utf-8")) if cited.is_file() else {}
    holders: dict[str, str] = doc.pop("architectures")
    own = doc["release"]
    behaviour = {name: ((folder if holder == own else folder.parent / f"{doc['runtime']}-{holder}")
                        / f"{name}.json").read_text(encoding="utf-8") for name, holder in sorted(holders.items())}
    return Release(doc, behaviour, {name: citations.get(name, {}) for name in behaviour})


def layout(releases: dict[str, Release]) -> dict[str, dict[str, str]]:
    """release -> its folder's files (name -> text), for one runtime's releases: a class's behaviour file in the
    first release of each run of consecutive releases (oldest first) that behave alike for it."""
    out: dict[str, dict[str, str]] = {}
    before: dict[str, tuple[str, str]] = {}  # class -> (the previous release's behaviour text, its holder)
    for release in sorted(releases, key=lambda r: (release_key(r), r)):  # 0.10.1 before 0.10.1.1 (one key)
        data = releases[release]
        files, holders = {}, {}
        for name, behaviour in data.behaviour.items():
            previous = before.get(name)
            holders[name] = previous[1] if previous is not None and previous[0] == behaviour else release
            if holders[name] == release:
                files[f"{name}.json"] = behaviour
        before = {name: (behaviour, holders[name]) for name, behaviour in data.behaviour.items()}
        files[RELEASE_FILE] = text({**data.head, "architectures": holders})
        files[CITATIONS_FILE] = citation_text({name: lines for name, lines in data.citations.items() if lines})
        out[release] = files
    return out


def owned(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("*.json") if p.name not in OTHER_COMMANDS}


def write_folder(folder: Path, files: dict[str, str]) -> list[Path]:
    """The files, in place of those the layout wrote there before (another command's files stay); the paths written
    or removed."""
    folder.mkdir(parents=True, exist_ok=True)
    touched = []
    for stale in sorted(owned(folder) - set(files)):
        (folder / stale).unlink()
        touched.append(folder / stale)
    for name, content in files.items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
            touched.append(path)
    return touched


def write(runtime: str, releases: dict[str, Release], data: Path = DATA) -> list[Path]:
    """Lay out `releases` (release -> data) with every other release of `runtime` committed under `data`; write the
    files that change and remove those no longer held. The paths written or removed."""
    known = {p.name.removeprefix(f"{runtime}-") for p in data.glob(f"{runtime}-*") if (p / RELEASE_FILE).is_file()}
    every = {r: found for r in known - set(releases) if (found := read(data / f"{runtime}-{r}")) is not None}
    every.update(releases)
    return [p for release, files in layout(every).items() for p in write_folder(data / f"{runtime}-{release}", files)]


def merged(held: Release, part: Release) -> Release:
    """The committed release with the classes `part` regenerated (`--only ... --merge`) in place of its own: their
    behaviour and citations, and whatever the part's run stubbed added to the release's list (in its order)."""
    stubbed = [*held.head.get("stubbed", []), *(s for s in part.head.get("stubbed", [])
                                                 if s not in held.head.get("stubbed", []))]
    return Release({**held.head, **{k: v for k, v in part.head.items() if k != "stubbed"}, "stubbed": stubbed},
                   {**held.behaviour, **part.behaviour}, {**held.citations, **part.citations})


def check(folder: Path, regenerated: Release) -> list[str]:
    """What differs between the release committed in `folder` and the regenerated one (empty: the same)."""
    held = read(folder)
    return ["(no committed release)"] if held is None else regenerated.differences(held)
