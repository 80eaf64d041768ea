"""Every file and folder memcli uses.

They come from platformdirs; ``MEMCLI_HOME`` puts config, data, state and cache under one
folder (``$MEMCLI_HOME/config``, ``/data``, ``/state``, ``/cache``). Light on purpose:
the thin client (``memcli.client``) reads these and nothing of the settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "memcli"
CONFIG_FILENAME = "config.toml"
SOCKET_NAME = "memcli.sock"


@dataclass(frozen=True)
class Paths:
    """Every file and folder memcli reads or writes."""

    config_dir: Path
    data_dir: Path
    cache_dir: Path
    state_dir: Path

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
        import hashlib
        import tempfile

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
    def model_dir(self) -> Path:
        """Where the embedded default GGUF is assembled on first use."""
        return self.cache_dir / "models"

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
            "state_dir": str(self.state_dir),
            "run_dir": str(self.run_dir),
            "socket": str(self.socket),
            "service_file": str(self.service_file),
            "start_lock": str(self.start_lock),
            "log_file": str(self.log_file),
        }


def home_paths(root: Path) -> Paths:
    """memcli's paths under one folder: ``root/config``, ``/data``, ``/cache``, ``/state``."""
    return Paths(root / "config", root / "data", root / "cache", root / "state")


def resolve_paths(env: dict[str, str] | None = None) -> Paths:
    """Return memcli's paths: under ``MEMCLI_HOME`` when set, else platformdirs' user dirs."""
    env = os.environ if env is None else env
    home = env.get("MEMCLI_HOME")
    if home:
        return home_paths(Path(home).expanduser())
    import platformdirs

    return Paths(
        Path(platformdirs.user_config_dir(APP_NAME)),
        Path(platformdirs.user_data_dir(APP_NAME)),
        Path(platformdirs.user_cache_dir(APP_NAME)),
        Path(platformdirs.user_state_dir(APP_NAME)),
    )
