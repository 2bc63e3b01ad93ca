"""Sources for ingest jobs: an uploaded body kept on disk, or a pull from a FHIR server.

An upload is read with the same readers as files (``iter_ndjson``, ``iter_json_document``), so the
same validation and quarantine rules apply; origins read ``upload <job id>:<line>`` or
``upload <job id> entry[<n>]``, which is what a client can find in its own body.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from fhirqa.sources.base import RawRecord, Source
from fhirqa.sources.files import iter_json_document, iter_ndjson
from fhirqa.sources.rest import open_server_source


class UploadSource:
    """Records from one uploaded body (NDJSON streamed line by line; a JSON document read whole)."""

    def __init__(self, path: Path, fmt: str, job_id: str) -> None:
        self.path = path
        self.fmt = fmt
        self.description = f"upload {job_id}"

    def records(self) -> Iterator[RawRecord]:
        """Stream the upload's records."""
        with self.path.open("rb") as stream:
            if self.fmt == "ndjson":
                yield from iter_ndjson(stream, self.description)
            else:
                yield from iter_json_document(stream.read(), self.description)


def job_source(kind: str, request: dict, input_path: Path, job_id: str, secrets: dict[str, str]) -> Source:
    """The source an ingest job reads."""
    if kind == "ingest":
        return UploadSource(input_path, str(request.get("format", "json")), job_id)
    return open_server_source(
        str(request["url"]),
        patient=request.get("patient"),
        since=request.get("since"),
        bulk=bool(request.get("bulk")),
        types=request.get("types") or None,
        token=secrets.get("token"),
    )
