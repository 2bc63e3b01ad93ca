"""A prior value quoted in a parenthesis after a value ("Cr 1.3 (prior 1.0 on 2/12/2024)") is a statement of its
own: checked against the record on the date written with it, never against the note's day."""

from __future__ import annotations

import pytest

from fhirqa.consistency import PatientChecker
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest
from tests.builders import observation, patient, transaction, write_json

VISIT = "2024-04-02T10:00:00Z"
ALB = {"code": "1751-7", "display": "Albumin", "unit": "g/dL"}


@pytest.fixture(scope="module")
def checker(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("consistency-prior")
    bundle = transaction(
        patient("p3"),
        observation("alb0", "p3", **ALB, value=3.1, when="2024-01-09T08:00:00Z"),
        observation("alb1", "p3", **ALB, value=3.6, when="2024-04-02T07:00:00Z"),
    )
    ingest([FileSource([write_json(root / "in" / "bundle.json", bundle)])], root / "db")
    c = PatientChecker(Store(root / "db"), "p3")
    yield c
    c.close()


def _verdicts(checker, text: str):
    report = checker.check(text, VISIT, "Progress note")
    return [(report.text[c.entity.span[0]:c.entity.span[1]], c.entity.prior, c.status, c.fields, c.reason)
            for c in report.checks]


def test_the_prior_value_is_checked_on_its_own_date(checker):
    today, prior = _verdicts(checker, "Labs: albumin 3.6 (prior 3.1 on 1/9/2024).")
    assert today[1:4] == (False, "consistent", [])
    assert prior[:4] == ("prior 3.1", True, "consistent", [])


@pytest.mark.parametrize("written", ["(previous 3.4 on 1/9/2024)", "(prev: 3.4 on Jan 9, 2024)",
                                     "(earlier 3.4 g/dL on 1/9/2024)"])
def test_a_wrong_prior_value_is_flagged_even_when_todays_agrees(checker, written):
    today, prior = _verdicts(checker, f"Labs: albumin 3.6 {written}.")
    assert today[2] == "consistent"
    assert prior[1:4] == (True, "inconsistent", ["value"]), prior


def test_a_prior_without_a_date_is_not_checked(checker):
    today, prior = _verdicts(checker, "albumin 3.6 (prior 3.1)")
    assert today[2] == "consistent"
    assert prior[1:] == (True, "unverifiable", [], "not checked: prior value without a date")


def test_a_parenthesis_without_a_prior_word_is_no_statement(checker):
    verdicts = _verdicts(checker, "albumin 3.6 (drawn 4/2/2024)")
    assert [v[1:3] for v in verdicts] == [(False, "consistent")]
