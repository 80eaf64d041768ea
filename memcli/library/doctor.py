"""``memcli doctor``: checks that what memcli keeps is private and that the store can be
written, without loading a model or opening the store; and that the configured chat model
is there: its GGUF file, or its server reachable, the model listed and a one-token
completion answered (``check_model``); and so is an embedding server's model, one text
embedded (``check_embedding_server``).

Every folder memcli makes is mode 0700 and every file 0600 (``memcli.paths``); a path
with any group or other permission bit, or owned by another user, is a warning, as is a
store folder that cannot be written (read commands work, writes exit 9). The same lines
go to stderr on ``memcli stats``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memcli import schema
from memcli.config import Settings
from memcli.errors import ModelError
from memcli.models.embedding_server import ServerEmbedder
from memcli.models.llm import check_gguf
from memcli.models.llm_server import ServerChatModel, ServerClient
from memcli.paths import Paths, home_of
from memcli.store.space import shortage

_TYPES = ((stat.S_ISLNK, "symlink"), (stat.S_ISDIR, "dir"), (stat.S_ISREG, "file"), (stat.S_ISSOCK, "socket"))


def check_path(name: str, path: Path) -> schema.PathCheck:
    """The privacy check of one path (not following a symlink): ok when it is missing, or
    has no group or other permission bits and belongs to this user; "unreadable" (not ok)
    when this user may not even look at it (another user's home, as ``doctor`` run by
    someone else finds it)."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return schema.PathCheck(
            name=name, path=str(path), type="missing", mode=None, owner_uid=None, ok=True, problem=None
        )
    except OSError as exc:  # a folder above it is not this user's to enter
        return schema.PathCheck(
            name=name,
            path=str(path),
            type="unreadable",
            mode=None,
            owner_uid=None,
            ok=False,
            problem=f"cannot be examined by you (uid {os.geteuid()}): {exc.strerror}; run memcli as the user it belongs to",
        )
    kind = next((label for test, label in _TYPES if test(found.st_mode)), "other")
    bits = stat.S_IMODE(found.st_mode)
    problems = []
    if found.st_uid != os.geteuid():
        problems.append(f"owned by uid {found.st_uid}, not by you (uid {os.geteuid()})")
    if kind != "symlink":
        access = [who for who, mask in (("group", 0o070), ("others", 0o007)) if bits & mask]
        if access:
            verbs = "/".join(
                v
                for v, mask in (
                    ("readable", 0o044),
                    ("writable", 0o022),
                    ("searchable" if kind == "dir" else "executable", 0o011),
                )
                if bits & mask
            )
            problems.append(f"{verbs} by {' and '.join(access)} (mode {bits:04o}): chmod go-rwx {path}")
    problem = "; ".join(problems) or None
    return schema.PathCheck(
        name=name,
        path=str(path),
        type=kind,
        mode=f"{bits:04o}",
        owner_uid=found.st_uid,
        ok=problem is None,
        problem=problem,
    )


def _named(paths: Paths) -> list[tuple[str, Path]]:
    """Every path of ``memcli paths``, then everything under memcli's own folders."""
    home = home_of(paths)
    named = [
        *([("home", home)] if home is not None else []),
        *((name, Path(value)) for name, value in paths.as_dict().items()),
    ]
    seen = {path for _, path in named}
    roots = [
        ("config_dir", paths.config_dir),
        ("data_dir", paths.data_dir),
        ("state_dir", paths.state_dir),
        ("cache_dir", paths.cache_dir),
        ("run_dir", paths.run_dir),
    ]
    for root_name, root in roots:
        try:
            if not root.is_dir() or root.is_symlink():
                continue
        except OSError:  # not this user's to enter: check_path says so of the folder itself
            continue
        for folder, folders, files in os.walk(root):
            for entry in sorted((*folders, *files)):
                path = Path(folder) / entry
                if path not in seen:
                    seen.add(path)
                    named.append((f"{root_name}/{path.relative_to(root)}", path))
    return named


def store_writable(paths: Paths) -> bool:
    """Whether the data folder (or, before it exists, the folder it would be made in) can
    be written by this process, and its lock file too when there is one."""
    folder = paths.data_dir
    try:
        while not folder.exists() and folder.parent != folder:
            folder = folder.parent
        lock = paths.lock_file
        return os.access(folder, os.W_OK) and (not lock.exists() or os.access(lock, os.W_OK))
    except OSError:  # a folder on the way is not this user's to enter
        return False


def check(paths: Paths, settings: Settings | None = None) -> schema.DoctorReport:
    """Check every path memcli uses (``memcli doctor``): its privacy (``check_path``) and
    whether the store can be written, and has room to write (``memcli.store.space.shortage``,
    asked without taking the reserve). Reads modes only: cheap, no model, no store. With
    ``settings``, the chat model they name too (``check_model``), and their embedding
    server (``check_embedding_server``); each failed model check is a warning."""
    checks = [check_path(name, path) for name, path in _named(paths)]
    writable = store_writable(paths)
    warnings = _warnings([c for c in checks if not c.ok])
    if not writable:
        warnings.append(f"the memory store at {paths.data_dir} is read-only: read commands work, writes exit 9")
    short = shortage(paths.data_dir, take=False) if writable and paths.data_dir.is_dir() else ""
    if short:
        warnings.append(short)
    model_checks = check_model(settings, paths) + check_embedding_server(settings) if settings is not None else []
    warnings += [c.detail for c in model_checks if not c.ok]
    return schema.DoctorReport(
        ok=not warnings,
        store_writable=writable,
        store_space=short or None,
        checked=len(checks),
        warnings=warnings,
        checks=checks,
        model_checks=model_checks,
    )


def check_model(settings: Settings, paths: Paths) -> list[schema.ModelCheck]:
    """The checks of the chat model ``settings`` name, each failure with its fix: the GGUF
    file (read, not loaded; the embedded default is fine until first use assembles it);
    or the model server reachable (``/v1/models``), the model listed, and a one-token
    completion answered, stopping at the first that fails."""
    if not settings.model_url:
        if not settings.model:
            return [
                schema.ModelCheck(
                    name="model file",
                    ok=True,
                    detail=f"the embedded default, in {paths.model_dir} (assembled on first use)",
                )
            ]
        try:
            check_gguf(Path(settings.model).expanduser())
        except ModelError as exc:
            return [
                schema.ModelCheck(
                    name="model file",
                    ok=False,
                    detail=f"{exc.message}: set model to a GGUF file, or empty it for the embedded default",
                )
            ]
        return [schema.ModelCheck(name="model file", ok=True, detail=f"{settings.model}: a GGUF file")]
    server = ServerChatModel(
        settings.model_url, settings.model_name, settings.model_api_key_env, settings.model_request_timeout
    )
    out = _listing(server, settings.model_url, settings.model_name, "server reachable", "model listed")
    if not out[-1].ok:
        return out
    name = server.name
    try:
        server.ping()
    except ModelError as exc:
        out.append(schema.ModelCheck(name="completion", ok=False, detail=f"{exc.message}: check the server's log"))
        return out
    out.append(schema.ModelCheck(name="completion", ok=True, detail=f"{name} answered a one-token completion"))
    return out


def _listing(server: ServerClient, url: str, wanted: str, reachable: str, listed: str) -> list[schema.ModelCheck]:
    """The first two checks of the server at ``url``, named ``reachable`` and ``listed``:
    it answers ``/v1/models``, and lists the model ``wanted`` (empty: any); each failure
    with its fix in the server's settings (``server.SETTINGS``: model_url, embedder_name
    …). It stops at the first that fails: the last check is the one to look at."""
    prefix = server.SETTINGS
    try:
        models = server.models()
    except ModelError as exc:
        return [
            schema.ModelCheck(
                name=reachable,
                ok=False,
                detail=f"{exc.message}: start the server, or fix {prefix}_url / {prefix}_api_key_env",
            )
        ]
    out = [
        schema.ModelCheck(name=reachable, ok=True, detail=f"{url}: lists {len(models)} model{'s' * (len(models) != 1)}")
    ]
    if not models or (wanted and wanted not in models):
        shown = repr(wanted) if wanted else "any model"
        out.append(
            schema.ModelCheck(
                name=listed,
                ok=False,
                detail=f"the server at {url} does not list {shown} (it lists: {', '.join(models) or 'none'}): set {prefix}_name to one of them, or load the model in the server",
            )
        )
        return out
    out.append(schema.ModelCheck(name=listed, ok=True, detail=server.name))
    return out


def check_embedding_server(settings: Settings) -> list[schema.ModelCheck]:
    """The checks of the embedding server ``settings`` name (``embedder_url``; none
    without one), each failure with its fix: reachable (``/v1/models``), the model
    listed, and one text embedded, stopping at the first that fails."""
    if not settings.embedder_url:
        return []
    server = ServerEmbedder(
        settings.embedder_url, settings.embedder_name, settings.embedder_api_key_env, settings.embedder_request_timeout
    )
    out = _listing(
        server, settings.embedder_url, settings.embedder_name, "embedding server reachable", "embedder listed"
    )
    if not out[-1].ok:
        return out
    name = server.name
    try:
        identity = server.identity
    except ModelError as exc:
        out.append(
            schema.ModelCheck(
                name="embedding", ok=False, detail=f"{exc.message}: check the server's log, or serve an embedding model"
            )
        )
        return out
    out.append(
        schema.ModelCheck(
            name="embedding",
            ok=True,
            detail=f"{name} embedded a text in {server.dimension} dimensions (identity {identity})",
        )
    )
    return out


def _warnings(failed: list[schema.PathCheck]) -> list[str]:
    """One line per failed path, except that the paths under a failed folder are counted
    in its line (and its fix made recursive) rather than listed one by one."""
    heads: dict[str, int] = {}
    for item in sorted(failed, key=lambda c: c.path):
        head = next((h for h in heads if item.path.startswith(h.rstrip("/") + "/")), None)
        if head is None:
            heads[item.path] = 0
        else:
            heads[head] += 1
    by_path = {c.path: c for c in failed}
    lines = []
    for path, under in heads.items():
        problem, _, fix = (by_path[path].problem or "").partition(": chmod go-rwx ")
        line = f"{path}: {problem}" if problem.startswith(("owned", "cannot")) else f"{path} is {problem}"
        if under:
            line += f", and so are {under} paths under it"
        if fix:
            line += f": chmod {'-R ' if under else ''}go-rwx {fix}"
        lines.append(line)
    return lines
