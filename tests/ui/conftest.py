"""Fixtures for the UI tests: the real server on 127.0.0.1 (as in tests/server) and a headless Chromium.

- ``ui_server``: one server for the module over a private copy of the sample store; patient A
  (Linda Taylor) has a registered patient-bound client, patient B is Mei Wilson.
- ``browser``: one Chromium for the whole UI session (fresh profile); tests that need it skip with
  the reason when Selenium, ``/usr/bin/chromium`` or ``/usr/bin/chromedriver`` is missing (fail
  instead when ``FHIRQA_UI_REQUIRE_BROWSER`` is set, as CI should).
- ``page``: the page object on that browser, pointed at ``ui_server``; the browser console is
  checked after each test for script errors and Content-Security-Policy violations.
- ``artifacts``: where screenshots go (``artifacts/ui/`` in the repository, gitignored; or
  ``$FHIRQA_UI_ARTIFACTS``); the folder is printed at the end of the run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server import conftest as server_fixtures
from tests.server.conftest import Server, copy_store, make_config, run_server
from tests.ui.browser import ARTIFACTS, SAVED, Page, find_browser, fresh_profile, start_browser

# The server tests' fixtures, registered here too: the store of the example patients, the keys of the
# fake EHR issuer, patient ids by name.
sample_store = server_fixtures.sample_store
keys = server_fixtures.keys
ids = server_fixtures.ids


@pytest.fixture(scope="module")
def ui_server(sample_store: Path, keys: Any, ids: dict[str, str], tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[Server]:
    """The real fhirqa server (uvicorn, 127.0.0.1, free port) over a copy of the sample store."""
    root = tmp_path_factory.mktemp("ui-server")
    config = make_config(copy_store(sample_store, root / "db"), root / "state", keys, ids["Linda Taylor"])
    with run_server(config, keys) as running:
        yield running


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """A headless Chromium (skips with the reason when it cannot run here)."""
    reason = find_browser()
    if reason:
        message = f"UI browser tests need Chromium: {reason}"
        # Where the browser is part of the setup (CI), its absence is a failure, not a skip.
        if os.environ.get("FHIRQA_UI_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    profile = fresh_profile()
    driver = start_browser(profile)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser: Any, ui_server: Server) -> Iterator[Page]:
    """The clinician page, freshly loaded; fails the test on script errors or CSP violations."""
    ui_page = Page(browser, ui_server.url)
    ui_page.console()  # drain what earlier tests left
    browser.set_window_size(1366, 1000)
    ui_page.open()
    yield ui_page
    problems = [entry["message"] for entry in ui_page.console()
                if "Content Security Policy" in entry.get("message", "") or "Uncaught" in entry.get("message", "")]
    assert not problems, problems


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The screenshot folder (created)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say where the UI screenshots are."""
    if SAVED:
        terminalreporter.write_line(f"UI screenshots ({len(SAVED)}): {ARTIFACTS}")
