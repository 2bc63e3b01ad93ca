"""Reading FHIR from files: every format, and a clear problem for every bad input."""

from __future__ import annotations

import gzip
import json

from fhirqa.sources import FileSource
from tests.builders import condition, observation, patient, transaction, write_json, write_ndjson


def records(*paths):
    return list(FileSource(paths).records())


def test_transaction_bundle_references_are_resolved_to_type_and_id(tmp_path):
    path = write_json(tmp_path / "b.json", transaction(patient("p1"), observation("o1", "p1")))
    recs = records(path)
    obs = next(r.resource for r in recs if r.resource["resourceType"] == "Observation")
    assert obs["subject"]["reference"] == "Patient/p1"
    assert [str(r.origin) for r in recs] == [f"{path} entry[0]", f"{path} entry[1]"]


def test_entry_without_id_takes_it_from_its_urn_uuid_full_url(tmp_path):
    bundle = transaction(patient("p1"))
    del bundle["entry"][0]["resource"]["id"]
    rec = records(write_json(tmp_path / "b.json", bundle))[0]
    assert rec.resource["id"] == "p1"


def test_absolute_server_references_become_relative(tmp_path):
    obs = observation(subject={"reference": "https://fhir.example.org/r4/Patient/p9/_history/3"})
    rec = records(write_json(tmp_path / "o.json", obs))[0]
    assert rec.resource["subject"]["reference"] == "Patient/p9"


def test_dangling_urn_reference_is_kept_with_a_warning(tmp_path):
    bundle = transaction(observation("o1", "p1"))
    bundle["entry"][0]["resource"]["subject"]["reference"] = "urn:uuid:missing"
    rec = records(write_json(tmp_path / "b.json", bundle))[0]
    assert rec.resource is not None
    assert "dangling" in rec.warnings[0] and "urn:uuid:missing" in rec.warnings[0]


def test_ndjson_lines_are_numbered_and_a_malformed_line_is_a_problem(tmp_path):
    path = write_ndjson(tmp_path / "Observation.ndjson", [observation("o1"), "{not json", observation("o2")])
    recs = records(path)
    assert [r.resource["id"] if r.resource else None for r in recs] == ["o1", None, "o2"]
    bad = recs[1]
    assert bad.origin.line == 2 and "malformed JSON" in bad.problem and bad.raw == "{not json"


def test_gzipped_ndjson_is_streamed(tmp_path):
    path = tmp_path / "Condition.ndjson.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(json.dumps(condition("c1")) + "\n" + json.dumps(condition("c2")) + "\n")
    assert [r.resource["id"] for r in records(path)] == ["c1", "c2"]


def test_folders_are_read_recursively_and_non_fhir_files_are_listed_as_skipped(tmp_path):
    write_json(tmp_path / "a" / "p.json", patient("p1"))
    write_ndjson(tmp_path / "a" / "b" / "o.ndjson", [observation("o1")])
    (tmp_path / "README.md").write_text("not data")
    source = FileSource([tmp_path])
    assert sorted(r.resource["id"] for r in source.records()) == ["o1", "p1"]
    assert source.skipped == [str(tmp_path / "README.md")]


def test_searchset_outcome_entries_are_reported_not_ingested(tmp_path):
    bundle = {"resourceType": "Bundle", "type": "searchset", "entry": [
        {"resource": patient("p1"), "search": {"mode": "match"}},
        {"resource": {"resourceType": "OperationOutcome", "issue": [{"diagnostics": "too many results"}]},
         "search": {"mode": "outcome"}}]}
    recs = records(write_json(tmp_path / "s.json", bundle))
    assert recs[0].resource["id"] == "p1"
    assert "too many results" in recs[1].problem


def test_transaction_delete_entry_becomes_a_deletion(tmp_path):
    bundle = {"resourceType": "Bundle", "type": "transaction",
              "entry": [{"request": {"method": "DELETE", "url": "Observation/o1"}}]}
    rec = records(write_json(tmp_path / "d.json", bundle))[0]
    assert rec.deleted and rec.resource == {"resourceType": "Observation", "id": "o1"}


def test_html_instead_of_json_is_named_as_such(tmp_path):
    path = tmp_path / "page.json"
    path.write_text("<!DOCTYPE html><html><body>Login</body></html>")
    rec = records(path)[0]
    assert "HTML" in rec.problem and str(path) in str(rec.origin)


def test_a_json_array_is_not_a_resource(tmp_path):
    rec = records(write_json(tmp_path / "x.json", [1, 2]))[0]
    assert "expected a JSON object" in rec.problem


def test_missing_path_raises_a_source_error(tmp_path):
    import pytest

    from fhirqa.errors import SourceError

    with pytest.raises(SourceError, match="no such file"):
        records(tmp_path / "nope.json")
