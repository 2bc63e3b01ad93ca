"""End to end: the same bundles ingested from files and from a real server fill the views alike."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fhirqa.sources import FileSource
from fhirqa.sources.base import RawRecord
from fhirqa.sources.bulk import BulkExportSource
from fhirqa.sources.rest import FhirRestSource
from fhirqa.store import Store, ingest

pytestmark = pytest.mark.server


class OnlyLoaded:
    """Keeps the records of the loaded bundles: the session's server may hold other tests' data too."""

    def __init__(self, source: BulkExportSource, keys: set[tuple[str, str]]) -> None:
        self.source = source
        self.keys = keys
        self.description = source.description

    def records(self) -> Iterator[RawRecord]:
        for record in self.source.records():
            res = record.resource
            if res is None or (res["resourceType"], res["id"]) in self.keys:
                yield record


def test_files_everything_and_export_fill_the_views_with_the_same_row_counts(fhir_server, loaded, tmp_path):
    from_files = ingest([FileSource(loaded.files)], tmp_path / "files")
    from_everything = ingest(
        [FhirRestSource(fhir_server, patient=pid) for pid in loaded.patients], tmp_path / "rest"
    )
    export = BulkExportSource(fhir_server, types=sorted(loaded.counts()), poll_interval=0.2, timeout=60)
    from_export = ingest([OnlyLoaded(export, loaded.all_keys)], tmp_path / "bulk")

    for report in (from_files, from_everything, from_export):
        assert report.rejected == []
        assert report.read == loaded.counts()
    files_counts = Store(tmp_path / "files").counts()
    assert sum(files_counts.values()) > 0
    assert Store(tmp_path / "rest").counts() == files_counts
    assert Store(tmp_path / "bulk").counts() == files_counts
