"""A hospital stay's own dates over a relational record: its discharge, its length, its day number.

The shared parser marks "last d/c date?", "when did she go home from the hospital?", "LOS of the last admission?",
"how long was the last hospital stay (days)?" and "HD#?" as questions about a stay itself (``pq.stay_event``:
``discharge``, ``length``, ``hospital_day``; the words are ``stay_events`` of ``lexicon/encounters.json``), not about a
value recorded in it. The FHIR path answers them with ``plans.plan_stay``; this module answers them the same way from
the stays the SQL writer reads (:func:`stays`): encounters of a stay class (``stay_classes`` of
``lexicon/time_anchors.json``) by their class or their second class — an OMOP 262 "Emergency Room and Inpatient
Visit", a visit that records where the patient was admitted from (:mod:`fhirqa.sql.domains`), a MIMIC-III admission.

- A **discharge** is the end of a stay that ended by now (a stay still open has none yet); "last" is the latest
  end, "first" the earliest.
- A **length of stay** is the calendar days from the admission date to the discharge date, or to now while the stay
  goes on (as ``plan_stay`` counts it).
- The **hospital day** is the calendar days since the admission date plus one, for a stay open at now.

The stay row is cited (its start, and its end for a discharge).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fhirqa.agent.answer import Evidence
from fhirqa.sql.offline_sql import Compiler, Final, day, final, fmt
from fhirqa.sql.records import Spec, SqlPatient, iso


def stays(data: SqlPatient) -> list[dict[str, Any]]:
    """The patient's hospital stays begun by now, oldest first."""
    from fhirqa.agent.backends.offline.timephrases import anchor_words

    keys = {f"c{i}": c for i, c in enumerate(anchor_words()["stay_classes"])}
    listed = ", ".join(":" + k for k in keys)
    return data.select(Spec("encounter"), order="r.time ASC, r.row_id ASC", params=keys,
                       extra=f"r.time IS NOT NULL AND (r.class_code IN ({listed}) OR r.alt_class IN ({listed}))")


def _cite_end(data: SqlPatient, row: dict[str, Any]) -> None:
    """Cite the stay's end (the discharge), beside its start."""
    data.cite(row, "time")
    table = str(row.get("tbl") or "?")
    ref = f"{table}/{row.get('row_id')}"
    column = str(row.get("end_col") or f"{table}.end_time")
    data.evidence[(ref, column)] = Evidence(ref=ref, field=column, value=iso(row.get("end_time")),
                                            time=iso(row.get("end_time")), label=row.get("name"), unit=None)


def _in_window(c: Compiler, rows: list[dict[str, Any]], field: str) -> list[dict[str, Any]]:
    """The stays the question's window keeps: a dated window by ``field`` (the discharge by its end, a length by its
    start); "this admission" the stay open at now, else the latest."""
    window = c.pq.window
    if window is None:
        return rows
    if window.anchor:
        ongoing = [r for r in rows if r.get("end_time") is None or r["end_time"] >= c.data.now]
        return (ongoing or rows)[-1:]
    return [r for r in rows if r.get(field) is not None and (window.start is None or r[field] >= window.start)
            and (window.end is None or r[field] <= window.end)]


def stay_event(c: Compiler) -> Final:
    """Answer a question about a stay's discharge, length or day number (see the module docstring)."""
    from fhirqa.sql.reading import ICU_CLASS

    pq, data = c.pq, c.data
    discharge = pq.stay_event == "discharge"
    field = "end_time" if discharge else "time"
    icu = pq.encounter_class == ICU_CLASS  # "how long was he in the ICU?", "ICU LOS?": the ICU stays'
    rows = data.select(Spec("icu_stay"), order="r.time ASC, r.row_id ASC", extra="r.time IS NOT NULL") if icu else stays(data)
    if discharge:  # ended by now: an open stay has no discharge yet
        rows = sorted((r for r in rows if r.get("end_time") is not None and r["end_time"] <= data.now),
                      key=lambda r: (r["end_time"], r["time"]))
    rows = _in_window(c, rows, field)
    window = f" {pq.window.label}" if pq.window and not pq.window.anchor else ""
    what = "discharges" if discharge else "ICU stays" if icu else "inpatient stays"
    if pq.intent == "count":
        for row in rows:
            data.cite(row, "time")
        return final([len(rows)], f"{len(rows)} {what}{window}.")
    if pq.intent == "exists":
        if rows:
            data.cite(rows[-1], "time")
        return final([bool(rows)], f"Yes: {len(rows)} {what}{window}." if rows else f"No {what}{window} in the record.")
    if not rows:
        return final([], f"The record has no {what}{window}.", status="no-data")
    row = rows[0] if pq.position == "first" else rows[-1]
    word = "first" if pq.position == "first" else "last"
    name = row.get("name") or "stay"
    stay = f"{name} admitted {day(row['time'])}"
    if discharge:
        _cite_end(data, row)
        end: datetime = row["end_time"]
        if pq.intent == "time_since":
            from fhirqa.sql.offline_intents import elapsed

            value = elapsed(end.date(), data.now.date(), pq.time_unit)
            return final([value], f"{value} {pq.time_unit} since the {word} discharge on {day(end)} ({stay}).",
                         unit=pq.time_unit)
        return final([end.isoformat()], f"The {word} discharge was on {day(end)} ({stay}).")
    ongoing = row.get("end_time") is None or row["end_time"] > data.now
    if pq.stay_event == "hospital_day":
        data.cite(row, "time")
        if not ongoing:
            return final([], f"Not in a stay now: the last one ({stay}) ended on {day(row['end_time'])}.", status="no-data")
        number = (data.now.date() - row["time"].date()).days + 1
        return final([number], f"Hospital day {number} ({stay}; day 1 is the day of admission).")
    from fhirqa.sql.offline_intents import elapsed

    if ongoing:
        data.cite(row, "time")
    else:
        _cite_end(data, row)
    until = data.now if ongoing else row["end_time"]
    unit = pq.time_unit or "days"
    length = elapsed(row["time"].date(), until.date(), unit)
    said = "so far (still admitted)" if ongoing else f"to discharge on {day(row['end_time'])}"
    if icu:
        said = "so far (still there)" if ongoing else f"to {day(row['end_time'])}"
        return final([length], f"Length of the {word} ICU stay: {fmt(length)} {unit}, from {day(row['time'])} {said} "
                     f"({name}).", unit=unit)
    return final([length], f"Length of the {word} stay: {fmt(length)} {unit}, from admission on {day(row['time'])} "
                 f"{said} ({name}).", unit=unit)
