"""Where a report may be written (issue 22, item 1): never over an input, a device, a FIFO, a folder, a process's
stream or through a dangling link; and when refused, nothing anywhere is touched."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
from conftest import make_checkpoint, run_cli

T96 = ("--target-vocab-size", "96", "--isolated")
FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")


def digest(folder: Path) -> dict[str, str]:
    """Every entry of a folder (links as links), so "nothing touched" means nothing."""
    out: dict[str, str] = {}
    for p in sorted(folder.rglob("*")):
        if p.is_symlink():
            out[str(p)] = "link:" + os.readlink(p)
        elif p.is_file():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[str(p)] = "dir" if p.is_dir() else f"mode:{stat.S_IFMT(p.lstat().st_mode)}"
    return out


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    make_checkpoint(tmp_path / "draft", vocab=96, draft_vocab=96, target_vocab=96)
    make_checkpoint(tmp_path / "sharded", vocab=96, draft_vocab=96, target_vocab=96, shards=2)
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "config.json").write_text(json.dumps({"vocab_size": 96}))
    (tmp_path / "out").mkdir()
    return tmp_path


def refused(ws: Path, code: str, *args: str, env: dict[str, str] | None = None, draft: str = "draft") -> None:
    before = digest(ws)
    r = run_cli("check", draft, *args, cwd=ws, env=env, timeout=30)
    assert r.returncode == 2, r.stderr
    assert f"[{code}]" in r.stderr
    assert r.stderr.count("error [") == 1
    assert digest(ws) == before  # nothing created, replaced or removed


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["model.safetensors", "config.json", "report.json", "."])
def test_a_report_into_the_checkpoint_is_refused_in_every_format(ws: Path, fmt: str, name: str) -> None:
    refused(ws, "DSP-E032" if name != "." else "DSP-E033", *T96, "--format", fmt, "-o", f"draft/{name}")


@pytest.mark.parametrize("name", ["model.safetensors.index.json", "model-00001-of-00002.safetensors"])
def test_a_report_over_a_sharded_checkpoints_index_or_shard_is_refused(ws: Path, name: str) -> None:
    refused(ws, "DSP-E032", *T96, "-o", f"sharded/{name}", draft="sharded")


def test_a_report_over_the_single_file_checked_or_its_config_is_refused(ws: Path) -> None:
    refused(ws, "DSP-E032", *T96, "--config", "draft/config.json", "-o", "draft/model.safetensors",
            draft="draft/model.safetensors")
    refused(ws, "DSP-E032", *T96, "--config", "draft/config.json", "-o", "draft/config.json",
            draft="draft/model.safetensors")


def test_a_report_over_the_target_is_refused(ws: Path) -> None:
    refused(ws, "DSP-E032", "--isolated", "--target", "target", "-o", "target/config.json")


@pytest.mark.parametrize("how", ["symlink-to-file", "symlink-to-folder", "hard-link", "folder-link-parent"])
def test_links_into_the_checkpoint_are_refused(ws: Path, how: str) -> None:
    out = ws / "out"
    if how == "symlink-to-file":
        (out / "r.json").symlink_to(ws / "draft" / "model.safetensors")
        path = "out/r.json"
    elif how == "symlink-to-folder":
        (out / "r.json").symlink_to(ws / "draft")
        path = "out/r.json"
    elif how == "hard-link":
        os.link(ws / "draft" / "config.json", out / "r.json")
        path = "out/r.json"
    else:
        (out / "via").symlink_to(ws / "draft")
        path = "out/via/new-report.json"
    refused(ws, "DSP-E032" if how != "symlink-to-folder" else "DSP-E033", *T96, "--format", "json", "-o", path)


def test_a_checkpoint_given_through_a_link_is_still_protected(ws: Path) -> None:
    (ws / "alias").symlink_to(ws / "draft")
    refused(ws, "DSP-E032", *T96, "-o", "draft/model.safetensors", draft="alias")


@pytest.mark.parametrize("path", ["/dev/null", "/dev/full", "/dev/zero", "/dev/stdout", "/dev/stderr",
                                  "/proc/self/fd/1", "/dev/fd/2"])
def test_devices_and_process_streams_are_never_replaced(ws: Path, path: str) -> None:
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    before = os.stat("/dev/null")
    refused(ws, "DSP-E033", *T96, "-o", path)
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_a_copy_of_a_device_node_is_refused(ws: Path) -> None:
    node = ws / "out" / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("mknod needs privileges")
    refused(ws, "DSP-E033", *T96, "-o", "out/null")
    assert stat.S_ISCHR(node.lstat().st_mode)


@pytest.mark.parametrize("kind", ["fifo", "socket", "folder", "link-to-fifo", "link-to-folder"])
def test_special_files_and_folders_are_refused_without_blocking(ws: Path, kind: str) -> None:
    out = ws / "out"
    if kind in ("fifo", "link-to-fifo"):
        os.mkfifo(out / "f")
    elif kind == "socket":
        import socket

        s = socket.socket(socket.AF_UNIX)
        s.bind(str(out / "f"))
        s.close()
    else:
        (out / "f").mkdir()
    if kind.startswith("link"):
        (out / "link").symlink_to(out / "f")
    refused(ws, "DSP-E033", *T96, "-o", "out/link" if kind.startswith("link") else "out/f")


@pytest.mark.parametrize("dangling", ["out/gone", "/nonexistent-dspark-dir/r.json", "out/self"])
def test_a_dangling_symlink_is_refused(ws: Path, dangling: str) -> None:
    link = ws / "out" / "r.json"
    link.symlink_to(link if dangling == "out/self" else ws / dangling if not dangling.startswith("/") else dangling)
    before = digest(ws)
    r = run_cli("check", "draft", *T96, "-o", "out/r.json", cwd=ws)
    assert r.returncode == 2 and ("[DSP-E034]" in r.stderr or "[DSP-E030]" in r.stderr), r.stderr
    assert digest(ws) == before and not (ws / "out" / "gone").exists()


def test_a_symlink_to_a_regular_file_outside_is_written_through(ws: Path) -> None:
    real = ws / "out" / "real.json"
    real.write_text("old")
    (ws / "link.json").symlink_to(real)
    r = run_cli("check", "draft", *T96, "--format", "json", "-o", "link.json", cwd=ws)
    assert r.returncode == 0, r.stderr
    assert (ws / "link.json").is_symlink() and json.loads(real.read_text())["schema_version"] == 1


def test_a_regular_file_is_replaced_and_a_new_one_created(ws: Path) -> None:
    (ws / "out" / "old.sarif").write_text("old")
    for name in ("old.sarif", "new.sarif"):
        r = run_cli("check", "draft", *T96, "--format", "sarif", "-o", f"out/{name}", cwd=ws)
        assert r.returncode == 0, r.stderr
        assert json.loads((ws / "out" / name).read_text())["version"] == "2.1.0"


# --- $GITHUB_STEP_SUMMARY: appended to, and held to the same rules ---

@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "dangling", "into-checkpoint", "link-into"])
def test_a_step_summary_that_is_not_a_regular_file_outside_is_refused_and_never_blocks(ws: Path, kind: str) -> None:
    out = ws / "out"
    path, code = str(out / "summary"), "DSP-E033"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = "/dev/null"
    elif kind == "folder":
        os.mkdir(path)
    elif kind == "dangling":
        os.symlink(out / "gone", path)
        code = "DSP-E034"
    elif kind == "into-checkpoint":
        path, code = str(ws / "draft" / "config.json"), "DSP-E032"
    else:
        os.symlink(ws / "draft" / "model.safetensors", path)
        code = "DSP-E032"
    before = digest(ws)
    r = run_cli("check", "draft", *T96, "--format", "github", cwd=ws, env={"GITHUB_STEP_SUMMARY": path}, timeout=30)
    assert r.returncode == 2 and f"[{code}]" in r.stderr, r.stderr
    assert digest(ws) == before


def test_a_refused_step_summary_also_stops_the_report_file(ws: Path) -> None:
    os.mkfifo(ws / "out" / "fifo")
    refused(ws, "DSP-E033", *T96, "--format", "github", "-o", "out/report.txt",
            env={"GITHUB_STEP_SUMMARY": str(ws / "out" / "fifo")})


def test_a_regular_step_summary_is_appended_to(ws: Path) -> None:
    summary = ws / "out" / "summary.md"
    summary.write_text("earlier step\n")
    r = run_cli("check", "draft", *T96, "--format", "github", cwd=ws, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.returncode == 0, r.stderr
    assert summary.read_text().startswith("earlier step\n") and len(summary.read_text()) > 20


# --- fix --out ---

def test_fix_out_through_a_dangling_symlink_is_refused(tmp_path: Path) -> None:
    make_checkpoint(tmp_path / "d", vocab=120, draft_vocab=120, target_vocab=96)
    (tmp_path / "fixed").symlink_to(tmp_path / "elsewhere")
    before = digest(tmp_path)
    r = run_cli("fix", "d", "--target-vocab-size", "96", "--isolated", "--out", "fixed", cwd=tmp_path)
    assert r.returncode == 2 and "[DSP-E082]" in r.stderr, r.stderr
    assert not (tmp_path / "elsewhere").exists() and digest(tmp_path) == before
