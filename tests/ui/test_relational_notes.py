"""The Notes panel for a patient of a MIMIC-III database loaded beside the views: listed, read and checked.

The same page and routes as for a FHIR patient (``/ui/api/patients/{id}/notes…`` and the consistency check): the
note list holds their ``noteevents`` rows (the error row left out), a note opens with every entity the check read
highlighted, and the record rows compared link to the source rows (``labevents/2``). A token confined to one
patient lists and reads no other patient's notes. Screenshot: ``artifacts/ui/relational-note.png``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import Server, run_relational_server
from tests.sql.relational_beside import NOTE_REFS, OTHER, PATIENT
from tests.ui.browser import Page
from tests.ui.test_page import shown_time

A = "Linda Taylor"


@pytest.fixture(scope="module")
def ui_server(sample_store: Path, keys: Any, ids: dict[str, str], tmp_path_factory) -> Iterator[Server]:
    """The server over a copy of the sample store with the test MIMIC-III database (and notes) beside it."""
    with run_relational_server(sample_store, keys, ids[A], tmp_path_factory.mktemp("relational-notes-ui")) as running:
        yield running


def test_the_notes_of_a_mimic_patient_are_listed_newest_first_and_readable(ui_server):
    with ui_server.client(ui_server.token("system/*.rs")) as client:
        listed = client.get(f"/ui/api/patients/{PATIENT}/notes")
        one = client.get(f"/ui/api/patients/{PATIENT}/notes/noteevents/1")
    assert listed.status_code == 200, listed.text
    notes = listed.json()["notes"]
    assert [n["ref"] for n in notes] == NOTE_REFS  # newest first; the row marked in error is not there
    assert notes[1]["time"] == "2164-10-24T11:00:00+00:00" and "Progress Note" in notes[1]["note_type"]
    assert notes[1]["length"] == len(one.json()["text"])
    assert one.status_code == 200 and one.json()["text"].startswith("MICU progress note.")
    assert one.headers["cache-control"] == "no-store"


def test_a_token_for_one_patient_lists_and_reads_no_other_patients_notes(ui_server, ids):
    with ui_server.client(ui_server.token("system/*.rs")) as client:
        fhir_note = client.get(f"/ui/api/patients/{ids[A]}/notes").json()["notes"][0]["ref"]
    with ui_server.client(ui_server.token("patient/*.rs", patient=PATIENT)) as client:
        assert [n["ref"] for n in client.get(f"/ui/api/patients/{PATIENT}/notes").json()["notes"]] == NOTE_REFS
        assert client.get(f"/ui/api/patients/{OTHER}/notes").status_code == 403
        assert client.get(f"/ui/api/patients/{OTHER}/notes/noteevents/4").status_code == 403
        # 10011's note (and a FHIR patient's) through 10006's path: not this patient's note
        assert client.get(f"/ui/api/patients/{PATIENT}/notes/noteevents/4").status_code == 404
        assert client.get(f"/ui/api/patients/{PATIENT}/notes/noteevents/3").status_code == 404  # marked in error
        assert client.get(f"/ui/api/patients/{PATIENT}/notes/{fhir_note}").status_code == 404
    with ui_server.client(ui_server.token("patient/*.rs", patient=ids[A])) as client:
        assert client.get(f"/ui/api/patients/{PATIENT}/notes").status_code == 403
        assert client.get(f"/ui/api/patients/{PATIENT}/notes/noteevents/1").status_code == 403
        # a FHIR patient's notes are FHIR resources: a table's row is never served through their path
        assert client.get(f"/ui/api/patients/{ids[A]}/notes/noteevents/1").status_code == 404
    with ui_server.client(ui_server.token("patient/Observation.rs", patient=PATIENT)) as client:
        assert client.get(f"/ui/api/patients/{PATIENT}/notes").status_code == 403  # notes need note scopes


def test_a_mimic_patients_note_opens_with_its_check_highlighted_and_its_source_rows_linked(page: Page, ui_server,
                                                                                           artifacts: Path):
    token = ui_server.token("system/*.rs")
    page.sign_in(token)
    assert page.search(PATIENT) == ["(no name)"]
    page.pick("(no name)")
    page.wait(lambda: page.js("return document.getElementById('notes').dataset.state") == "listed", "the note list")
    buttons = page.all("#note-list .note-choice")
    assert [b.get_attribute("data-ref") for b in buttons] == NOTE_REFS
    progress = buttons[1]
    assert shown_time("2164-10-24T11:00:00+00:00") in progress.text
    page.js("arguments[0].scrollIntoView({block: 'center'})", progress)
    progress.click()
    page.wait(lambda: page.js("return document.getElementById('notes').dataset.state") in ("ready", "error"),
              "the note's consistency report")
    assert page.js("return document.getElementById('notes').dataset.state") == "ready", page.text("#note-counts")

    with ui_server.client(token) as client:
        (report,) = client.post(f"/api/patients/{PATIENT}/check-consistency", json={"note": "noteevents/1"}).json()["reports"]
    marks = {m.text: m for m in page.all("#note-text mark.ent")}
    assert {text: m.get_attribute("data-status") for text, m in marks.items()} == {
        e["text"]: e["status"] for e in report["entities"]}
    assert marks["Creatinine 2.9"].get_attribute("data-status") == "inconsistent"

    potassium = marks["K 5.4"]
    page.js("arguments[0].scrollIntoView({block: 'center'})", potassium)
    potassium.click()
    page.wait(lambda: page.visible("#entity-detail"), "the entity details")
    rows = page.all("#entity-detail table.compared tbody tr")
    assert [r.get_attribute("data-ref") for r in rows] == ["labevents/2"]
    link = rows[0].find_element("css selector", "a.resource-link")
    assert link.get_attribute("href").endswith(f"/ui/api/patients/{PATIENT}/resources/labevents/2")
    page.screenshot(artifacts / "relational-note.png")
    link.click()
    page.wait(lambda: '"valuenum"' in page.text("#resource-json"), "the source row")
    assert '"subject_id": 10006' in page.text("#resource-json")
