"""A headless Chromium for the UI tests (Selenium + Debian's ``chromium`` and ``chromium-driver``).

:func:`find_browser` says why there is none (the tests skip with that reason); :func:`start_browser`
starts one with a fresh profile and the flags that keep it off the network. :class:`Page` drives the
clinician page the way a user does and reads back what it shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

#: Where screenshots go: artifacts/ui/ in the repository (gitignored), or $FHIRQA_UI_ARTIFACTS.
ARTIFACTS = Path(os.environ.get("FHIRQA_UI_ARTIFACTS") or ROOT / "artifacts" / "ui")
#: Screenshots saved in this run (the conftest prints the folder at the end).
SAVED: list[Path] = []
CHROMIUM = os.environ.get("FHIRQA_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("FHIRQA_CHROMEDRIVER", "/usr/bin/chromedriver")
#: Headless, sandbox-free (containers run as root), and nothing that phones home.
CHROME_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
    "--disable-extensions", "--disable-default-apps", "--no-proxy-server", "--lang=en-US",
    "--force-device-scale-factor=1", "--window-size=1366,1000",
)


def find_browser() -> str | None:
    """None when Selenium, Chromium and its driver are all here; otherwise why the UI tests skip."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (Path(path).is_file() or shutil.which(path)):
            return f"{path} is missing (apt-get install -y chromium chromium-driver; needs Debian package {package})"
    return None


def start_browser(profile: Path) -> Any:
    """A new headless Chromium under chromedriver, with a fresh ``--user-data-dir`` in ``profile``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROME_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # A driver path given explicitly: Selenium Manager never runs (it would try to download one).
    service = Service(executable_path=CHROMEDRIVER, log_output=subprocess.DEVNULL)
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)
    return driver


def fresh_profile() -> Path:
    """An empty Chromium profile folder."""
    return Path(tempfile.mkdtemp(prefix="fhirqa-ui-chromium-"))


@dataclass
class Page:
    """The clinician page in a browser tab, driven like a user would."""

    driver: Any
    base_url: str
    timeout: float = 20.0

    # ------------------------------------------------------------------ waiting

    def wait(self, condition: Callable[[], Any], what: str) -> Any:
        """Poll ``condition`` until truthy; fail naming ``what`` (and the browser's log) on timeout."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            try:
                value = condition()
            except Exception:  # noqa: BLE001 - element not there yet
                value = None
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; browser log: {self.console()[-5:]}")

    def js(self, script: str, *args: Any) -> Any:
        """Run ``script`` in the page and return its value."""
        return self.driver.execute_script(script, *args)

    def idle(self) -> None:
        """Wait until the page has finished what it was doing (its body's data-busy flag)."""
        self.wait(lambda: self.js("return document.body.dataset.busy") == "false", "the page to be idle")

    # ------------------------------------------------------------------ elements

    def find(self, css: str) -> Any:
        """The first element matching ``css``."""
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, css)

    def all(self, css: str) -> list[Any]:
        """Every element matching ``css``."""
        from selenium.webdriver.common.by import By

        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def visible(self, css: str) -> bool:
        """True when an element matching ``css`` exists and is displayed."""
        found = self.all(css)
        return bool(found) and found[0].is_displayed()

    def text(self, css: str) -> str:
        """The text content of the first match (also of collapsed or off-screen parts)."""
        return str(self.find(css).get_attribute("textContent")).strip()

    # ------------------------------------------------------------------ steps

    def open(self) -> None:
        """Load the page afresh (which also forgets any token)."""
        self.driver.get(f"{self.base_url}/ui/")
        self.wait(lambda: self.js("return document.body.dataset.signedIn") in ("true", "false"), "the page script")

    def sign_in(self, token: str) -> None:
        """Paste a token and submit the sign-in form."""
        field = self.find("#token")
        field.clear()
        field.send_keys(token)
        self.find("#login-form button[type=submit]").click()
        self.wait(lambda: self.js("return document.body.dataset.signedIn") == "true"
                  or self.visible("#login-error"), "sign-in to finish")
        self.idle()

    def search(self, query: str) -> list[str]:
        """Search patients; the names listed."""
        box = self.find("#search")
        box.clear()
        if query:
            box.send_keys(query)
        count = "return document.getElementById('results').dataset.searches || '0'"
        before = self.js(count)
        self.find("#search-form button[type=submit]").click()
        self.wait(lambda: self.js(count) != before, f"results for {query!r}")
        return self.result_names()

    def result_names(self) -> list[str]:
        """Names in the search results."""
        return [e.text for e in self.all(".patient-choice .choice-name")]

    def pick(self, name: str) -> None:
        """Choose a patient from the results; wait for the header."""
        for button in self.all(".patient-choice"):
            if button.find_element("css selector", ".choice-name").text == name:
                button.click()
                break
        else:
            raise AssertionError(f"{name} is not among the results {self.result_names()}")
        self.wait(lambda: self.visible("#patient") and self.text("#patient-name") == name, f"{name}'s header")
        self.idle()

    def ask(self, question: str, as_of: str | None = None) -> None:
        """Ask ``question`` (as of a date, YYYY-MM-DD); wait for the answer and its chart."""
        # The date is set through the DOM: typing into <input type=date> depends on the locale.
        self.js("document.getElementById('asof').value = arguments[0] || ''", as_of)
        box = self.find("#question")
        box.clear()
        box.send_keys(question)
        self.js("document.getElementById('result').dataset.chart = 'asking'")
        self.find("#ask-button").click()
        self.wait(lambda: self.js("return document.getElementById('result').dataset.chart")
                  not in ("asking", "pending") or self.js("return document.getElementById('status').classList.contains('error')")
                  or self.visible("#login"),
                  f"the answer to {question!r}")
        self.idle()

    # ------------------------------------------------------------------ reading back

    def evidence(self) -> list[dict[str, str]]:
        """The evidence table as shown: time, item, value, unit, ref, href."""
        rows = []
        for tr in self.all("#evidence-rows tr[data-ref]"):
            cell = {c: tr.find_element("css selector", f".c-{c}").get_attribute("textContent").strip()
                    for c in ("time", "item", "value", "unit")}
            link = tr.find_element("css selector", "a.resource-link")
            rows.append({**cell, "ref": str(tr.get_attribute("data-ref")), "href": str(link.get_attribute("href"))})
        return rows

    def console(self) -> list[dict[str, Any]]:
        """The browser console so far (each call drains it)."""
        try:
            return list(self.driver.get_log("browser"))
        except Exception:  # noqa: BLE001 - a driver without log support
            return []

    # ------------------------------------------------------------------ screenshots

    def screenshot(self, path: Path) -> Path:
        """The whole page as a PNG: the window grows to the page's height for the shot, then shrinks back."""
        size = self.driver.get_window_size()
        height = int(self.js("return Math.ceil(document.documentElement.scrollHeight)"))
        self.driver.set_window_size(size["width"], min(max(height + 140, size["height"]), 6000))
        try:
            time.sleep(0.2)  # let the chart redraw at the new size settle
            self.driver.save_screenshot(str(path))
        finally:
            self.driver.set_window_size(size["width"], size["height"])
        SAVED.append(path)
        return path

    def element_screenshot(self, css: str, path: Path) -> Path:
        """One element as a PNG."""
        element = self.find(css)
        self.js("arguments[0].scrollIntoView({block: 'center'})", element)
        element.screenshot(str(path))
        SAVED.append(path)
        return path
