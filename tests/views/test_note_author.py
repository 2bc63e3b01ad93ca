"""Who wrote a note: the note view names the author a DocumentReference (or a report's performer) gives only by
reference, from the referenced Practitioner, as the encounter view names a visit's clinician.

A small bundle: one note whose author is a bare ``Practitioner`` reference, one with a display, one whose
author is not in the bundle, and a report whose performer is a reference. The expected names are read from the
bundle's own JSON.
"""

from __future__ import annotations

import base64
import json

from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _bundle() -> dict:
    practitioner = {"resourceType": "Practitioner", "id": "doc1",
                    "name": [{"prefix": ["Dr."], "given": ["Ana", "Maria"], "family": "Reyes"}]}
    texted = {"resourceType": "Practitioner", "id": "doc2", "name": [{"text": "Sam Okafor, PT"}]}

    def note(i: str, author: dict) -> dict:
        return {"resourceType": "DocumentReference", "id": i, "status": "current", "subject": {"reference": "Patient/p1"},
                "type": {"text": "Progress note"}, "date": "2024-03-0" + i[-1] + "T10:00:00Z", "author": [author],
                "content": [{"attachment": {"contentType": "text/plain", "data": _b64(f"Note {i}. Stable.")}}]}

    report = {"resourceType": "DiagnosticReport", "id": "r1", "status": "final", "subject": {"reference": "Patient/p1"},
              "code": {"text": "XR Chest"}, "effectiveDateTime": "2024-03-05T10:00:00Z",
              "performer": [{"reference": "Practitioner/doc2"}], "conclusion": "No acute process."}
    entries = [{"resource": r} for r in (
        {"resourceType": "Patient", "id": "p1"}, practitioner, texted,
        note("n1", {"reference": "Practitioner/doc1"}),
        note("n2", {"reference": "Practitioner/doc1", "display": "Dr. A. Reyes"}),
        note("n3", {"reference": "Practitioner/absent"}),
        report)]
    return {"resourceType": "Bundle", "type": "collection", "entry": entries}


def _expected(bundle: dict) -> dict[str, str]:
    """ref -> the author as a reader resolves it by hand: the display, else the Practitioner's name text, else its
    given names and family name, else the reference as written."""
    people = {}
    for e in bundle["entry"]:
        r = e["resource"]
        if r["resourceType"] == "Practitioner":
            name = r["name"][0]
            people[f"Practitioner/{r['id']}"] = name.get("text") or " ".join([*name.get("given", []), name["family"]])
    out = {}
    for e in bundle["entry"]:
        r = e["resource"]
        who = (r.get("author") or r.get("performer") or [None])[0]
        if who is not None:
            out[f"{r['resourceType']}/{r['id']}"] = who.get("display") or people.get(who["reference"], who["reference"])
    return out


def test_the_note_view_names_an_author_given_only_by_reference(tmp_path):
    bundle = _bundle()
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "b.json").write_text(json.dumps(bundle))
    ingest([FileSource([tmp_path / "in"])], tmp_path / "db")
    rows = dict(Store(tmp_path / "db").query("SELECT ref, author FROM note").rows)
    assert rows == _expected(bundle)
    assert rows["DocumentReference/n1"] == "Ana Maria Reyes"  # given names + family, the title left out
    assert rows["DocumentReference/n3"] == "Practitioner/absent"  # nothing to name it by: the reference stays
