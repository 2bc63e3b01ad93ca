"""A value before a drug was started (session 18, found by the probe_voices2 pharmacist): "last Cr before she went on
naproxen" once answered the latest creatinine of all, "K before he started hep" the heparin dose. The window ends at
the drug's first order or dose; the latest value in it answers, or the first when asked. A bare name after
"before"/"pre-" is read as a drug only when the lexicon knows it as one (spelled right or one slip away), so
"before surgery", "pre-op" and "before admission" keep their own anchors. Each gold is computed from the rows.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fhirqa.agent.backends.offline.parser import parse

from .test_tools_helpers import med, obs, offline_answer, t

NOW = datetime(2025, 7, 25, 12, 0, tzinfo=UTC)
CR = [obs(f"cr-{i}", "Creatinine", value, when, unit="mg/dL", code="2160-0")
      for i, (value, when) in enumerate([(0.9, "2025-01-10T08:00:00"), (1.1, "2025-07-19T06:00:00"),
                                         (1.8, "2025-07-22T06:00:00"), (2.4, "2025-07-24T06:00:00")])]
K = [obs("k-0", "Potassium", 4.3, "2025-07-19T06:00:00", unit="mmol/L", code="2823-3"),
     obs("k-1", "Potassium", 5.2, "2025-07-23T06:00:00", unit="mmol/L", code="2823-3")]
MEDS = [med("vanc-rq", "Vancomycin 1,000 mg IVPB", "request", "2025-07-20T10:00:00", dose=1000, status="active"),
        med("vanc-1", "Vancomycin 1,000 mg IVPB", "administration", "2025-07-20T11:00:00", dose=1000),
        med("hep-rq", "Heparin 5,000 units/mL injection", "request", "2025-07-21T09:00:00", dose=5000, unit="units",
            status="active"),
        med("npx", "Naproxen sodium 220 MG Oral Tablet", "request", "2025-07-23T09:00:00", status="active")]
VIEWS: dict[str, list[dict[str, Any]]] = {"observation": CR + K, "medication": MEDS}


def ask(question: str) -> dict[str, Any]:
    return offline_answer(question, VIEWS, NOW)


def started(drug_word: str) -> datetime:
    return min(r["time"] for r in MEDS if drug_word in r["medication_name"].lower())


def last_before(rows: list[dict[str, Any]], moment: datetime) -> dict[str, Any]:
    return max((r for r in rows if r["time"] < moment), key=lambda r: r["time"])


@pytest.mark.parametrize(("question", "rows", "drug"), [
    ("last Cr before she went on naproxen", CR, "naproxen"),
    ("pre-naproxen creatinine?", CR, "naproxen"),
    ("what was his K before he started hep", K, "heparin"),
    ("most recent K prior to starting hep", K, "heparin"),
    ("what was her creat before vanc was started?", CR, "vancomycin"),
    ("last creat before he went on vancomycn", CR, "vancomycin"),  # a slip in the drug's name
    ("Cr just before vanco began", CR, "vancomycin"),
])
def test_the_latest_value_before_the_drug_was_started(question: str, rows: list[dict[str, Any]], drug: str) -> None:
    expected = last_before(rows, started(drug))
    got = ask(question)
    assert got["answer"] == [expected["value"]], got["text"]
    assert expected["ref"] in got["cited"]


def test_the_first_value_before_a_drug_when_asked() -> None:
    first = min(CR, key=lambda r: r["time"])
    assert first["time"] < started("vancomycin")
    assert ask("first creatinine before starting vancomycin")["answer"] == [first["value"]]


@pytest.mark.parametrize(("question", "event"), [("K before surgery", "surgery"), ("Cr before admission", "stay")])
def test_other_anchors_keep_their_reading(question: str, event: str) -> None:
    window = parse(question, NOW).window
    assert window is not None and window.event is not None and window.event.event == event
    pre_op = parse("Hb pre-op?", NOW).window
    assert pre_op is None or pre_op.event is None or pre_op.event.event != "drug"


def test_no_value_before_the_drug_is_said_not_replaced_by_a_later_one() -> None:
    views = {"observation": [r for r in CR if r["time"] > t("2025-07-21T00:00:00")], "medication": MEDS}
    got = offline_answer("last Cr before vanc was started", views, NOW)
    assert got["status"] == "no-data" and got["answer"] == []
