"""Build the blind time-anchor probe (``questions.jsonl``) from raw synthetic FHIR bundles.

Gold answers are computed here from the raw JSON (``urn:uuid:`` references resolved by hand); nothing is
imported from fhirqa. The bundles come from ``fhirqa.cli synth --patients 12 --seed 626262`` run as a
subprocess (the command a user would type). ``--check`` exits 1 when the committed file is stale.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "questions.jsonl"
SEED = "626262"
HOUR = timedelta(hours=1)

# item key -> (LOINC, spoken names)
ITEMS = {
    "K": ("2823-3", ["K", "potassium", "K+", "potasium"]),
    "Cr": ("2160-0", ["Cr", "creatinine", "creat", "creatinin"]),
    "Hgb": ("718-7", ["Hgb", "hemoglobin", "Hb"]),
    "WBC": ("6690-2", ["WBC", "white count"]),
    "Na": ("2951-2", ["Na", "sodium"]),
    "plt": ("777-3", ["plt", "platelets", "platlets"]),
    "glucose": ("2345-7", ["glucose", "BG"]),
    "temp": ("8310-5", ["temp", "temperature"]),
    "A1c": ("4548-4", ["A1c", "HbA1c"]),
    "BUN": ("3094-0", ["BUN"]),
}
STAY = {"IMP", "ACUTE", "NONAC"}


def ts(s: str) -> datetime:
    """Parse an ISO 8601 timestamp with offset into an aware datetime."""
    d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    return d if d.tzinfo else d.replace(tzinfo=UTC)


def local_day(d: datetime):
    """The calendar day as written in the timestamp's own offset."""
    return d.date()


def iso(d: datetime) -> str:
    return d.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rid(ref: str) -> str:
    return ref.split(":")[-1].split("/")[-1]


class Patient:
    """One bundle, flattened into what the questions need."""

    def __init__(self, bundle: dict):
        res = [e["resource"] for e in bundle["entry"]]
        self.id = next(r["id"] for r in res if r["resourceType"] == "Patient")
        pat = next(r for r in res if r["resourceType"] == "Patient")
        self.gender = pat.get("gender")
        self.first = pat["name"][0]["given"][0]
        meds = {r["id"]: r for r in res if r["resourceType"] == "Medication"}
        self.enc = sorted(
            ({"id": r["id"], "cls": r["class"]["code"], "start": ts(r["period"]["start"]),
              "end": ts(r["period"]["end"]) if r["period"].get("end") else None}
             for r in res if r["resourceType"] == "Encounter"), key=lambda e: e["start"])
        self.stays = [e for e in self.enc if e["cls"] in STAY and e["end"]]
        self.proc = sorted(
            ((r["code"].get("text") or r["code"]["coding"][0]["display"],
              ts(r.get("performedDateTime") or r["performedPeriod"]["start"]), r["id"])
             for r in res if r["resourceType"] == "Procedure"), key=lambda p: p[1])
        self.rx = []
        for r in res:
            if r["resourceType"] != "MedicationRequest":
                continue
            if "medicationCodeableConcept" in r:
                cc = r["medicationCodeableConcept"]
            else:
                cc = meds[rid(r["medicationReference"]["reference"])]["code"]
            name = cc.get("text") or cc["coding"][0]["display"]
            self.rx.append((name.lower(), ts(r["authoredOn"]), r["id"]))
        self.admin = []
        for r in res:
            if r["resourceType"] != "MedicationAdministration" or r.get("status") != "completed":
                continue
            if "medicationCodeableConcept" in r:
                cc = r["medicationCodeableConcept"]
            else:
                cc = meds[rid(r["medicationReference"]["reference"])]["code"]
            t = r.get("effectiveDateTime") or r["effectivePeriod"]["start"]
            self.admin.append(((cc.get("text") or cc["coding"][0]["display"]).lower(), ts(t)))
        self.obs: dict[str, list] = {}
        codes = {v[0]: k for k, v in ITEMS.items()}
        for r in res:
            if r["resourceType"] != "Observation" or "valueQuantity" not in r:
                continue
            code = r["code"]["coding"][0]["code"]
            if code not in codes:
                continue
            t = r.get("effectiveDateTime") or (r.get("effectivePeriod") or {}).get("start") or r.get("issued")
            self.obs.setdefault(codes[code], []).append((ts(t), float(r["valueQuantity"]["value"]), r["id"]))
        for v in self.obs.values():
            v.sort(key=lambda x: x[0])
        self.last_fact = max([e["end"] or e["start"] for e in self.enc] + [o[0] for v in self.obs.values() for o in v])
        self.offset = self.enc[-1]["start"].tzinfo

    def vals(self, item, lo=None, hi=None):
        """Values of an item in the closed window [lo, hi]."""
        return [o for o in self.obs.get(item, []) if (lo is None or o[0] >= lo) and (hi is None or o[0] <= hi)]

    def near(self, item, t):
        """True when a value of the item lies within an hour of instant t (a boundary too close)."""
        return any(abs(o[0] - t) < HOUR for o in self.obs.get(item, []))

    def on_day(self, item, day):
        """Values on a local calendar day; a value within an hour of the day's edges makes it unusable."""
        vs = [o for o in self.obs.get(item, []) if local_day(o[0]) == day]
        for o in self.obs.get(item, []):
            lo = o[0].replace(hour=0, minute=0, second=0, microsecond=0)
            if o[0] - lo < HOUR or lo + timedelta(days=1) - o[0] < HOUR:
                if abs((local_day(o[0]) - day).days) <= 1:
                    return []
        return vs


def pron(p):
    return {"female": "her", "male": "his"}.get(p.gender, "the patient's")


class Builder:
    def __init__(self, pats):
        self.pats = pats
        self.rows = []

    def add(self, p, cat, tmpl, q, now, atype, expected, refs, status="answered", tol=None):
        if tol is None:
            tol = 0.01 if atype == "number" else 0
        self.rows.append({"patient_id": p.id, "question": q, "now": iso(now), "category": cat,
                          "answer_type": atype, "expected": expected if status == "answered" else [],
                          "expected_status": status, "tolerance": tol, "gold_refs": refs, "template": tmpl})

    def name(self, item, r):
        return r.choice(ITEMS[item][1])

    def default_now(self, p):
        d = (p.last_fact + timedelta(days=7)).astimezone(UTC).date()
        return datetime(d.year, d.month, d.day, 12, tzinfo=UTC)


def single(vals):
    return vals[0] if len(vals) == 1 else None


def build(pats):
    b = Builder(pats)
    for p in pats:
        r = random.Random(f"{p.id}:probe_time")  # noqa: S311 - reproducible draws, not security
        now = b.default_now(p)
        pr = pron(p)
        last = p.stays[-1] if p.stays else None
        # hospital day N (day 1 = the admission's local calendar day)
        for st in p.stays:
            if st is not last and len(p.stays) > 1:
                continue
            d1 = local_day(st["start"])
            for n in (1, 2, 3):
                day = d1 + timedelta(days=n - 1)
                for item in r.sample(["K", "Cr", "Hgb", "WBC", "Na"], 2):
                    v = single(p.on_day(item, day))
                    if not v or v[0] > st["end"]:
                        continue
                    nm = b.name(item, r)
                    forms = [f"what was {pr} {nm} on HD {n} of {pr} last admission", f"{nm} hosp day {n} last admit?"]
                    if len(p.stays) == 1:  # a bare "HD#2 K" names no stay: kept only when there is one
                        forms += [f"{nm} on hospital day {n}?", f"HD#{n} {nm}"]
                    q = r.choice(forms)
                    b.add(p, "value_in_window", f"hospital_day/value/{n}", q, now, "number", [v[1]], [f"Observation/{v[2]}"])
        if not p.stays:
            for item, n in (("K", 2), ("Cr", 3)):
                nm = b.name(item, r)
                b.add(p, "value_in_window", "hospital_day/no-stay", f"{nm} on hospital day {n}?", now, "number", [], [], "no-data")
        # post-op day N: the synthetic records hold no operation, so every POD question is an honest no-data
        for item, n in r.sample([("Hgb", 1), ("Cr", 2), ("WBC", 1), ("K", 1)], 1):
            nm = b.name(item, r)
            q = r.choice([f"POD{n} {nm}?", f"{nm} on post-op day {n}", f"what was {pr} {nm} on postoperative day {n}"])
            b.add(p, "value_in_window", f"pod/no-surgery/{n}", q, now, "number", [], [], "no-data")
        # during / before / after a named stay
        if last:
            temps = p.vals("temp", last["start"], last["end"])
            if temps and not any(p.near("temp", t) for t in (last["start"], last["end"])):
                mx = max(temps, key=lambda o: o[1])
                if sum(1 for o in temps if o[1] == mx[1]) >= 1:
                    q = r.choice([f"max temp during {pr} last admission?", "Tmax last admit", f"highest temperature during {pr} most recent hospitalization"])
                    b.add(p, "min_max", "stay/during-last/max", q, now, "number", [mx[1]], [f"Observation/{mx[2]}"])
            for item in ("Cr", "K"):
                vs = p.vals(item, last["start"], last["end"])
                if len(vs) >= 2 and not any(p.near(item, t) for t in (last["start"], last["end"])):
                    mn = min(vs, key=lambda o: o[1])
                    nm = b.name(item, r)
                    b.add(p, "min_max", "stay/during-last/min", r.choice([f"lowest {nm} during {pr} last admission", f"min {nm} last hospitalization?"]), now, "number", [mn[1]], [f"Observation/{mn[2]}"])
            for item in ("A1c", "Cr", "Hgb"):
                vs = p.vals(item, None, last["start"])
                if vs and not p.near(item, last["start"]):
                    v = vs[-1]
                    nm = b.name(item, r)
                    q = r.choice([f"{nm} before {pr} last admission?", f"last {nm} prior to the most recent admit", f"most recent {nm} before {pr} last hospitalization"])
                    b.add(p, "value_in_window", "stay/before-last/latest", q, now, "number", [v[1]], [f"Observation/{v[2]}"])
                    break
            for item in ("Cr", "K", "Hgb"):
                vs = p.vals(item, last["end"], None)
                vs = [o for o in vs if o[0] <= now]
                if vs and not p.near(item, last["end"]):
                    v = vs[0]
                    nm = b.name(item, r)
                    q = r.choice([f"first {nm} after discharge?", f"first {nm} after {pr} last discharge", f"{nm} at first check post discharge"])
                    b.add(p, "value_in_window", "stay/after-last/first", q, now, "number", [v[1]], [f"Observation/{v[2]}"])
                    break
            if len(p.stays) >= 2:
                prev = p.stays[-2]
                for item in ("temp", "WBC"):
                    vs = p.vals(item, prev["start"], prev["end"])
                    if vs and not any(p.near(item, t) for t in (prev["start"], prev["end"])):
                        mx = max(vs, key=lambda o: o[1])
                        nm = "temp" if item == "temp" else b.name(item, r)
                        q = r.choice([f"max {nm} during the admission before last", f"highest {nm} in {pr} previous admission (the one before the last)"])
                        b.add(p, "min_max", "stay/before-last-stay/max", q, now, "number", [mx[1]], [f"Observation/{mx[2]}"])
                # between the two admissions
                lo, hi = prev["end"], last["start"]
                n_ed = sum(1 for e in p.enc if e["cls"] == "EMER" and lo <= e["start"] <= hi)
                n_amb = sum(1 for e in p.enc if e["cls"] == "AMB" and lo <= e["start"] <= hi)
                refs_ed = [f"Encounter/{e['id']}" for e in p.enc if e["cls"] == "EMER" and lo <= e["start"] <= hi]
                b.add(p, "count_encounters", "between/stays/EMER", r.choice(["how many ED visits between her two admissions?".replace("her", pr), f"# ER visits between {pr} last 2 hospitalizations"]), now, "count", [n_ed], refs_ed)
                b.add(p, "count_encounters", "between/stays/AMB", f"how many clinic visits between {pr} last two admissions?", now, "count", [n_amb], [])
                vs = p.vals("Cr", lo, hi)
                if not any(p.near("Cr", t) for t in (lo, hi)):
                    b.add(p, "count_measurements", "between/stays/count", f"how many Cr values between {pr} last two admissions?", now, "count", [len(vs)], [f"Observation/{o[2]}" for o in vs])
            else:
                b.add(p, "value_in_window", "between/one-stay/no-data", r.choice(["max temp during the admission before last", f"lowest Hgb during {pr} admission before last"]), now, "number", [], [], "no-data")
            # 48 h before discharge
            lo = last["end"] - timedelta(hours=48)
            for item in ("K", "Cr", "temp"):
                vs = p.vals(item, lo, last["end"])
                if vs and not any(p.near(item, t) for t in (lo, last["end"])):
                    nm = "temp" if item == "temp" else b.name(item, r)
                    mx = max(vs, key=lambda o: o[1])
                    q = r.choice([f"max {nm} in the 48 h before discharge", f"highest {nm} in the last 48 hours before {pr} discharge"])
                    b.add(p, "min_max", "48h-before-discharge/max", q, now, "number", [mx[1]], [f"Observation/{mx[2]}"])
                    b.add(p, "count_measurements", "48h-before-discharge/count", f"how many {nm} values in the 48h before {pr} last discharge?", now, "count", [len(vs)], [f"Observation/{o[2]}" for o in vs])
                    break
            # overnight: now = 10:00 local on a stay day (after day 1), window prior 19:00 -> 07:00 local
            off = last["start"].tzinfo
            d1 = local_day(last["start"])
            for k in range(1, 4):
                day = d1 + timedelta(days=k)
                ten = datetime(day.year, day.month, day.day, 10, tzinfo=off)
                if ten > last["end"]:
                    break
                lo = datetime(day.year, day.month, day.day, 7, tzinfo=off) - timedelta(hours=12)
                hi = datetime(day.year, day.month, day.day, 7, tzinfo=off)
                item = r.choice(["temp", "K", "glucose"])
                vs = p.vals(item, lo, hi)
                if vs and not any(p.near(item, t) for t in (lo, hi)):
                    nm = "temp" if item == "temp" else b.name(item, r)
                    mx = max(vs, key=lambda o: o[1])
                    q = r.choice([f"highest {nm} overnight?", f"max {nm} overnight", f"{'Tmax' if item == 'temp' else 'peak ' + nm} overnight"])
                    b.add(p, "min_max", "overnight/max", q, ten, "number", [mx[1]], [f"Observation/{mx[2]}"])
            # weekday: the day is a stay day, now 2..6 days later at 12:00Z
            for k in (1, 2):
                day = d1 + timedelta(days=k)
                if datetime(day.year, day.month, day.day, tzinfo=off) > last["end"]:
                    continue
                item = r.choice(["K", "Cr", "Hgb", "WBC"])
                v = single(p.on_day(item, day))
                if not v:
                    continue
                gap = r.randint(2, 6)
                nd = day + timedelta(days=gap)
                wnow = datetime(nd.year, nd.month, nd.day, 17, tzinfo=UTC)
                wd = day.strftime("%A")
                nm = b.name(item, r)
                q = r.choice([f"{nm} on {wd}?", f"what was {pr} {nm} on {wd}", f"{wd}'s {nm}?"])
                b.add(p, "value_in_window", f"weekday/{wd}", q, wnow, "number", [v[1]], [f"Observation/{v[2]}"])
        else:
            q = r.choice([f"max temp during {pr} last admission?", "first Cr after discharge?", "K in the 48 h before discharge"])
            b.add(p, "value_in_window", "stay/never-admitted", q, now, "number", [], [], "no-data")
            q = r.choice([f"A1c before {pr} last admission?", "Tmax overnight during her admission".replace("her", pr)])
            b.add(p, "value_in_window", "stay/never-admitted", q, now, "number", [], [], "no-data")
        # relative to a drug (first prescription authoredOn)
        firsts = {}
        for name, t, i in sorted(p.rx, key=lambda x: x[1]):
            for drug in ("vancomycin", "heparin", "ceftriaxone", "lisinopril", "furosemide", "prednisone", "piperacillin", "metformin"):
                if drug in name and drug not in firsts:
                    firsts[drug] = (t, i)
        for drug, (t, i) in sorted(firsts.items()):
            d = local_day(t)
            given = sorted(a[1] for a in p.admin if drug in a[0])
            if given and local_day(given[0]) != d:
                continue  # "starting" could mean the order or the first dose: skip when their days differ
            for item in r.sample(["K", "Cr", "Hgb", "WBC"], 2):
                v = single(p.on_day(item, d + timedelta(days=1)))
                if v:
                    nm = b.name(item, r)
                    q = r.choice([f"{nm} the day after starting {drug}", f"what was {pr} {nm} the day after {drug} was started?"])
                    b.add(p, "after_drug", "drug/day-after", q, now, "number", [v[1]], [f"Observation/{v[2]}", f"MedicationRequest/{i}"])
                    break
            vs = [o for o in p.vals("Cr", t, now) if o[0] > t]
            if vs and not p.near("Cr", t):
                q = r.choice([f"first Cr after starting {drug}?", f"creatinine right after {drug} was started"])
                b.add(p, "after_drug", "drug/first-after", q, now, "number", [vs[0][1]], [f"Observation/{vs[0][2]}", f"MedicationRequest/{i}"])
        for drug in ("vancomycin", "lisinopril", "piperacillin"):
            if drug not in firsts and not any(drug in n for n, _, _ in p.rx):
                if r.random() < 0.35:
                    b.add(p, "after_drug", "drug/never", f"K the day after starting {drug}", now, "number", [], [], "no-data")
        # the day before / after a procedure (any named procedure except medication reconciliation)
        seen = set()
        for name, t, i in p.proc:
            if name in seen or name in ("Medication reconciliation", "Blood cultures x2"):
                continue
            seen.add(name)
            for side, delta in (("before", -1), ("after", 1)):
                item = r.choice(["WBC", "Hgb", "K", "Cr"])
                v = single(p.on_day(item, local_day(t) + timedelta(days=delta)))
                if v and len([x for x in p.proc if x[0] == name]) == 1:
                    nm = b.name(item, r)
                    q = r.choice([f"{nm} the day {side} the {name.lower()}", f"what was {pr} {nm} the day {side} {pr} {name.lower()}?"])
                    b.add(p, "value_in_window", f"event/day-{side}", q, now, "number", [v[1]], [f"Observation/{v[2]}", f"Procedure/{i}"])
        if not any("append" in n.lower() for n, _, _ in p.proc) and r.random() < 0.4:
            b.add(p, "value_in_window", "event/never", "WBC the day before the appendectomy", now, "number", [], [], "no-data")
        # at / since the last visit (latest encounter of any class started before now)
        lastv = [e for e in p.enc if e["start"] < now][-1]
        for item in r.sample(["K", "Cr", "Hgb", "Na", "glucose"], 2):
            vs = p.vals(item, lastv["start"], lastv["end"])
            if len(vs) == 1:
                nm = b.name(item, r)
                q = r.choice([f"{nm} at {pr} last visit?", f"what was the {nm} at the most recent visit", f"{nm} @ last visit"])
                b.add(p, "value_in_window", "visit/at-last", q, now, "number", [vs[0][1]], [f"Observation/{vs[0][2]}"])
            vs = p.vals(item, lastv["start"], now)
            if not p.near(item, lastv["start"]):
                nm = b.name(item, r)
                b.add(p, "count_measurements", "visit/since-last/count", f"how many {nm} results since {pr} last visit?", now, "count", [len(vs)], [f"Observation/{o[2]}" for o in vs])
                q = r.choice([f"latest {nm} since {pr} last visit?", f"most recent {nm} since the last visit"])
                if vs:
                    b.add(p, "value_in_window", "visit/since-last/latest", q, now, "number", [vs[-1][1]], [f"Observation/{vs[-1][2]}"])
                else:
                    b.add(p, "value_in_window", "visit/since-last/empty", q, now, "number", [], [], "no-data")
        # quarters (calendar, UTC) and YTD
        for year in (2025,):
            for qn in r.sample([1, 2, 3, 4], 2):
                lo = datetime(year, 3 * qn - 2, 1, tzinfo=UTC)
                hi = datetime(year + (qn == 4), (3 * qn) % 12 + 1, 1, tzinfo=UTC) - timedelta(milliseconds=1)
                if any(abs(e["start"] - x) < timedelta(days=1) for e in p.enc for x in (lo, hi)):
                    continue
                cls = r.choice(["EMER", "AMB", None])
                n = sum(1 for e in p.enc if lo <= e["start"] <= hi and (cls is None or e["cls"] == cls))
                word = {"EMER": "ED visits", "AMB": "clinic visits", None: "encounters"}[cls]
                b.add(p, "count_encounters", f"quarter/{cls}", r.choice([f"how many {word} in Q{qn} {year}?", f"# {word} Q{qn} {year}"]), now, "count", [n], [])
                item = r.choice(["Cr", "K", "Hgb"])
                vs = p.vals(item, lo, hi)
                if vs and not any(abs(o[0] - x) < timedelta(days=1) for o in p.obs.get(item, []) for x in (lo, hi)):
                    mx = max(vs, key=lambda o: o[1])
                    nm = b.name(item, r)
                    b.add(p, "min_max", "quarter/max", f"max {nm} in Q{qn} {year}?", now, "number", [mx[1]], [f"Observation/{mx[2]}"])
        lo = datetime(now.year, 1, 1, tzinfo=UTC)
        if not any(abs(e["start"] - lo) < timedelta(days=1) for e in p.enc):
            cls = r.choice(["EMER", None, "IMP"])
            n = sum(1 for e in p.enc if lo <= e["start"] <= now and (cls is None or e["cls"] == cls))
            word = {"EMER": "ED visits", "IMP": "admissions", None: "visits"}[cls]
            b.add(p, "count_encounters", f"ytd/{cls}", r.choice([f"{word} YTD?", f"how many {word} year to date"]), now, "count", [n], [])
            item = r.choice(["Cr", "Hgb", "K"])
            vs = p.vals(item, lo, now)
            nm = b.name(item, r)
            if vs and not p.near(item, lo):
                b.add(p, "min_max", "ytd/max", f"highest {nm} YTD", now, "number", [max(o[1] for o in vs)], [])
            elif not vs:
                b.add(p, "min_max", "ytd/empty", f"highest {nm} YTD", now, "number", [], [], "no-data")
    extra_events(b, pats)
    rows = cap(b.rows)
    for k, row in enumerate(rows):
        row["id"] = f"time-{k + 1:03d}"
    return [{"id": x["id"], **{k: v for k, v in x.items() if k != "id"}} for x in rows]


def extra_events(b, pats):
    """More day-before/after-procedure questions (own RNG, appended so the draws above stay as they were)."""
    for p in pats:
        r = random.Random(f"{p.id}:probe_time:events")  # noqa: S311 - reproducible draws
        pr = pron(p)
        now = b.default_now(p)
        asked = {(q["question"]) for q in b.rows if q["patient_id"] == p.id}
        for name, t, i in p.proc:
            if name in ("Medication reconciliation", "Blood cultures x2") or sum(x[0] == name for x in p.proc) != 1:
                continue
            for side, delta in (("before", -1), ("after", 1)):
                for item in ("Hgb", "Na", "plt"):
                    v = single(p.on_day(item, local_day(t) + timedelta(days=delta)))
                    if not v:
                        continue
                    nm = b.name(item, r)
                    q = r.choice([f"{nm} the day {side} {pr} {name.lower()}?", f"what was the {nm} on the day {side} the {name.lower()}"])
                    if q not in asked:
                        b.add(p, "value_in_window", f"event/day-{side}/extra", q, now, "number", [v[1]], [f"Observation/{v[2]}", f"Procedure/{i}"])
                    break
        if not any("cholecyst" in n.lower() for n, _, _ in p.proc) and r.random() < 0.25:
            b.add(p, "value_in_window", "event/never/extra", "Hgb the day after the cholecystectomy", now, "number", [], [], "no-data")


CAPS = {"hospital_day": 18, "drug": 18, "quarter": 14, "overnight": 12, "weekday": 12, "visit": 16, "ytd": 12,
        "stay": 24, "48h-before-discharge": 12, "between": 14, "event": 20, "pod": 12}


def cap(rows):
    """Keep at most CAPS[anchor] questions per anchor, drawn by a string-seeded RNG (order kept)."""
    keep = set()
    groups: dict[str, list] = {}
    for k, row in enumerate(rows):
        groups.setdefault(row["template"].split("/")[0], []).append(k)
    for g, ks in sorted(groups.items()):
        rr = random.Random("probe_time:cap:" + g)  # noqa: S311 - reproducible draws
        keep.update(ks if len(ks) <= CAPS.get(g, 12) else rr.sample(ks, CAPS.get(g, 12)))
    return [row for k, row in enumerate(rows) if k in keep]


def load(data_dir: Path):
    return [Patient(json.loads(f.read_text())) for f in sorted(data_dir.glob("*.json"))]


def render(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main(argv=None) -> int:
    """Build (or ``--check``) the probe; ``--data`` reuses bundles already synthesised."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--data", type=Path)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        data = a.data
        if data is None:
            data = Path(tmp) / "data"
            argv = [sys.executable, "-m", "fhirqa.cli", "synth", "--patients", "12", "--seed", SEED, "--out", str(data)]
            subprocess.run(argv, check=True, capture_output=True)  # noqa: S603 - fixed argv
        text = render(build(load(data)))
    if a.check:
        ok = OUT.exists() and OUT.read_text() == text
        print("up to date" if ok else "stale")
        return 0 if ok else 1
    OUT.write_text(text)
    print(f"wrote {text.count(chr(10))} questions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
