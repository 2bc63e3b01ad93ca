"""A window the question only implied is said in the SQL path's answers, as on the FHIR path.

"K this AM?" rests on clock bounds the clinician did not write (this morning = 00:00-12:00 of today, up to now,
``lexicon/day_parts.json``); every answer over such a window ends with it ("Window: this morning (…)") unless its
text already names it, whichever frame answered (the SQL writer, the FHIR plans over the relational rows, several
items joined), through the FHIR path's own ``plans.window_said``. Values are read here from the rows the test wrote.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import pytest

from fhirqa.agent.backends.offline.timephrases import day_part_window
from fhirqa.sql import ask_sql
from tests.sql.mimic_data import build

NOW = "2164-10-25T10:00:00Z"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return build(tmp_path_factory.mktemp("windows") / "mimic3.sqlite")


def this_morning() -> str:
    found = day_part_window("k this am?", datetime(2164, 10, 25, 10, tzinfo=UTC))
    assert found is not None
    return found.window.label


def potassium_this_morning(db) -> list[tuple[int, float]]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT ROW_ID, VALUENUM FROM LABEVENTS WHERE SUBJECT_ID = 10006 AND ITEMID = 50971 AND "
                           "CHARTTIME >= '2164-10-25 00:00:00' AND CHARTTIME <= '2164-10-25 10:00:00' "
                           "ORDER BY CHARTTIME").fetchall()
    finally:
        con.close()


def test_a_value_this_morning_says_the_window(db):
    rows = potassium_this_morning(db)
    answer = ask_sql("K this AM?", patient_id="10006", now=NOW, connection=str(db))
    assert answer.answer == [rows[-1][1]]
    assert answer.text.endswith(f"Window: {this_morning()}.")
    assert "00:00–12:00" in this_morning()


def test_a_fhir_plan_over_the_rows_says_it_too(db):
    answer = ask_sql("is his K normal this AM?", patient_id="10006", now=NOW, connection=str(db))
    assert answer.answer == [3.5 <= potassium_this_morning(db)[-1][1] <= 5.0]
    assert answer.text.count(this_morning()) == 1


def test_several_items_say_it_once(db):
    answer = ask_sql("last K and creatinine this morning?", patient_id="10006", now=NOW, connection=str(db))
    assert len(answer.answer) == 2 and answer.text.count("Window:") == 1


def test_a_text_that_names_the_window_is_left_as_it_is(db):
    answer = ask_sql("list his potassiums this morning", patient_id="10006", now=NOW, connection=str(db))
    assert answer.answer == [v for _, v in potassium_this_morning(db)]
    assert answer.text.count(this_morning()) == 1 and "Window:" not in answer.text


def test_a_window_written_out_is_not_repeated(db):
    answer = ask_sql("K on 10/25/2164?", patient_id="10006", now=NOW, connection=str(db))
    assert answer.answer == [potassium_this_morning(db)[-1][1]]
    assert "Window:" not in answer.text
