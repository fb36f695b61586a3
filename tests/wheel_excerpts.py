"""A release's `.py` files as the citation tests read them: from its wheel (the upstream tier) or from the recorded
answers to what they asked of it (tests/data/wheel_excerpts/PACKAGE-X.json, the hermetic suite).

The tests that hold dspark-ckpt's citations, quoted messages and tables against a release ask its files a few kinds
of question, each a method of `Wheel`: does this file exist, what is line N (or lines N-M), does it contain this
text, where is the first line that contains (starts with, is) this text, the whole text of a small file, the string
literals of a file (as the regexes `templates` matches messages with), the annotated fields of a class. `WheelTree`
answers from an extracted wheel (tests/released_sources.py); `Excerpt` from the recording, and fails on a question
it was never asked (a recording answers nothing it did not see, so a check cannot pass for want of a line).

Recording is the upstream tier run with DSPARK_CKPT_RECORD=1: the tests' `release` variants ask the wheel, and
every question and answer is merged into the release's file (written at the end of the session, one question a
line, so a re-recording's diff is the upstream change). Without it, `test_each_recorded_answer_is_the_wheels`
(tests/deploy/test_deploy_citations.py) asks the wheel every recorded question again and fails on a difference.

    DSPARK_CKPT_RECORD=1 python -m pytest -m upstream -n 0 tests/deploy/test_deploy_citations.py \\
        tests/unit/test_eagle3_aux_citations.py tests/producers/test_speculators_agreement.py
"""

from __future__ import annotations

import ast
import atexit
import json
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "wheel_excerpts"
RECORD_ENV = "DSPARK_CKPT_RECORD"
HOW = ("in", "startswith", "is", "line")  # a line contains the text, starts with it, is it stripped, or is it


def literal_patterns(text: str) -> list[str]:
    """Every string literal of a file, implicit concatenation and f-strings included, as a regex source ({...} ->
    .+?); f-strings with less than 20 characters of literal text and plain strings of 20 or fewer are left out
    (they would match anything)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.JoinedStr):
            literal = [v.value for v in node.values if isinstance(v, ast.Constant)]
            if sum(len(str(v)) for v in literal) < 20:
                continue
            found.append("".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".+?" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 20:
            found.append(re.escape(node.value))
    return found


def class_fields(text: str, name: str) -> list[str]:
    """The names a class annotates in its body (a dataclass's fields), in order."""
    tree = ast.parse(text)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    return [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]


class WheelTree:
    """The answers, from an extracted wheel."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @cache  # noqa: B019 - a handful of trees per session
    def _lines(self, path: str) -> list[str]:
        return (self.root / path).read_text().splitlines()

    def exists(self, path: str) -> bool:
        return (self.root / path).is_file()

    def lines(self, path: str, first: int, last: int) -> list[str]:
        found = self._lines(path)
        assert 1 <= first <= last <= len(found), (path, first, last, len(found))
        return found[first - 1:last]

    def has(self, path: str, text: str) -> bool:
        return text in (self.root / path).read_text()

    def count(self, path: str, text: str) -> int:
        return (self.root / path).read_text().count(text)

    def find(self, path: str, text: str, how: str = "in", start: int = 1) -> int | None:
        test = {"in": lambda line: text in line, "startswith": lambda line: line.startswith(text),
                "is": lambda line: line.strip() == text, "line": lambda line: line == text}[how]
        return next((i for i, line in enumerate(self._lines(path), 1) if i >= start and test(line)), None)

    def text(self, path: str) -> str:
        return (self.root / path).read_text()

    @cache  # noqa: B019 - a handful of trees per session
    def _literals(self, path: str) -> list[re.Pattern[str]]:
        return [re.compile(p, re.DOTALL) for p in literal_patterns((self.root / path).read_text())]

    def matching(self, path: str, sample: str) -> list[str]:
        return [t.pattern for t in self._literals(path) if t.fullmatch(sample)]

    def fields(self, path: str, name: str) -> list[str]:
        return class_fields((self.root / path).read_text(), name)


QUESTIONS = ("exists", "lines", "has", "count", "find", "text", "matching", "fields")


def _key(question: str, args: tuple[Any, ...]) -> str:
    return f"{question} {json.dumps(list(args))}"


class Excerpt:
    """The answers, from the recording of `package` `version`."""

    def __init__(self, package: str, version: str) -> None:
        path = DATA / f"{package}-{version}.json"
        assert path.is_file(), f"no recording {path.name}: record it (tests/wheel_excerpts.py)"
        self.name, self.answers = path.name, json.loads(path.read_text())["answers"]

    def ask(self, question: str, *args: Any) -> Any:
        key = _key(question, args)
        assert key in self.answers, f"{self.name} does not hold the answer to {key}: record it (tests/wheel_excerpts.py)"
        return self.answers[key]


class Recorder:
    """Asks the wheel and keeps each answer, for DSPARK_CKPT_RECORD=1 (merged into the release's file at exit)."""

    def __init__(self, package: str, version: str, tree: WheelTree) -> None:
        self.path, self.tree = DATA / f"{package}-{version}.json", tree
        self.asked: dict[str, Any] = {}

    def ask(self, question: str, *args: Any) -> Any:
        answer = getattr(self.tree, question)(*args)
        self.asked[_key(question, args)] = answer
        return answer

    def write(self) -> None:
        if not self.asked:
            return
        held = json.loads(self.path.read_text())["answers"] if self.path.is_file() else {}
        held.update(self.asked)
        DATA.mkdir(parents=True, exist_ok=True)
        self.path.write_text(dump(self.path.stem, held))


def dump(name: str, answers: dict[str, Any]) -> str:
    rows = ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(answers.items()))
    return f'{{"release": {json.dumps(name)}, "answers": {{\n{rows}\n}}}}\n'


class Wheel:
    """One release's files, asked through a source: an Excerpt (recorded) or the wheel (WheelTree, or a Recorder
    around it under DSPARK_CKPT_RECORD=1)."""

    def __init__(self, source: Any) -> None:
        self.source = source

    def exists(self, path: str) -> bool:
        found: bool = self.source.ask("exists", path)
        return found

    def lines(self, path: str, first: int, last: int) -> list[str]:
        found: list[str] = self.source.ask("lines", path, first, last)
        return found

    def line(self, path: str, number: int) -> str:
        return self.lines(path, number, number)[0]

    def has(self, path: str, text: str) -> bool:
        found: bool = self.source.ask("has", path, text)
        return found

    def count(self, path: str, text: str) -> int:
        found: int = self.source.ask("count", path, text)
        return found

    def find(self, path: str, text: str, how: str = "in", start: int = 1) -> int | None:
        assert how in HOW, how
        found: int | None = self.source.ask("find", path, text, how, start)
        return found

    def text(self, path: str) -> str:
        found: str = self.source.ask("text", path)
        return found

    def matching(self, path: str, sample: str) -> list[str]:
        """The string literals of the file (as regexes: literal_patterns) that match all of `sample`."""
        found: list[str] = self.source.ask("matching", path, sample)
        return found

    def fields(self, path: str, name: str) -> list[str]:
        found: list[str] = self.source.ask("fields", path, name)
        return found


_RECORDERS: dict[tuple[str, str], Recorder] = {}


def _write_recorders() -> None:
    for recorder in _RECORDERS.values():
        recorder.write()


def wheel(package: str, version: str, source: str) -> Wheel:
    """`package` `version`'s files: "recorded" (the hermetic suite) or "release" (its wheel: the upstream tier)."""
    if source == "recorded":
        return _recorded(package, version)
    assert source == "release", source
    from released_sources import release_tree

    tree = WheelTree(release_tree(package, version))
    if os.environ.get(RECORD_ENV) != "1":
        return Wheel(TreeAsker(tree))
    if not _RECORDERS:
        atexit.register(_write_recorders)
    recorder = _RECORDERS.setdefault((package, version), Recorder(package, version, tree))
    return Wheel(recorder)


@cache
def _recorded(package: str, version: str) -> Wheel:
    return Wheel(Excerpt(package, version))


class TreeAsker:
    """WheelTree's methods as `ask`, the one call Wheel makes of its source."""

    def __init__(self, tree: WheelTree) -> None:
        self.tree = tree

    def ask(self, question: str, *args: Any) -> Any:
        return getattr(self.tree, question)(*args)


def recorded_questions(package: str, version: str) -> dict[str, Any]:
    """Every question the recording of `package` `version` answers, and its answer."""
    path = DATA / f"{package}-{version}.json"
    answers: dict[str, Any] = json.loads(path.read_text())["answers"] if path.is_file() else {}
    return answers


def ask_again(tree: WheelTree, key: str) -> Any:
    """A recorded question asked of the wheel."""
    question, _, args = key.partition(" ")
    assert question in QUESTIONS, key
    return getattr(tree, question)(*json.loads(args))
