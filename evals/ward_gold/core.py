"""Loading raw FHIR (Bulk NDJSON and Synthea transaction bundles), times, windows, question records."""

from __future__ import annotations

import calendar
import random
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import orjson

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
BULK = DATA / "synthea-bulk-10"
R4 = DATA / "synthea-r4"


def rng(*parts: str) -> random.Random:
    return random.Random("ward|" + "|".join(parts))  # noqa: S311 (seeded, not for security)


def dt(s: str) -> datetime:
    d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return d.astimezone(UTC)


def add_months(d: datetime, n: int) -> datetime:
    m = d.month - 1 + n
    y, m = d.year + m // 12, m % 12 + 1
    return d.replace(year=y, month=m, day=min(d.day, calendar.monthrange(y, m)[1]))


def completed_months(a: datetime, b: datetime) -> int:
    n = (b.year - a.year) * 12 + b.month - a.month
    while n > 0 and add_months(a, n) > b:
        n -= 1
    return n


def completed_years(born: date, at: date) -> int:
    return at.year - born.year - ((at.month, at.day) < (born.month, born.day))


def day0(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def day_end(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, 23, 59, 59, 999000, tzinfo=UTC)


@dataclass
class Obs:
    t: datetime
    v: float
    ref: str


@dataclass
class Rec:
    """A dated record: condition, prescription, encounter, procedure, immunization."""
    name: str
    t: datetime
    ref: str
    status: str = ""
    end: datetime | None = None  # condition abatement
    cls: str = ""  # encounter class
    dpd: float | None = None  # prescription doses per day
    local: str = ""  # the time as written


@dataclass
class Patient:
    id: str
    src: str
    given: str
    family: str
    gender: str
    birth: date
    death: datetime | None
    obs: dict[str, list[Obs]] = field(default_factory=dict)
    conds: list[Rec] = field(default_factory=list)
    meds: list[Rec] = field(default_factory=list)
    encs: list[Rec] = field(default_factory=list)
    procs: list[Rec] = field(default_factory=list)
    imms: list[Rec] = field(default_factory=list)
    last: datetime | None = None
    now: datetime | None = None

    @property
    def ref(self) -> str:
        return f"Patient/{self.id}"

    def pron(self) -> tuple[str, str]:
        return ("she", "her") if self.gender == "female" else ("he", "his")


def _name(cc: dict) -> str:
    if cc.get("text"):
        return cc["text"]
    return cc.get("coding", [{}])[0].get("display", "")


def _dpd(r: dict) -> float | None:
    di = r.get("dosageInstruction") or []
    if not di:
        return None
    rep = (di[0].get("timing") or {}).get("repeat") or {}
    dq = ((di[0].get("doseAndRate") or [{}])[0]).get("doseQuantity") or {}
    if "frequency" not in rep or "period" not in rep or "value" not in dq:
        return None
    unit = {"h": 1 / 24, "d": 1, "wk": 7, "mo": 30}.get(rep.get("periodUnit"))
    if unit is None:
        return None
    return dq["value"] * rep["frequency"] / (rep["period"] * unit)


def _add(p: Patient, r: dict) -> None:
    rt = r["resourceType"]
    ref = f"{rt}/{r['id']}"
    if rt == "Observation":
        t = r.get("effectiveDateTime") or (r.get("effectivePeriod") or {}).get("start") or r.get("issued")
        if not t:
            return
        if "valueQuantity" in r and "value" in r["valueQuantity"]:
            code = r["code"]["coding"][0]["code"]
            p.obs.setdefault(code, []).append(Obs(dt(t), float(r["valueQuantity"]["value"]), ref))
        for c in r.get("component", []):
            if "valueQuantity" in c:
                code = c["code"]["coding"][0]["code"]
                p.obs.setdefault(code, []).append(Obs(dt(t), float(c["valueQuantity"]["value"]), ref))
    elif rt == "Condition":
        t = r.get("onsetDateTime") or (r.get("onsetPeriod") or {}).get("start") or r.get("recordedDate")
        ab = r.get("abatementDateTime") or (r.get("abatementPeriod") or {}).get("start")
        st = ((r.get("clinicalStatus") or {}).get("coding") or [{}])[0].get("code", "")
        vs = ((r.get("verificationStatus") or {}).get("coding") or [{}])[0].get("code", "")
        if t and vs not in ("refuted", "entered-in-error"):
            p.conds.append(Rec(_name(r["code"]), dt(t), ref, st, dt(ab) if ab else None, local=t))
    elif rt == "MedicationRequest":
        if "medicationCodeableConcept" in r and r.get("authoredOn"):
            p.meds.append(Rec(_name(r["medicationCodeableConcept"]), dt(r["authoredOn"]), ref, r["status"],
                              dpd=_dpd(r), local=r["authoredOn"]))
    elif rt == "Encounter":
        s = (r.get("period") or {}).get("start")
        if s:
            p.encs.append(Rec(_name((r.get("type") or [{}])[0]), dt(s), ref, cls=r["class"]["code"],
                              end=dt(r["period"]["end"]) if r["period"].get("end") else None, local=s))
    elif rt == "Procedure":
        s = r.get("performedDateTime") or (r.get("performedPeriod") or {}).get("start")
        if s:
            p.procs.append(Rec(_name(r["code"]), dt(s), ref, r.get("status", ""), local=s))
    elif rt == "Immunization":
        s = r.get("occurrenceDateTime")
        if s and r.get("status", "completed") == "completed":
            p.imms.append(Rec(_name(r["vaccineCode"]), dt(s), ref, local=s))


def _patient(r: dict, src: str) -> Patient:
    n = next((x for x in r["name"] if x.get("use") == "official"), r["name"][0])
    strip = lambda s: re.sub(r"\d+", "", s)  # noqa: E731
    death = r.get("deceasedDateTime")
    return Patient(r["id"], src, strip(n["given"][0]), strip(n["family"]), r["gender"],
                   date.fromisoformat(r["birthDate"]), dt(death) if death else None)


def _finish(p: Patient) -> None:
    for v in p.obs.values():
        v.sort(key=lambda o: o.t)
    for lst in (p.conds, p.meds, p.encs, p.procs, p.imms):
        lst.sort(key=lambda x: (x.t, x.ref))
    ts = [o.t for v in p.obs.values() for o in v]
    for lst in (p.conds, p.meds, p.encs, p.procs, p.imms):
        for x in lst:
            ts.append(x.t)
            if x.end:
                ts.append(x.end)
    if p.death:
        ts.append(p.death)
    p.last = max(ts)
    r = rng(p.id, "now")
    while True:
        n = (p.last + timedelta(days=r.randint(3, 21))).replace(hour=12, minute=0, second=0, microsecond=0)
        if n.day <= 28:
            break
    p.now = n


def load() -> dict[str, Patient]:
    pts: dict[str, Patient] = {}
    for line in (BULK / "Patient.000.ndjson").read_bytes().splitlines():
        if line.strip():
            r = orjson.loads(line)
            pts[r["id"]] = _patient(r, "bulk")
    for typ in ("Observation", "Condition", "MedicationRequest", "Encounter", "Procedure", "Immunization"):
        for f in sorted(BULK.glob(f"{typ}.*.ndjson")):
            for line in f.read_bytes().splitlines():
                if not line.strip():
                    continue
                r = orjson.loads(line)
                subj = (r.get("subject") or r.get("patient") or {}).get("reference", "")
                pid = subj.split("/")[-1]
                if pid in pts:
                    _add(pts[pid], r)
    for f in sorted(R4.glob("*.json")):
        b = orjson.loads(f.read_bytes())
        full = {e["fullUrl"]: e["resource"] for e in b["entry"]}
        pat = next(r for r in full.values() if r["resourceType"] == "Patient")
        p = _patient(pat, "r4")
        pts[p.id] = p
        for r in full.values():
            subj = (r.get("subject") or r.get("patient") or {}).get("reference", "")
            tgt = full.get(subj)
            if tgt is not None and tgt["resourceType"] == "Patient" and tgt["id"] == p.id:
                _add(p, r)
    for p in pts.values():
        _finish(p)
    return pts


# ---------------------------------------------------------------- windows

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


def fmt_date(d: date, r: random.Random) -> str:
    forms = [f"{d.month}/{d.day}/{d.year}", f"{MONTHS[d.month-1][:3]} {d.day}, {d.year}",
             f"{MONTHS[d.month-1]} {d.day}, {d.year}", d.isoformat(), f"{d.month}/{d.day}/{d.year % 100:02d}"]
    if d.day <= 12:
        forms.pop()  # 2-digit years only when the day cannot be read as a month either
    return r.choice(forms)


def fmt_month(y: int, m: int, r: random.Random) -> str:
    return r.choice([f"{MONTHS[m-1][:3]} {y}", f"{MONTHS[m-1]} {y}", f"{m}/{y}"])


@dataclass
class Window:
    kind: str  # all, last, year, since, between
    start: datetime | None
    end: datetime | None
    text: str
    variants: list[tuple[datetime | None, datetime | None]]

    def has(self, t: datetime, start=None, end=None, use=None) -> bool:
        s, e = use if use else (self.start, self.end)
        return (s is None or t >= s) and (e is None or t <= e)


def w_all(r: random.Random) -> Window:
    return Window("all", None, None, r.choice(["", " ever", " on record", " (all time)"]), [(None, None)])


def w_last(now: datetime, n: int, unit: str, r: random.Random) -> Window:
    if unit == "mo":
        s = add_months(now, -n)
        txt = r.choice([f" past {n} mo", f" last {n} months", f" over the last {n} mos", f" in the past {n} months"])
        if n == 12:
            txt = r.choice([" past yr", " in the last year", " over the past 12 months"])
    elif unit == "y":
        s = add_months(now, -12 * n)
        txt = r.choice([f" past {n} yrs", f" over the last {n} years", f" last {n}y", f" in the past {n} years"])
    else:
        s = now - timedelta(days=n)
        txt = r.choice([f" past {n}d", f" last {n} days", f" in the past {n} days"])
    var = [(s + timedelta(days=k), None) for k in (-7, 0, 7)]
    return Window("last", s, None, txt, var)


def w_year(y: int, r: random.Random) -> Window:
    s, e = day0(date(y, 1, 1)), day_end(date(y, 12, 31))
    txt = r.choice([f" in {y}", f" during {y}", f" for {y}", f" in '{y % 100:02d}", f" in calendar year {y}"])
    d = timedelta(days=1)
    return Window("year", s, e, txt, [(s - d, e - d), (s + d, e + d), (s, e)])


def w_since(d: date, month: bool, r: random.Random) -> Window:
    s = day0(d)
    txt = f" since {fmt_month(d.year, d.month, r)}" if month else f" since {fmt_date(d, r)}"
    dd = timedelta(days=1)
    return Window("since", s, None, txt, [(s - dd, None), (s + dd, None), (s, None)])


def w_between(a: date, b: date, month: bool, r: random.Random) -> Window:
    dd = timedelta(days=1)
    if month:
        last = date(b.year, b.month, calendar.monthrange(b.year, b.month)[1])
        s, e = day0(a), day_end(last)
        txt = r.choice([f" between {fmt_month(a.year, a.month, r)} and {fmt_month(b.year, b.month, r)}",
                        f" from {fmt_month(a.year, a.month, r)} to {fmt_month(b.year, b.month, r)}"])
        var = [(s - dd, e + dd), (s + dd, day_end(b) - dd), (s, e)]
    else:
        s, e = day0(a), day_end(b)
        txt = r.choice([f" between {fmt_date(a, r)} and {fmt_date(b, r)}", f" from {fmt_date(a, r)} to {fmt_date(b, r)}"])
        var = [(s - dd, e + dd), (s + dd, e - dd), (s, e)]
    return Window("between", s, e, txt, var)


def robust(win: Window, fn, items) -> tuple[bool, object]:
    """fn(list_in_window) -> answer; the answer must not depend on the window's exact edges."""
    answers = []
    for s, e in win.variants:
        sub = [x for x in items if (s is None or x.t >= s) and (e is None or x.t <= e)]
        answers.append(fn(sub))
    main = fn([x for x in items if win.has(x.t)])
    return all(a == main for a in answers), main


def random_window(p: Patient, items, r: random.Random, kinds=("all", "last", "year", "since", "between")) -> Window:
    kind = r.choice(kinds)
    ts = [x.t for x in items] or [p.now - timedelta(days=400)]
    lo, hi = min(ts), max(ts)
    if kind == "all":
        return w_all(r)
    if kind == "last":
        unit = r.choice(["mo", "mo", "y", "d"])
        n = {"mo": r.choice([3, 6, 12, 18, 24]), "y": r.choice([2, 3, 5, 10]), "d": r.choice([90, 180, 365])}[unit]
        return w_last(p.now, n, unit, r)
    if kind == "year":
        return w_year(r.randint(lo.year, hi.year), r)
    span = max(1, (hi - lo).days)
    a = (lo + timedelta(days=r.randint(0, span))).date()
    if kind == "since":
        month = r.random() < 0.5
        if month:
            a = a.replace(day=1)
        return w_since(a, month, r)
    b = (lo + timedelta(days=r.randint(0, span))).date()
    a, b = min(a, b), max(a, b)
    if (b - a).days < 60:
        b = a + timedelta(days=r.randint(90, 500))
    month = r.random() < 0.4
    if month:
        a = a.replace(day=1)
    return w_between(a, b, month, r)


# ---------------------------------------------------------------- records


def q(cat, p, question, atype, expected, refs, template, status="answered", now=None, tol=None):
    if tol is None:
        tol = {"number": 0.01, "date": 0}.get(atype, 0)
        if cat == "change":
            tol = 0.02
    n = now or (p.now if p else None)
    return {
        "id": "",
        "patient_id": p.id if p else None,
        "question": question,
        "now": n.strftime("%Y-%m-%dT%H:%M:%SZ") if n else None,
        "category": cat,
        "answer_type": atype,
        "expected": expected,
        "expected_status": status,
        "tolerance": tol,
        "gold_refs": sorted(set(refs)),
        "template": template,
    }


def rnd(x: float) -> float:
    return round(x, 4)
