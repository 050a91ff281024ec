"""Nearest recorded step by TF-IDF cosine similarity, in pure Python (no scikit-learn needed).

Documents are token lists (a command's words split at punctuation, lower-cased, plus the names of
the files it executes); weights are ``tf * idf`` with ``idf = ln((1 + N) / (1 + df)) + 1`` (scikit-
learn's smoothed idf) and unit length. ``query`` walks an inverted index, so a query costs the
postings of its own tokens, not the whole collection.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")


def tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


class TfidfIndex:
    """Documents (token lists) indexed for cosine-similarity queries."""

    def __init__(self, documents: Sequence[Sequence[str]]):
        self.n = len(documents)
        df = Counter(t for doc in documents for t in set(doc))
        self.idf = {t: math.log((1 + self.n) / (1 + c)) + 1 for t, c in df.items()}
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for k, doc in enumerate(documents):
            for token, weight in self._vector(doc).items():
                self.postings[token].append((k, weight))

    def _vector(self, doc: Sequence[str]) -> dict[str, float]:
        counts = Counter(t for t in doc if t in self.idf)
        vector = {t: c * self.idf[t] for t, c in counts.items()}
        norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
        return {t: w / norm for t, w in vector.items()}

    def query(self, doc: Sequence[str], k: int = 5) -> list[tuple[int, float]]:
        """The ``k`` most similar documents: (index, cosine), best first (ties: the later one)."""
        scores: dict[int, float] = defaultdict(float)
        for token, weight in self._vector(doc).items():
            for index, other in self.postings.get(token, ()):
                scores[index] += weight * other
        return sorted(scores.items(), key=lambda item: (-item[1], -item[0]))[:k]
