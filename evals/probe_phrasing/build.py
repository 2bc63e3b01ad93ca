"""Build the paraphrase-robustness probe (``evals/probe_phrasing/questions.jsonl``).

Blind probe: the gold answers are computed here from the raw FHIR JSON (``json`` only); nothing is imported
from ``fhirqa``. About 45 facts, each asked in five styles (formal, short, typo, context, indirect) that must
all get the same answer. The facts come from two sources:

* ``../shared/data/synthea-bulk-10`` (Synthea Bulk Data export, NDJSON): conditions, prescriptions,
  encounters, immunizations, demographics (this export has no Observations);
* synthetic patients made by ``fhirqa synth --patients 6 --seed 90210 --now 2026-06-15T12:00:00Z``, run as a
  black-box subprocess (same seed, same bytes): labs, vitals, inpatient stays, medication administrations.

Same data in, same bytes out: the phrasings are fixed text, facts are listed in a fixed order, and every
gold value is computed from the records with the rules of ``docs/questions.md``. Each gold function also
asserts the conditions that keep its answer unambiguous (no ties at the deciding time, thresholds away
from the extreme, day totals equal in UTC and in the record's local time, robust relative windows).

    python evals/probe_phrasing/build.py            # rewrite questions.jsonl
    python evals/probe_phrasing/build.py --check    # exit 1 when questions.jsonl is stale
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
BULK = REPO.parent / "shared" / "data" / "synthea-bulk-10"
OUT = HERE / "questions.jsonl"

SYNTH_SEED = "90210"
SYNTH_PATIENTS = "6"
SYNTH_NOW = "2026-06-15T12:00:00Z"

# `now` of the questions: synthetic records end in April 2026; 21:00Z keeps completed days equal to the
# difference of calendar dates for the discharge (18:15Z) asked about.
NOW_SYNTH = "2026-06-15T21:00:00Z"
# Mid-admission moment for "this admission" questions (Priya's stay runs 2026-03-15 .. 2026-03-21).
NOW_ADMIT = "2026-03-19T15:00:00Z"
# Bulk export ends 2023-03-22.
NOW_BULK = "2023-04-15T12:00:00Z"

STYLES = ("formal", "short", "typo", "context", "indirect")
INPATIENT = {"IMP", "ACUTE", "NONAC"}

LOINC = {
    "a1c": "4548-4",
    "k": "2823-3",
    "cr": "2160-0",
    "hgb": "718-7",
    "wt": "29463-7",
    "temp": "8310-5",
    "spo2": "59408-5",
    "bnp": "30934-4",
    "tsh": "3016-3",
    "bp": "85354-9",
    "sbp": "8480-6",
}


def inst(text: str) -> datetime:
    """Parse an ISO 8601 instant (date-only strings are midnight UTC) into an aware UTC datetime."""
    if len(text) == 10:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def local_date(text: str) -> str:
    """The calendar date as written in the record (its own offset)."""
    return text[:10]


def name_of(cc: dict | None) -> str | None:
    """`code.text`, else the first coding display."""
    if not cc:
        return None
    return cc.get("text") or next((c.get("display") for c in cc.get("coding", []) if c.get("display")), None)


def ref_id(ref: str) -> str:
    return ref.split("/")[-1].replace("urn:uuid:", "")


class Record:
    """All resources of the corpus, by patient, with references resolved by hand."""

    def __init__(self) -> None:
        self.by_patient: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
        self.by_id: dict[str, dict] = {}
        self.patients: dict[str, dict] = {}

    def add(self, res: dict) -> None:
        rtype = res["resourceType"]
        self.by_id[res["id"]] = res
        self.by_id[f"{rtype}/{res['id']}"] = res
        if rtype == "Patient":
            self.patients[res["id"]] = res
            return
        subj = res.get("subject") or res.get("patient")
        if subj and subj.get("reference"):
            self.by_patient[ref_id(subj["reference"])][rtype].append(res)

    def res(self, pid: str, rtype: str) -> list[dict]:
        return self.by_patient[pid][rtype]

    def find_patient(self, given: str, family: str) -> str:
        hits = [
            p["id"]
            for p in self.patients.values()
            if p["name"][0]["given"][0].rstrip("0123456789") == given
            and p["name"][0]["family"].rstrip("0123456789") == family
        ]
        assert len(hits) == 1, (given, family, hits)
        return hits[0]

    # ---- helpers following docs/questions.md ----

    def values(self, pid: str, item: str, now: str) -> list[tuple[datetime, float, str]]:
        """(time, value, ref) of an item's numeric values up to now, sorted by time."""
        out = []
        for o in self.res(pid, "Observation"):
            if o.get("status") in ("entered-in-error", "cancelled"):
                continue
            codes = {c.get("code") for c in o["code"].get("coding", [])}
            when = (
                o.get("effectiveDateTime") or (o.get("effectivePeriod") or {}).get("start") or o.get("issued")
            )
            if item == "sbp":
                if LOINC["bp"] not in codes:
                    continue
                for comp in o.get("component", []):
                    if LOINC["sbp"] in {c.get("code") for c in comp["code"].get("coding", [])}:
                        out.append((inst(when), comp["valueQuantity"]["value"], f"Observation/{o['id']}"))
                continue
            if LOINC[item] in codes and "valueQuantity" in o:
                out.append((inst(when), o["valueQuantity"]["value"], f"Observation/{o['id']}"))
        out = [v for v in out if v[0] <= inst(now)]
        out.sort(key=lambda v: v[0])
        return out

    def encounters(self, pid: str, now: str, classes: set[str] | None = None) -> list[dict]:
        encs = [
            e
            for e in self.res(pid, "Encounter")
            if inst(e["period"]["start"]) <= inst(now) and (classes is None or e["class"]["code"] in classes)
        ]
        return sorted(encs, key=lambda e: inst(e["period"]["start"]))

    def this_admission(self, pid: str, now: str) -> tuple[datetime, datetime, dict] | None:
        """[start of the current stay, now]: the latest IMP/EMER encounter containing now, else the latest one."""
        stays = self.encounters(pid, now, INPATIENT | {"EMER"})
        if not stays:
            return None
        t = inst(now)
        containing = [
            e for e in stays if inst(e["period"]["start"]) <= t <= inst(e["period"].get("end", now))
        ]
        e = containing[-1] if containing else stays[-1]
        end = min(inst(e["period"].get("end", now)), t)
        return inst(e["period"]["start"]), end, e

    def last_stay(self, pid: str, now: str) -> tuple[datetime, datetime, dict] | None:
        stays = self.encounters(pid, now, INPATIENT)
        if not stays:
            return None
        e = stays[-1]
        return inst(e["period"]["start"]), min(inst(e["period"].get("end", now)), inst(now)), e

    def med_name(self, mr: dict) -> str:
        """Prescription name: medicationCodeableConcept.text/display, else the referenced Medication's code."""
        if mr.get("medicationCodeableConcept"):
            return name_of(mr["medicationCodeableConcept"])
        med = self.by_id[ref_id(mr["medicationReference"]["reference"])]
        return name_of(med["code"])

    def administrations(self, pid: str, drug: str, now: str) -> list[tuple[str, float, str, str]]:
        """(written time, dose, status, ref) of a drug's administrations up to now."""
        out = []
        for ma in self.res(pid, "MedicationAdministration"):
            name = (self.med_name(ma) or "").lower()
            if drug not in name:
                continue
            when = ma.get("effectiveDateTime") or ma["effectivePeriod"]["start"]
            if inst(when) > inst(now):
                continue
            out.append(
                (when, ma["dosage"]["dose"]["value"], ma["status"], f"MedicationAdministration/{ma['id']}")
            )
        return sorted(out, key=lambda a: inst(a[0]))


def in_window(vals, start: datetime, end: datetime):
    return [v for v in vals if start <= v[0] <= end]


def no_tie(vals, idx: int) -> None:
    """The deciding value is alone at its time."""
    t = vals[idx][0]
    assert len({v[1] for v in vals if v[0] == t}) == 1, ("tie", vals[idx])


def completed_months(a: datetime, b: datetime) -> int:
    m = (b.year - a.year) * 12 + (b.month - a.month)
    if (b.day, b.time()) < (a.day, a.time()):
        m -= 1
    return m


def completed_years(a: datetime, b: datetime) -> int:
    y = b.year - a.year
    if (b.month, b.day, b.time()) < (a.month, a.day, a.time()):
        y -= 1
    return y


def age_years(birth: str, at: datetime) -> int:
    b = datetime.fromisoformat(birth).date()
    d = at.date()
    return d.year - b.year - ((d.month, d.day) < (b.month, b.day))


def year_window(year: int) -> tuple[datetime, datetime]:
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)


def day_window(day: str) -> tuple[datetime, datetime]:
    d = datetime.fromisoformat(day).replace(tzinfo=UTC)
    return d, d + timedelta(days=1) - timedelta(milliseconds=1)


def ans(values, refs, status="answered"):
    return {"expected": values, "expected_status": status, "gold_refs": sorted(set(refs))}


# ---------------------------------------------------------------------------------------------------------
# Facts. Each: key, patient (given, family), now, category, answer_type, tolerance, gold(rec, pid, now),
# and the five phrasings. Names in phrasings use she/he as the record's gender says.
# ---------------------------------------------------------------------------------------------------------


def g_latest(item):
    def gold(rec, pid, now):
        vals = rec.values(pid, item, now)
        no_tie(vals, -1)
        return ans([vals[-1][1]], [vals[-1][2]])

    return gold


def g_latest_lb(rec, pid, now):
    vals = rec.values(pid, "wt", now)
    no_tie(vals, -1)
    return ans([round(vals[-1][1] * 2.2046226, 2)], [vals[-1][2]])


def g_tmax_adm_f(rec, pid, now):
    start, end, enc = rec.this_admission(pid, now)
    vals = in_window(rec.values(pid, "temp", now), start, end)
    top = max(vals, key=lambda v: v[1])
    return ans([round(top[1] * 9 / 5 + 32, 2)], [top[2], f"Encounter/{enc['id']}"])


def g_on_day(item, day):
    def gold(rec, pid, now):
        vals = in_window(rec.values(pid, item, now), *day_window(day))
        assert len(vals) == 1, vals
        return ans([vals[0][1]], [vals[0][2]])

    return gold


def g_stay_extreme(item, which, stay):
    def gold(rec, pid, now):
        win = rec.this_admission(pid, now) if stay == "this" else rec.last_stay(pid, now)
        start, end, enc = win
        vals = in_window(rec.values(pid, item, now), start, end)
        pick = (max if which == "max" else min)(vals, key=lambda v: v[1])
        # a unique extreme (the answer does not hinge on which of two equal values is cited)
        assert sum(1 for v in vals if v[1] == pick[1]) == 1, vals
        return ans([pick[1]], [pick[2], f"Encounter/{enc['id']}"])

    return gold


def g_year_extreme(item, which, year):
    def gold(rec, pid, now):
        vals = in_window(rec.values(pid, item, now), *year_window(year))
        pick = (max if which == "max" else min)(vals, key=lambda v: v[1])
        return ans([pick[1]], [pick[2]])

    return gold


def g_count_stay(item):
    def gold(rec, pid, now):
        start, end, enc = rec.this_admission(pid, now)
        vals = in_window(rec.values(pid, item, now), start, end)
        return ans([len(vals)], [v[2] for v in vals] + [f"Encounter/{enc['id']}"])

    return gold


def g_enc_count(classes, year=None):
    def gold(rec, pid, now):
        encs = rec.encounters(pid, now, classes)
        if year:
            lo, hi = year_window(year)
            encs = [e for e in encs if lo <= inst(e["period"]["start"]) <= hi]
            # no visit within a day of the year's edges (local vs UTC year cannot differ)
            for e in rec.encounters(pid, now, classes):
                s = inst(e["period"]["start"])
                assert abs((s - lo).total_seconds()) > 86400 and abs((s - hi).total_seconds()) > 86400
        return ans([len(encs)], [f"Encounter/{e['id']}" for e in encs])

    return gold


def _procs(rec, pid, now, word):
    out = []
    for p in rec.res(pid, "Procedure"):
        when = p.get("performedDateTime") or p["performedPeriod"]["start"]
        if word in (name_of(p["code"]) or "").lower() and inst(when) <= inst(now):
            out.append((inst(when), p))
    return sorted(out, key=lambda x: x[0])


def g_proc_ever(word):
    def gold(rec, pid, now):
        ps = _procs(rec, pid, now, word)
        return ans([bool(ps)], [f"Procedure/{p['id']}" for _, p in ps])

    return gold


def _mrs(rec, pid, now, words):
    return [
        m
        for m in rec.res(pid, "MedicationRequest")
        if any(w in (rec.med_name(m) or "").lower() for w in words) and inst(m["authoredOn"]) <= inst(now)
    ]


def g_med_ever(words):
    def gold(rec, pid, now):
        ms = _mrs(rec, pid, now, words)
        mas = [a for w in words for a in rec.administrations(pid, w, now)]
        return ans([bool(ms or mas)], [f"MedicationRequest/{m['id']}" for m in ms])

    return gold


def _conds(rec, pid, now, words):
    out = []
    for c in rec.res(pid, "Condition"):
        ver = {x.get("code") for x in (c.get("verificationStatus") or {}).get("coding", [])}
        if ver & {"refuted", "entered-in-error"}:
            continue
        nm = (name_of(c["code"]) or "").lower()
        onset = c.get("onsetDateTime") or c.get("recordedDate")
        if any(w in nm for w in words) and inst(onset) <= inst(now):
            out.append(c)
    return out


def g_cond_ever(words):
    def gold(rec, pid, now):
        cs = _conds(rec, pid, now, words)
        return ans([bool(cs)], [f"Condition/{c['id']}" for c in cs])

    return gold


def _active_cond(c, now):
    status = {x.get("code") for x in (c.get("clinicalStatus") or {}).get("coding", [])}
    if status & {"inactive", "resolved", "remission"}:
        return False
    ab = c.get("abatementDateTime")
    return ab is None or inst(ab) > inst(now)


def g_cond_active(words):
    def gold(rec, pid, now):
        cs = _conds(rec, pid, now, words)
        assert cs
        return ans([any(_active_cond(c, now) for c in cs)], [f"Condition/{c['id']}" for c in cs])

    return gold


def g_active_conditions(rec, pid, now):
    cs = [c for c in _conds(rec, pid, now, [""]) if _active_cond(c, now)]
    return ans(sorted({name_of(c["code"]) for c in cs}), [f"Condition/{c['id']}" for c in cs])


def g_threshold(item, op, cut, window):
    def gold(rec, pid, now):
        vals = rec.values(pid, item, now)
        if window == "this_year":
            vals = in_window(vals, datetime(inst(now).year, 1, 1, tzinfo=UTC), inst(now))
        hit = [v for v in vals if (v[1] > cut if op == ">" else v[1] < cut)]
        extreme = max(v[1] for v in vals) if op == ">" else min(v[1] for v in vals)
        assert abs(extreme - cut) / cut > 0.006, (extreme, cut)  # cut-off away from the true extreme
        return ans([bool(hit)], [v[2] for v in (hit or vals)])

    return gold


def g_trend_years(item, years):
    def gold(rec, pid, now):
        t = inst(now)
        results = set()
        for shift in (-7, 0, 7):
            start = t.replace(year=t.year - years) + timedelta(days=shift)
            vals = in_window(rec.values(pid, item, now), start, t)
            r = (vals[-1][1] - vals[0][1]) / abs(vals[0][1])
            assert abs(abs(r) - 0.05) > 0.005
            results.add("increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable")
        assert len(results) == 1, results
        start = t.replace(year=t.year - years)
        vals = in_window(rec.values(pid, item, now), start, t)
        return ans([results.pop()], [vals[0][2], vals[-1][2]])

    return gold


def g_change_stay(item):
    def gold(rec, pid, now):
        start, end, enc = rec.this_admission(pid, now)
        vals = in_window(rec.values(pid, item, now), start, end)
        no_tie(vals, 0)
        no_tie(vals, -1)
        return ans([round(vals[-1][1] - vals[0][1], 4)], [vals[0][2], vals[-1][2]])

    return gold


def g_change_dates(item, a, b):
    def gold(rec, pid, now):
        vals = in_window(rec.values(pid, item, now), day_window(a)[0], day_window(b)[1])
        assert vals[0][0].date().isoformat() == a and vals[-1][0].date().isoformat() == b
        return ans([round(vals[-1][1] - vals[0][1], 4)], [vals[0][2], vals[-1][2]])

    return gold


def g_cond_first(words):
    def gold(rec, pid, now):
        cs = sorted(_conds(rec, pid, now, words), key=lambda c: inst(c["onsetDateTime"]))
        first = cs[0]["onsetDateTime"]
        assert inst(first).date().isoformat() == local_date(first)
        return ans([inst(first).date().isoformat()], [f"Condition/{cs[0]['id']}"])

    return gold


def _imms(rec, pid, now, words):
    out = [
        i
        for i in rec.res(pid, "Immunization")
        if i.get("status", "completed") == "completed"
        and any(w in (name_of(i["vaccineCode"]) or "").lower() for w in words)
        and inst(i["occurrenceDateTime"]) <= inst(now)
    ]
    return sorted(out, key=lambda i: inst(i["occurrenceDateTime"]))


def g_imm_last(words):
    def gold(rec, pid, now):
        im = _imms(rec, pid, now, words)
        when = im[-1]["occurrenceDateTime"]
        assert inst(when).date().isoformat() == local_date(when)
        return ans([inst(when).date().isoformat()], [f"Immunization/{im[-1]['id']}"])

    return gold


def g_imm_count(words):
    def gold(rec, pid, now):
        im = _imms(rec, pid, now, words)
        return ans([len(im)], [f"Immunization/{i['id']}" for i in im])

    return gold


def g_imm_months_since(words):
    def gold(rec, pid, now):
        im = _imms(rec, pid, now, words)
        ev = inst(im[-1]["occurrenceDateTime"])
        got = {completed_months(ev + timedelta(days=s), inst(now)) for s in (-3, 0, 3)}
        assert len(got) == 1, got
        return ans([got.pop()], [f"Immunization/{im[-1]['id']}"])

    return gold


def g_active_meds(rec, pid, now):
    ms = [m for m in rec.res(pid, "MedicationRequest") if m["status"] == "active"]
    return ans(sorted({rec.med_name(m) for m in ms}), [f"MedicationRequest/{m['id']}" for m in ms])


def g_still_on(words):
    def gold(rec, pid, now):
        ms = _mrs(rec, pid, now, words)
        assert ms  # the drug was prescribed at some point
        act = [m for m in ms if m["status"] == "active"]
        return ans([bool(act)], [f"MedicationRequest/{m['id']}" for m in (act or ms)])

    return gold


def g_daily_dose(words):
    def gold(rec, pid, now):
        ms = sorted(_mrs(rec, pid, now, words), key=lambda m: inst(m["authoredOn"]))
        latest = [m for m in ms if m["authoredOn"] == ms[-1]["authoredOn"]]
        assert len(latest) == 1
        di = latest[0]["dosageInstruction"][0]
        rep = di["timing"]["repeat"]
        dose = di["doseAndRate"][0]["doseQuantity"]["value"]
        per_day = {"h": 1 / 24, "d": 1, "wk": 7, "mo": 30}[rep["periodUnit"]] * rep["period"]
        return ans([round(dose * rep["frequency"] / per_day, 4)], [f"MedicationRequest/{latest[0]['id']}"])

    return gold


def g_admin_day(drug, day, what, scale=1.0):
    def gold(rec, pid, now):
        given = [a for a in rec.administrations(pid, drug, now) if a[2] == "completed"]
        utc = [a for a in given if inst(a[0]).date().isoformat() == day]
        loc = [a for a in given if local_date(a[0]) == day]
        if what == "sum":
            u, l_ = sum(a[1] for a in utc), sum(a[1] for a in loc)
        else:
            u, l_ = len(utc), len(loc)
        assert u == l_, (u, l_)  # the day reads the same in UTC and in the record's local time
        val = round(u * scale, 4) if what == "sum" else u
        return ans([val], [a[3] for a in utc])

    return gold


def g_admin_count_stay(drug):
    def gold(rec, pid, now):
        start, end, enc = rec.last_stay(pid, now)
        given = [
            a
            for a in rec.administrations(pid, drug, now)
            if a[2] == "completed" and start <= inst(a[0]) <= end
        ]
        return ans([len(given)], [a[3] for a in given] + [f"Encounter/{enc['id']}"])

    return gold


def g_age(rec, pid, now):
    p = rec.patients[pid]
    at = inst(now)
    if p.get("deceasedDateTime") and inst(p["deceasedDateTime"]) <= at:
        at = inst(p["deceasedDateTime"])
    got = {age_years(p["birthDate"], at + timedelta(days=s)) for s in (-3, 0, 3)}
    assert len(got) == 1, got  # not within 3 days of a birthday
    return ans([got.pop()], [f"Patient/{pid}"])


def g_no_data_item(item):
    def gold(rec, pid, now):
        assert not rec.values(pid, item, now)
        return ans([], [], status="no-data")

    return gold


def g_no_data_stay(rec, pid, now):
    assert rec.this_admission(pid, now) is None
    return ans([], [], status="no-data")


def g_los(rec, pid, now):
    start, end, enc = rec.last_stay(pid, now)
    s, e = enc["period"]["start"], enc["period"]["end"]
    days = (inst(e).date() - inst(s).date()).days
    assert days == (datetime.fromisoformat(local_date(e)) - datetime.fromisoformat(local_date(s))).days
    return ans([days], [f"Encounter/{enc['id']}"])


def g_last_discharge(rec, pid, now):
    stays = [e for e in rec.encounters(pid, now, INPATIENT) if inst(e["period"]["end"]) <= inst(now)]
    end = stays[-1]["period"]["end"]
    assert inst(end).date().isoformat() == local_date(end)
    return ans([inst(end).date().isoformat()], [f"Encounter/{stays[-1]['id']}"])


def g_first_in_stay(item):
    def gold(rec, pid, now):
        start, end, enc = rec.this_admission(pid, now)
        vals = in_window(rec.values(pid, item, now), start, end)
        no_tie(vals, 0)
        return ans([vals[0][1]], [vals[0][2], f"Encounter/{enc['id']}"])

    return gold


def g_avg_year(item, year):
    def gold(rec, pid, now):
        vals = in_window(rec.values(pid, item, now), *year_window(year))
        assert len(vals) >= 2
        return ans([round(sum(v[1] for v in vals) / len(vals), 4)], [v[2] for v in vals])

    return gold


def g_years_with(words):
    def gold(rec, pid, now):
        cs = sorted(_conds(rec, pid, now, words), key=lambda c: inst(c["onsetDateTime"]))
        assert all(_active_cond(c, now) for c in cs)
        first = inst(cs[0]["onsetDateTime"])
        got = {completed_years(first + timedelta(days=s), inst(now)) for s in (-3, 0, 3)}
        assert len(got) == 1
        return ans([got.pop()], [f"Condition/{cs[0]['id']}"])

    return gold


PRIYA = ("Priya", "Gonzalez")
EVELYN = ("Evelyn", "Jackson")
BETTY = ("Betty", "Sanchez")
SUSAN = ("Susan", "Wright")
ARTHUR = ("Arthur", "Thomas")
YVONE = ("Yvone", "Cummings")
CORRIN = ("Corrin", "Jast")
KASANDRA = ("Kasandra", "Shanahan")
SUMIKO = ("Sumiko", "Medhurst")

# (key, patient, now, category, answer_type, tolerance, gold, {style: question})
# fmt: off
FACTS = [
    ("a1c-latest", PRIYA, NOW_SYNTH, "latest_value", "number", 0.01, g_latest("a1c"), {
        "formal": "What is Priya's most recent hemoglobin A1c result?",
        "short": "last A1c?",
        "typo": "whats her most recnt hba1c",
        "context": "Pt seen in clinic tmrw - can you pull her most recent a1c?",
        "indirect": "How was her sugar control at the last A1c check - what did it read?",
    }),
    ("k-latest", EVELYN, NOW_SYNTH, "latest_value", "number", 0.01, g_latest("k"), {
        "formal": "What was the patient's most recent serum potassium?",
        "short": "latest K?",
        "typo": "last potasium level for evelyn",
        "context": "Renewing her Lasix today and want to check lytes first - what was her last K?",
        "indirect": "When her potassium was last drawn, what did it come back as?",
    }),
    ("wt-latest-lb", SUSAN, NOW_SYNTH, "latest_value", "number", 0.01, g_latest_lb, {
        "formal": "What is Susan's most recent recorded weight in pounds?",
        "short": "last wt in lbs",
        "typo": "most recent wieght in lb?",
        "context": "Need a current weight for her bariatric referral form - latest wt in pounds pls",
        "indirect": "How heavy was she at her last weigh-in, in lb?",
    }),
    ("tmax-admission-f", PRIYA, NOW_ADMIT, "min_max", "number", 0.01, g_tmax_adm_f, {
        "formal": "What is the highest temperature recorded during this admission, in degrees Fahrenheit?",
        "short": "Tmax this admit (F)?",
        "typo": "highest temp since admision in fahrenheit",
        "context": "Writing the ID consult note - what was her max temp this admission, in F?",
        "indirect": "How high did her fever get since she came in? Give it in °F.",
    }),
    ("hgb-on-date", SUSAN, NOW_SYNTH, "value_in_window", "number", 0.01, g_on_day("hgb", "2024-02-25"), {
        "formal": "What was Susan's hemoglobin on February 25, 2024?",
        "short": "Hgb 2/25/2024?",
        "typo": "hemoglobn on feb 25, 2024",
        "context": "Reviewing her February 2024 sepsis stay for M&M - what was her Hgb on 2024-02-25?",
        "indirect": "On 2/25/2024, what did her hemoglobin come back at?",
    }),
    ("cr-max-admission", PRIYA, NOW_ADMIT, "min_max", "number", 0.01, g_stay_extreme("cr", "max", "this"), {
        "formal": "What is the highest creatinine recorded during this admission?",
        "short": "peak Cr this admit?",
        "typo": "highest creatinin this admision",
        "context": "for the discharge summary I need the highest creatinine this admission",
        "indirect": "How high did her creatinine go since she came in?",
    }),
    ("sbp-max-2025", EVELYN, NOW_SYNTH, "min_max", "number", 0.01, g_year_extreme("sbp", "max", 2025), {
        "formal": "What was Evelyn's highest systolic blood pressure in 2025?",
        "short": "max SBP 2025?",
        "typo": "highest systolic bp durin 2025",
        "context": "Titrating her amlodipine - what was her highest systolic reading in 2025?",
        "indirect": "Looking at all of 2025, what was the top number of her blood pressure at its highest?",
    }),
    ("spo2-min-last-stay", EVELYN, NOW_SYNTH, "min_max", "number", 0.01, g_stay_extreme("spo2", "min", "last"), {
        "formal": "What was the lowest oxygen saturation recorded during Evelyn's last hospital admission?",
        "short": "lowest SpO2 last admit?",
        "typo": "lowest o2 sat durring her last hospitalisation",
        "context": "Home O2 qualification paperwork asks for her lowest sat during her last admission - what was it?",
        "indirect": "How low did her oxygen saturation dip during her most recent inpatient stay?",
    }),
    ("cr-count-admission", PRIYA, NOW_ADMIT, "count_measurements", "count", 0, g_count_stay("cr"), {
        "formal": "How many creatinine measurements have been done during this admission?",
        "short": "# Cr draws this admit?",
        "typo": "how many creatinine levls since admision",
        "context": "Nephrology wants to know how many creatinine checks she has had since she came in - how many?",
        "indirect": "Since admission, how many times has her creatinine been drawn?",
    }),
    ("visits-2025", EVELYN, NOW_SYNTH, "count_encounters", "count", 0, g_enc_count(None, 2025), {
        "formal": "How many encounters did Evelyn have during 2025?",
        "short": "# visits in 2025?",
        "typo": "how many vists did she hav in 2025",
        "context": "Auditing her care utilization for the annual report - how many visits of any kind did she have in 2025?",
        "indirect": "In calendar year 2025, how many times was she seen?",
    }),
    ("colonoscopy-yes", PRIYA, NOW_SYNTH, "existence_positive", "boolean", 0, g_proc_ever("colonoscopy"), {
        "formal": "Has Priya ever had a colonoscopy?",
        "short": "hx colonoscopy?",
        "typo": "has she evr had a colonscopy",
        "context": "Doing her colorectal cancer screening gap check - is there a colonoscopy anywhere in her record?",
        "indirect": "When it comes to colon cancer screening, has she had a colonoscopy at any point?",
    }),
    ("colonoscopy-no", EVELYN, NOW_SYNTH, "existence_negative", "boolean", 0, g_proc_ever("colonoscopy"), {
        "formal": "Has Evelyn ever had a colonoscopy?",
        "short": "prior colonoscopy?",
        "typo": "any colonoscopy on her histroy",
        "context": "She's 74 and due for a screening discussion - has she ever had a colonoscopy?",
        "indirect": "Is there any colonoscopy anywhere in her history?",
    }),
    ("vanc-ever-yes", SUSAN, NOW_SYNTH, "existence_positive", "boolean", 0, g_med_ever(["vancomycin"]), {
        "formal": "Has Susan ever received vancomycin?",
        "short": "ever on vanc?",
        "typo": "has she ever been given vancomicin",
        "context": "Pharmacy is asking about prior nephrotoxic abx exposure - has she ever been on vancomycin?",
        "indirect": "Was vancomycin part of any of her treatments in the past?",
    }),
    ("apixaban-ever-no", EVELYN, NOW_SYNTH, "existence_negative", "boolean", 0, g_med_ever(["apixaban", "eliquis"]), {
        "formal": "Has Evelyn ever been prescribed apixaban?",
        "short": "ever on Eliquis?",
        "typo": "has she ever taken apixiban",
        "context": "Cardiology asking about anticoagulation history before the ablation consult - has she ever been on Eliquis?",
        "indirect": "Any apixaban in her medication history?",
    }),
    ("copd-hx-yes", EVELYN, NOW_SYNTH, "existence_positive", "boolean", 0, g_cond_ever(["copd"]), {
        "formal": "Does Evelyn have a history of chronic obstructive pulmonary disease?",
        "short": "hx COPD?",
        "typo": "any histroy of copd?",
        "context": "Pre-op clearance for her cataract surgery - does she carry a COPD diagnosis?",
        "indirect": "Has she ever been diagnosed with COPD?",
    }),
    ("diabetes-hx-no", SUSAN, NOW_SYNTH, "existence_negative", "boolean", 0, g_cond_ever(["diabet"]), {
        "formal": "Has Susan ever been diagnosed with diabetes?",
        "short": "hx DM?",
        "typo": "has she ever had diabetis",
        "context": "Filling out her bariatric surgery intake - any diabetes diagnosis in her chart, ever?",
        "indirect": "Is diabetes anywhere in her history?",
    }),
    ("k-above-5-this-year", PRIYA, NOW_SYNTH, "threshold", "boolean", 0, g_threshold("k", ">", 5.0, "this_year"), {
        "formal": "Was any of Priya's potassium values above 5.0 this year?",
        "short": "any K >5 this yr?",
        "typo": "has her potasium been over 5 at all this year",
        "context": "Thinking about restarting her lisinopril - has her K been above 5 at any point this year?",
        "indirect": "Has she been hyperkalemic (K > 5.0) at any time in 2026?",
    }),
    ("cr-above-2-ever", PRIYA, NOW_SYNTH, "threshold", "boolean", 0, g_threshold("cr", ">", 2.0, "ever"), {
        "formal": "Has Priya's creatinine ever been above 2.0?",
        "short": "Cr ever >2?",
        "typo": "was her creatinin ever over 2",
        "context": "Deciding on contrast for her CT - has her Cr ever gone above 2.0?",
        "indirect": "At any point in her record, did her creatinine exceed 2?",
    }),
    ("wt-trend-2y", EVELYN, NOW_SYNTH, "trend", "string", 0, g_trend_years("wt", 2), {
        "formal": "What is the trend of Evelyn's weight over the past 2 years?",
        "short": "wt trend last 2 yrs?",
        "typo": "is her wieght trending up or down over the last 2 years",
        "context": "CHF clinic follow-up - over the past two years has her weight been going up, down, or staying stable?",
        "indirect": "Over the past 2 years, is her weight increasing, decreasing or stable?",
    }),
    ("cr-change-admission", PRIYA, NOW_ADMIT, "change", "number", 0.02, g_change_stay("cr"), {
        "formal": "What is the change in Priya's creatinine since admission?",
        "short": "Cr change since admit?",
        "typo": "how much has her creatinine changd since admision",
        "context": "Updating the AKI problem in today's note - what's the change in her Cr from admission to now?",
        "indirect": "From her first creatinine this admission to the most recent one, how much did it change?",
    }),
    ("bnp-change-dates", EVELYN, NOW_SYNTH, "change", "number", 0.02, g_change_dates("bnp", "2024-09-11", "2026-04-06"), {
        "formal": "What was the change in Evelyn's B-type natriuretic peptide between September 11, 2024 and April 6, 2026?",
        "short": "BNP change from 9/11/2024 to 4/6/2026?",
        "typo": "how much did her bnp chnage between 9/11/2024 and 4/6/2026",
        "context": "HF clinic wants to know how her BNP moved - what's the change from 9/11/2024 to 4/6/2026?",
        "indirect": "Between Sep 11, 2024 and Apr 6, 2026, by how much did her BNP change?",
    }),
    ("copd-first-dx", EVELYN, NOW_SYNTH, "first_last_time", "date", 0, g_cond_first(["copd"]), {
        "formal": "When was Evelyn first diagnosed with COPD?",
        "short": "COPD dx date?",
        "typo": "when was her copd diagnosd",
        "context": "Pulmonary rehab referral needs the date of her COPD diagnosis - when was it?",
        "indirect": "Since when has COPD been on her problem list?",
    }),
    ("flu-last", PRIYA, NOW_SYNTH, "first_last_time", "date", 0, g_imm_last(["influenza"]), {
        "formal": "What is the date of Priya's most recent influenza vaccination?",
        "short": "last flu shot?",
        "typo": "when was her last flu vacine",
        "context": "Flu season is starting - when did she last get a flu shot?",
        "indirect": "When was she last immunized against influenza?",
    }),
    ("flu-months-since", PRIYA, NOW_SYNTH, "time_since", "number", 0, g_imm_months_since(["influenza"]), {
        "formal": "How many months has it been since Priya's last influenza vaccine?",
        "short": "months since last flu shot?",
        "typo": "how many months since her last flu vaccinaton",
        "context": "She's asking whether she's overdue - how many months since her last flu shot?",
        "indirect": "Her last flu jab was how many months ago?",
    }),
    ("meds-active", YVONE, NOW_BULK, "active_medications", "list", 0, g_active_meds, {
        "formal": "What medications is Yvone currently taking?",
        "short": "current meds?",
        "typo": "what meds is she on rigth now",
        "context": "Doing med rec before her visit - what are her active medications?",
        "indirect": "Which of her prescriptions are still active?",
    }),
    ("apixaban-still-yes", PRIYA, NOW_SYNTH, "active_medications", "boolean", 0, g_still_on(["apixaban"]), {
        "formal": "Is Priya still taking apixaban?",
        "short": "still on Eliquis?",
        "typo": "is she stil on apixaban",
        "context": "Planning her dental extraction - is she still on Eliquis?",
        "indirect": "Does her active med list still include apixaban?",
    }),
    ("ibuprofen-still-no", ARTHUR, NOW_SYNTH, "active_medications", "boolean", 0, g_still_on(["ibuprofen"]), {
        "formal": "Is Arthur still taking ibuprofen?",
        "short": "still on Advil?",
        "typo": "is he still takin ibuprofin",
        "context": "Want to avoid NSAIDs with his sertraline - is he still on Advil?",
        "indirect": "Is ibuprofen on his current medication list?",
    }),
    ("conditions-active", BETTY, NOW_SYNTH, "active_conditions", "list", 0, g_active_conditions, {
        "formal": "What are Betty's active medical conditions?",
        "short": "active probs?",
        "typo": "what is on her curent problem list",
        "context": "New patient intake for the ortho clinic - can you list her active diagnoses?",
        "indirect": "Which of her diagnoses are still active today?",
    }),
    ("aki-still-no", PRIYA, NOW_SYNTH, "active_conditions", "boolean", 0, g_cond_active(["acute kidney injury"]), {
        "formal": "Does Priya still have acute kidney injury?",
        "short": "AKI still active?",
        "typo": "is her acute kidney injery still active",
        "context": "Cleaning up her problem list after the sepsis admission - is the AKI still an active problem?",
        "indirect": "Is acute kidney injury still on her active problem list?",
    }),
    ("metformin-daily-dose", PRIYA, NOW_SYNTH, "daily_dose", "number", 0.01, g_daily_dose(["metformin"]), {
        "formal": "What is Priya's total daily dose of metformin?",
        "short": "metformin daily dose?",
        "typo": "whats her daily dose of metfromin",
        "context": "Her eGFR dipped, checking renal dosing - what total daily dose of Glucophage is she prescribed?",
        "indirect": "How many mg of metformin does she take per day?",
    }),
    ("vanc-total-day-g", PRIYA, NOW_ADMIT, "daily_total_administered", "number", 0.01,
     g_admin_day("vancomycin", "2026-03-16", "sum", scale=0.001), {
        "formal": "How much vancomycin, in grams, was administered to Priya on March 16, 2026?",
        "short": "vanc total 3/16/2026, in g?",
        "typo": "how much vancomicin did she get on 3/16/2026 in grams",
        "context": "Pharmacy is dosing her vanc off levels - total grams given on 2026-03-16?",
        "indirect": "Adding up all her vancomycin doses on 3/16/2026, how many grams did she receive?",
    }),
    ("zosyn-doses-day", SUSAN, NOW_SYNTH, "daily_total_administered", "count", 0,
     g_admin_day("piperacillin", "2024-02-23", "count"), {
        "formal": "How many doses of piperacillin-tazobactam did Susan receive on February 23, 2024?",
        "short": "# Zosyn doses 2/23/2024?",
        "typo": "how many zosin doses did she get on 2/23/2024",
        "context": "Auditing missed antibiotic doses from her February 2024 stay - how many Zosyn doses were actually given on 2/23/2024?",
        "indirect": "On 2/23/2024, how many times was Zosyn administered to her?",
    }),
    ("ceftriaxone-doses-stay", EVELYN, NOW_SYNTH, "daily_total_administered", "count", 0,
     g_admin_count_stay("ceftriaxone"), {
        "formal": "How many doses of ceftriaxone were administered to Evelyn during her last admission?",
        "short": "# ceftriaxone doses last admit?",
        "typo": "how many doses of rocephin did she get durign her last hospital stay",
        "context": "Antimicrobial stewardship review - how many ceftriaxone doses did she actually receive during her last admission?",
        "indirect": "During her most recent hospitalization, how many times was ceftriaxone given?",
    }),
    ("heparin-total-day", EVELYN, NOW_SYNTH, "daily_total_administered", "number", 0.01,
     g_admin_day("heparin", "2024-08-26", "sum"), {
        "formal": "How many units of heparin were administered to Evelyn on August 26, 2024?",
        "short": "heparin total 8/26/2024 (units)?",
        "typo": "total heprin given on 8/26/2024",
        "context": "Checking her VTE prophylaxis - how much heparin did she get on 2024-08-26?",
        "indirect": "Summing all heparin doses on Aug 26, 2024, how many units did she receive?",
    }),
    ("age-now", ARTHUR, NOW_SYNTH, "age", "number", 0, g_age, {
        "formal": "How old is Arthur?",
        "short": "age?",
        "typo": "hw old is he",
        "context": "Need his age for the ASCVD calculator - how old is he?",
        "indirect": "What is his current age in years?",
    }),
    ("tsh-no-data", SUSAN, NOW_SYNTH, "existence_negative", "number", 0.01, g_no_data_item("tsh"), {
        "formal": "What was Susan's most recent TSH?",
        "short": "last TSH?",
        "typo": "most recent thyroid stimulating hormon level",
        "context": "She's complaining of fatigue - can you pull her latest TSH?",
        "indirect": "When her thyroid function was last checked, what was the TSH?",
    }),
    ("k-admission-no-data", ARTHUR, NOW_SYNTH, "min_max", "number", 0.01, g_no_data_stay, {
        "formal": "What is the highest potassium during Arthur's current admission?",
        "short": "max K this admit?",
        "typo": "highest potasium this admision",
        "context": "Sign-out asks for his peak K this admission - what is it?",
        "indirect": "Since he was admitted, how high has his potassium gone?",
    }),
    ("los-last-stay", EVELYN, NOW_SYNTH, "length_of_stay", "count", 0, g_los, {
        "formal": "What was the length of stay of Evelyn's last hospital admission?",
        "short": "LOS last admit?",
        "typo": "how long was her last hospital stey",
        "context": "For the readmission review - how many days was she in the hospital last time?",
        "indirect": "How long was she in for during her most recent hospitalization, in days?",
    }),
    ("last-discharge", PRIYA, NOW_SYNTH, "first_last_time", "date", 0, g_last_discharge, {
        "formal": "What was the date of Priya's most recent hospital discharge?",
        "short": "last d/c date?",
        "typo": "when was she last dischrged",
        "context": "Setting up her post-discharge follow-up - when did she go home from the hospital?",
        "indirect": "On what date did her last hospitalization end?",
    }),
    ("a1c-avg-2025", PRIYA, NOW_SYNTH, "average", "number", 0.01, g_avg_year("a1c", 2025), {
        "formal": "What was Priya's average hemoglobin A1c in 2025?",
        "short": "mean A1c 2025?",
        "typo": "avg a1c durring 2025",
        "context": "For the diabetes quality report - what was her average A1c across 2025?",
        "indirect": "Taking all her A1c results from 2025, what do they average out to?",
    }),
    ("htn-years", YVONE, NOW_BULK, "time_since", "number", 0, g_years_with(["hypertension"]), {
        "formal": "How many years has Yvone had hypertension?",
        "short": "HTN duration (yrs)?",
        "typo": "how many yrs has she had high blood presure",
        "context": "Documenting her cardiovascular risk - how long has she had HTN, in years?",
        "indirect": "Her hypertension was diagnosed how many years ago?",
    }),
    ("flu-count", CORRIN, NOW_BULK, "count_other", "count", 0, g_imm_count(["influenza"]), {
        "formal": "How many influenza vaccinations has Corrin received?",
        "short": "# flu shots?",
        "typo": "how many flu vacines has she had",
        "context": "Employee health wants her vaccination history - how many flu shots are on record?",
        "indirect": "How many times has she been immunized against the flu?",
    }),
    ("tetanus-last", CORRIN, NOW_BULK, "first_last_time", "date", 0, g_imm_last(["tetanus", "td ", "tdap", "dtap"]), {
        "formal": "When did Corrin last receive a tetanus vaccine?",
        "short": "last Td/Tdap?",
        "typo": "when was her last tetnus shot",
        "context": "She stepped on a nail today - when was her last tetanus shot?",
        "indirect": "Date of her most recent tetanus-containing vaccine?",
    }),
    ("admissions-zero", KASANDRA, NOW_BULK, "count_encounters", "count", 0, g_enc_count(INPATIENT), {
        "formal": "How many inpatient admissions does Kasandra have on record?",
        "short": "# hospitalizations?",
        "typo": "how many times has she been admited to hospital",
        "context": "For her sports physical paperwork - how many times has she been hospitalized?",
        "indirect": "How many hospital stays appear in her record?",
    }),
    ("age-at-death", SUMIKO, NOW_BULK, "age", "number", 0, g_age, {
        "formal": "How old was Sumiko when she died?",
        "short": "age at death?",
        "typo": "what age did she pass away at",
        "context": "Completing the family history for her daughter - at what age did Sumiko die?",
        "indirect": "How many years old was she at the time of her death?",
    }),
]
# fmt: on


def load_bulk(rec: Record, folder: Path) -> None:
    for f in sorted(folder.glob("*.ndjson")):
        if f.name == "log.ndjson":
            continue
        with f.open() as fh:
            for line in fh:
                if line.strip():
                    rec.add(json.loads(line))


def load_synth(rec: Record, folder: Path) -> None:
    for f in sorted(folder.glob("*.json")):
        bundle = json.loads(f.read_text())
        for e in bundle["entry"]:
            rec.add(e["resource"])


def make_synth(out: Path) -> None:
    """Generate the synthetic patients with the engine's own generator (a black box, fixed seed)."""
    cmd = [sys.executable, "-m", "fhirqa.cli", "synth", "--patients", SYNTH_PATIENTS, "--seed", SYNTH_SEED]
    cmd += ["--now", SYNTH_NOW, "--out", str(out)]
    # a fixed argv and no shell: nothing untrusted reaches the command
    subprocess.run(cmd, check=True, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603


def build(rec: Record) -> str:
    lines = []
    keys = [f[0] for f in FACTS]
    assert len(keys) == len(set(keys))
    n = 0
    for key, (given, family), now, category, atype, tol, gold, phr in FACTS:
        assert tuple(phr) == STYLES, key
        pid = rec.find_patient(given, family)
        g = gold(rec, pid, now)
        for style in STYLES:
            n += 1
            row = {
                "id": f"phrasing-{n:03d}",
                "patient_id": pid,
                "question": phr[style],
                "now": now,
                "category": category,
                "answer_type": atype,
                "expected": g["expected"],
                "expected_status": g["expected_status"],
                "tolerance": tol,
                "gold_refs": g["gold_refs"],
                "template": f"{category}/{key}/{style}",
                "fact": key,
                "style": style,
            }
            lines.append(json.dumps(row, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when questions.jsonl is stale")
    ap.add_argument("--bulk", type=Path, default=BULK, help="Synthea bulk-10 NDJSON folder")
    ap.add_argument("--synth-dir", type=Path, help="existing output of the synth command (else generated)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)

    rec = Record()
    load_bulk(rec, args.bulk)
    if args.synth_dir:
        load_synth(rec, args.synth_dir)
        text = build(rec)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            make_synth(Path(tmp))
            load_synth(rec, Path(tmp))
            text = build(rec)

    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: rebuild with {Path(__file__).name}", file=sys.stderr)
            return 1
        print(f"{args.out}: up to date ({text.count(chr(10))} questions)")
        return 0
    args.out.write_text(text)
    print(f"wrote {text.count(chr(10))} questions to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
