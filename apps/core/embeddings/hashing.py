import math
import re
import zlib

from apps.core.embeddings.base import Embedder

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder(Embedder):
    """Deterministic feature hashing of words and character trigrams: no model, no downloads.

    Words carry most of the weight; trigrams of each word (with boundary marks) make "allergy" and
    "allergic" overlap. A signed hash keeps collisions from only ever adding up.
    """

    provider = "hash"
    word_weight = 1.0
    trigram_weight = 0.35

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> list[float]:
        dimension = self.dimension
        vector = [0.0] * dimension
        for word in _WORD.findall(text.lower()):
            self._add(vector, "w:" + word, self.word_weight, dimension)
            marked = f"#{word}#"
            for start in range(len(marked) - 2):
                self._add(vector, marked[start : start + 3], self.trigram_weight, dimension)
        norm = math.sqrt(sum(value * value for value in vector))
        if norm == 0.0:
            # Text without word characters: a fixed unit vector keeps cosine distance defined.
            vector[0] = 1.0
            return vector
        return [value / norm for value in vector]

    @staticmethod
    def _add(vector: list[float], feature: str, weight: float, dimension: int) -> None:
        digest = zlib.crc32(feature.encode("utf-8"))
        sign = 1.0 if (digest >> 31) & 1 == 0 else -1.0
        vector[digest % dimension] += sign * weight
