"""The embedder's ONNX export (memcli.models.embedding_export): made once in the background
from the real packaged model, checked against sentence-transformers, then loaded without
torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memcli.config import Settings, home_paths
from memcli.library.engine_models import make_embedder
from memcli.models.embedding import Embedder, default_embedder_path
from memcli.models.embedding_export import (
    OnnxEncoder,
    earlier_export_file,
    export,
    export_file,
    libraries_key,
    rejected_file,
    tokenizer_file,
    unsupported,
)
from memcli.paths import home_of, own_file, resolve_paths, shared_cache_dir

TEXTS = [
    "Where do I live?",
    "The GP raised my lisinopril dose to 20 mg.",
    "我现在在杭州上班了",
    "A long note about the allotment, the tomatoes and the neighbour's cat. " * 20,
]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[float]]]:
    """An export made the way a first start makes it: the torch path loads, embeds, and
    its background exporter writes the export. Returns the folder and the torch vectors."""
    exports = tmp_path_factory.mktemp("exports")
    embedder = Embedder(exports=exports)
    vectors = embedder.embed(TEXTS)
    assert embedder.runtime == "torch"
    assert embedder._exporter is not None, "the torch path started no exporter"
    assert embedder._exporter.wait(timeout=600) == 0
    return exports, vectors


@pytest.mark.integration
def test_the_first_load_exports_the_model_in_the_background(made: tuple[Path, list[list[float]]]) -> None:
    exports, _ = made
    file = export_file(exports, Embedder().identity, default_embedder_path())
    assert file.is_file()
    assert file.stat().st_mode & 0o777 == 0o600
    assert not rejected_file(file).exists()
    assert not list(exports.glob(".*.tmp*")), "a temporary export was left behind"


@pytest.mark.integration
def test_the_export_keeps_a_tokenizer_set_as_it_runs(made: tuple[Path, list[list[float]]]) -> None:
    """The packaged tokenizer.json pads and truncates at 128 tokens; the model runs on 256."""
    exports, _ = made
    tokens = tokenizer_file(export_file(exports, Embedder().identity, default_embedder_path()))
    assert tokens.is_file() and tokens.stat().st_mode & 0o777 == 0o600
    settings = json.loads(tokens.read_text(encoding="utf-8"))
    assert settings["truncation"]["max_length"] == 256
    assert settings["padding"] is None


@pytest.mark.integration
def test_the_torch_path_embeds_as_sentence_transformers_without_importing_it() -> None:
    """The first load in a new home runs the transformer through transformers alone: the
    same vectors (to 1e-6 in cosine) as sentence-transformers gives, a CPU-second sooner."""
    script = (
        "import json, sys\n"
        "from memcli.models.embedding import Embedder\n"
        "e = Embedder()\n"
        f"v = e.embed({TEXTS!r})\n"
        "print(json.dumps({'runtime': e.runtime, 'st': 'sentence_transformers' in sys.modules,"
        " 'dimension': e.dimension, 'vectors': v}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["runtime"] == "torch" and not found["st"]
    assert done.stderr == "", "loading printed something (a progress bar)"
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(default_embedder_path()), device="cpu", local_files_only=True)
    expected = model.encode(TEXTS, normalize_embeddings=True, show_progress_bar=False)
    got = np.asarray(found["vectors"])
    assert got.shape == expected.shape and found["dimension"] == expected.shape[1]
    assert (got * expected).sum(axis=1).min() > 1 - 1e-6


@pytest.mark.integration
def test_the_export_embeds_as_sentence_transformers_does(made: tuple[Path, list[list[float]]]) -> None:
    exports, torch_vectors = made
    embedder = Embedder(exports=exports)
    for role in ("document", "query"):
        vectors = embedder.embed(TEXTS, role=role)
        assert embedder.runtime == "onnx"
        assert np.abs(np.asarray(vectors) - np.asarray(torch_vectors)).max() < 1e-4
    assert embedder.dimension == len(torch_vectors[0])
    assert embedder.identity == Embedder().identity  # the same model to the store: no reindex


@pytest.mark.integration
def test_the_exports_threads_sleep_between_runs(made: tuple[Path, list[list[float]]]) -> None:
    """Threads left spinning after a query's encoding take the other core from the recall that follows."""
    exports, _ = made
    embedder = Embedder(exports=exports)
    embedder.embed_one(TEXTS[0])
    assert embedder._onnx is not None
    options = embedder._onnx.session.get_session_options()
    for key in ("session.intra_op.allow_spinning", "session.inter_op.allow_spinning"):
        assert options.get_session_config_entry(key) == "0"


@pytest.mark.integration
def test_a_process_with_the_export_never_imports_torch(made: tuple[Path, list[list[float]]]) -> None:
    exports, torch_vectors = made
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from memcli.models.embedding import Embedder\n"
        f"e = Embedder(exports=Path({str(exports)!r}))\n"
        f"v = e.embed_one({TEXTS[1]!r})\n"
        "print(json.dumps({'runtime': e.runtime, 'torch': 'torch' in sys.modules,"
        " 'st': 'sentence_transformers' in sys.modules, 'vector': v}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["runtime"] == "onnx"
    assert not found["torch"] and not found["st"]
    query = Embedder(exports=None).embed([TEXTS[1]], role="query")[0]
    assert np.abs(np.asarray(found["vector"]) - np.asarray(query)).max() < 1e-4


@pytest.mark.integration
def test_an_unreadable_export_is_dropped_and_the_torch_path_answers(tmp_path: Path) -> None:
    file = export_file(tmp_path, Embedder().identity, default_embedder_path())
    file.write_bytes(b"not an onnx graph")
    embedder = Embedder(exports=tmp_path)
    vector = embedder.embed_one("memcli")
    assert embedder.runtime == "torch" and len(vector) == 384
    if embedder._exporter is not None:
        embedder._exporter.wait(timeout=600)
    assert file.is_file(), "the export was not made again"
    assert file.read_bytes()[:20] != b"not an onnx graph"


def _model_dir(path: Path, pooling: dict[str, bool], tokenizer: bool = True) -> Path:
    path.mkdir()
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]
    (path / "modules.json").write_text(json.dumps(modules))
    (path / "1_Pooling").mkdir()
    (path / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    if tokenizer:
        (path / "tokenizer.json").write_text("{}")
    return path


def test_a_model_of_another_shape_is_rejected_once_without_loading_it(tmp_path: Path) -> None:
    cls = _model_dir(tmp_path / "cls", {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    out = tmp_path / "exports" / "cls.onnx"
    reason = export(cls, out)
    assert "pooling" in reason and not out.exists()
    assert rejected_file(out).read_text() == reason
    assert "torch" not in reason  # decided from the configuration, before any model is loaded
    assert export(cls, out) == reason  # not tried again


def test_a_file_error_while_exporting_is_not_a_rejection_and_the_export_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk or the folder removed meanwhile says nothing of the model: no ``.rejected``
    note (which would keep the embedder on torch for good), and the next load tries again."""
    from memcli.models import embedding_export

    tries = []

    def no_space(model_dir: Path, out: Path) -> None:
        tries.append(out)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(embedding_export, "_write_tokenizer", no_space)
    out = tmp_path / "exports" / "m.onnx"
    reason = export(default_embedder_path(), out)
    assert "No space left" in reason and not out.exists()
    assert not rejected_file(out).exists()
    assert "No space left" in export(default_embedder_path(), out)
    assert len(tries) == 2


def test_only_transformer_mean_pooling_normalize_models_are_exported(tmp_path: Path) -> None:
    assert unsupported(default_embedder_path()) is None
    mean = _model_dir(tmp_path / "mean", {"pooling_mode_mean_tokens": True})
    assert unsupported(mean) is None
    assert "tokenizer" in (unsupported(_model_dir(tmp_path / "bare", {"pooling_mode_mean_tokens": True}, False)) or "")
    (mean / "modules.json").write_text(json.dumps([{"type": "sentence_transformers.models.Transformer"}]))
    assert "modules" in (unsupported(mean) or "")


def test_stale_temporary_exports_are_removed_by_the_next_export(tmp_path: Path) -> None:
    mean = _model_dir(tmp_path / "cls", {"pooling_mode_cls_token": True})
    out = tmp_path / "exports" / "m.onnx"
    out.parent.mkdir()
    stale = out.parent / f".{out.name}.99999.tmp"
    stale.write_bytes(b"half an export")
    os.utime(stale, (1_000_000, 1_000_000))
    export(mean, out)
    assert not stale.exists()


def test_the_setting_turns_the_export_off(tmp_path: Path) -> None:
    paths = home_paths(tmp_path)
    on = make_embedder(Settings(embedder_onnx=True), paths)
    off = make_embedder(Settings(embedder_onnx=False), paths)
    assert isinstance(on, Embedder) and on.exports == paths.embedder_exports_dir
    assert isinstance(off, Embedder) and off.exports is None
    assert make_embedder(Settings()).exports is None  # type: ignore[union-attr]  # no paths: nowhere to keep one


def test_the_encoder_reads_the_models_prompts_and_case(tmp_path: Path) -> None:
    encoder = OnnxEncoder.__new__(OnnxEncoder)
    encoder.prompts = {"query": "query: ", "passage": "passage: "}
    assert encoder.prompt("query") == "query: "
    assert encoder.prompt("document") == "passage: "
    encoder.prompts = {}
    assert encoder.prompt("query") == ""


def test_what_the_exporter_writes_is_private_whatever_the_umask(tmp_path: Path) -> None:
    cls = _model_dir(tmp_path / "cls", {"pooling_mode_cls_token": True})
    out = tmp_path / "cache" / "models" / "cls.onnx"
    old = os.umask(0o000)
    try:
        export(cls, out)
    finally:
        os.umask(old)
    for path in (tmp_path / "cache", out.parent, rejected_file(out), out.with_name(out.name + ".lock")):
        mode = path.stat().st_mode & 0o777
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"


def test_two_threads_that_embed_at_once_load_the_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A service's warm-up and the request that started it (an import) both embed at once:
    torch's model is built once, not twice (twice the memory and CPU on two cores)."""
    import threading
    import time

    from memcli.models import embedding

    built: list[int] = []

    class SlowEncoder:
        def __init__(self, path: Path) -> None:
            built.append(1)
            time.sleep(0.3)  # the load's seconds, in which a second thread arrives

    monkeypatch.setattr(embedding, "TorchEncoder", SlowEncoder)
    embedder = Embedder(default_embedder_path(), exports=None)
    threads = [threading.Thread(target=embedder.load) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 1
    assert embedder.runtime == "torch"


@pytest.mark.integration
def test_the_torch_encoder_takes_the_cores_free_at_each_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a busy machine torch's threads wait for one another: each batch runs on the cores
    no other process is using then, and the vectors do not change with the threads."""
    torch = pytest.importorskip("torch")
    from memcli.models import embedding_export
    from memcli.models.embedding_export import TorchEncoder

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(embedding_export, "_TORCH_THREADS", 0)  # read again from the torch below
    threads = [2]  # torch's setting, kept here: the test leaves torch's own alone
    told: list[int] = []
    monkeypatch.setattr(torch, "get_num_threads", lambda: threads[0])
    monkeypatch.setattr(torch, "set_num_threads", lambda n: (told.append(n), threads.__setitem__(0, n)))
    encoder = TorchEncoder(default_embedder_path())
    free = iter([1, 1, 2])
    monkeypatch.setattr(embedding_export, "free_cores", lambda cores: next(free))
    vectors = [encoder.run(encoder.tokenize(TEXTS[:2])) for _ in range(3)]
    assert told == [1, 2]  # told only when the free cores changed
    assert all(np.allclose(vectors[0], v, atol=1e-6) for v in vectors)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    fixed = TorchEncoder(default_embedder_path())
    told.clear()
    fixed.run(fixed.tokenize(TEXTS[:2]))
    assert told == []  # threads fixed by OMP_NUM_THREADS are kept


def test_every_home_makes_and_reads_the_export_in_the_one_folder_they_share(tmp_path: Path) -> None:
    """A new home (an eval's, a test's) does not export the model again: every home's
    embedder makes and reads the export in the shared cache, and reads its own model
    folder only for an export an earlier memcli left there."""
    first, second = home_paths(tmp_path / "first"), home_paths(tmp_path / "second")
    settings = Settings(embedder_onnx=True)
    one, two = make_embedder(settings, first), make_embedder(settings, second)
    assert isinstance(one, Embedder) and isinstance(two, Embedder)
    assert one.exports == two.exports == shared_cache_dir() / "embedder-exports"
    assert first.embedder_exports_dir == second.embedder_exports_dir == one.exports
    assert one.earlier_exports == (first.model_dir,) and two.earlier_exports == (second.model_dir,)
    # a shared folder others can write to is not read (they could replace the model): the home's serves
    one.exports.mkdir(parents=True)
    one.exports.chmod(0o777)
    unsafe = make_embedder(settings, first)
    assert isinstance(unsafe, Embedder) and unsafe.exports == first.model_dir


@pytest.mark.skipif(sys.platform != "linux", reason="platformdirs follows XDG_CACHE_HOME on Linux")
def test_the_shared_folder_is_the_platforms_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMCLI_SHARED_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    paths = home_paths(tmp_path / "home")  # MEMCLI_HOME does not move it
    assert paths.embedder_exports_dir == tmp_path / "xdg" / "memcli" / "embedder-exports"
    assert paths.as_dict()["embedder_exports_dir"] == str(paths.embedder_exports_dir)
    monkeypatch.setenv("MEMCLI_SHARED_CACHE", str(tmp_path / "tests"))
    assert home_paths(tmp_path / "home").embedder_exports_dir == tmp_path / "tests" / "embedder-exports"


def test_the_shared_folder_comes_from_the_environment_the_paths_are_resolved_in(tmp_path: Path) -> None:
    """``resolve_paths(env)`` takes the shared cache from ``env``, not from the process's
    environment (the manual page is made from a symbolic one: it showed this machine's)."""
    env = {"MEMCLI_HOME": str(tmp_path / "home"), "MEMCLI_SHARED_CACHE": str(tmp_path / "given")}
    assert resolve_paths(env).embedder_exports_dir == tmp_path / "given" / "embedder-exports"
    assert os.environ["MEMCLI_SHARED_CACHE"] != str(tmp_path / "given")
    assert home_of(resolve_paths(env)) == tmp_path / "home"


class LoadedExport:
    """Stands in for ``OnnxEncoder``: records the export it was given."""

    loaded: list[Path] = []

    def __init__(self, model_dir: Path, export: Path) -> None:
        LoadedExport.loaded.append(export)


def test_the_shared_export_is_read_first_then_one_an_earlier_memcli_left_in_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.models import embedding

    monkeypatch.setattr(embedding, "OnnxEncoder", LoadedExport)
    monkeypatch.setattr(LoadedExport, "loaded", [])
    shared, home = tmp_path / "shared", tmp_path / "home" / "cache" / "models"
    shared.mkdir()
    home.mkdir(parents=True)
    identity = Embedder().identity
    earlier = earlier_export_file(home, identity)
    earlier.write_bytes(b"an export made in this home")
    embedder = Embedder(exports=shared, earlier_exports=(home,))
    embedder.load()
    assert LoadedExport.loaded == [earlier] and embedder.runtime == "onnx"
    assert embedder._exporter is None  # nothing exported again
    export_file(shared, identity, default_embedder_path()).write_bytes(b"the shared export")
    Embedder(exports=shared, earlier_exports=(home,)).load()
    assert LoadedExport.loaded[-1] == export_file(shared, identity, default_embedder_path())


def test_without_any_export_the_torch_load_makes_one_in_the_shared_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memcli.models import embedding

    started: list[Path] = []
    monkeypatch.setattr(embedding, "TorchEncoder", lambda path: object())
    monkeypatch.setattr(Embedder, "_start_export", lambda self, path, export: started.append(export))
    paths = home_paths(tmp_path / "home")
    embedder = make_embedder(Settings(embedder_onnx=True), paths)
    assert isinstance(embedder, Embedder)
    embedder.load()
    assert embedder.runtime == "torch"
    assert started == [export_file(paths.embedder_exports_dir, embedder.identity, default_embedder_path())]
    assert started[0].parent != paths.model_dir


def test_the_export_is_named_after_the_libraries_that_make_and_run_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two Python environments of one machine (another memcli install, an upgrade of torch
    or onnxruntime) share the folder: each makes and reads exports of its own name."""
    import importlib.metadata

    identity = Embedder().identity
    now = export_file(Path("x"), identity, default_embedder_path())
    real = importlib.metadata.version
    with monkeypatch.context() as patched:  # not ``undo``: it would undo the autouse fixture's setenv too
        patched.setattr(importlib.metadata, "version", lambda name: "9.9" if name == "onnxruntime" else real(name))
        libraries_key.cache_clear()
        try:
            upgraded = export_file(Path("x"), identity, default_embedder_path())
        finally:
            libraries_key.cache_clear()
    assert now != upgraded
    with monkeypatch.context() as patched:  # the exporting libraries only make it: the export stays
        patched.setattr(importlib.metadata, "version", lambda name: "9.9" if name == "torch" else real(name))
        libraries_key.cache_clear()
        try:
            assert export_file(Path("x"), identity, default_embedder_path()) == now
        finally:
            libraries_key.cache_clear()
    assert now.name.startswith(identity + "+") and upgraded.name.startswith(identity + "+")
    assert export_file(Path("x"), identity, default_embedder_path()) == now


def test_a_shared_folder_under_one_others_can_write_to_is_not_used(tmp_path: Path) -> None:
    """Whoever can write to a folder above the shared one can rename it and put their own in
    its place: every folder up is checked, not the last one alone; in a sticky folder
    anyone can write to (/tmp) the one below must be the user's own and 0700."""
    settings = Settings(embedder_onnx=True)

    def exports(shared: Path) -> Path | None:
        env = {"MEMCLI_HOME": str(tmp_path / "home"), "MEMCLI_SHARED_CACHE": str(shared)}
        embedder = make_embedder(settings, resolve_paths(env))
        assert isinstance(embedder, Embedder)
        return embedder.exports

    home_models = tmp_path / "home" / "cache" / "models"
    opened = tmp_path / "open"
    (opened / "cache").mkdir(parents=True, mode=0o700)
    opened.chmod(0o777)
    assert exports(opened / "cache") == home_models
    sticky = tmp_path / "sticky"
    (sticky / "mine").mkdir(parents=True, mode=0o700)
    sticky.chmod(0o1777)
    assert exports(sticky / "mine") == sticky / "mine" / "embedder-exports"
    assert exports(sticky / "not-there") == home_models  # another user could make it first
    (sticky / "mine").chmod(0o755)
    assert exports(sticky / "mine") == home_models


def test_an_export_is_checked_again_right_before_it_is_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A symbolic link put where the export goes is not followed: the torch path serves, and
    no export is made in a place found unsafe."""
    from memcli.models import embedding

    monkeypatch.setattr(embedding, "OnnxEncoder", LoadedExport)
    monkeypatch.setattr(LoadedExport, "loaded", [])
    monkeypatch.setattr(embedding, "TorchEncoder", lambda path: object())
    started: list[Path] = []
    monkeypatch.setattr(Embedder, "_start_export", lambda self, path, export: started.append(export))
    shared = tmp_path / "shared"
    shared.mkdir()
    elsewhere = tmp_path / "elsewhere.onnx"
    elsewhere.write_bytes(b"not the user's export")
    export_file(shared, Embedder().identity, default_embedder_path()).symlink_to(elsewhere)
    embedder = Embedder(exports=shared)
    embedder.load()
    assert LoadedExport.loaded == [] and embedder.runtime == "torch" and started == []
    assert own_file(export_file(shared, Embedder().identity, default_embedder_path())) is not None
    assert own_file(elsewhere) is None


def test_the_export_is_named_after_the_files_that_tokenize_for_the_model(tmp_path: Path) -> None:
    """The model's identity does not cover its ``max_seq_length`` nor its tokenizer's files,
    from which the export's tokenizer is made: a model whose ``max_seq_length`` was changed
    gets an export of its own, not the one truncating at the old length."""
    model = tmp_path / "all-MiniLM-L6-v2"
    model.mkdir()
    for file in default_embedder_path().iterdir():
        (model / file.name).symlink_to(file)
    same = export_file(tmp_path, Embedder(model).identity, model)
    assert same == export_file(tmp_path, Embedder().identity, default_embedder_path())
    for name in ("sentence_bert_config.json", "tokenizer_config.json", "tokenizer.json"):
        settings = json.loads((model / name).read_text(encoding="utf-8"))
        (model / name).unlink()
        (model / name).write_text(json.dumps({**settings, "max_seq_length": 128}), encoding="utf-8")
        assert Embedder(model).identity == Embedder().identity  # the store needs no reindex
        assert export_file(tmp_path, Embedder(model).identity, model) != same
        (model / name).unlink()
        (model / name).symlink_to(default_embedder_path() / name)


class FailingExport:
    """Stands in for ``OnnxEncoder``: fails as ``error`` says."""

    error: BaseException = OSError(24, "Too many open files")

    def __init__(self, model_dir: Path, export: Path) -> None:
        raise FailingExport.error


def test_a_failed_load_removes_the_shared_export_only_for_an_error_that_recurs_and_under_its_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of memory or files, a load leaves the export every home reads; ONNX Runtime's
    error for a file it cannot read removes it (to be made again), but not while another
    process holds its lock (making it again)."""
    from filelock import FileLock

    from memcli.models import embedding

    monkeypatch.setattr(embedding, "OnnxEncoder", FailingExport)
    monkeypatch.setattr(embedding, "TorchEncoder", lambda path: object())
    monkeypatch.setattr(Embedder, "_start_export", lambda self, path, export: None)
    file = export_file(tmp_path, Embedder().identity, default_embedder_path())
    file.write_bytes(b"an export")
    for passing in (OSError(24, "Too many open files"), MemoryError()):
        monkeypatch.setattr(FailingExport, "error", passing)
        embedder = Embedder(exports=tmp_path)
        embedder.load()
        assert embedder.runtime == "torch" and file.is_file()
    monkeypatch.setattr(FailingExport, "error", ValueError("[ONNXRuntimeError] : 7 : INVALID_PROTOBUF"))
    with FileLock(str(file) + ".lock", timeout=0):
        Embedder(exports=tmp_path).load()
        assert file.is_file()
    Embedder(exports=tmp_path).load()
    assert not file.exists()


@pytest.mark.integration
def test_an_export_error_is_lasting_only_when_it_recurs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch's exporter failing once (short of memory, say) does not keep every home on
    torch for good: the model is rejected when the next attempt fails too."""
    import torch

    def failing(*args: object, **kwargs: object) -> None:
        raise RuntimeError("DefaultCPUAllocator: not enough memory")

    monkeypatch.setattr(torch.onnx, "export", failing)
    out = export_file(tmp_path, Embedder().identity, default_embedder_path())
    first = export(default_embedder_path(), out)
    assert "not enough memory" in first and not rejected_file(out).exists()
    second = export(default_embedder_path(), out)
    assert "not enough memory" in second and rejected_file(out).exists()
