"""The page's server side without a browser: security headers, the page's own markup and scripts,
the JSON helpers (search, header, raw resources) and who may see what, and the --dev token."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import fhirqa
from fhirqa.server.ui.pages import STATIC
from tests.server.conftest import copy_store, make_config, run_server

A, B = "Linda Taylor", "Mei Wilson"
PAGES = ["/ui/", "/ui/static/app.js", "/ui/static/style.css", "/ui/static/chart.js", "/ui/static/favicon.svg"]


def assert_secured(response: Any) -> None:
    """The UI's security headers: a strict CSP, nosniff, no referrer, no framing."""
    csp = response.headers.get("content-security-policy", "")
    directives = {d.split()[0]: d.split()[1:] for d in csp.split("; ") if d}
    assert directives.get("default-src") == ["'self'"], csp
    assert directives.get("script-src") == ["'self'"], csp  # no 'unsafe-inline', no 'unsafe-eval'
    assert directives.get("style-src") == ["'self'"], csp
    assert directives.get("object-src") == ["'none'"] and directives.get("frame-ancestors") == ["'none'"], csp
    assert response.headers.get("x-content-type-options") == "nosniff"
    assert response.headers.get("referrer-policy") == "no-referrer"


def test_every_ui_response_carries_the_csp(ui_server):
    token = ui_server.token("system/*.rs")
    with ui_server.client() as anonymous, ui_server.client(token) as client, ui_server.client("not-a-jwt") as bad:
        for path in PAGES:
            response = anonymous.get(path)
            assert response.status_code == 200, (path, response.text[:200])
            assert_secured(response)
        assert anonymous.get("/ui/static/app.js").headers["content-type"].startswith("text/javascript")
        redirect = anonymous.get("/ui", follow_redirects=False)
        assert redirect.status_code == 308 and redirect.headers["location"] == "ui/"
        assert_secured(redirect)
        # Errors too: no token, a bad token, unknown files and pages, path tricks.
        for response in (anonymous.get("/ui/api/session"), anonymous.get("/ui/api/patients"),
                         bad.get("/ui/api/session"),
                         anonymous.get("/ui/static/missing.js"), anonymous.get("/ui/static/..%2F__init__.py"),
                         anonymous.get("/ui/static/index.html"), anonymous.get("/ui/nowhere/at/all"),
                         client.get("/ui/api/patients", params={"nonsense": "1"})):
            assert response.status_code in (400, 401, 404), (response.request.url, response.status_code)
            assert_secured(response)
            assert response.json()["resourceType"] == "OperationOutcome"
        ok = client.get("/ui/api/session")
        assert ok.status_code == 200 and ok.json()["search_all"] is True
        assert_secured(ok)


class _Markup(HTMLParser):
    """Collects what a strict CSP would block: inline scripts, inline styles, event-handler attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if tag == "script":
            self._in_script = True
            if not names.get("src"):
                self.problems.append("inline <script>")
            self.scripts.append(str(names.get("src")))
        if tag == "style":
            self.problems.append("<style> element")
        for name, _ in attrs:
            if name == "style" or name.startswith("on"):
                self.problems.append(f"{name}= on <{tag}>")
        for name in ("src", "href", "action"):
            value = names.get(name) or ""
            if re.match(r"^(https?:)?//", value):
                self.problems.append(f"external {name} {value}")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False if tag == "script" else self._in_script

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.problems.append("inline script text")


def _strip_comments(js: str) -> str:
    """JavaScript without its comments (which may name what the code must not use)."""
    js = re.sub(r"/\*.*?\*/", "", js, flags=re.S)
    return re.sub(r"(^|\s)//.*$", "", js, flags=re.M)


def test_page_markup_and_scripts_need_no_unsafe_csp_and_no_network():
    markup = _Markup()
    markup.feed((STATIC / "index.html").read_text("utf-8"))
    assert not markup.problems, markup.problems
    assert markup.scripts == ["static/app.js"]
    for file in STATIC.iterdir():
        text = file.read_text("utf-8")
        # The only URLs anywhere are XML namespaces (SVG), never something to fetch.
        urls = set(re.findall(r"https?://[^\s'\"<>)]+", text)) - {"http://www.w3.org/2000/svg"}
        assert not urls, (file.name, urls)
        if file.suffix == ".js":
            code = _strip_comments(text)
            for banned in ("localStorage", "sessionStorage", "document.cookie", "innerHTML", "outerHTML",
                           "insertAdjacentHTML", "eval(", "new Function", "indexedDB"):
                assert banned not in code, f"{file.name} uses {banned}"
        if file.suffix == ".css":
            assert "@import" not in text and "url(" not in text, file.name


def test_patient_search_by_name_birth_date_mrn_and_id(ui_server, ids):
    token = ui_server.token("system/*.rs")
    with ui_server.client(token) as client:
        def names(q: str) -> list[str]:
            response = client.get("/ui/api/patients", params={"q": q})
            assert response.status_code == 200, response.text
            return [p["name"] for p in response.json()["patients"]]

        assert len(names("")) == 5
        assert names("linda") == [A] and names("TAYLOR linda") == [A]
        assert names("1967-06-25") == [A] and names("1967") == [A]
        assert names(ids[B]) == [B] and names(ids[B][:8]) == [B]
        assert names("Matthew") == ["Matthew Haddad", "Matthew Young"]
        assert names("%") == [] and names("_") == []  # LIKE wildcards are literal
        mrn = client.get("/ui/api/patients", params={"q": "linda"}).json()["patients"][0]["mrn"]
        assert names(mrn) == [A]
    user = ui_server.token("user/Patient.rs user/*.rs")
    with ui_server.client(user) as client:
        assert len(client.get("/ui/api/patients").json()["patients"]) == 5
    with ui_server.client(ui_server.token("system/Observation.rs")) as client:
        assert client.get("/ui/api/patients").status_code == 403


def test_patient_token_sees_only_its_patient(ui_server, ids):
    token = ui_server.token("patient/*.rs", patient=ids[A])
    with ui_server.client(token) as client:
        session = client.get("/ui/api/session").json()
        assert session["patient"] == ids[A] and session["search_all"] is False
        for q in ("", "Mei", "Wilson", ids[B], "1942-11-01", "linda"):
            found = [p["id"] for p in client.get("/ui/api/patients", params={"q": q}).json()["patients"]]
            assert found == ([ids[A]] if q in ("", "linda") else []), (q, found)
        assert client.get(f"/ui/api/patients/{ids[B]}/header").status_code == 403
        own = client.get(f"/ui/api/patients/{ids[A]}/header")
        assert own.status_code == 200 and own.json()["patient"]["name"] == A
        # B's raw records: refused through B's path, not found through A's.
        b_obs = fhirqa.Store(ui_server.config.db).query(
            "SELECT id FROM resources WHERE resource_type = 'Observation' AND patient_id = ? LIMIT 1", [ids[B]]).rows[0][0]
        assert client.get(f"/ui/api/patients/{ids[B]}/resources/Observation/{b_obs}").status_code == 403
        assert client.get(f"/ui/api/patients/{ids[A]}/resources/Observation/{b_obs}").status_code == 404
        assert client.get(f"/ui/api/patients/{ids[A]}/resources/Patient/{ids[B]}").status_code == 404
        assert client.get(f"/ui/api/patients/{ids[A]}/resources/Patient/{ids[A]}").json()["id"] == ids[A]
        # The server's own routes the page uses agree.
        assert client.get(f"/Patient/{ids[B]}/views/observation").status_code == 403
        assert client.post(f"/api/patients/{ids[B]}/ask", json={"question": "latest HbA1c"}).status_code == 403


def test_header_lists_and_withheld_sections(ui_server, ids):
    with ui_server.client(ui_server.token("system/*.rs")) as client:
        header = client.get(f"/ui/api/patients/{ids[A]}/header").json()
    assert header["patient"]["birth_date"] == "1967-06-25" and header["patient"]["gender"] == "female"
    assert {p["name"] for p in header["problems"]} == {"Type 2 diabetes", "Obesity"}  # not the resolved ones
    meds = {m["name"] for m in header["medications"]}
    assert meds == {"Glucophage (metformin) 500 MG Oral Tablet", "Lantus (insulin glargine) 100 UNT/ML Injectable Solution"}
    assert header["withheld"] == []
    with ui_server.client(ui_server.token("system/Patient.rs system/Condition.rs")) as client:
        narrow = client.get(f"/ui/api/patients/{ids[A]}/header").json()
        assert narrow["problems"] and narrow["medications"] is None and narrow["allergies"] is None
        assert set(narrow["withheld"]) == {"medications", "allergies"}
        assert client.get(f"/ui/api/patients/{ids[A]}/resources/Observation/x1").status_code == 403
    with ui_server.client(ui_server.token("system/*.rs")) as client:
        assert client.get("/ui/api/patients/no-such-patient/header").status_code == 404


def test_shared_medication_resource_only_through_a_patient_who_uses_it(ui_server, ids):
    store = fhirqa.Store(ui_server.config.db)
    used = store.query("SELECT DISTINCT medication_ref FROM medication WHERE patient_id = ? AND medication_ref IS NOT NULL",
                       [ids[A]]).rows
    others = store.query("SELECT DISTINCT medication_ref FROM medication WHERE medication_ref IS NOT NULL AND medication_ref "
                         "NOT IN (SELECT medication_ref FROM medication WHERE patient_id = ? AND medication_ref IS NOT NULL)",
                         [ids[A]]).rows
    assert used
    with ui_server.client(ui_server.token("patient/*.rs", patient=ids[A])) as client:
        ref = used[0][0]
        assert client.get(f"/ui/api/patients/{ids[A]}/resources/{ref}").json()["resourceType"] == "Medication"
        for (other,) in others:
            assert client.get(f"/ui/api/patients/{ids[A]}/resources/{other}").status_code == 404


def test_dev_mode_puts_a_working_token_in_the_page_for_loopback_only(sample_store: Path, keys, ids, tmp_path):
    config = make_config(copy_store(sample_store, tmp_path / "db"), tmp_path / "state", keys, dev=True)
    with run_server(config, keys) as dev, dev.client() as client:
        html = client.get("/ui/").text
        token = re.search(r'<meta name="fhirqa-dev-token" content="([^"]+)">', html)
        assert token, html[:500]
        with dev.client(token.group(1)) as signed_in:
            assert signed_in.get("/ui/api/session").json()["dev"] is True
        # A browser that reached 127.0.0.1 under another name (DNS rebinding) gets no token.
        rebound = client.get("/ui/", headers={"Host": "attacker.example"}).text
        assert "fhirqa-dev-token" not in rebound
    plain = make_config(copy_store(sample_store, tmp_path / "db2"), tmp_path / "state2", keys)
    with run_server(plain, keys) as server, server.client() as client:
        assert "fhirqa-dev-token" not in client.get("/ui/").text
