"""Notes from every source: the note view (plain, HTML, reports), inline PDFs, local url files, OMOP, MIMIC."""

from __future__ import annotations

import base64
import json
import sqlite3

from fhirqa.notes.sources import mimic_notes, notes_for, omop_notes

from .conftest import ingest


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def tiny_pdf(text: str) -> bytes:
    """A one-page PDF with a text layer."""
    stream = f"BT /F1 12 Tf 10 100 Td ({text}) Tj ET"
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 144] /Contents 4 0 R "
               "/Resources << /Font << /F1 5 0 R >> >> >>",
               f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
               "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    return out + f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()


def _doc(doc_id: str, date: str, attachment: dict, kind: str = "Progress note") -> dict:
    return {"resourceType": "DocumentReference", "id": doc_id, "status": "current", "subject": {"reference": "Patient/p1"},
            "type": {"text": kind}, "date": date, "author": [{"display": "Dr. Ana Ruiz"}],
            "context": {"encounter": [{"reference": "Encounter/e1"}]}, "content": [{"attachment": attachment}]}


def test_every_kind_of_fhir_note(tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    (files / "note.txt").write_text("Outside note: potassium 5.4 on recheck.", "utf-8")
    (files / "scan.pdf").write_bytes(tiny_pdf("Scanned letter: metformin 500 mg twice daily"))
    outside = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    outside.write_text("not a note", "utf-8")
    resources = [
        {"resourceType": "Patient", "id": "p1", "name": [{"given": ["Ana"], "family": "Diaz"}]},
        _doc("plain", "2025-01-02T10:00:00Z", {"contentType": "text/plain", "data": _b64(b"S: denies chest pain.")}),
        _doc("html", "2025-01-03T10:00:00Z", {"contentType": "text/html",
                                              "data": _b64(b"<p>K 5.4 &amp; Na 138</p>")}),
        _doc("pdf", "2025-01-04T10:00:00Z", {"contentType": "application/pdf",
                                             "data": _b64(tiny_pdf("PDF note: furosemide 40 mg daily"))}),
        _doc("file", "2025-01-05T10:00:00Z", {"contentType": "text/plain", "url": (files / "note.txt").as_uri()}),
        _doc("filepdf", "2025-01-06T10:00:00Z", {"contentType": "application/pdf", "url": str(files / "scan.pdf")}),
        _doc("remote", "2025-01-07T10:00:00Z", {"contentType": "text/plain", "url": "https://example.org/n.txt"}),
        _doc("outside", "2025-01-08T10:00:00Z", {"contentType": "text/plain", "url": str(outside)}),
        {"resourceType": "DiagnosticReport", "id": "rep", "status": "final", "subject": {"reference": "Patient/p1"},
         "code": {"text": "XR Chest"}, "effectiveDateTime": "2025-01-09T10:00:00Z", "conclusion": "No acute process."},
    ]
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({"resourceType": "Bundle", "type": "collection",
                                  "entry": [{"resource": r} for r in resources]}), "utf-8")
    store = ingest([bundle], tmp_path / "db")
    notes = {n.ref.split("/")[1]: n for n in notes_for(store, "p1", file_roots=[files])}
    assert set(notes) == {"plain", "html", "pdf", "file", "filepdf", "rep"}  # remote and outside-root urls unread
    assert notes["plain"].text == "S: denies chest pain." and notes["plain"].note_type == "Progress note"
    assert notes["plain"].author == "Dr. Ana Ruiz" and notes["plain"].encounter_ref == "Encounter/e1"
    assert notes["html"].text == "K 5.4 & Na 138"
    assert "furosemide 40 mg daily" in notes["pdf"].text
    assert notes["file"].text == "Outside note: potassium 5.4 on recheck."
    assert "metformin 500 mg" in notes["filepdf"].text
    assert notes["rep"].text == "No acute process." and notes["rep"].source == "DiagnosticReport"
    assert [n.date for n in notes_for(store, "p1", file_roots=[files])][0] == "2025-01-02"  # oldest first


def test_sample_notes_come_with_date_type_author_and_encounter(sample_store, mei):
    notes = notes_for(sample_store, mei)
    assert len(notes) == sample_store.query("SELECT count(*) FROM note WHERE patient_id = ?", [mei]).rows[0][0]
    assert [n.time for n in notes] == sorted(n.time for n in notes)
    hp = next(n for n in notes if n.note_type == "History and physical note")
    assert "Labs on admission" in hp.text and hp.author and hp.encounter_ref.startswith("Encounter/")
    assert len({n.content_hash for n in notes}) == len(notes)


def test_omop_note_table_with_concept_names():
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE note (note_id, person_id, note_date, note_datetime, note_type_concept_id, "
                "note_class_concept_id, note_title, note_text, encoding_concept_id, language_concept_id, provider_id, "
                "visit_occurrence_id, visit_detail_id, note_source_value)")
    con.execute("CREATE TABLE concept (concept_id, concept_name)")
    con.execute("INSERT INTO concept VALUES (44814637, 'Discharge summary')")
    con.executemany("INSERT INTO note VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", [
        (1, 7, "2020-01-02", "2020-01-02 10:00:00", 44814645, 44814637, None, "K 5.4 at discharge.", 0, 0, 3, 9, None, None),
        (2, 7, "2020-01-01", None, 0, 0, "Nursing note", "Pt resting.", 0, 0, None, None, None, None),
        (3, 8, "2020-01-01", None, 0, 0, "Other", "Other patient.", 0, 0, None, None, None, None),
        (4, 7, "2020-01-03", None, 0, 0, "Empty", "  ", 0, 0, None, None, None, None),
    ])
    notes = omop_notes(con, 7)
    assert [n.ref for n in notes] == ["note/2", "note/1"]
    assert notes[1].note_type == "Discharge summary" and notes[1].encounter_ref == "visit_occurrence/9"
    assert notes[1].author == "provider/3" and notes[1].time.isoformat() == "2020-01-02T10:00:00+00:00"
    assert notes[0].note_type == "Nursing note" and notes[0].date == "2020-01-01"
    assert len(omop_notes(con)) == 3


def test_mimic_noteevents_skip_errors():
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE noteevents (ROW_ID, SUBJECT_ID, HADM_ID, CHARTDATE, CHARTTIME, STORETIME, CATEGORY, "
                "DESCRIPTION, CGID, ISERROR, TEXT)")
    con.executemany("INSERT INTO noteevents VALUES (?,?,?,?,?,?,?,?,?,?,?)", [
        (10, 5, 100, "2150-01-01", "2150-01-01 08:00:00", None, "Nursing", "Nursing Progress Note", 77, None, "Afebrile."),
        (11, 5, 100, "2150-01-02", None, None, "Discharge summary", "Report", None, 1, "Entered in error."),
        (12, 5, None, "2150-01-03", None, None, "Radiology", "CHEST (PA & LAT)", None, None, "No effusion."),
        (13, 5, 100, "2150-01-04", None, None, "Physician ", "Physician Resident Progress Note", None, None, "Stable."),
    ])
    notes = mimic_notes(con, 5)
    assert [n.ref for n in notes] == ["noteevents/10", "noteevents/12", "noteevents/13"]
    assert notes[0].note_type == "Nursing: Nursing Progress Note" and notes[0].encounter_ref == "admission/100"
    assert notes[2].note_type == "Physician: Physician Resident Progress Note"  # MIMIC's padded category
    assert notes[0].author == "caregiver/77" and notes[1].date == "2150-01-03"


def test_mimic_caregivers_give_the_authors_role_when_the_table_is_loaded():
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE noteevents (ROW_ID, SUBJECT_ID, HADM_ID, CHARTDATE, CHARTTIME, STORETIME, CATEGORY, "
                "DESCRIPTION, CGID, ISERROR, TEXT)")
    con.executemany("INSERT INTO noteevents VALUES (?,?,?,?,?,?,?,?,?,?,?)", [
        (10, 5, 100, "2150-01-01", None, None, "Nursing", "Nursing Progress Note", 77, None, "Afebrile."),
        (11, 5, 100, "2150-01-02", None, None, "Rehab Services", "Rehab/PT Eval", 78, None, "Ambulates."),
        (12, 5, 100, "2150-01-03", None, None, "Radiology", "CHEST (PA & LAT)", 79, None, "No effusion."),
    ])
    con.execute("CREATE TABLE caregivers (ROW_ID, CGID, LABEL, DESCRIPTION)")
    con.executemany("INSERT INTO caregivers VALUES (?,?,?,?)", [(1, 77, "RN", "RN"), (2, 78, None, "Rehabilitation")])
    notes = mimic_notes(con, 5, caregivers="caregivers")
    assert [n.author for n in notes] == ["caregiver 77 (RN)", "caregiver 78 (Rehabilitation)", "caregiver/79"]
    assert [n.author for n in mimic_notes(con, 5)] == ["caregiver/77", "caregiver/78", "caregiver/79"]  # not asked
