"""Unpack a FHIR Bundle into records, resolving references between its entries.

Handles collection, transaction, batch, searchset, history, document and message bundles, and
the ``-response`` forms. Transaction/batch ``DELETE`` entries become deletions; searchset
``outcome`` entries (OperationOutcome warnings from the server) are reported, not ingested.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fhirqa.normalize.references import relative_reference, rewrite_references
from fhirqa.sources.base import Origin, RawRecord


def _entry_key(entry: dict[str, Any]) -> str | None:
    """``Type/id`` an entry's resource will be stored under (fullUrl ``urn:uuid:`` supplies a missing id)."""
    resource = entry.get("resource")
    if not isinstance(resource, dict):
        return None
    rtype = resource.get("resourceType")
    rid = resource.get("id")
    full_url = entry.get("fullUrl")
    if not rid and isinstance(full_url, str) and full_url.startswith("urn:uuid:"):
        rid = full_url[len("urn:uuid:") :]
        resource["id"] = rid
    if isinstance(rtype, str) and isinstance(rid, str) and rid:
        return f"{rtype}/{rid}"
    return None


def iter_bundle(bundle: dict[str, Any], location: str, line: int | None = None) -> Iterator[RawRecord]:
    """Yield one record per entry of ``bundle``, references rewritten to ``Type/id``.

    ``location``/``line`` say where the bundle itself came from; each record's origin adds its entry index.
    """
    entries = bundle.get("entry") or []
    if not isinstance(entries, list):
        yield RawRecord(Origin(location, line), problem="Bundle.entry is not a list", raw=None)
        return
    full_urls: dict[str, str] = {}
    for entry in entries:
        if isinstance(entry, dict):
            key = _entry_key(entry)
            full_url = entry.get("fullUrl")
            if key and isinstance(full_url, str):
                full_urls[full_url] = key
    for index, entry in enumerate(entries):
        origin = Origin(location, line, index)
        if not isinstance(entry, dict):
            yield RawRecord(origin, problem="bundle entry is not a JSON object", raw=repr(entry)[:2000])
            continue
        request = entry.get("request") or {}
        method = request.get("method") if isinstance(request, dict) else None
        if method == "DELETE":
            target = relative_reference(str(request.get("url", "")))
            if target is None:
                yield RawRecord(origin, problem=f"DELETE of unsupported url {request.get('url')!r}")
                continue
            rtype, rid = target.split("/", 1)
            yield RawRecord(origin, resource={"resourceType": rtype, "id": rid}, deleted=True)
            continue
        resource = entry.get("resource")
        search = entry.get("search")
        if isinstance(search, dict) and search.get("mode") == "outcome":
            yield RawRecord(origin, problem=f"server message (search outcome): {_outcome_text(resource)}")
            continue
        if resource is None:
            if "response" in entry:
                continue  # a transaction-response entry that carries only a status: nothing to ingest
            yield RawRecord(origin, problem="bundle entry has no resource", raw=repr(entry)[:2000])
            continue
        if not isinstance(resource, dict):
            yield RawRecord(origin, problem="entry.resource is not a JSON object", raw=repr(resource)[:2000])
            continue
        dangling: list[str] = []
        rewrite_references(resource, full_urls, dangling)
        record = RawRecord(origin, resource=resource)
        if dangling:
            record.warnings.append("dangling reference(s): " + ", ".join(dangling[:5]))
        yield record


def _outcome_text(resource: Any) -> str:
    if isinstance(resource, dict):
        issues = resource.get("issue") or []
        texts = [
            str(i.get("diagnostics") or (i.get("details") or {}).get("text") or i.get("code"))
            for i in issues
            if isinstance(i, dict)
        ]
        if texts:
            return "; ".join(texts)
    return "OperationOutcome"
