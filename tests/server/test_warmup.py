"""The notes warm-up: a server started with ``warm_notes = "index"`` embeds every patient's notes in the background,
so no clinician's first note question waits for it; ``/readyz`` reports how far it got."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fhirqa.server.config import ConfigError, load_config
from tests.server.conftest import Keys, copy_store, make_config, run_server

pytest.importorskip("lancedb", reason="the notes index needs LanceDB: pip install lancedb")


def _notes_status(client, timeout: float = 300.0) -> str:
    """``/readyz``'s ``notes`` once the warm-up has finished (or the last status seen at the timeout)."""
    deadline = time.monotonic() + timeout
    status = ""
    while time.monotonic() < deadline:
        status = client.get("/readyz").json()["notes"]
        if status not in ("waiting", "loading the embedding model", "indexing the notes"):
            return status
        time.sleep(0.5)
    return status


def test_index_warm_up_embeds_every_patients_notes_before_anyone_asks(sample_store: Path, keys: Keys,
                                                                      tmp_path: Path) -> None:
    from fhirqa.agent.embeddings import get_embedder, unavailable_reason
    from fhirqa.notes import NoteIndex
    from fhirqa.store import Store

    if get_embedder() is None:
        pytest.skip(f"sentence embeddings unavailable: {unavailable_reason() or 'FHIRQA_EMBEDDINGS is off'}")
    db = copy_store(sample_store, tmp_path / "db")
    config = make_config(db, tmp_path / "state", keys, warm_notes="index")
    with run_server(config, keys) as server, server.client() as client:
        assert _notes_status(client) == "ready"
        assert server.state.warmup.join(5)

    store = Store(db)
    with_notes = {r[0] for r in store.query("SELECT DISTINCT patient_id FROM note", limit=100).rows}
    index = NoteIndex(store)  # what a restarted server opens
    indexed = {r["patient_id"] for r in index.table().search().select(["patient_id"]).limit(None).to_arrow().to_pylist()}
    assert with_notes and indexed == with_notes
    again = index.build()  # a restart's warm-up: every note is already embedded with its current content
    assert again.notes > 0 and again.embedded_notes == 0


def test_warm_up_is_off_on_request_and_reports_so(sample_store: Path, keys: Keys, tmp_path: Path) -> None:
    config = make_config(copy_store(sample_store, tmp_path / "db"), tmp_path / "state", keys, warm_notes="off")
    with run_server(config, keys) as server, server.client() as client:
        body = client.get("/readyz").json()
        assert body["status"] == "ready" and body["notes"] == "off"


def test_an_unknown_warm_up_mode_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="warm_notes"):
        load_config(env={"FHIRQA_DB": str(tmp_path / "db"), "FHIRQA_SERVER_WARM_NOTES": "sometimes"})
