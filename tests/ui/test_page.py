"""The clinician page in a real headless Chromium against the real server on 127.0.0.1.

Each test loads the page afresh, signs in with a token as a user would (pasting it), picks a patient,
asks, and checks what the page shows against the answer JSON the API returns for the same question
and instant. Screenshots of the page and its charts are saved under ``artifacts/ui/`` (printed at
the end of the run). Skipped with the reason when Chromium, chromedriver or Selenium is missing.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import fhirqa
from tests.ui.browser import SAVED, Page

A, B = "Linda Taylor", "Mei Wilson"
AS_OF = "2026-06-30"
LATEST = "What was the most recent HbA1c?"
TREND = "How has the HbA1c changed over the last 3 years?"
NO_DATA = "What was the potassium in 2019?"
LAB_DRUG = "What was the HbA1c after starting insulin?"


def api_answer(server: Any, token: str, patient: str, question: str) -> dict[str, Any]:
    """The answer JSON of the API for the question the page asked (same instant)."""
    with server.client(token) as client:
        response = client.post(f"/api/patients/{patient}/ask", json={"question": question, "now": AS_OF})
    assert response.status_code == 200, response.text
    return response.json()


def shown_time(iso: str | None) -> str:
    """How the page writes a time: as the record wrote it (its wall clock to the minute, then its offset)."""
    if not iso:
        return "—"
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    offset = moment.strftime("%z")
    zone = " UTC" if offset == "+0000" else f" {offset[:3]}:{offset[3:]}" if offset else ""
    return moment.strftime("%Y-%m-%d %H:%M") + zone


def assert_evidence_matches(page: Page, answer: dict[str, Any], patient: str) -> list[dict[str, str]]:
    """The evidence table shows the answer's evidence rows, in order, each linked to its raw resource."""
    shown = page.evidence()
    expected = answer["evidence"]
    assert len(shown) == len(expected), (shown, expected)
    for row, ev in zip(shown, expected, strict=True):
        assert row["ref"] == ev["ref"]
        assert row["time"] == shown_time(ev["time"])
        assert row["item"] == (ev["label"] or ev["field"])
        if isinstance(ev["value"], int | float):
            assert float(row["value"]) == float(ev["value"])
        else:
            assert row["value"] == str(ev["value"])
        assert row["unit"] == (ev["unit"] or "")
        kind, rid = ev["ref"].split("/")
        assert row["href"].endswith(f"/ui/api/patients/{patient}/resources/{kind}/{rid}"), row["href"]
    return shown


def assert_answer_matches(page: Page, answer: dict[str, Any]) -> None:
    """Answer text, status and value as the API gave them."""
    assert page.text("#answer-text") == answer["text"]
    assert page.find("#answer-badge .badge").get_attribute("data-status") == answer["status"]
    assert page.find("#result").get_attribute("data-status") == answer["status"]
    if answer["answer"] and len(answer["answer"]) == 1 and isinstance(answer["answer"][0], int | float):
        value = page.text("#answer-value")
        assert float(value.split()[0]) == float(answer["answer"][0])
        assert value.endswith(answer["unit"] or "")
    tools = [e.get_attribute("data-tool") for e in page.all("#tool-calls .tool-call")]
    assert tools == [c["tool"] for c in answer["trace"]["tool_calls"]]
    assert page.text(".plan-views").removeprefix("Views:").split() == answer["trace"]["views"]


def open_patient(page: Page, server: Any, name: str = A) -> str:
    """Sign in with a system token and pick ``name``; the token used."""
    token = server.token("system/*.rs")
    page.sign_in(token)
    assert page.search(name.split()[0]) == [name]
    page.pick(name)
    return token


def test_latest_value_answer_evidence_and_raw_resource(page: Page, ui_server, ids, artifacts: Path):
    token = ui_server.token("system/*.rs")
    page.sign_in(token)
    assert "Signed in as dr-who" in page.text("#who")
    # The token lives in the script's memory only: not in storage, cookies or the page.
    assert page.js("return [localStorage.length, sessionStorage.length, document.cookie]") == [0, 0, ""]
    assert token not in page.driver.page_source and page.find("#token").get_attribute("value") == ""
    assert len(page.search("")) == 5
    assert page.search("1967-06-25") == [A]
    assert page.search(ids[A][:8]) == [A]
    page.pick(A)
    assert "1967-06-25" in page.text("#patient-facts")
    problems = page.text("#problems")
    assert "Type 2 diabetes" in problems and "Obesity" in problems and "chest pain" not in problems
    assert "Lantus (insulin glargine)" in page.text("#medications") and "lisinopril" in page.text("#allergies")

    page.ask(LATEST, AS_OF)
    answer = api_answer(ui_server, token, ids[A], LATEST)
    assert answer["status"] == "answered"
    assert_answer_matches(page, answer)
    assert page.text("#answer-value") == "7.1 %"
    assert_evidence_matches(page, answer, ids[A])
    assert page.find("#result").get_attribute("data-chart") == "lab"  # the value in its context
    assert not page.visible("#nodata")
    page.screenshot(artifacts / "latest-value.png")

    # The source link opens the raw resource (fetched with the token) in a dialog.
    page.find("#evidence-rows a.resource-link").click()
    page.wait(lambda: '"resourceType": "Observation"' in page.text("#resource-json"), "the raw resource")
    assert answer["evidence"][0]["ref"].split("/")[1] in page.text("#resource-json")
    page.screenshot(artifacts / "raw-resource.png")
    page.find("#resource-close").click()
    assert not page.find("#resource-dialog").is_displayed()

    # A reload forgets the token.
    page.open()
    assert page.visible("#login") and not page.visible("#workspace")


def test_trend_over_a_window_with_a_chart(page: Page, ui_server, ids, artifacts: Path):
    token = open_patient(page, ui_server)
    page.ask(TREND, AS_OF)
    answer = api_answer(ui_server, token, ids[A], TREND)
    assert_answer_matches(page, answer)
    assert_evidence_matches(page, answer, ids[A])
    assert page.find("#result").get_attribute("data-chart") == "lab"
    assert page.visible("#chart svg.chart-svg")
    # The chart draws the item's whole series, and marks exactly the answer's evidence rows.
    label = answer["evidence"][0]["label"]
    series = fhirqa.Store(ui_server.config.db).query(
        "SELECT count(*) FROM observation WHERE patient_id = ? AND name = ? AND value IS NOT NULL", [ids[A], label]).rows[0][0]
    assert len(page.all("#chart circle.pt")) == series
    marked = sorted(e.get_attribute("data-ref") for e in page.all("#chart circle.pt-evidence"))
    assert marked == sorted(ev["ref"] for ev in answer["evidence"])
    assert page.all("#chart rect.ref-band") and page.all("#chart .window rect.window-rect")
    assert "window 2023-06-30 to 2026-06-30" in page.text("#chart-caption")
    assert page.text("#chart-title") == label
    # Evidence points take keyboard focus and say what they are.
    point = page.find("#chart circle.pt-evidence")
    assert point.get_attribute("tabindex") == "0" and "used in the answer" in point.get_attribute("aria-label")
    page.screenshot(artifacts / "trend.png")
    page.element_screenshot("#chart", artifacts / "trend-chart.png")
    # The plan: collapsed under the answer, opened from the keyboard.
    from selenium.webdriver.common.keys import Keys

    page.find("#plan summary").send_keys(Keys.ENTER)
    page.wait(lambda: page.find("#plan").get_attribute("open") is not None, "the plan to open")
    assert page.find("#tool-calls").is_displayed() and "filter_by_date" in page.text("#tool-calls")
    page.element_screenshot("#plan", artifacts / "trend-plan.png")


def test_no_data_in_the_window(page: Page, ui_server, ids, artifacts: Path):
    token = open_patient(page, ui_server)
    page.ask(NO_DATA, AS_OF)
    answer = api_answer(ui_server, token, ids[A], NO_DATA)
    assert answer["status"] == "no-data" and answer["answer"] == []
    assert_answer_matches(page, answer)
    assert page.visible("#nodata") and page.text("#nodata h3") == "No data in this window"
    assert page.text(".badge") == "No data"
    assert page.text("#evidence-caption").startswith("Nearest records outside the window")
    assert_evidence_matches(page, answer, ids[A])
    assert page.all("#chart .window-empty rect.window-rect")  # the empty window, drawn
    assert "no data in this window" in page.text("#chart")
    page.screenshot(artifacts / "no-data.png")
    page.element_screenshot("#chart", artifacts / "no-data-chart.png")


def test_lab_and_drug_together(page: Page, ui_server, ids, artifacts: Path):
    token = open_patient(page, ui_server)
    page.ask(LAB_DRUG, AS_OF)
    answer = api_answer(ui_server, token, ids[A], LAB_DRUG)
    assert_answer_matches(page, answer)
    assert_evidence_matches(page, answer, ids[A])
    assert page.find("#result").get_attribute("data-chart") == "lab-drug"
    assert page.all("#chart .marker-line") and "started 2024-08-13" in page.text("#chart .marker-label")
    assert page.all("#chart .med-lane rect.med-order") and page.all("#chart .med-lane .med-dispense")
    med_refs = {ev["ref"] for ev in answer["evidence"] if ev["field"].startswith("medication.")}
    assert {e.get_attribute("data-ref") for e in page.all("#chart .med-evidence")} == med_refs
    page.element_screenshot("#chart", artifacts / "lab-drug-chart.png")


def test_keyboard_only(page: Page, ui_server, ids, artifacts: Path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    def active() -> str:
        return str(page.js("const a = document.activeElement; return a.id || a.className || a.tagName"))

    keys = ActionChains(page.driver)
    assert active() == "token"  # the page starts in the token field
    keys.send_keys(ui_server.token("system/*.rs"), Keys.ENTER).perform()
    page.wait(lambda: page.js("return document.body.dataset.signedIn") == "true", "sign-in")
    page.idle()
    assert active() == "search"
    count = "return document.getElementById('results').dataset.searches"
    before = page.js(count)
    ActionChains(page.driver).send_keys("Mei", Keys.ENTER).perform()
    page.wait(lambda: page.js(count) != before, "the search")
    assert page.result_names() == [B]
    ActionChains(page.driver).send_keys(Keys.TAB).perform()  # the Search button
    ActionChains(page.driver).send_keys(Keys.TAB).perform()  # the first result
    assert active() == "patient-choice"
    ActionChains(page.driver).send_keys(Keys.ENTER).perform()
    page.wait(lambda: page.text("#patient-name") == B, "B's header")
    page.idle()
    assert active() == "question"
    ActionChains(page.driver).send_keys("What medications is the patient on?", Keys.ENTER).perform()
    page.wait(lambda: page.visible("#result") and page.js("return document.body.dataset.busy") == "false", "the answer")
    with ui_server.client(ui_server.token("system/*.rs")) as client:
        expected = client.post(f"/api/patients/{ids[B]}/ask", json={"question": "What medications is the patient on?"}).json()
    assert page.text("#answer-text") == expected["text"]
    assert [r["ref"] for r in page.evidence()] == [e["ref"] for e in expected["evidence"]]
    # Every control on the page can be reached with Tab (nothing focusable is hidden from it).
    unreachable = page.js("""return [...document.querySelectorAll('a[href], button, input, summary')]
        .filter(e => e.offsetParent !== null && e.tabIndex < 0).map(e => e.outerHTML.slice(0, 80));""")
    assert unreachable == []
    page.screenshot(artifacts / "keyboard.png")


def test_small_screen_has_no_sideways_scrolling(page: Page, ui_server, ids, artifacts: Path):
    open_patient(page, ui_server)
    page.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    try:
        page.ask(TREND, AS_OF)
        assert page.js("return window.innerWidth") == 390
        overflow = page.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, overflow
        svg_width = page.js("return document.querySelector('#chart svg').getBoundingClientRect().width")
        assert svg_width <= 390
        # The whole page at phone width: the emulated screen grows to the page's height for the shot.
        height = page.js("return document.documentElement.scrollHeight")
        page.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 390, "height": min(height, 6000), "deviceScaleFactor": 1, "mobile": True})
        page.driver.save_screenshot(str(artifacts / "phone.png"))
        SAVED.append(artifacts / "phone.png")
    finally:
        page.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_patient_token_never_shows_another_patient(page: Page, ui_server, ids, artifacts: Path):
    token = ui_server.token("patient/*.rs", patient=ids[A])
    page.sign_in(token)
    # The token's own patient opens at once; the search offers nobody else.
    page.wait(lambda: page.text("#patient-name") == A, "A's header")
    assert "limited to one patient" in page.text("#who")
    assert page.search("Mei") == [] and page.search(ids[B]) == [] and page.search("1942-11-01") == []
    assert page.search("") == [A]
    page.ask(LAB_DRUG, AS_OF)
    answer = api_answer(ui_server, token, ids[A], LAB_DRUG)
    shown = assert_evidence_matches(page, answer, ids[A])
    store = fhirqa.Store(ui_server.config.db)
    for row in shown:  # every record shown and linked is A's
        kind, rid = row["ref"].split("/")
        owner = store.query("SELECT patient_id FROM resources WHERE resource_type = ? AND id = ?", [kind, rid]).rows
        assert owner == [(ids[A],)], row
    links = [a.get_attribute("href") for a in page.all("a.resource-link")]
    assert links and all(f"/patients/{ids[A]}/" in href for href in links)
    source = page.driver.page_source
    assert B not in source and ids[B] not in source
    # Resources the page fetched were all this server's.
    urls = page.js("return performance.getEntriesByType('resource').map(e => e.name)")
    assert urls and all(url.startswith(ui_server.url + "/") for url in urls), urls
    page.screenshot(artifacts / "patient-token.png")


def test_dev_mode_signs_in_without_pasting(browser, sample_store: Path, keys, tmp_path):
    from tests.server.conftest import copy_store, make_config, run_server

    config = make_config(copy_store(sample_store, tmp_path / "db"), tmp_path / "state", keys, dev=True)
    with run_server(config, keys) as dev:
        page = Page(browser, dev.url)
        page.open()
        page.wait(lambda: page.js("return document.body.dataset.signedIn") == "true", "the dev sign-in")
        page.idle()
        assert "dev mode" in page.text("#who")
        # The token was read into memory and its <meta> element removed from the page.
        assert page.js("return document.querySelector('meta[name=\"fhirqa-dev-token\"]')") is None
        assert len(page.result_names()) == 5


def test_refused_and_expiring_tokens(page: Page, ui_server, ids):
    import time

    page.sign_in("not-a-token")
    assert page.visible("#login-error") and "not a well-formed JWT" in page.text("#login-error")
    assert not page.visible("#workspace")
    # A token inside the server's 30 s clock-skew leeway for ~10 more seconds: it works, then it does not. (Ten,
    # not three: on a loaded machine the search alone can take a few seconds.)
    issued = time.monotonic()
    page.sign_in(ui_server.token("system/*.rs", expires_in=-20))
    assert page.search("Linda") == [A]
    page.pick(A)
    time.sleep(max(0.0, issued + 10.5 - time.monotonic()))
    page.ask(LATEST, AS_OF)
    page.wait(lambda: page.visible("#login"), "the page to ask for a new token")
    assert "expired" in page.text("#login-error") and not page.visible("#workspace")
    assert page.text("#patient-name") == "" or not page.visible("#patient")
