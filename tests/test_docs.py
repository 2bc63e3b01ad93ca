"""Documentation that must not drift from the code."""

from pathlib import Path

from fhirqa.cli.docs import render_reference

ROOT = Path(__file__).resolve().parents[1]


def test_cli_reference_is_current():
    assert (ROOT / "docs" / "cli.md").read_text() == render_reference(), (
        "docs/cli.md is stale: run `python -m fhirqa.cli.docs > docs/cli.md`"
    )


def test_every_cli_command_is_in_the_readme_or_docs():
    text = (ROOT / "README.md").read_text() + (ROOT / "docs" / "cli.md").read_text()
    for command in ("ingest", "views", "show", "sql", "ask", "conformance", "synth"):
        assert f"fhirqa {command}" in text
