"""Backend settings: arguments over environment, clear errors, a key that never shows; no SDK at import."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fhirqa.agent.backends.base import BackendError
from fhirqa.agent.backends.settings import (
    DUMMY_KEY,
    BackendSettings,
    gemini_settings,
    openai_settings,
    parse_retry_after,
    redact_url,
)

from .scenario import GEMINI_KEY, OPENAI_KEY


def test_openai_defaults_from_the_environment() -> None:
    settings = openai_settings(env={"OPENAI_API_KEY": OPENAI_KEY})
    assert settings.provider == "openai" and settings.model == "gpt-4.1-mini"
    assert settings.api_key == OPENAI_KEY and settings.base_url is None
    assert (settings.timeout, settings.max_retries, settings.temperature) == (60.0, 2, 0.0)
    assert settings.endpoint == "https://api.openai.com/v1"


def test_arguments_win_over_the_environment() -> None:
    env = {
        "OPENAI_API_KEY": "sk-env",
        "FHIRQA_OPENAI_MODEL": "gpt-env",
        "FHIRQA_LLM_TIMEOUT": "5",
        "FHIRQA_LLM_MAX_RETRIES": "7",
        "FHIRQA_LLM_TEMPERATURE": "0.3",
    }
    assert openai_settings(env=env).model == "gpt-env"
    assert (openai_settings(env=env).timeout, openai_settings(env=env).max_retries) == (5.0, 7)
    assert openai_settings(env=env).temperature == 0.3
    settings = openai_settings(
        api_key=OPENAI_KEY, model="gpt-arg", timeout=30, max_retries=0, temperature=None, env=env
    )
    assert (settings.api_key, settings.model, settings.timeout, settings.max_retries) == (
        OPENAI_KEY,
        "gpt-arg",
        30.0,
        0,
    )
    assert settings.temperature is None


def test_compatible_server_base_url() -> None:
    env = {"OPENAI_BASE_URL": "http://sdk-var:8000/v1", "FHIRQA_OPENAI_BASE_URL": "http://localhost:8000/v1"}
    settings = openai_settings(model="Qwen/Qwen2.5-7B-Instruct", env=env)
    assert settings.base_url == "http://localhost:8000/v1"  # fhirqa's variable wins over the SDK's
    assert settings.api_key == DUMMY_KEY  # local servers rarely check keys
    assert openai_settings(model="m", env={"OPENAI_BASE_URL": "http://h/v1"}).base_url == "http://h/v1"
    assert openai_settings(model="m", base_url="http://arg/v1", env=env).base_url == "http://arg/v1"


def test_a_compatible_server_needs_a_model_name() -> None:
    with pytest.raises(BackendError, match=r"pass --model .*FHIRQA_OPENAI_MODEL"):
        openai_settings(base_url="http://localhost:11434/v1", env={})


def test_nothing_configured() -> None:
    with pytest.raises(BackendError, match=r"OPENAI_API_KEY.*--base-url.*vLLM, Ollama or llama.cpp"):
        openai_settings(env={})
    with pytest.raises(BackendError, match=r"GEMINI_API_KEY \(or GOOGLE_API_KEY\)"):
        gemini_settings(env={})


def test_gemini_keys_and_model() -> None:
    assert gemini_settings(env={"GOOGLE_API_KEY": "g", "GEMINI_API_KEY": GEMINI_KEY}).api_key == GEMINI_KEY
    assert gemini_settings(env={"GOOGLE_API_KEY": GEMINI_KEY}).api_key == GEMINI_KEY
    settings = gemini_settings(env={"GEMINI_API_KEY": GEMINI_KEY, "FHIRQA_GEMINI_MODEL": "gemini-2.5-pro"})
    assert settings.model == "gemini-2.5-pro" and settings.provider == "gemini"
    assert gemini_settings(api_key="k", env={}).model == "gemini-2.5-flash"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("FHIRQA_LLM_TIMEOUT", "soon", "is not a number"),
        ("FHIRQA_LLM_TIMEOUT", "0", "positive number of seconds"),
        ("FHIRQA_LLM_MAX_RETRIES", "1.5", "not a whole number"),
        ("FHIRQA_LLM_MAX_RETRIES", "-1", ">= 0"),
        ("FHIRQA_LLM_TEMPERATURE", "cold", "is not a number"),
    ],
)
def test_bad_environment_values(name: str, value: str, message: str) -> None:
    with pytest.raises(BackendError, match=message):
        openai_settings(env={"OPENAI_API_KEY": "k", name: value})


def test_the_key_is_masked_everywhere() -> None:
    settings = openai_settings(
        api_key=OPENAI_KEY, base_url="https://user:pa55@gateway.example/v1?api_key=abc", model="m", env={}
    )
    for text in (repr(settings), str(settings), f"{settings}", f"{settings!r}"):
        assert OPENAI_KEY not in text and "pa55" not in text and "abc" not in text
        assert "api_key='***'" in text
    assert settings.endpoint == "https://gateway.example/v1?api_key=***"
    assert settings.scrub(f"bad key {OPENAI_KEY}!") == "bad key ***!"
    assert "api_key=None" in repr(BackendSettings(provider="gemini", model="m"))


def test_redact_url_and_retry_after() -> None:
    assert redact_url("http://localhost:8080/v1") == "http://localhost:8080/v1"
    assert redact_url("https://u:p@h/x?token=t&q=1") == "https://h/x?token=***&q=1"
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: no wait


def test_backoff_doubles_with_jitter() -> None:
    settings = gemini_settings(api_key="k", retry_initial_delay=1.0, retry_max_delay=3.0, env={})
    assert 0.75 <= settings.backoff(0) <= 1.0
    assert 1.5 <= settings.backoff(1) <= 2.0
    assert 2.25 <= settings.backoff(5) <= 3.0  # capped


def test_backend_modules_import_no_sdk() -> None:
    code = (
        "import sys\n"
        "from fhirqa.agent.backends.base import _load_builtin, BACKENDS\n"
        "_load_builtin()\n"
        "assert {'openai', 'gemini'} <= set(BACKENDS), BACKENDS\n"
        "loaded = [m for m in ('openai', 'google.genai', 'httpx2') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("name", "module", "config"),
    [("openai", "openai", {"api_key": "k"}), ("gemini", "google.genai", {"api_key": "k"})],
)
def test_a_missing_sdk_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, name: str, module: str, config: dict[str, str]
) -> None:
    from fhirqa.agent.backends.base import get_backend

    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    if module == "google.genai":
        monkeypatch.setitem(sys.modules, "google.genai.errors", None)
        monkeypatch.setitem(sys.modules, "google.genai.types", None)
    with pytest.raises(BackendError, match=r"not installed; pip install 'fhirqa\[llm\]'"):
        get_backend(name, env={}, **config)
