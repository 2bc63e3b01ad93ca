"""The Notes panel: a note's text with each entity the consistency check read highlighted by verdict.

In a real headless Chromium against the real server: open a patient, open a note, and check that the
highlights (their spans, text and statuses) are the report of ``POST /api/patients/{id}/check-consistency``
for that note, and that an entity's detail box shows its status, mismatching fields, reason and the rows
compared. Also: the note helpers (``/ui/api/patients/{id}/notes…``) keep a patient-A token away from
patient B's notes. Screenshot: ``artifacts/ui/consistency-note.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ui.browser import Page
from tests.ui.test_page import shown_time

A, B = "Linda Taylor", "Mei Wilson"
#: Mei Wilson's discharge summary: long, checked entities of every kind, one inconsistent.
PATIENT = B


def api_report(server: Any, token: str, patient: str, ref: str) -> dict[str, Any]:
    """The consistency report of one note, as the API gives it."""
    with server.client(token) as client:
        response = client.post(f"/api/patients/{patient}/check-consistency", json={"note": ref})
    assert response.status_code == 200, response.text
    (report,) = response.json()["reports"]
    return report


def open_note(page: Page, server: Any, patient: str) -> tuple[str, str]:
    """Sign in, pick the patient, open the discharge summary (or the longest note); token and ref."""
    token = server.token("system/*.rs")
    page.sign_in(token)
    assert page.search(patient.split()[0]) == [patient]
    page.pick(patient)
    page.wait(lambda: page.js("return document.getElementById('notes').dataset.state") == "listed", "the note list")
    buttons = page.all("#note-list .note-choice")
    assert buttons, "no notes listed"
    with server.client(token) as client:
        notes = client.get(f"/ui/api/patients/{server_ids(page)}/notes").json()["notes"]
    assert [b.get_attribute("data-ref") for b in buttons] == [n["ref"] for n in notes]
    chosen = next((n for n in notes if "discharge" in (n["note_type"] or "").lower()),
                  max(notes, key=lambda n: n["length"]))
    button = next(b for b in buttons if b.get_attribute("data-ref") == chosen["ref"])
    assert shown_time(chosen["time"]) in button.text
    page.js("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()
    page.wait(lambda: page.js("return document.getElementById('notes').dataset.state") in ("ready", "error"),
              "the note's consistency report")
    assert page.js("return document.getElementById('notes').dataset.state") == "ready", page.text("#note-counts")
    return token, chosen["ref"]


def server_ids(page: Page) -> str:
    """The id of the patient the page shows (from the pressed search result)."""
    return str(page.find(".patient-choice[aria-pressed='true']").get_attribute("data-id"))


def test_note_highlights_match_the_report(page, ui_server, ids, artifacts: Path):
    token, ref = open_note(page, ui_server, PATIENT)
    patient = ids[PATIENT]
    report = api_report(ui_server, token, patient, ref)
    entities = report["entities"]
    assert entities, "the note has no checked entities"
    with ui_server.client(token) as client:
        text = client.get(f"/ui/api/patients/{patient}/notes/{ref}").json()["text"]
    # The note text is shown whole, as text.
    assert page.js("return document.getElementById('note-text').textContent") == text

    marks = page.all("#note-text mark.ent")
    covered: dict[int, str] = {}
    spans = set()
    for mark in marks:
        indices = [int(i) for i in mark.get_attribute("data-entities").split()]
        statuses = mark.get_attribute("data-statuses").split()
        start, end = (int(v) for v in mark.get_attribute("data-span").split(","))
        spans.add((start, end))
        assert mark.get_attribute("tabindex") == "0"
        assert mark.get_attribute("title")  # the hover summary
        for i, status in zip(indices, statuses, strict=True):
            assert i not in covered
            covered[i] = status
            assert status == entities[i]["status"]
        shown = mark.get_attribute("data-status")
        assert shown in statuses and f"ent-{shown}" in mark.get_attribute("class")
        if "inconsistent" in statuses:
            assert shown == "inconsistent"
        if mark.text and (start, end) == tuple(entities[indices[0]]["entity"]["span"]):
            assert mark.get_attribute("textContent") == text[start:end]
    # Every entity of the report is on one highlight, with its own status; one highlight per distinct span.
    assert sorted(covered) == list(range(len(entities)))
    assert spans == {tuple(e["entity"]["span"]) for e in entities}
    assert len(marks) == len(spans)
    counts = {e.get_attribute("data-status"): e.text for e in page.all("#note-counts .count")}
    for status, n in report["counts"].items():
        assert counts[status].startswith(f"{n} ")

    # The details of an inconsistent entity (a consistent one when none is), opened from the keyboard,
    # then of a highlight whose entities were compared with record rows (a lab value, say), by click.
    wanted = "inconsistent" if report["counts"]["inconsistent"] else "consistent"
    first = next(m for m in marks if m.get_attribute("data-status") == wanted)
    with_rows = next(m for m in marks if m.get_attribute("data-status") == "consistent" and any(
        entities[int(i)]["rows"] and entities[int(i)]["entity"].get("value") is not None
        for i in m.get_attribute("data-entities").split()))
    assert_details(page, first, entities, patient, keyboard=True)
    page.screenshot(artifacts / "consistency-note.png")
    assert_details(page, with_rows, entities, patient, keyboard=False)
    page.element_screenshot("#entity-detail", artifacts / "consistency-detail.png")
    mark = with_rows

    # Close returns the focus to the highlight.
    page.find("#entity-detail .entity-close").click()
    page.wait(lambda: not page.visible("#entity-detail"), "the details to close")
    assert page.js("return document.activeElement.dataset.span") == mark.get_attribute("data-span")


def assert_details(page: Page, mark: Any, entities: list[dict[str, Any]], patient: str, *, keyboard: bool) -> None:
    """Open ``mark``'s detail box; it shows each of its entities' status, fields, reason and compared rows."""
    from selenium.webdriver.common.keys import Keys

    page.js("arguments[0].scrollIntoView({block: 'center'})", mark)
    if keyboard:
        page.js("arguments[0].focus()", mark)
        mark.send_keys(Keys.ENTER)
    else:
        mark.click()
    span = mark.get_attribute("data-span")
    page.wait(lambda: page.visible("#entity-detail") and page.find("#entity-detail").get_attribute("data-span") == span,
              "the entity details")
    assert mark.get_attribute("aria-expanded") == "true"
    cards = page.all("#entity-detail .entity-card")
    indices = [int(i) for i in mark.get_attribute("data-entities").split()]
    assert [int(c.get_attribute("data-index")) for c in cards] == indices
    for card, i in zip(cards, indices, strict=True):
        entity = entities[i]
        assert card.get_attribute("data-status") == entity["status"]
        facts = card.find_element("css selector", ".entity-fields dd").get_attribute("textContent")
        assert facts == (", ".join(entity["fields"]) or "none")
        assert card.find_element("css selector", ".entity-reason dd").get_attribute("textContent") == entity["reason"]
        rows = card.find_elements("css selector", "table.compared tbody tr")
        assert [r.get_attribute("data-ref") for r in rows] == [row["ref"] for row in entity["rows"]]
        for tr, row in zip(rows, entity["rows"], strict=True):
            cells = {c: tr.find_element("css selector", f".c-{c}").get_attribute("textContent")
                     for c in ("time", "item", "value", "unit")}
            moment = next((row[k] for k in ("time", "onset_time", "start_time") if row.get(k)), None)
            assert cells["time"] == (shown_time(moment) if moment else "—")
            assert cells["item"] == (row.get("name") or row.get("medication_name") or "—")
            value = row.get("value", row.get("dose"))
            if isinstance(value, int | float):
                assert float(cells["value"]) == float(value)
            assert cells["unit"] == (row.get("unit") or row.get("dose_unit") or "")
            link = tr.find_element("css selector", "a.resource-link")
            kind, rid = row["ref"].split("/")
            assert link.get_attribute("href").endswith(f"/ui/api/patients/{patient}/resources/{kind}/{rid}")


def test_patient_token_cannot_list_or_read_other_notes(ui_server, ids):
    token = ui_server.token("patient/*.rs", patient=ids[A])
    system = ui_server.token("system/*.rs")
    with ui_server.client(system) as client:
        b_notes = client.get(f"/ui/api/patients/{ids[B]}/notes").json()["notes"]
        a_notes = client.get(f"/ui/api/patients/{ids[A]}/notes").json()["notes"]
    assert b_notes and a_notes
    b_ref = b_notes[0]["ref"]
    with ui_server.client(token) as client:
        own = client.get(f"/ui/api/patients/{ids[A]}/notes")
        assert own.status_code == 200 and [n["ref"] for n in own.json()["notes"]] == [n["ref"] for n in a_notes]
        one = client.get(f"/ui/api/patients/{ids[A]}/notes/{a_notes[0]['ref']}")
        assert one.status_code == 200 and one.json()["text"]
        assert one.headers["content-security-policy"].startswith("default-src 'self'")
        # Patient B's list and notes: refused, whichever path is used.
        assert client.get(f"/ui/api/patients/{ids[B]}/notes").status_code == 403
        assert client.get(f"/ui/api/patients/{ids[B]}/notes/{b_ref}").status_code == 403
        # B's note through A's path: not found (a note is served only through the patient it belongs to).
        assert client.get(f"/ui/api/patients/{ids[A]}/notes/{b_ref}").status_code == 404
        assert client.post(f"/api/patients/{ids[B]}/check-consistency", json={"note": b_ref}).status_code == 403
        # The server's check refuses a note of another patient (it answers 400, "no note … for patient A").
        crossed = client.post(f"/api/patients/{ids[A]}/check-consistency", json={"note": b_ref})
        assert crossed.status_code in (400, 404) and "reports" not in crossed.text
        # Only note types are served by the note path.
        assert client.get(f"/ui/api/patients/{ids[A]}/notes/Observation/x").status_code in (400, 404, 422)
    with ui_server.client() as anonymous:
        assert anonymous.get(f"/ui/api/patients/{ids[A]}/notes").status_code == 401
