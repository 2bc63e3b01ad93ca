"""One patient's chart, read from a raw Synthea R4 transaction Bundle with orjson.

References are `urn:uuid:` fullUrls; they are resolved by hand (only Patient is needed here).
Nothing here imports fhirqa.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import orjson

SYSTOLIC, DIASTOLIC, BP = "8480-6", "8462-4", "55284-4"


def parse_dt(s: str) -> datetime:
    if len(s) == 10:
        return datetime.fromisoformat(s + "T00:00:00+00:00")
    d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    return d if d.tzinfo else d.replace(tzinfo=UTC)


def add_months(d: datetime, n: int) -> datetime:
    m = d.month - 1 + n
    y, m = d.year + m // 12, m % 12 + 1
    day = min(d.day, calendar.monthrange(y, m)[1])
    return d.replace(year=y, month=m, day=day)


def udate(d: datetime) -> date:
    return d.astimezone(UTC).date()


@dataclass
class Value:
    t: datetime
    v: float
    ref: str


@dataclass
class Event:
    t: datetime
    name: str
    ref: str
    extra: dict = field(default_factory=dict)


@dataclass
class Chart:
    pid: str
    given: str
    family: str
    birth: date
    gender: str
    deceased: datetime | None
    items: dict[str, list[Value]]
    item_names: dict[str, str]
    encounters: list[Event]  # extra: cls
    rx: list[Event]  # extra: status, dose_per_day
    conditions: list[Event]  # extra: abated (datetime|None), clinical
    immunizations: list[Event]
    procedures: list[Event]
    last_fact: datetime

    def values(self, code: str, lo: datetime | None = None, hi: datetime | None = None) -> list[Value]:
        out = self.items.get(code, [])
        return [x for x in out if (lo is None or x.t >= lo) and (hi is None or x.t <= hi)]


def _name(cc: dict) -> str:
    if cc.get("text"):
        return cc["text"]
    for c in cc.get("coding", []):
        if c.get("display"):
            return c["display"]
    return ""


def _dose_per_day(r: dict) -> float | None:
    di = r.get("dosageInstruction") or []
    if not di:
        return None
    d = di[0]
    rep = d.get("timing", {}).get("repeat", {})
    dq = None
    for dr in d.get("doseAndRate") or []:
        if "doseQuantity" in dr:
            dq = dr["doseQuantity"].get("value")
    if dq is None or "frequency" not in rep or "period" not in rep:
        return None
    unit = {"h": 1 / 24, "d": 1, "wk": 7, "mo": 30}.get(rep.get("periodUnit"))
    if unit is None:
        return None
    return dq * rep["frequency"] / (rep["period"] * unit)


def load(path: Path) -> Chart:
    b = orjson.loads(path.read_bytes())
    by_url = {e["fullUrl"]: e["resource"] for e in b["entry"]}
    pat = next(r for r in by_url.values() if r["resourceType"] == "Patient")
    items: dict[str, list[Value]] = {}
    names: dict[str, str] = {}
    enc, rx, cond, imm, proc = [], [], [], [], []
    times: list[datetime] = []

    def subj_ok(r: dict, key: str) -> bool:
        ref = r.get(key, {}).get("reference", "")
        target = by_url.get(ref)
        return target is not None and target is pat

    for r in by_url.values():
        t = r["resourceType"]
        if t == "Observation" and subj_ok(r, "subject"):
            ts = r.get("effectiveDateTime") or (r.get("effectivePeriod") or {}).get("start") or r.get("issued")
            when = parse_dt(ts)
            times.append(when)
            ref = f"Observation/{r['id']}"
            if "valueQuantity" in r and "value" in r["valueQuantity"]:
                for c in r["code"].get("coding", [])[:1]:
                    items.setdefault(c["code"], []).append(Value(when, float(r["valueQuantity"]["value"]), ref))
                    names.setdefault(c["code"], _name(r["code"]))
            for comp in r.get("component", []):
                vq = comp.get("valueQuantity")
                if vq and "value" in vq:
                    c = comp["code"]["coding"][0]["code"]
                    items.setdefault(c, []).append(Value(when, float(vq["value"]), ref))
                    names.setdefault(c, _name(comp["code"]))
        elif t == "Encounter" and subj_ok(r, "subject"):
            when = parse_dt(r["period"]["start"])
            times.append(when)
            enc.append(Event(when, _name((r.get("type") or [{}])[0]), f"Encounter/{r['id']}", {"cls": r["class"]["code"]}))
        elif t == "MedicationRequest" and subj_ok(r, "subject"):
            when = parse_dt(r["authoredOn"])
            times.append(when)
            nm = _name(r["medicationCodeableConcept"])
            rx.append(Event(when, nm, f"MedicationRequest/{r['id']}",
                            {"status": r["status"], "dpd": _dose_per_day(r)}))
        elif t == "Condition" and subj_ok(r, "subject"):
            when = parse_dt(r["onsetDateTime"])
            times.append(when)
            ab = parse_dt(r["abatementDateTime"]) if r.get("abatementDateTime") else None
            cl = (r.get("clinicalStatus") or {}).get("coding", [{}])[0].get("code")
            cond.append(Event(when, _name(r["code"]), f"Condition/{r['id']}", {"abated": ab, "clinical": cl}))
        elif t == "Immunization" and subj_ok(r, "patient"):
            when = parse_dt(r["occurrenceDateTime"])
            times.append(when)
            imm.append(Event(when, _name(r["vaccineCode"]), f"Immunization/{r['id']}"))
        elif t == "Procedure" and subj_ok(r, "subject"):
            pp = r.get("performedPeriod") or {}
            when = parse_dt(r.get("performedDateTime") or pp["start"])
            times.append(when)
            proc.append(Event(when, _name(r["code"]), f"Procedure/{r['id']}"))
    for v in items.values():
        v.sort(key=lambda x: x.t)
    for lst in (enc, rx, cond, imm, proc):
        lst.sort(key=lambda x: (x.t, x.ref))
    nm = pat["name"][0]
    dec = parse_dt(pat["deceasedDateTime"]) if pat.get("deceasedDateTime") else None
    return Chart(
        pid=pat["id"], given=nm["given"][0].rstrip("0123456789"), family=nm["family"].rstrip("0123456789"),
        birth=date.fromisoformat(pat["birthDate"]), gender=pat["gender"], deceased=dec,
        items=items, item_names=names, encounters=enc, rx=rx, conditions=cond,
        immunizations=imm, procedures=proc, last_fact=max(times),
    )


def completed_years(a: date, b: date) -> int:
    return b.year - a.year - ((b.month, b.day) < (a.month, a.day))


def completed_months(a: datetime, b: datetime) -> int:
    n = (b.year - a.year) * 12 + b.month - a.month
    if add_months(a, n) > b:
        n -= 1
    return n


def near_birthday(birth: date, d: date, days: int = 3) -> bool:
    for y in (d.year - 1, d.year, d.year + 1):
        try:
            bd = birth.replace(year=y)
        except ValueError:
            bd = date(y, 3, 1)
        if abs((bd - d).days) <= days:
            return True
    return False


def day_start(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def day_end(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, 23, 59, 59, 999000, tzinfo=UTC)


def year_window(y: int) -> tuple[datetime, datetime]:
    return day_start(date(y, 1, 1)), day_end(date(y, 12, 31))


ONE_DAY = timedelta(days=1)
