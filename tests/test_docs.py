"""The documentation: a README that fits on a screen and points only at files that are
there, and the docs/ site, built strictly by MkDocs (a broken link, a missing anchor or a
page left out of the navigation fails)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_the_readme_stays_short() -> None:
    """The README is the front page (what memcli is, the two commands, a tour, the
    command list); the manual lives in docs/."""
    assert len(README.read_bytes()) <= 15 * 1024


def test_every_link_of_the_readme_names_a_file_of_the_repository() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    assert local, "the README links into docs/"
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing


def test_the_docs_build_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: every page in the navigation, every link and anchor found."""
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
