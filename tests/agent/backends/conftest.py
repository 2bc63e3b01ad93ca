"""Fixtures for the backend tests: the mock API and an environment without keys."""

from __future__ import annotations

import pytest

from .mock_api import MockAPI


@pytest.fixture
def api() -> MockAPI:
    """The scripted provider."""
    return MockAPI()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Keys or servers in a developer's environment must not leak into the tests.
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "FHIRQA_OPENAI_BASE_URL",
        "FHIRQA_OPENAI_MODEL",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "FHIRQA_GEMINI_BASE_URL",
        "FHIRQA_GEMINI_MODEL",
        "FHIRQA_LLM_TIMEOUT",
        "FHIRQA_LLM_MAX_RETRIES",
        "FHIRQA_LLM_TEMPERATURE",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "GOOGLE_GENAI_API_VERSION",
        "OPENAI_CUSTOM_HEADERS",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
        "OPENAI_ADMIN_KEY",
        "OPENAI_LOG",
    ):
        monkeypatch.delenv(name, raising=False)
