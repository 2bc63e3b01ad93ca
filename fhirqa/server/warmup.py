"""Warm the notes search in the background at startup, so the first clinician to ask about notes does not wait.

A question that searches notes needs the sentence embedder (importing torch and loading MiniLM: 4–10 s) and
the patient's note chunks embedded (about 50 ms a chunk on one core: ~10 s for a patient with 200 chunks,
more than a minute for a patient with 1,500). Without warming, the first such question of a server process
pays both. The ``warm_notes`` setting says how much is done before anyone asks:

- ``off``: nothing (the first note search loads the model, and each patient's first search embeds their notes);
- ``model`` (default): the embedder is loaded in a background thread as the server starts;
- ``index``: the model, then every patient's notes are embedded into the notes index (kept in
  ``<db>/notes.lance``; a restart re-embeds only notes that changed since).

Questions are answered meanwhile: one arriving before the warm-up finishes waits for the model load it needs
(loads happen once, under a lock) or embeds its patient's notes itself. ``/readyz`` reports the progress
under ``notes``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Literal

from fhirqa.store import Store

log = logging.getLogger("fhirqa.server")

WarmMode = Literal["off", "model", "index"]
MODES: tuple[str, ...] = ("off", "model", "index")


class NotesWarmup:
    """One background warm-up of a store's notes search; :attr:`status` says how far it got."""

    def __init__(self, store: Store, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"warm_notes must be one of {', '.join(MODES)}, not {mode!r}")
        self.store = store
        self.mode = mode
        self.status = "off" if mode == "off" else "waiting"
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start warming (a daemon thread: a stopping server does not wait for it)."""
        if self.mode == "off" or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="fhirqa-notes-warmup", daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the warm-up; True when it has finished (or never started)."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        from fhirqa.agent.embeddings import unavailable_reason
        from fhirqa.agent.engine import shared_notes

        started = time.perf_counter()
        try:
            index = shared_notes(self.store)
            if index is None:
                self.status = "unavailable: the notes extra (lancedb) is not installed"
                return
            self.status = "loading the embedding model"
            if index.embedder is None:  # embeddings switched off or not installed: full-text search only
                self.status = f"full-text only: {unavailable_reason() or 'embeddings are off'}"
                return
            if self.mode == "index" and self.store.exists():
                self.status = "indexing the notes"
                report = index.build(progress=lambda message: log.info("notes warm-up: %s", message))
                log.info("notes warm-up indexed %d notes of %d patients (%d chunks embedded) in %.1f s",
                         report.notes, report.patients, report.chunks, time.perf_counter() - started)
            self.status = "ready"
        except Exception as exc:  # noqa: BLE001 - a failed warm-up only means the first searches do the work
            self.status = f"failed: {type(exc).__name__}"
            log.warning("notes warm-up failed (%s); note searches will load and embed on first use",
                        type(exc).__name__)
