"""Local calendar days: a time keeps the offset it was written in, and a day is the record's local day.

A potassium written ``2025-06-12T22:10:00-05:00`` was drawn on June 12 for the clinician who wrote it (it
is June 13 in UTC). The views keep each time's written offset (``<time>_offset``, minutes east of UTC), the
rows carry their times in that offset, and every calendar notion of a question ("on 6/12", hospital day N,
the day after an event, "on Monday", "overnight") is read on the record's own clock. Instants stay instants:
"the last 48 hours" or a bound written with an offset compare as absolute times. A time written without an
offset is UTC, as before. Meanings: docs/questions.md, "Time windows".
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from fhirqa.agent.asof import AsOf
from fhirqa.agent.backends.offline import OfflineBackend
from fhirqa.agent.backends.offline.timephrases import find_window
from fhirqa.agent.composer import compose
from fhirqa.agent.patient_rows import localised
from fhirqa.agent.resolver import ConceptResolver
from fhirqa.agent.tools import execute, tool_specs
from fhirqa.agent.tools.base import RecordSet, ToolContext
from fhirqa.agent.tools.common import parse_when
from fhirqa.agent.tools.localtime import day_end, day_start, is_floating, iso, local_now, pinned, within

from .test_tools_helpers import FakeRows, obs

CDT = timezone(timedelta(hours=-5))
K = "Potassium [Moles/volume] in Serum or Plasma"
GLU = "Glucose [Mass/volume] in Blood"


def at(text: str) -> datetime:
    """A row time as the store gives it: aware, in the offset written (UTC when none is written)."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def potassium(oid: str, value: float, when: str) -> dict[str, Any]:
    return {**obs(oid, K, value, "2000-01-01T00:00:00", unit="mmol/L", code="2823-3"), "time": at(when)}


def glucose(oid: str, value: float, when: str) -> dict[str, Any]:
    return {**obs(oid, GLU, value, "2000-01-01T00:00:00", unit="mg/dL", code="2339-0"), "time": at(when)}


def encounter(eid: str, code: str, start: str, end: str | None) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Encounter/{eid}", "class_code": code, "class_name": code.lower(),
            "type_name": "Hospital admission" if code == "IMP" else "Office visit", "status": "finished",
            "start_time": at(start), "end_time": at(end) if end else None, "reason_name": None}


def procedure(pid: str, name: str, when: str) -> dict[str, Any]:
    return {"patient_id": "p1", "ref": f"Procedure/{pid}", "name": name, "code": pid, "code_system": None,
            "status": "completed", "category": None, "start_time": at(when), "end_time": at(when),
            "reason_name": None, "reason_code": None, "reason_ref": None, "body_site": None, "outcome": None,
            "encounter_ref": None}


def ask(question: str, views: dict[str, list[dict[str, Any]]], now: datetime) -> dict[str, Any]:
    """The offline backend's final answer over in-memory rows."""
    ctx = ToolContext(patient_id="p1", now=now, data=FakeRows(views), resolve=ConceptResolver())
    out = compose(OfflineBackend(), ctx, "system", f"Question: {question}\nNow: {now.isoformat()}", tool_specs())
    assert out.final is not None, out.stop_reason
    return out.final


# Rows: a time in the offset it was written in ------------------------------------------------------------------

def test_a_row_time_is_shown_in_its_written_offset_so_its_date_is_the_local_day() -> None:
    stored = datetime(2025, 6, 13, 3, 10, tzinfo=UTC)  # what the view's TIMESTAMPTZ holds
    row = localised({"ref": "Observation/k", "time": stored, "time_offset": -300})
    assert row["time"] == stored  # the same instant
    assert row["time"].date() == date(2025, 6, 12) and row["time"].isoformat() == "2025-06-12T22:10:00-05:00"


def test_a_time_written_without_an_offset_stays_utc() -> None:
    stored = datetime(2025, 6, 13, 3, 10, tzinfo=UTC)
    for offset in (None, 0):
        assert localised({"time": stored, "time_offset": offset})["time"].isoformat() == "2025-06-13T03:10:00+00:00"


# Bounds: dates and offsetless times float on each record's clock; offsets make instants ------------------------

def test_a_bare_date_or_an_offsetless_time_is_a_floating_bound_and_an_offset_makes_an_instant() -> None:
    day, bare = parse_when("2025-06-12", "start")
    assert bare and is_floating(day) and iso(day) == "2025-06-12T00:00:00"
    assert is_floating(parse_when("2025-06-12T19:00:00", "start")[0])
    instant = parse_when("2025-06-12T19:00:00-05:00", "start")[0]
    assert not is_floating(instant) and iso(instant) == "2025-06-12T19:00:00-05:00"


def test_a_floating_day_holds_the_times_of_that_local_day_whatever_their_offset() -> None:
    low, high = day_start(date(2025, 6, 12)), day_end(date(2025, 6, 12))
    assert within(at("2025-06-12T22:10:00-05:00"), low, high)  # June 13 in UTC, June 12 where it was written
    assert within(at("2025-06-12T00:30:00+09:00"), low, high)
    assert not within(at("2025-06-13T00:30:00-05:00"), low, high)
    assert within(at("2025-06-12T10:00:00+00:00"), low, high)  # written in UTC: its UTC day


def test_a_floating_bound_pinned_to_a_zone_is_that_zones_clock() -> None:
    assert pinned(day_start(date(2025, 6, 12)), CDT) == at("2025-06-12T00:00:00-05:00")
    instant = at("2025-06-12T08:00:00-05:00")
    assert pinned(instant, UTC) is instant


def test_filter_by_date_keeps_the_local_day_for_a_date_and_the_instant_for_an_offset() -> None:
    rows = [potassium("late", 4.1, "2025-06-12T22:10:00-05:00"), potassium("next", 4.4, "2025-06-13T00:30:00-05:00"),
            potassium("utc", 3.9, "2025-06-12T10:00:00+00:00")]
    ctx = ToolContext(patient_id="p1", now=at("2025-06-20T12:00:00+00:00"), data=FakeRows({}), resolve=ConceptResolver())
    handle = ctx.add(RecordSet(view="observation", rows=rows, description="k"))
    day = execute(ctx, "filter_by_date", {"records": handle, "start": "2025-06-12", "end": "2025-06-12"})
    assert sorted(r["ref"] for r in day["preview"]) == ["Observation/late", "Observation/utc"]
    assert day["window"] == {"start": "2025-06-12T00:00:00", "end": "2025-06-12T23:59:59.999999"}
    instant = execute(ctx, "filter_by_date", {"records": handle, "end": "2025-06-13T03:00:00Z"})
    assert sorted(r["ref"] for r in instant["preview"]) == ["Observation/utc"]  # 22:10-05:00 is 03:10Z


def test_a_daily_total_groups_by_the_local_day() -> None:
    rows = [potassium("a", 1.0, "2025-06-12T08:00:00-05:00"), potassium("b", 2.0, "2025-06-12T22:10:00-05:00")]
    ctx = ToolContext(patient_id="p1", now=at("2025-06-20T12:00:00+00:00"), data=FakeRows({}), resolve=ConceptResolver())
    handle = ctx.add(RecordSet(view="observation", rows=rows, description="k"))
    out = execute(ctx, "aggregate", {"records": handle, "op": "sum", "group_by": "day"})
    assert [(g["day"], g["value"]) for g in out["groups"]] == [("2025-06-12", 3.0)]


# Questions: every calendar day is the record's local day -------------------------------------------------------

NOW = at("2025-06-20T17:00:00+00:00")  # a Friday; 12:00 at -05:00


def test_on_a_date_is_the_local_day_of_the_values() -> None:
    views = {"observation": [potassium("k1", 4.1, "2025-06-12T22:10:00-05:00"),  # June 13 in UTC
                             potassium("k2", 5.0, "2025-06-13T08:00:00-05:00")]}
    assert ask("K on 6/12?", views, NOW)["answer"] == [4.1]
    assert ask("K on 6/13?", views, NOW)["answer"] == [5.0]


def test_hospital_day_counts_local_days_from_the_admissions_local_day() -> None:
    # admitted 20:00 local on June 11 (01:00 UTC on June 12): day 1 is June 11, day 2 June 12
    views = {"encounter": [encounter("s1", "IMP", "2025-06-11T20:00:00-05:00", "2025-06-14T11:00:00-05:00")],
             "observation": [potassium("k1", 3.6, "2025-06-11T21:00:00-05:00"),
                             potassium("k2", 4.2, "2025-06-12T06:00:00-05:00"),
                             potassium("k3", 4.8, "2025-06-13T06:00:00-05:00")]}
    assert ask("K on hospital day 1?", views, NOW)["answer"] == [3.6]
    assert ask("K on HD#2", views, NOW)["answer"] == [4.2]
    assert ask("HD 3 potassium", views, NOW)["answer"] == [4.8]


def test_the_day_after_an_event_is_the_local_day_after_the_events_local_day() -> None:
    views = {"procedure": [procedure("x1", "Chest X-ray, 2 views", "2025-06-10T21:00:00-05:00")],  # June 11 in UTC
             "observation": [potassium("k1", 4.3, "2025-06-11T10:00:00-05:00"),
                             potassium("k2", 3.5, "2025-06-12T09:00:00-05:00")]}
    assert ask("K the day after the chest x-ray?", views, NOW)["answer"] == [4.3]


def test_a_weekday_is_the_local_weekday() -> None:
    views = {"observation": [potassium("mon", 4.0, "2025-06-16T21:00:00-05:00"),  # Monday there, Tuesday in UTC
                             potassium("sun", 5.1, "2025-06-15T22:00:00-05:00")]}  # Sunday there, Monday in UTC
    assert ask("K on Monday?", views, NOW)["answer"] == [4.0]


def test_overnight_is_19_to_07_on_the_records_clock() -> None:
    now = at("2025-06-20T15:00:00+00:00")  # 10:00 at -05:00
    views = {"observation": [glucose("night", 150.0, "2025-06-19T20:00:00-05:00"),
                             glucose("evening", 200.0, "2025-06-19T15:00:00-05:00"),  # 20:00 UTC: not night there
                             glucose("morning", 90.0, "2025-06-20T08:00:00-05:00")]}
    assert ask("highest glucose overnight", views, now)["answer"] == [150.0]


def test_overnight_during_a_stay_is_the_night_on_the_stays_clock() -> None:
    now = at("2025-06-20T15:00:00+00:00")
    # admitted at 16:00 there (21:00 UTC): the night starts at 19:00 on the stay's clock, not at its admission
    views = {"encounter": [encounter("s1", "IMP", "2025-06-19T16:00:00-05:00", None)],
             "observation": [glucose("night", 150.0, "2025-06-19T22:00:00-05:00"),
                             glucose("evening", 200.0, "2025-06-19T17:30:00-05:00")]}
    assert ask("highest glucose overnight during her admission", views, now)["answer"] == [150.0]


def test_a_calendar_window_read_on_the_clock_of_values_written_in_utc_is_unchanged() -> None:
    views = {"observation": [potassium("k1", 4.1, "2025-06-12T23:30:00+00:00"),
                             potassium("k2", 4.6, "2025-06-13T00:30:00+00:00")]}
    assert ask("K on 6/12?", views, NOW)["answer"] == [4.1]


def test_the_last_n_hours_is_a_span_of_instants() -> None:
    now = at("2025-06-20T12:00:00-05:00")
    views = {"observation": [potassium("in", 4.0, "2025-06-19T13:00:00-05:00"),
                             potassium("out", 5.0, "2025-06-19T11:30:00-05:00")]}
    assert ask("how many K in the last 24 hours?", views, now)["answer"] == [1]


# now: the question's clock --------------------------------------------------------------------------------------

def test_now_in_utc_is_read_on_the_records_clock_and_an_own_offset_is_kept() -> None:
    rows = AsOf(FakeRows({"encounter": [encounter("c1", "AMB", "2025-06-02T09:00:00-05:00", None)]}),
                at("2025-06-20T02:00:00+00:00"))
    local = rows.local_now()
    assert local == rows.now and local.isoformat() == "2025-06-19T21:00:00-05:00"
    own = at("2025-06-20T02:00:00-07:00")
    assert local_now(own, CDT) is own
    assert AsOf(FakeRows({}), rows.now).local_now().isoformat() == "2025-06-20T02:00:00+00:00"


def test_today_and_yesterday_follow_nows_own_clock() -> None:
    evening = at("2025-06-19T21:00:00-05:00")  # 02:00 UTC on June 20
    today = find_window("k today", evening)
    assert today is not None and today.window.start == day_start(date(2025, 6, 19))
    yesterday = find_window("k yesterday", evening)
    assert yesterday is not None and yesterday.window.end == day_end(date(2025, 6, 18))


# The store: views keep the offset, and the engine answers by local day -----------------------------------------

@pytest.fixture(scope="module")
def offset_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fhirqa.sources import FileSource
    from fhirqa.store import ingest
    from tests.builders import observation, patient, transaction, write_json

    folder = tmp_path_factory.mktemp("offsets")
    bundle = transaction(patient("p1"),
                         observation("late", value=4.1, when="2025-06-12T22:10:00-05:00"),
                         observation("next", value=5.0, when="2025-06-13T08:00:00-05:00"),
                         observation("utc", value=3.8, when="2025-06-10T10:00:00Z"),
                         observation("bare", value=3.7, when="2025-06-09T10:00:00"))
    write_json(folder / "data" / "p1.json", bundle)
    db = folder / "db"
    ingest([FileSource([folder / "data"])], db)
    return db


def test_the_observation_view_keeps_each_times_written_offset(offset_db: Path) -> None:
    from fhirqa.store import Store

    rows = Store(offset_db).query("SELECT ref, time, time_offset FROM observation ORDER BY time").records()
    offsets = {r["ref"]: r["time_offset"] for r in rows}
    assert offsets == {"Observation/bare": None, "Observation/utc": 0, "Observation/late": -300, "Observation/next": -300}
    late = next(r for r in rows if r["ref"] == "Observation/late")
    assert late["time"] == at("2025-06-13T03:10:00+00:00")  # the instant, in UTC


def test_the_engine_answers_a_date_by_the_records_local_day(offset_db: Path) -> None:
    from fhirqa.agent.engine import ask as engine_ask

    answer = engine_ask("K on 6/12?", patient_id="p1", now="2025-06-20T12:00:00Z", db=offset_db)
    assert answer.answer == [4.1]
    assert [e.time for e in answer.evidence] == ["2025-06-12T22:10:00-05:00"]  # the time as written
