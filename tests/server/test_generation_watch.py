"""Which generation a request reads: one ``stat`` shared by a request's checks, an own ingest seen at once."""

from __future__ import annotations

import json
import time
import uuid

from fhirqa.server.asking import GenerationWatch
from fhirqa.server.ids import new_id
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest


def bundle(tmp_path, name: str, patient: str):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"resourceType": "Bundle", "type": "collection",
                                "entry": [{"resource": {"resourceType": "Patient", "id": patient}}]}), "utf-8")
    return path


def test_a_commit_is_seen_after_changed_or_once_the_last_stat_is_old(tmp_path):
    db = tmp_path / "db"
    ingest([FileSource([bundle(tmp_path, "a", "p1")])], db)
    watch = GenerationWatch(Store(db), fresh_s=60.0)
    first = watch.current()
    ingest([FileSource([bundle(tmp_path, "b", "p2")])], db)
    assert watch.current() == first  # within fresh_s: the last stat stands
    watch.changed()
    assert watch.current() == first + 1

    quick = GenerationWatch(Store(db), fresh_s=0.001)
    assert quick.current() == first + 1
    ingest([FileSource([bundle(tmp_path, "c", "p3")])], db)
    time.sleep(0.01)
    assert quick.current() == first + 2


def test_server_ids_are_unique_version_4_uuids():
    ids = {new_id() for _ in range(20_000)}
    assert len(ids) == 20_000
    assert all(uuid.UUID(hex=i).version == 4 and len(i) == 32 for i in list(ids)[:100])
