"""In-memory stand-in for the Hugging Face Hub, served on 127.0.0.1 (stdlib only).

Pointing huggingface_hub 2.4.0 (httpx2-based) at it
---------------------------------------------------
huggingface_hub copies env vars into ``huggingface_hub.constants`` AT IMPORT TIME (ENDPOINT,
HUGGINGFACE_CO_URL_TEMPLATE, HF_HOME/HF_HUB_CACHE/HF_TOKEN_PATH, HF_HUB_OFFLINE, HF_HUB_DISABLE_XET...)
and ``huggingface_hub.hf_api.api`` (behind the module-level ``model_info``/``create_commit``...)
freezes its endpoint then too. So setting ``HF_ENDPOINT`` after ``import huggingface_hub`` does nothing.

* Subprocess (simplest, exact): ``env=hub.subprocess_env(hf_home, token=...)``, i.e.
  HF_ENDPOINT=<hub.endpoint> HF_HOME=<tmp> HF_HUB_DISABLE_TELEMETRY=1 HF_HUB_DISABLE_XET=1
  NO_PROXY=127.0.0.1,localhost [HF_TOKEN=...] [HF_HUB_OFFLINE=1]; HF_TOKEN is read per call.
* In-process (pytest): ``hub.client_env(monkeypatch, tmp_path / "hf")`` patches those constants,
  ``hf_api.api.endpoint`` and the env, and drops the shared httpx2 client. Passing
  ``endpoint=hub.endpoint`` explicitly (``HfApi(endpoint=...)``, ``hf_hub_download(..., endpoint=...)``)
  also works without patching ENDPOINT, but cache dir / token path / offline flag still come from constants.
  Offline mid-test: ``monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)``.
* HF_HUB_DISABLE_XET=1 is required for LFS uploads: with hf_xet installed they would go through the
  Xet CAS protocol (``/api/models/{repo}/xet-write-token/...``), which this fake does not speak.
  Downloads never use Xet here (the server sends no X-Xet-* headers).
* Over plain http the client's "401 on /api/... means RepoNotFound" heuristic (https-only regex) is
  off, so this server always sends X-Error-Code (RepoNotFound/RevisionNotFound/EntryNotFound/GatedRepo).

Request log: ``hub.requests`` holds ``Request(method, path, range, status, bytes)`` (raw
percent-encoded path without query; bytes = body bytes sent). Headers are never stored/logged.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple
from urllib.parse import parse_qs, quote, unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".h5", ".msgpack", ".onnx", ".npz")
DEFAULT_TOKEN = "hf_fakehub_write_token"  # user "tester", role write
READ_TOKEN = "hf_fakehub_read_token"  # user "reader", role read
COMMIT_RACE = "A commit has happened since. Please refresh and try again."


class Request(NamedTuple):
    method: str
    path: str
    range: str | None
    status: int
    bytes: int


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Blob:
    data: bytes
    lfs: bool

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def pointer(self) -> bytes:
        spec = "version https://git-lfs.github.com/spec/v1"
        return f"{spec}\noid sha256:{self.sha256}\nsize {len(self.data)}\n".encode()

    @property
    def oid(self) -> str:  # git blob id (of the pointer file for LFS files), as the Hub reports it
        return git_blob_oid(self.pointer if self.lfs else self.data)

    @property
    def etag(self) -> str:  # what the cache names the blob after
        return self.sha256 if self.lfs else self.oid


@dataclass
class Commit:
    oid: str
    parent: str | None
    files: dict[str, Blob]
    title: str
    description: str = ""
    date: float = field(default_factory=time.time)


@dataclass
class CommitRecord:  # one commit made through the HTTP API (hub.commits)
    repo_id: str
    oid: str
    parent: str | None
    revision: str
    title: str
    description: str
    added: dict[str, bytes]
    deleted: list[str]
    create_pr: bool
    pr_num: int | None
    pr_url: str | None
    user: str


@dataclass
class Knobs:
    latency_s: float = 0.0
    hang_s: float = 0.0
    ignore_range: bool = False  # resolve GETs answer 200 + full body despite a Range header
    truncate_body: int | None = None  # resolve GETs send N body bytes (Content-Length stays full), then close


@dataclass
class Fault:
    regex: re.Pattern
    method: str | None = None
    times: int | None = None  # None = forever
    status: int | None = None
    headers: dict = field(default_factory=dict)
    message: str | None = None
    knobs: Knobs = field(default_factory=Knobs)
    respond: Callable | None = None  # takes the answer over: respond(handler, Answer) writes raw bytes itself


class Answer(NamedTuple):
    """What the fake would have sent, for a `respond` hook to bend: body after Range, and the whole file."""

    status: int
    headers: dict
    body: bytes
    full: bytes
    range: str | None


@dataclass
class Repo:
    repo_id: str
    private: bool = False
    gated: bool = False
    users: set | None = None  # who may read private/gated content; None = any valid token
    card_tags: list = field(default_factory=list)
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    prs: dict[int, str] = field(default_factory=dict)
    knobs: Knobs | None = None
    created: float = field(default_factory=time.time)

    def resolve(self, rev: str) -> str | None:
        m = re.fullmatch(r"refs/(heads|tags|pr)/(.+)", rev)
        if m:
            prs = {str(num): oid for num, oid in self.prs.items()}
            return {"heads": self.branches, "tags": self.tags, "pr": prs}[m[1]].get(m[2])
        if rev in self.branches or rev in self.tags:
            return self.branches.get(rev) or self.tags[rev]
        if not re.fullmatch(r"[0-9a-f]{7,40}", rev):
            return None
        hits = [oid for oid in self.commits if oid.startswith(rev)]
        return hits[0] if len(hits) == 1 else None


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None, headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, dict(headers or {})
        if code:
            self.headers["X-Error-Code"] = code
        self.headers.setdefault("X-Error-Message", message)


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(ts))


class FakeHub:
    """Starts serving on construction; ``with FakeHub() as hub:`` closes it. See module docstring.

    Fixtures: add_repo / add_commit / add_branch / add_tag / add_token. Faults: set_knobs (persistent,
    global or per repo), fault / status_for (regex on the raw path, optional method and times).
    Assertions: requests / count / matching, commits (CommitRecord per API commit), repos, lfs_store,
    max_in_flight (most requests inside their injected latency at once).
    """

    def __init__(self, *, lfs_threshold: int = 10 * 1024 * 1024, lfs_suffixes=LFS_SUFFIXES):
        self.lfs_threshold, self.lfs_suffixes = lfs_threshold, tuple(lfs_suffixes)
        self.repos: dict[str, Repo] = {}
        self.tokens: dict[str, tuple[str, str]] = {DEFAULT_TOKEN: ("tester", "write"),
                                                   READ_TOKEN: ("reader", "read")}  # token -> (user, role)
        self.lfs_store: dict[str, bytes] = {}  # sha256 -> content uploaded through the LFS basic transfer
        self.requests: list[Request] = []
        self.commits: list[CommitRecord] = []
        self.knobs = Knobs()
        self.faults: list[Fault] = []
        self.info_changes: dict[str, Callable[[dict], object]] = {}
        self.in_flight = self.max_in_flight = 0  # requests being handled at once (concurrency tests)
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._seq = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Handler,), {"hub": self}))
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    # -- lifecycle ---------------------------------------------------------------------------------
    def __enter__(self) -> FakeHub:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    # -- fixtures ----------------------------------------------------------------------------------
    def add_token(self, token: str, user: str = "tester", role: str = "write") -> None:
        self.tokens[token] = (user, role)

    def is_lfs(self, path: str, size: int) -> bool:
        return path.endswith(self.lfs_suffixes) or size >= self.lfs_threshold

    def add_repo(self, repo_id: str, files: dict[str, bytes] | None = None, revision: str = "main", *,
                 private: bool = False, gated: bool = False, users=None, tags=(), card_tags=(),
                 message: str = "initial commit") -> str:
        """Create a repo whose branch `revision` holds `files`; `tags` are git tags on that commit."""
        with self._lock:
            self.repos[repo_id] = Repo(repo_id, private, gated, set(users) if users is not None else None,
                                       list(card_tags))
            oid = self.add_commit(repo_id, files or {}, branch=revision, message=message)
            for tag in tags:
                self.repos[repo_id].tags[tag] = oid
            return oid

    def add_commit(self, repo_id: str, files: dict[str, bytes | None], branch: str = "main", *,
                   message: str = "update", base: str | None = None, replace: bool = False) -> str:
        """Commit on `branch` (created from `base` or empty if missing). A None value deletes that path."""
        with self._lock:
            repo = self.repos[repo_id]
            start = repo.resolve(base) if base else repo.branches.get(branch)
            tree = {} if replace or start is None else dict(repo.commits[start].files)
            for path, data in files.items():
                if data is None:
                    tree.pop(path, None)
                else:
                    tree[path] = Blob(data, self.is_lfs(path, len(data)))
            oid = self._new_commit(repo, start, tree, message)
            repo.branches[branch] = oid
            return oid

    def add_branch(self, repo_id: str, branch: str, revision: str = "main") -> str:
        return self._set_ref(repo_id, "branches", branch, revision)

    def add_tag(self, repo_id: str, tag: str, revision: str = "main") -> str:
        return self._set_ref(repo_id, "tags", tag, revision)

    def _set_ref(self, repo_id: str, table: str, name: str, revision: str) -> str:
        with self._lock:
            repo = self.repos[repo_id]
            oid = repo.resolve(revision)
            assert oid is not None, f"unknown revision {revision!r} in {repo_id}"
            getattr(repo, table)[name] = oid
            return oid

    def _new_commit(self, repo: Repo, parent, tree, title, description="") -> str:
        self._seq += 1
        digest = hashlib.sha1(json.dumps([repo.repo_id, parent, title, self._seq,
                                          sorted((p, b.etag) for p, b in tree.items())]).encode())
        repo.commits[digest.hexdigest()] = Commit(digest.hexdigest(), parent, tree, title, description)
        return digest.hexdigest()

    def file_url(self, repo_id: str, path: str, revision: str = "main") -> str:
        return f"{self.endpoint}/{repo_id}/resolve/{quote(revision, safe='')}/{quote(path)}"

    # -- fault injection -------------------------------------------------------------------------
    def set_knobs(self, repo_id: str | None = None, **knobs) -> None:
        """Persistent knobs (latency_s, hang_s, ignore_range, truncate_body), global or for one repo."""
        with self._lock:
            if repo_id is None:
                self.knobs = Knobs(**knobs)
            else:
                self.repos[repo_id].knobs = Knobs(**knobs)

    def fault(self, path_regex: str, *, times: int | None = None, method: str | None = None,
              status: int | None = None, headers: dict | None = None, message: str | None = None,
              respond: Callable | None = None, **knobs) -> Fault:
        """Rule matched (re.search) against the raw request path; consumed after `times` hits. `respond` takes the
        whole answer over (see hostile_answers.py): whatever bytes, delays or lies a hostile server would send."""
        rule = Fault(re.compile(path_regex), method, times, status, dict(headers or {}), message,
                     Knobs(**knobs), respond)
        with self._lock:
            self.faults.append(rule)
        return rule

    def status_for(self, path_regex: str, status: int, times: int | None = None, *, method=None,
                   error_code: str | None = None, retry_after: int | None = None, headers=None, message=None):
        headers = dict(headers or {})
        if error_code:
            headers["X-Error-Code"] = error_code
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        return self.fault(path_regex, times=times, method=method, status=status, headers=headers,
                          message=message)

    def count(self, method: str | None = None, path_regex: str = "") -> int:
        return len(self.matching(method, path_regex))

    def matching(self, method: str | None = None, path_regex: str = "") -> list[Request]:
        with self._lock:
            return [r for r in self.requests
                    if (method is None or r.method == method) and re.search(path_regex, r.path)]

    # -- client wiring ---------------------------------------------------------------------------
    def client_vars(self, hf_home, token: str | None = None, offline: bool = False) -> dict:
        """The env vars that point huggingface_hub at this server (must be set before it is imported)."""
        env = dict(HF_ENDPOINT=self.endpoint, HF_HOME=str(hf_home), HF_HUB_DISABLE_TELEMETRY="1",
                   HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_PROGRESS_BARS="1", NO_PROXY="127.0.0.1,localhost")
        env.update({"HF_TOKEN": token} if token else {})
        return {**env, **({"HF_HUB_OFFLINE": "1"} if offline else {})}

    def subprocess_env(self, hf_home, token: str | None = None, offline: bool = False) -> dict:
        drop = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE")
        env = {k: v for k, v in os.environ.items() if k not in drop}
        return {**env, **self.client_vars(hf_home, token, offline)}

    def client_env(self, monkeypatch, hf_home, token: str | None = None) -> None:
        """Point an already-imported huggingface_hub at this server (pytest `monkeypatch`-like object): its
        import-time settings as a process started with client_vars would have them (cli_runner.hub_patches)."""
        from cli_runner import hub_patches
        from huggingface_hub.utils import _http

        home = str(hf_home)
        for key in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"):
            monkeypatch.delenv(key, raising=False)
        client = self.client_vars(home, token)
        for key, value in client.items():
            monkeypatch.setenv(key, value)
        for obj, name, value in hub_patches(client):
            monkeypatch.setattr(obj, name, value)
        _http.close_session()  # the shared httpx2 client is rebuilt lazily (picks NO_PROXY up)

    # -- request handling (called by _Handler) ---------------------------------------------------
    def _user(self, headers) -> tuple[str, str] | None:
        auth = headers.get("Authorization")
        if not auth:
            return None
        token = auth[7:] if auth.startswith("Bearer ") else None
        if token not in self.tokens:
            raise HubError(401, "Invalid credentials in Authorization header")
        return self.tokens[token]

    def _repo(self, repo_id: str, user, *, files: bool = False) -> Repo:
        repo = self.repos.get(repo_id)
        if repo is None:
            raise HubError(404, "Repository not found", "RepoNotFound")
        allowed = user is not None and (repo.users is None or user[0] in repo.users)
        if repo.private and not allowed:
            raise HubError(401 if user is None else 404, "Repository not found", "RepoNotFound")
        if repo.gated and files and not allowed:
            message = f"Access to model {repo_id} is restricted."
            raise HubError(401 if user is None else 403, message, "GatedRepo")
        return repo

    def _commit_at(self, repo: Repo, rev: str) -> Commit:
        oid = repo.resolve(rev)
        if oid is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        return repo.commits[oid]

    def mutate_info(self, repo_id: str, change: Callable[[dict], object]) -> None:
        """Every later model_info answer for the repo is passed through `change` (which edits it in place)."""
        self.info_changes[repo_id] = change

    def _model_info(self, repo: Repo, rev: str, blobs: bool) -> dict:
        info = self._honest_info(repo, rev, blobs)
        change = self.info_changes.get(repo.repo_id)
        if change is not None:
            change(info)
        return info

    def _honest_info(self, repo: Repo, rev: str, blobs: bool) -> dict:
        commit = self._commit_at(repo, rev)
        siblings = []
        for path, blob in sorted(commit.files.items()):
            sib = {"rfilename": path}
            if blobs:
                sib.update(size=len(blob.data), blobId=blob.oid)
                if blob.lfs:
                    sib["lfs"] = {"sha256": blob.sha256, "size": len(blob.data),
                                  "pointerSize": len(blob.pointer)}
            siblings.append(sib)
        return {"_id": hashlib.md5(repo.repo_id.encode()).hexdigest()[:24], "id": repo.repo_id,
                "modelId": repo.repo_id, "author": repo.repo_id.split("/")[0], "sha": commit.oid,
                "lastModified": _iso(commit.date), "createdAt": _iso(repo.created), "private": repo.private,
                "gated": "manual" if repo.gated else False, "disabled": False, "downloads": 0, "likes": 0,
                "tags": list(repo.card_tags), "siblings": siblings,
                "usedStorage": sum(len(b.data) for b in commit.files.values())}

    def _refs(self, repo: Repo, prs: bool) -> dict:
        def items(table, prefix):
            return [{"name": str(n), "ref": f"{prefix}{n}", "targetCommit": o} for n, o in table.items()]
        return {"branches": items(repo.branches, "refs/heads/"), "tags": items(repo.tags, "refs/tags/"),
                "converts": [], **({"pullRequests": items(repo.prs, "refs/pr/")} if prs else {})}

    def _resolve_file(self, repo: Repo, rev: str, path: str):
        commit = self._commit_at(repo, rev)
        blob = commit.files.get(path)
        headers = {"X-Repo-Commit": commit.oid, "Accept-Ranges": "bytes"}
        if blob is None:
            raise HubError(404, "Entry not found", "EntryNotFound", headers)
        headers.update({"ETag": f'"{blob.oid}"', "Content-Type": "application/octet-stream"})
        if blob.lfs:
            headers.update({"X-Linked-Etag": f'"{blob.sha256}"', "X-Linked-Size": str(len(blob.data))})
        return blob.data, headers

    def _preupload(self, repo: Repo, rev: str, payload: dict) -> dict:
        base = repo.commits.get(repo.resolve(rev) or "")
        out = []
        for f in payload.get("files", []):
            lfs = self.is_lfs(f["path"], f.get("size", 0))
            blob = base.files.get(f["path"]) if base else None
            out.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False,
                        "oid": (blob.sha256 if lfs else blob.oid) if blob and blob.lfs == lfs else None})
        return {"files": out, "commitOid": base.oid if base else None}

    def _lfs_batch(self, repo: Repo, payload: dict) -> dict:
        objects = []
        for obj in payload.get("objects", []):
            entry = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.lfs_store:
                href = f"{self.endpoint}/__lfs__/{repo.repo_id}/{obj['oid']}"
                entry["actions"] = {"upload": {"href": href}, "verify": {"href": href + "/verify"}}
            objects.append(entry)
        return {"transfer": "basic", "objects": objects, "hash_algo": "sha256"}

    def _commit(self, repo: Repo, user, rev: str, body: bytes, create_pr: bool) -> dict:
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        header = next((item["value"] for item in lines if item["key"] == "header"), {})
        parent = header.get("parentCommit")
        if rev in repo.tags or rev.startswith("refs/tags/"):
            raise HubError(400, "Cannot commit to a tag")
        head = repo.resolve(rev)
        if head is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        base = head
        if parent is not None:
            parent_oid = repo.resolve(parent) if re.fullmatch(r"[0-9a-f]{7,40}", parent) else None
            if parent_oid is None or (not create_pr and parent_oid != head):
                raise HubError(412, COMMIT_RACE)
            base = parent_oid if create_pr else head
        tree, added, deleted = dict(repo.commits[base].files), {}, []
        for item in lines:
            key, value = item["key"], item["value"]
            if key == "file":
                content = value["content"]
                data = base64.b64decode(content) if value.get("encoding") == "base64" else content.encode()
                tree[value["path"]] = Blob(data, False)
            elif key == "lfsFile":
                data = self.lfs_store.get(value["oid"])
                existing = [b.data for b in tree.values() if b.lfs and b.sha256 == value["oid"]]
                if data is None and not existing:
                    raise HubError(400, f"LFS object {value['oid']} not found; upload it first")
                tree[value["path"]] = Blob(data if data is not None else existing[0], True)
            elif key in ("deletedFile", "deletedFolder"):
                prefix = value["path"].rstrip("/") + "/"
                gone = [p for p in tree
                        if p == value["path"] or (key == "deletedFolder" and p.startswith(prefix))]
                if not gone:
                    message = f"A file with this name doesn't exist: {value['path']}"
                    raise HubError(404, message, "EntryNotFound")
                for p in gone:
                    del tree[p]
                deleted += gone
                continue
            else:
                continue
            added[value["path"]] = tree[value["path"]].data
        oid = self._new_commit(repo, base, tree, header.get("summary", ""), header.get("description", ""))
        pr_num = pr_url = None
        if create_pr:
            pr_num = max(repo.prs, default=0) + 1
            repo.prs[pr_num] = oid
            pr_url = f"{self.endpoint}/{repo.repo_id}/discussions/{pr_num}"
        elif rev.startswith("refs/pr/"):
            repo.prs[int(rev.rsplit("/", 1)[1])] = oid
        else:
            repo.branches[rev.removeprefix("refs/heads/")] = oid
        self.commits.append(CommitRecord(repo.repo_id, oid, base, rev, header.get("summary", ""),
                                         header.get("description", ""), added, deleted, create_pr, pr_num,
                                         pr_url, user[0]))
        commit_url = f"{self.endpoint}/{repo.repo_id}/commit/{oid}"
        return {"success": True, "commitOid": oid, "commitUrl": commit_url, "hookOutput": "",
                "pullRequestUrl": pr_url}

    def _dispatch(self, method: str, path: str, query: dict, headers, body: bytes):
        """Return (status, headers, body_bytes, is_file); raise HubError for error answers."""
        user = self._user(headers)
        seg = [unquote(s) for s in path.split("/")[1:]]
        repo_id = unquote(_repo_id_of(path))
        if path == "/api/whoami-v2" and method == "GET":
            if user is None:
                raise HubError(401, "Invalid credentials in Authorization header")
            return 200, {}, {"type": "user", "name": user[0], "fullname": user[0].title(), "orgs": [],
                             "auth": {"type": "access_token", "accessToken": {"displayName": "fakehub",
                                                                            "role": user[1]}}}, False
        if seg[:2] == ["api", "models"] and len(seg) >= 4:
            rest, repo = seg[4:], self._repo(repo_id, user)
            if method == "GET" and (rest == [] or (len(rest) == 2 and rest[0] == "revision")):
                blobs = query.get("blobs", ["false"])[0].lower() in ("1", "true")
                return 200, {}, self._model_info(repo, rest[1] if rest else "main", blobs), False
            if method == "GET" and rest == ["refs"]:
                return 200, {}, self._refs(repo, "include_prs" in query), False
            if method == "POST" and len(rest) == 2 and rest[0] in ("preupload", "commit"):
                create_pr = query.get("create_pr", ["0"])[0] in ("1", "true")
                if user is None:
                    raise HubError(401, "You must be authenticated to write to this repository")
                if user[1] != "write" and not create_pr:
                    raise HubError(403, "You don't have the rights to write to this repository")
                if rest[0] == "preupload":
                    return 200, {}, self._preupload(repo, rest[1], json.loads(body or b"{}")), False
                return 200, {}, self._commit(repo, user, rest[1], body, create_pr), False
        if method == "POST" and len(seg) == 6 and seg[1].endswith(".git") and seg[2:4] == ["info", "lfs"]:
            if user is None:
                raise HubError(401, "You must be authenticated to upload LFS files")
            batch = self._lfs_batch(self._repo(repo_id, user), json.loads(body))
            return 200, {"Content-Type": "application/vnd.git-lfs+json"}, batch, False
        if seg[:1] == ["__lfs__"] and len(seg) >= 4:
            oid = seg[3]
            if method == "PUT":
                if hashlib.sha256(body).hexdigest() != oid:
                    raise HubError(400, "sha256 mismatch")
                self.lfs_store[oid] = body
                return 200, {"ETag": f'"{oid}"'}, b"", False
            if method == "POST" and seg[4:] == ["verify"]:
                if oid not in self.lfs_store:
                    raise HubError(404, "LFS object not found")
                return 200, {}, {"success": True}, False
        if len(seg) >= 5 and seg[2] == "resolve" and method in ("GET", "HEAD"):
            repo = self._repo(repo_id, user, files=True)
            data, hdrs = self._resolve_file(repo, seg[3], "/".join(seg[4:]))
            return 200, hdrs, data, True
        raise HubError(404, f"Not found: {method} {path}")


def _repo_id_of(path: str) -> str:
    seg = path.split("/")
    return "/".join(seg[3:5]) if seg[1:3] == ["api", "models"] else "/".join(seg[1:3]).removesuffix(".git")


def _parse_range(value: str, size: int):
    """(start, end) inclusive, None to ignore the header, or raise 416."""
    m = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", value or "")
    if not m or (m[1] == "" and m[2] == ""):
        return None
    if m[1] == "":
        start, end = max(size - int(m[2]), 0), size - 1
    else:
        start, end = int(m[1]), min(int(m[2]) if m[2] else size - 1, size - 1)
    if start >= size or start > end:
        raise HubError(416, "Range Not Satisfiable", headers={"Content-Range": f"bytes */{size}"})
    return start, end


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, the body waits for the client's delayed ACK
    # (~40 ms on Linux), a stall real Hub servers do not have and that would swamp every latency figure.
    disable_nagle_algorithm = True
    hub: FakeHub

    def log_message(self, *args) -> None:  # never log anything (Authorization included)
        pass

    def handle_one_request(self) -> None:
        """One request. A client may reset a kept-alive connection it is done with (a deadline gave up on it, a
        retry abandoned it, its pool was closed): the server, waiting for the next request line or reading a body,
        then gets ECONNRESET, which ends that connection as a close would, the way a real server takes it. The
        base class would let it escape to socketserver, which prints a traceback from the handler thread into the
        suite's output; any other error still does."""
        try:
            super().handle_one_request()
        except (ConnectionResetError, BrokenPipeError):
            self.close_connection = True

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while (size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)) > 0:
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():
                pass
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _handle(self) -> None:
        hub, method = self.hub, self.command
        split = urlsplit(self.path)
        path, query, rng = split.path, parse_qs(split.query), self.headers.get("Range")
        body = self._read_body()
        with hub._lock:
            rule = next((f for f in hub.faults if f.regex.search(path) and f.method in (None, method)), None)
            if rule is not None and rule.times is not None:
                rule.times -= 1
                if rule.times <= 0:
                    hub.faults.remove(rule)
            repo = hub.repos.get(unquote(_repo_id_of(path)))
            knobs = repo.knobs if repo and repo.knobs else hub.knobs
            extra = rule.knobs if rule else Knobs()
            hub.in_flight += 1
            hub.max_in_flight = max(hub.max_in_flight, hub.in_flight)
        try:
            hub._stop.wait(knobs.latency_s + knobs.hang_s + extra.latency_s + extra.hang_s)
        finally:
            with hub._lock:
                hub.in_flight -= 1
        headers, payload, is_file, status = {}, b"", False, 500
        try:
            if rule is not None and rule.status is not None:
                message = rule.message or f"Injected HTTP {rule.status}"
                raise HubError(rule.status, message, headers=rule.headers)
            with hub._lock:
                status, headers, payload, is_file = hub._dispatch(method, path, query, self.headers, body)
        except HubError as err:
            status, headers, payload = err.status, err.headers, {"error": err.message}
        except Exception as err:  # a bug in the fake: surface it as a 500 rather than hanging the client
            status, headers, payload = 500, {}, {"error": f"fakehub internal error: {err!r}"}
        if isinstance(payload, dict):
            payload = json.dumps(payload).encode()
            headers.setdefault("Content-Type", "application/json")
        full = payload
        if is_file and rng and not (knobs.ignore_range or extra.ignore_range):
            try:
                span = _parse_range(rng, len(payload))
            except HubError as err:
                status, headers, payload, is_file = 416, {**headers, **err.headers}, b"", False
                span = None
            if span:
                status, size = 206, len(payload)
                headers["Content-Range"] = f"bytes {span[0]}-{span[1]}/{size}"
                payload = payload[span[0]:span[1] + 1]
        if rule is not None and rule.respond is not None:
            with hub._lock:
                hub.requests.append(Request(method, path, rng, status, -1))
            self.close_connection = True
            try:
                rule.respond(self, Answer(status, headers, payload, full, rng))
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass
            return
        send = payload if method != "HEAD" else b""
        cut = extra.truncate_body if extra.truncate_body is not None else knobs.truncate_body
        if is_file and cut is not None and cut < len(send):
            send = send[:cut]
            self.close_connection = True
        with hub._lock:
            hub.requests.append(Request(method, path, rng, status, len(send)))
        try:
            self.send_response(status)
            for key, value in {**headers, "Content-Length": str(len(payload))}.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(send)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _handle
