"""Every file and folder memcli uses, and the one reader of the config file.

They come from platformdirs; ``MEMCLI_HOME`` puts config, data, state and cache under one
folder (``$MEMCLI_HOME/config``, ``/data``, ``/state``, ``/cache``). Light on purpose:
the thin client (``memcli.transport.client``) reads these, and the config file's ``service`` key
through ``read_config_file``, without the settings model (``memcli.config``), which
reads the file through the same function.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

from memcli.errors import BadInputError, UnsafeHomeError

APP_NAME = "memcli"
ENV_PREFIX = "MEMCLI_"
"""The prefix of the environment variables of settings: ``MEMCLI_<KEY>``."""
CONFIG_FILENAME = "config.toml"
SOCKET_NAME = "memcli.sock"
CHAT_HISTORY = "chat_history"
PROMPT_STATES = "prompt-states"
"""The folder, in the model folder, of the chat openings' evaluated states (``Paths.prompt_states_dir``)."""
PROMPT_STATES_DROPPED = ".dropped"
"""The file in ``PROMPT_STATES`` whose time is that of the last delete for good (``drop_prompt_states``)."""
SHARED_CACHE_ENV = "MEMCLI_SHARED_CACHE"
"""The variable that puts the cache every home shares (``shared_cache_dir``) elsewhere:
tests point it at a temporary folder, so that none reads or writes the user's own."""
EMBEDDER_EXPORTS = "embedder-exports"
"""The folder, in the shared cache, of the embedder's ONNX exports (``Paths.embedder_exports_dir``)."""


def shared_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """The cache this user's every memcli home shares on this machine: what depends only on
    the installed models and libraries, never on a home's memories (the embedder's ONNX
    export, ``memcli.models.embedding_export``). ``MEMCLI_SHARED_CACHE`` of ``env`` (the
    process environment when None) when set and not empty (``shared_cache_override``); else
    platformdirs' user cache folder (``$XDG_CACHE_HOME/memcli``, by default ``~/.cache/memcli``
    on Linux, ``~/Library/Caches/memcli`` on macOS), whatever ``MEMCLI_HOME`` is: the default
    home's ``cache_dir`` is that same folder."""
    override = shared_cache_override(os.environ if env is None else env)
    if override is not None:
        return override
    # thin client: only when a path of the shared cache is asked for (an embedder's load, memcli paths)
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME))


def shared_cache_override(env: Mapping[str, str]) -> Path | None:
    """``MEMCLI_SHARED_CACHE`` of ``env`` as a folder, or None when it is unset or empty."""
    value = env.get(SHARED_CACHE_ENV, "")
    return Path(value).expanduser() if value.strip() else None


@dataclass(frozen=True)
class Paths:
    """Every file and folder memcli reads or writes."""

    config_dir: Path
    data_dir: Path
    cache_dir: Path
    state_dir: Path
    shared_cache: Path | None = None
    """The cache every home of this user shares (``shared_cache_dir``), as the environment
    ``resolve_paths`` or ``home_paths`` was given set it (``MEMCLI_SHARED_CACHE``); None:
    platformdirs' user cache folder, looked up when a path under it is asked for (the thin
    client does not import platformdirs for it)."""

    @property
    def config_file(self) -> Path:
        """The TOML config file (may not exist)."""
        return self.config_dir / CONFIG_FILENAME

    @property
    def store_dir(self) -> Path:
        """The Chroma PersistentClient directory."""
        return self.data_dir / "chroma"

    @property
    def database(self) -> Path:
        """The SQLite database beside the Chroma store: history and consolidation progress."""
        return self.data_dir / "memcli.sqlite3"

    def database_files(self) -> tuple[Path, Path, Path]:
        """The sidecar database's files: ``database`` and, in SQLite's WAL mode, its
        write-ahead log (``-wal``, which may hold most of what was written while the store
        is open) and its shared-memory index (``-shm``). The last two may not exist."""
        return (
            self.database,
            self.database.with_name(f"{self.database.name}-wal"),
            self.database.with_name(f"{self.database.name}-shm"),
        )

    @property
    def lock_file(self) -> Path:
        """The file lock that serializes store access across processes."""
        return self.data_dir / "store.lock"

    @property
    def consolidate_lock(self) -> Path:
        """The file lock that keeps two consolidation runs from overlapping."""
        return self.data_dir / "consolidate.lock"

    @property
    def pending_dir(self) -> Path:
        """Memories written to disk but not yet in the store (the write-ahead journal)."""
        return self.data_dir / "pending"

    @property
    def run_dir(self) -> Path:
        """The service's private directory (mode 0700): its socket and its pid file.

        Under ``state_dir`` when the socket path fits the 107 bytes a Unix socket address
        allows; else a directory of this user's own under the system temporary folder,
        named after ``state_dir`` so that every MEMCLI_HOME keeps its own service."""
        own = self.state_dir / "run"
        if len(os.fsencode(own / SOCKET_NAME)) <= 100:
            return own

        digest = hashlib.sha256(os.fsencode(self.state_dir)).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"memcli-{os.getuid()}-{digest}"

    @property
    def socket(self) -> Path:
        """The Unix socket the service listens on (mode 0600)."""
        return self.run_dir / SOCKET_NAME

    @property
    def service_file(self) -> Path:
        """What the running service says of itself: pid, version, socket (JSON)."""
        return self.run_dir / "service.json"

    @property
    def start_lock(self) -> Path:
        """The file lock that lets one client at a time start the service."""
        return self.state_dir / "service-start.lock"

    @property
    def log_file(self) -> Path:
        """The service's log."""
        return self.state_dir / "service.log"

    @property
    def chat_history(self) -> Path:
        """The chat prompt's line history (what was typed at ``you>``), kept across sessions."""
        return self.state_dir / CHAT_HISTORY

    @property
    def model_dir(self) -> Path:
        """Where the embedded default GGUF is assembled on first use."""
        return self.cache_dir / "models"

    @property
    def prompt_states_dir(self) -> Path:
        """Where the chat model keeps the evaluated state of chat openings (their
        instructions, portrait and running memory) across the service's restarts: a cache
        of what you told memcli, emptied when a memory is deleted for good.

        ``memcli.models.llm.OPENING_STATES``; emptied by ``drop_prompt_states``."""
        return self.model_dir / PROMPT_STATES

    @property
    def embedder_exports_dir(self) -> Path:
        """Where the embedder's ONNX exports are made and read, one per model and library
        versions, shared by every home of this user on this machine: in platformdirs' user
        cache folder whatever MEMCLI_HOME is (on macOS ~/Library/Caches/memcli), or under
        MEMCLI_SHARED_CACHE when set. An export an earlier memcli made in a home's model
        folder is still read there.

        ``Paths.shared_cache``; ``memcli.models.embedding_export``."""
        return (self.shared_cache or shared_cache_dir({})) / EMBEDDER_EXPORTS

    def as_dict(self) -> dict[str, str]:
        """Name → path, for ``memcli paths``."""
        return {
            "config_file": str(self.config_file),
            "config_dir": str(self.config_dir),
            "data_dir": str(self.data_dir),
            "store_dir": str(self.store_dir),
            "database": str(self.database),
            "lock_file": str(self.lock_file),
            "consolidate_lock": str(self.consolidate_lock),
            "pending_dir": str(self.pending_dir),
            "cache_dir": str(self.cache_dir),
            "model_dir": str(self.model_dir),
            "prompt_states_dir": str(self.prompt_states_dir),
            "embedder_exports_dir": str(self.embedder_exports_dir),
            "state_dir": str(self.state_dir),
            "run_dir": str(self.run_dir),
            "socket": str(self.socket),
            "service_file": str(self.service_file),
            "start_lock": str(self.start_lock),
            "log_file": str(self.log_file),
            "chat_history": str(self.chat_history),
        }


PRIVATE_DIR = 0o700
"""Mode of every folder memcli makes: its user's only."""
PRIVATE_FILE = 0o600
"""Mode of every file memcli makes: its user's only."""


def private_dir(path: Path) -> Path:
    """Make folder ``path`` (and its missing parents) of mode 0700, whatever the umask,
    and take group and other bits off it when it exists with them (``private``). A parent
    that exists is left alone (``~/.local/share`` is not memcli's). Returns ``path``.

    Raises OSError when it cannot be made; a folder that cannot be chmodded (another
    owner, a read-only mount) is left as it is."""
    missing = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            folder.mkdir(mode=PRIVATE_DIR)
        with contextlib.suppress(OSError):
            os.chmod(folder, PRIVATE_DIR)
    private(path)
    return path


def private(path: Path) -> bool:
    """Take every group and other permission bit off ``path`` (0755 becomes 0700, 0644
    0600; the owner's bits stay as they are, so a folder made read-only stays read-only);
    True when it changed. Never follows a symlink; a path that is missing, not this
    user's own or on a read-only mount is left alone."""
    try:
        found = os.lstat(path)
        if stat.S_ISLNK(found.st_mode) or not found.st_mode & 0o077 or found.st_uid != os.geteuid():
            return False
        os.chmod(path, stat.S_IMODE(found.st_mode) & ~0o077)
    except OSError:
        return False
    return True


def private_tree(root: Path) -> list[Path]:
    """Tighten ``root`` and everything under it (``private``); returns what changed. For
    folders whose files another library writes (Chroma's store: its SQLite file, its
    segment folders and HNSW files)."""
    changed = [root] if private(root) else []
    for folder, folders, files in os.walk(root):
        for name in (*folders, *files):
            if private(Path(folder) / name):
                changed.append(Path(folder) / name)
    return changed


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_TRUNC) -> int:
    """``os.open`` of ``path`` with ``flags`` that makes a new file 0600 whatever the
    umask (and tightens an existing one); returns the file descriptor. Raises OSError."""
    fd = os.open(path, flags, PRIVATE_FILE)
    try:
        found = os.fstat(fd)
        if found.st_mode & 0o077 and found.st_uid == os.geteuid():
            os.fchmod(fd, PRIVATE_FILE)
    except OSError:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically and privately (``writing_private``),
    its folder made 0700 (``private_dir``). For every file memcli writes whole: the config
    file, the service file. Raises OSError."""
    private_dir(path.parent)
    with writing_private(path) as f:
        f.write(text.encode("utf-8"))


@contextlib.contextmanager
def writing_private(path: Path) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through, atomically and privately: the bytes go to
    a 0600 temporary file in its folder (which must exist; it is left as it is), fsynced
    and renamed over ``path`` when the block ends without an error (and removed when it
    raises), so the file is whole or as before and never readable by others. What is
    written in a stream (an export) goes through it. The temporary file's name carries
    this process's id; the ones a killed writer left beside ``path`` are removed first
    (``remove_stale_temporaries``). Raises OSError."""
    remove_stale_temporaries(path)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.memcli-{os.getpid()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


STALE_TEMPORARY_SECONDS = 24 * 3600.0
"""Age after which a temporary file of the old naming (no process id in it) is taken for
one a killed writer left."""


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove the temporary files ``writing_private`` made for ``path`` whose writer is
    gone (killed while it wrote: they hold what it wrote, 0600, for ever otherwise): those
    named ``.NAME.memcli-PID.*.tmp`` whose process is not running, and those of the older
    naming ``.NAME.*.tmp`` untouched for ``STALE_TEMPORARY_SECONDS``. Returns what was
    removed; a file that cannot be removed stays."""
    removed = []
    with contextlib.suppress(OSError):
        for found in path.parent.glob(f".{glob_escape(path.name)}.*.tmp"):
            middle = found.name[len(path.name) + 2 : -len(".tmp")]
            pid = middle.split(".")[0].removeprefix("memcli-")
            if middle.startswith("memcli-") and pid.isdigit():
                stale = not _process_exists(int(pid))
            else:
                stale = time.time() - found.lstat().st_mtime > STALE_TEMPORARY_SECONDS
            if stale and found.is_file() and not found.is_symlink():
                with contextlib.suppress(OSError):
                    found.unlink()
                    removed.append(found)
    return removed


def _process_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists (``memcli.processes.running`` imports this module;
    a zombie counts as existing here, which only keeps a temporary file longer)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def glob_escape(name: str) -> str:
    """``name`` with the characters ``Path.glob`` reads as a pattern escaped."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def export_target(path: Path) -> Path:
    """The file an export to ``path`` writes: the file a symlink names (so that a backup
    path linking to another drive gets the export, and the link stays), which must be a
    regular file or not exist yet in a folder that does. Raises BadInputError (exit 5)
    naming ``path`` for a folder, a device, a FIFO or a socket (never replaced: write to
    them through stdout, ``memcli export > PATH``) and a missing folder."""
    real = Path(os.path.realpath(path))
    try:
        found = real.stat()
    except FileNotFoundError:
        if not real.parent.is_dir():
            raise BadInputError(f"{path}: the folder {real.parent} does not exist") from None
        return real
    except OSError as exc:
        raise BadInputError(f"{path}: cannot write: {exc.strerror}") from None
    if stat.S_ISREG(found.st_mode):
        return real
    what = (
        "a folder"
        if stat.S_ISDIR(found.st_mode)
        else "a FIFO"
        if stat.S_ISFIFO(found.st_mode)
        else "a socket"
        if stat.S_ISSOCK(found.st_mode)
        else "a device"
    )
    raise BadInputError(
        f"{path}: is {what}, not a file; export -o writes a file (for {what}, use stdout: memcli export > {path})"
    )


def device_of(path: os.PathLike[str] | str) -> str:
    """The device that holds ``path`` as a person names it: "/dev/sda2 (mounted on /home)
    for PATH", from /proc/self/mounts where there is one, else the mount point."""
    path = os.path.abspath(path)
    mount = path
    while not os.path.exists(mount) and os.path.dirname(mount) != mount:
        mount = os.path.dirname(mount)
    with contextlib.suppress(OSError):
        while os.path.dirname(mount) != mount and os.stat(os.path.dirname(mount)).st_dev == os.stat(mount).st_dev:
            mount = os.path.dirname(mount)
    source = ""
    with contextlib.suppress(OSError):
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split()
                if len(fields) > 1 and fields[1].replace("\\040", " ") == mount:
                    source = fields[0]
    return f"{source} (mounted on {mount}) for {path}" if source else f"the device mounted on {mount} for {path}"


def home_paths(root: Path, env: Mapping[str, str] | None = None) -> Paths:
    """memcli's paths under one folder: ``root/config``, ``/data``, ``/cache``, ``/state``;
    the cache every home shares is ``MEMCLI_SHARED_CACHE`` of ``env`` (the process
    environment when None) when set (``Paths.shared_cache``)."""
    override = shared_cache_override(os.environ if env is None else env)
    return Paths(root / "config", root / "data", root / "cache", root / "state", override)


def home_of(paths: Paths) -> Path | None:
    """The one folder ``paths`` are under (MEMCLI_HOME, as ``home_paths`` lays it out), or
    None (platformdirs' folders, each under a parent that is not memcli's)."""
    root = paths.config_dir.parent
    return root if replace(paths, shared_cache=None) == home_paths(root, {}) else None


def resolve_paths(env: Mapping[str, str] | None = None) -> Paths:
    """Return memcli's paths: under ``MEMCLI_HOME`` of ``env`` (the process environment when
    None) when set, else platformdirs' user dirs; the cache every home shares from the same
    ``env`` (``Paths.shared_cache``).
    Raises BadInputError when MEMCLI_HOME is set but empty (an unset variable in a script:
    the default folders would be a surprise)."""
    env = os.environ if env is None else env
    home = env.get("MEMCLI_HOME")
    if home is not None:
        if not home.strip():
            raise BadInputError(
                "MEMCLI_HOME is set but empty: set it to a folder, or unset it for the default folders (memcli paths lists them)"
            )
        return home_paths(Path(home).expanduser(), env)
    # thin client: needed only when MEMCLI_HOME is not set, and memcli starts at every TAB press
    import platformdirs

    cache = Path(platformdirs.user_cache_dir(APP_NAME))
    return Paths(
        Path(platformdirs.user_config_dir(APP_NAME)),
        Path(platformdirs.user_data_dir(APP_NAME)),
        cache,
        Path(platformdirs.user_state_dir(APP_NAME)),
        shared_cache_override(env) or cache,
    )


def unsafe_folder(folder: Path) -> str | None:
    """Why memcli must not use ``folder``, or None when it may (or it is not there yet: memcli
    makes it 0700). Not this user's (nor root's: root can do anything anyway), or writable
    by group or others (whoever can write there can replace what memcli reads: ssh's rule
    for ``~/.ssh``). The reason names the folder and the fix. Follows a symbolic link (the
    folder it points to is the one used)."""
    try:
        found = os.stat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{folder} cannot be examined ({exc.strerror}): it is another user's; use a MEMCLI_HOME of your own"
    me = os.geteuid()
    if found.st_uid not in (me, 0):
        return (
            f"{folder} belongs to uid {found.st_uid}, not to you (uid {me}): use a MEMCLI_HOME of your own, "
            f"or take it: chown -R {me} {folder} && chmod 700 {folder}"
        )
    if found.st_mode & 0o022:
        others = " and ".join(who for who, mask in (("group", 0o020), ("others", 0o002)) if found.st_mode & mask)
        return f"{folder} is writable by {others} (mode {stat.S_IMODE(found.st_mode):04o}): chmod 700 {folder}"
    return None


def unsafe_path(folder: Path) -> str | None:
    """Why memcli must not read or write files in ``folder`` (None when it may): someone
    else could put another file there, or replace ``folder`` or a folder above it (whoever
    can write to a folder can rename what is in it and put another folder in its place).
    Every folder from ``folder`` (its real path, as resolved now) up to ``/`` must be this
    user's or root's and writable by no one else (``unsafe_folder``), but for a sticky
    folder anyone can write to (/tmp), where no one else can rename what is not theirs: the
    folder just below it must be this user's own and 0700. A folder not there yet is passed
    over (memcli makes it 0700), but not right in such a sticky folder, where another user
    could make it first. This checks the folders as they are when it is called; the file
    read is checked when it is opened (``own_file``)."""
    real = Path(os.path.realpath(folder))
    below: tuple[Path, os.stat_result | None] | None = None
    for current in (real, *real.parents):
        try:
            found = os.stat(current)
        except FileNotFoundError:
            below = (current, None)
            continue
        except OSError as exc:
            return f"{current} cannot be examined ({exc.strerror})"
        reason = unsafe_folder(current)
        if reason is not None and found.st_mode & stat.S_ISVTX and found.st_uid in (os.geteuid(), 0):
            if below is None:
                return reason
            child, child_found = below
            if child_found is None:
                return f"{child} is not there, and {current} is a folder anyone can write to: another user could make it first; make it yourself: mkdir -m 700 {child}"
            if child_found.st_uid != os.geteuid() or child_found.st_mode & 0o077:
                return (
                    f"{child} is in {current}, a folder anyone can write to, and is not yours alone: chmod 700 {child}"
                )
        elif reason is not None:
            return reason
        below = (current, found)
    return None


def own_file(path: Path) -> str | None:
    """Why the file at ``path`` must not be read (None when it may): it is a symbolic link,
    not a regular file, or not this user's. Opened without following a link (O_NOFOLLOW)
    and examined through the open file (``fstat``), so the file examined is the one that
    was there. Raises FileNotFoundError when there is none, OSError when it cannot be opened."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"{path} is a symbolic link"
        raise
    try:
        found = os.fstat(descriptor)
    finally:
        os.close(descriptor)
    if not stat.S_ISREG(found.st_mode):
        return f"{path} is not a regular file"
    if found.st_uid != os.geteuid():
        return f"{path} belongs to uid {found.st_uid}, not to you (uid {os.geteuid()})"
    return None


def check_home(paths: Paths) -> None:
    """Refuse to use folders that someone else controls, before anything is read or written
    there: MEMCLI_HOME (``home_of``) and the config, data, state and cache folders
    (``unsafe_folder``). Raises UnsafeHomeError naming the first and its fix. ``memcli
    doctor`` reports the same folders instead of refusing."""
    home = home_of(paths)
    for folder in (
        *([home] if home is not None else []),
        paths.config_dir,
        paths.data_dir,
        paths.state_dir,
        paths.cache_dir,
    ):
        reason = unsafe_folder(folder)
        if reason:
            raise UnsafeHomeError(f"memcli will not use a folder that someone else controls: {reason}")


def read_config_file(path: Path, hint: str = "") -> dict[str, Any]:
    """The table of the TOML config file at ``path`` as written; empty when there is none.

    The one reader of the config file: the thin client's ``service_mode``, the settings
    (``memcli.config``) and ``memcli config`` all read it here, so that they agree on what
    a config path that is there but unusable means: an error naming it.

    Raises BadInputError naming ``path`` when something is there that cannot serve as the
    config file: a symbolic link to nothing, a directory (or another non-file: a FIFO
    would block), a file memcli may not read, bytes that are not UTF-8, text that is not
    TOML; ``hint`` is added to the message of the last two (what the user can do)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise BadInputError(f"config file {path}: is a symbolic link to nothing") from None
        return {}
    except OSError as exc:
        raise BadInputError(f"config file {path}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise BadInputError(f"config file {path}: is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise BadInputError(f"config file {path}: is not a regular file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BadInputError(f"config file {path}: cannot be read ({exc.strerror or exc})") from None
    import tomllib  # only when there is a file: the thin client's path mostly has none

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BadInputError(f"config file {path}: not UTF-8 text (byte {exc.start}){hint}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInputError(f"config file {path}: not valid TOML: {exc}{hint}") from None


HISTORY_IDS = "memcli ids:"
"""What precedes, in the comment line of a chat history entry, the ids of the memories the
line was typed for (``history_entry``)."""


def history_entry(text: str, ids: Iterable[str], at: str) -> str:
    """One entry of the chat prompt's history file (``Paths.chat_history``), in
    prompt_toolkit's ``FileHistory`` format — a ``# time`` comment line, then each line of
    ``text`` prefixed with ``+`` — whose comment also names the memories the line was typed
    for (``# 2026-11-26 01:00:00.123456 memcli ids: 3fa2b1c9e0d4a5b6``): the turn a message
    was stored as, the note of a ``/remember``, the memories a ``/recall`` showed. prompt_toolkit
    reads the comment as a separator; ``scrub_history_file`` reads the ids. ``at``: the
    time as the comment shows it."""
    named = " ".join(ids)
    comment = f"# {at} {HISTORY_IDS} {named}" if named else f"# {at}"
    return f"\n{comment}\n" + "".join(f"+{line}\n" for line in text.split("\n"))


def scrub_history_file(path: Path, texts: Iterable[str], ids: Iterable[str] = ()) -> int:
    """Take out of a prompt_toolkit history file (``Paths.chat_history``: entries of a
    ``# time`` line and ``+``-prefixed lines) every entry typed for a memory deleted for
    good, by what was typed:

    - an entry whose comment names one of ``ids`` (``history_entry``): the message stored as
      that turn, the ``/remember`` of that note, a ``/recall`` that showed it, whatever the
      memory's text has become since (an edit);
    - an entry that typed one of ``texts`` (every text the memories ever had: ``memcli
      edit`` keeps the old ones in the history): the same words, or a slash command whose
      argument is one of them or part of one (``/remember TEXT``, ``/recall WORDS OF IT``,
      case aside), or, for a text of 40 characters or more, any entry that holds it. This
      covers entries written before the ids were recorded.

    Rewrites the file privately (``write_private``) only when an entry goes; returns how
    many went. A missing file is left missing."""
    wanted = {" ".join(t.split()) for t in texts if t.strip()}
    gone = set(ids)
    if not (wanted or gone) or not path.is_file():
        return 0
    long = [t for t in wanted if len(t) >= 40]
    folded = [t.casefold() for t in wanted]
    entries: list[list[str]] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True):
        if line.startswith("#") or not entries:
            entries.append([line])
        else:
            entries[-1].append(line)

    def typed(entry: list[str]) -> bool:
        comment = entry[0] if entry[0].startswith("#") else ""
        if HISTORY_IDS in comment and not gone.isdisjoint(comment.partition(HISTORY_IDS)[2].split()):
            return True
        said = " ".join("".join(line[1:] for line in entry if line.startswith("+")).split())
        argument = said.partition(" ")[2].casefold() if said.startswith("/") else ""
        return said in wanted or any(t in said for t in long) or bool(argument) and any(argument in t for t in folded)

    kept = [entry for entry in entries if not typed(entry)]
    if len(kept) == len(entries):
        return 0
    write_private(path, "".join("".join(entry) for entry in kept))
    return len(entries) - len(kept)


@contextlib.contextmanager
def reading(path: Path) -> Iterator[None]:
    """Turn the OSError of opening or reading ``path`` in the block into BadInputError: no
    such file, a directory, or cannot read (with the system's reason)."""
    try:
        yield
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"{path}: is a directory") from None
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read: {exc.strerror}") from exc


def drop_prompt_states(folder: Path) -> int:
    """Delete every chat opening's state kept in ``folder`` (``Paths.prompt_states_dir``),
    the temporaries a killed writer left included: they hold the tokens of a chat's opening
    (its portrait and running memory), which a delete for good must not leave on disk.
    Then marks the folder dropped (``PROMPT_STATES_DROPPED``, its time now): a state
    evaluated before it, which a chat model's writer was still writing, is not written,
    nor used when it landed (``prompt_states_dropped_at``). Returns how many files went.
    A file that cannot be removed is logged, never raised: the delete itself has happened."""
    # thin client: logging only for a delete for good, which runs where the store is
    import logging

    dropped = 0
    try:
        kept = [path for path in folder.iterdir() if path.name != PROMPT_STATES_DROPPED]
    except OSError:
        return 0
    for path in kept:
        try:
            path.unlink(missing_ok=True)
            dropped += 1
        except OSError as exc:
            logging.getLogger(__name__).warning("a chat opening's state could not be removed: %s", exc)
    try:
        (folder / PROMPT_STATES_DROPPED).touch(mode=PRIVATE_FILE)
        os.utime(folder / PROMPT_STATES_DROPPED)
    except OSError as exc:
        logging.getLogger(__name__).warning("the chat openings' folder could not be marked: %s", exc)
    return dropped


def prompt_states_dropped_at(folder: Path) -> float:
    """When the chat openings' states in ``folder`` were last dropped (``drop_prompt_states``),
    in seconds since the epoch; 0.0 when never."""
    try:
        return (folder / PROMPT_STATES_DROPPED).stat().st_mtime
    except OSError:
        return 0.0
