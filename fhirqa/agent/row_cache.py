"""A process-wide, bounded cache of one patient's rows of one view, per store generation.

A clinician asks several questions about the same patient in a row, and a UI asks a few at once;
each question reads the same handful of views. Reading a view's Parquet files for one patient costs a
few milliseconds, converting the rows to Python a few more: most of a warm question's time. A store
generation never changes once committed (an ingest writes a new one), so rows read under one
generation stay right for as long as that generation is the current one; the key carries it, and the
entries of older generations are dropped the first time a newer one is seen.

Rows are shared between questions and must be treated as read-only (the tools build new dicts and
lists; they never write into a row).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

Rows = list[dict[str, Any]]
# (store folder, generation, view, patient id)
CacheKey = tuple[str, int, str, str]

DEFAULT_MAX_ROWS = 200_000  # ~200 MB of Python rows at worst; a large patient has ~20,000 rows in all


class RowCache:
    """Least-recently-used rows, bounded by the total number of rows held (not by entries)."""

    def __init__(self, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        self.max_rows = max_rows
        self._entries: OrderedDict[CacheKey, Rows] = OrderedDict()
        self._held = 0
        self._generation: dict[str, int] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: CacheKey) -> Rows | None:
        """The cached rows for ``key`` (and mark them recently used), or None."""
        with self._lock:
            rows = self._entries.get(key)
            if rows is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return rows

    def put(self, key: CacheKey, rows: Rows) -> None:
        """Keep ``rows`` for ``key``, evicting the least recently used beyond the bound."""
        if len(rows) > self.max_rows:  # larger than the whole cache: not worth evicting everything
            return
        store, generation = key[0], key[1]
        with self._lock:
            if self._generation.get(store, generation) < generation:
                self._drop_store(store)
            self._generation[store] = max(generation, self._generation.get(store, generation))
            if generation < self._generation[store]:  # a question still running on an older generation
                return
            old = self._entries.pop(key, None)
            if old is not None:
                self._held -= len(old)
            self._entries[key] = rows
            self._held += len(rows)
            while self._held > self.max_rows:
                _, evicted = self._entries.popitem(last=False)
                self._held -= len(evicted)

    def _drop_store(self, store: str) -> None:
        for key in [k for k in self._entries if k[0] == store]:
            self._held -= len(self._entries.pop(key))

    def clear(self) -> None:
        """Forget everything (tests; a deployment never needs to)."""
        with self._lock:
            self._entries.clear()
            self._generation.clear()
            self._held = 0

    @property
    def rows_held(self) -> int:
        """How many rows the cache holds now."""
        return self._held


def _max_rows_from_env() -> int:
    raw = os.environ.get("FHIRQA_ROW_CACHE_ROWS", "")
    return int(raw) if raw.strip().isdigit() else DEFAULT_MAX_ROWS


SHARED = RowCache(_max_rows_from_env())
