"""tools/release_lines.py's resolver on a small made-up release: each reach, `inside`, alternatives, `every`, the
decorated family, and the bounds that decide a rule is absent rather than moved."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))  # the generator's inputs: not in the package
from release_anchors import BRANCH, STATEMENT, Anchor, Decorated, Excluded

SOURCE = textwrap.dedent('''\
    import os


    def register(name):
        return lambda f: f


    class Config:
        size: int = 3

        def post_init(self):
            if self.size > 4:
                raise ValueError(
                    "size must be at most 4"
                )
            elif self.size < 0:
                self.size = 0
            value = compute(
                self.size,
            )
            arch = ["A"]
            arch = ["B"]


    @register("alpha")
    def update_alpha(config):
        pass


    @register("beta")
    def update_beta(config):
        pass
    ''')


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("release_lines_tool", ROOT / "tools" / "release_lines.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("release_lines_tool", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return _tool()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(SOURCE)
    return tmp_path


@pytest.mark.parametrize(("anchor", "lines"), [
    (Anchor("pkg/mod.py", r"^\s*size: int"), "L9"),
    (Anchor("pkg/mod.py", r"if self\.size > 4:", STATEMENT), "L12-17"),  # the `if` with its `elif`
    (Anchor("pkg/mod.py", r"if self\.size > 4:", BRANCH), "L12-15"),  # its first branch only
    (Anchor("pkg/mod.py", r"if self\.size > 4:", STATEMENT, through="at most 4"), "L12-15"),  # the raise holding it
    (Anchor("pkg/mod.py", r"value = compute\(", through=r"self\.size,"), "L18-19"),  # to that line
    (Anchor("pkg/mod.py", r"^\s*def post_init\(", STATEMENT, inside="Config"), "L11-22"),
    (Anchor("pkg/mod.py", (r"no such text", r"arch = \["), every=True), "L21, L22"),  # the second wording
    (Anchor("pkg/mod.py", r"^\s*pass", inside="update_beta"), "L32"),  # the search stays inside the def
    (Anchor("pkg/mod.py", r"^\s*pass", inside="update_gamma"), None),  # no such def: the release lacks the rule
    (Anchor("pkg/other.py", r"import"), None),  # no such file
])
def test_each_anchor_resolves_to_its_lines(tool: ModuleType, tree: Path, anchor: Anchor, lines: str | None) -> None:
    assert tool.resolve(anchor, tree) == lines


def test_the_decorated_family_is_every_registered_name(tool: ModuleType, tree: Path) -> None:
    assert tool.decorated(Decorated("pkg/mod.py", "register", "algos"), tree) == {"algos.alpha": "L26",
                                                                                  "algos.beta": "L31"}


def test_the_excluded_family_is_every_name_the_condition_leaves_alone(tool: ModuleType, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "spec.py").write_text(textwrap.dedent('''\
        _KEPT = "Kept2"


        def rewrite(self):
            if self.method == "x" and (
                "Kept1" not in self.config.architectures
                and _KEPT
                not in self.config.architectures
                and "Other" in self.config.names
            ):
                self.config.architectures = ["Rewritten"]
        '''))
    monkeypatch.setitem(tool.ANCHORS, "x.rewrite", Anchor("spec.py", r'if self\.method == "x" and \(', STATEMENT))
    assert tool.excluded(Excluded("x.rewrite", "keep"), tmp_path) == {"keep.Kept1": "L6", "keep.Kept2": "L7"}


def test_a_rule_found_outside_its_releases_or_missing_inside_them_stops(tool: ModuleType, tree: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tool, "SPECULATORS", Decorated("pkg/mod.py", "register", "algos"))
    monkeypatch.setattr(tool, "excluded", lambda family, tree: {})
    monkeypatch.setattr(tool, "ANCHORS", {"x.size": Anchor("pkg/mod.py", r"size: int", since="0.29.0")})
    with pytest.raises(tool.AnchorError, match=r"x\.size: found in vLLM 0\.28\.0"):
        tool.release_lines("0.28.0", tree)
    assert tool.release_lines("0.29.0", tree)["x.size"] == {"file": "pkg/mod.py", "lines": "L9"}
    monkeypatch.setattr(tool, "ANCHORS", {"x.gone": Anchor("pkg/mod.py", r"no such text", until="0.30.0")})
    with pytest.raises(tool.AnchorError, match=r"x\.gone: not found in vLLM 0\.30\.0"):
        tool.release_lines("0.30.0", tree)
    assert "x.gone" not in tool.release_lines("0.31.0", tree)  # after its last release: absent, as it should be
