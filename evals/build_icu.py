"""Blind inpatient/ICU evaluation set: ``evals/heldout-icu.jsonl``.

Regenerates 12 synthetic patients with ``fhirqa synth`` (run as a subprocess, never imported) into a
temporary folder, reads the raw FHIR bundles with ``orjson``, resolves ``urn:uuid:`` references by hand
and computes every gold answer itself, following ``docs/questions.md``. Imports nothing from ``fhirqa``.

The brief's seed is the string ``icu-blind-2026``; ``fhirqa synth --seed`` takes an integer, so the seed
is the first 4 bytes (big-endian) of SHA-256("icu-blind-2026") = 1913197825.

    python evals/build_icu.py            # rewrites evals/heldout-icu.jsonl
    python evals/build_icu.py --check    # exit 1 when the committed file is stale
"""

from __future__ import annotations

import argparse
import hashlib
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import orjson

SEED_TEXT = "icu-blind-2026"
SEED = int.from_bytes(hashlib.sha256(SEED_TEXT.encode()).digest()[:4], "big")
N_PATIENTS = 12
HERE = Path(__file__).resolve().parent
OUT = HERE / "heldout-icu.jsonl"
UTC = timezone.utc  # noqa: UP017

# ---------------------------------------------------------------- vocabulary (LOINC -> spoken names)
ITEMS = {
    "2823-3": ["K", "potassium", "K+"],
    "2160-0": ["Cr", "creatinine", "creat"],
    "2951-2": ["Na", "sodium"],
    "2345-7": ["glucose", "BG", "blood sugar"],
    "6690-2": ["WBC", "white count"],
    "718-7": ["Hgb", "hemoglobin", "Hb"],
    "777-3": ["plt", "platelets"],
    "3094-0": ["BUN"],
    "8310-5": ["temp", "temperature"],
    "8867-4": ["HR", "heart rate"],
    "9279-1": ["RR", "resp rate"],
    "59408-5": ["SpO2", "O2 sat"],
    "8480-6": ["SBP", "systolic BP", "systolic"],
    "8462-4": ["DBP", "diastolic BP", "diastolic"],
    "4092-3": ["vanc trough", "vancomycin trough"],
    "2524-7": ["lactate"],
    "29463-7": ["weight", "wt"],
    "4548-4": ["A1c", "HbA1c"],
    "18262-6": ["LDL"],
    "2028-9": ["bicarb", "CO2"],
}
STAY_ITEMS = ["2823-3", "2160-0", "2951-2", "2345-7", "6690-2", "718-7", "777-3", "3094-0",
              "8310-5", "8867-4", "9279-1", "59408-5", "8480-6", "8462-4", "4092-3", "2028-9"]

# inpatient drugs: key -> (ingredient substring of the record name, spoken names)
DRUGS = {
    "vanc": ("vancomycin", ["vanc", "vancomycin", "vanco"]),
    "heparin": ("heparin", ["heparin", "heparin SQ", "subq heparin"]),
    "ceftriaxone": ("ceftriaxone", ["ceftriaxone", "Rocephin", "ceftriaxone"]),
    "piptazo": ("piperacillin", ["pip-tazo", "Zosyn", "piperacillin-tazobactam"]),
    "apap": ("acetaminophen", ["acetaminophen", "Tylenol", "APAP"]),
}
OUTPT_DRUGS = {
    "lisinopril": ["lisinopril", "Zestril"], "simvastatin": ["simvastatin", "Zocor"],
    "sertraline": ["sertraline", "Zoloft"], "levothyroxine": ["levothyroxine", "Synthroid"],
    "metformin": ["metformin"], "pantoprazole": ["pantoprazole", "Protonix"],
    "furosemide": ["furosemide", "Lasix"], "insulin glargine": ["insulin glargine", "Lantus"],
    "atorvastatin": ["atorvastatin", "Lipitor"], "metoprolol": ["metoprolol", "Toprol XL"],
    "albuterol": ["albuterol", "ProAir"],
}
CONDS = {
    "hypertension": ["HTN", "hypertension"], "type 2 diabetes": ["T2DM", "type 2 diabetes", "DM2"],
    "copd": ["COPD"], "chronic heart failure": ["CHF", "heart failure"], "ckd": ["CKD"],
    "hypothyroidism": ["hypothyroidism"], "depression": ["depression"], "gerd": ["GERD", "reflux"],
    "hyperlipidemia": ["HLD", "hyperlipidemia"],
}


# ---------------------------------------------------------------- parsing
def ts(s: str) -> datetime:
    d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return d


def utc_date(d: datetime) -> date:
    return d.astimezone(UTC).date()


def synth(folder: Path) -> None:
    cmd = [sys.executable, "-m", "fhirqa.cli", "synth", "--patients", str(N_PATIENTS),
                    "--seed", str(SEED), "--out", str(folder)]
    subprocess.run(cmd, check=True, capture_output=True)  # noqa: S603  # noqa: S603


class Patient:
    def __init__(self, bundle: dict):
        res = {e["fullUrl"]: e["resource"] for e in bundle["entry"]}
        self.res = res
        pat = next(r for r in res.values() if r["resourceType"] == "Patient")
        self.id = pat["id"]
        self.pat = pat
        self.gender = pat["gender"]
        self.first = pat["name"][0]["given"][0]
        self.family = pat["name"][0]["family"]
        self.birth = date.fromisoformat(pat["birthDate"])
        self.deceased = ts(pat["deceasedDateTime"]) if pat.get("deceasedDateTime") else None
        self.obs: dict[str, list] = defaultdict(list)  # code -> [(time, value, ref)]
        self.admin: list[dict] = []
        self.rx: list[dict] = []
        self.enc: list[dict] = []
        self.cond: list[dict] = []
        self.proc: list[dict] = []
        self.imm: list[dict] = []
        last = []
        for r in res.values():
            t = r["resourceType"]
            ref = f"{t}/{r['id']}"
            if t == "Observation":
                tm = ts(r.get("effectiveDateTime") or r.get("effectivePeriod", {}).get("start") or r["issued"])
                last.append(tm)
                if "valueQuantity" in r:
                    for c in r["code"].get("coding", []):
                        self.obs[c["code"]].append((tm, float(r["valueQuantity"]["value"]), ref))
                for comp in r.get("component", []):
                    if "valueQuantity" in comp:
                        for c in comp["code"].get("coding", []):
                            self.obs[c["code"]].append((tm, float(comp["valueQuantity"]["value"]), ref))
            elif t == "MedicationAdministration":
                if "medicationReference" in r:
                    m = res[r["medicationReference"]["reference"]]
                    name = m["code"].get("text") or m["code"]["coding"][0]["display"]
                else:
                    cc = r["medicationCodeableConcept"]
                    name = cc.get("text") or cc["coding"][0]["display"]
                tm = ts(r.get("effectiveDateTime") or r["effectivePeriod"]["start"])
                dose = r.get("dosage", {}).get("dose", {})
                self.admin.append({"name": name, "t": tm, "status": r["status"], "ref": ref,
                                   "value": dose.get("value"), "unit": dose.get("unit")})
                last.append(tm)
            elif t == "MedicationRequest":
                if "medicationCodeableConcept" in r:
                    cc = r["medicationCodeableConcept"]
                    name = cc.get("text") or cc["coding"][0]["display"]
                else:
                    m = res[r["medicationReference"]["reference"]]
                    name = m["code"].get("text") or m["code"]["coding"][0]["display"]
                di = (r.get("dosageInstruction") or [{}])[0]
                self.rx.append({"name": name, "t": ts(r["authoredOn"]), "status": r["status"], "ref": ref,
                                "di": di})
                last.append(ts(r["authoredOn"]))
            elif t == "Encounter":
                p = r["period"]
                self.enc.append({"cls": r["class"]["code"], "start": ts(p["start"]),
                                 "end": ts(p["end"]) if p.get("end") else None, "ref": ref})
                last.append(ts(p["start"]))
            elif t == "Condition":
                self.cond.append({"name": r["code"].get("text") or r["code"]["coding"][0]["display"],
                                  "onset": ts(r["onsetDateTime"]),
                                  "abate": ts(r["abatementDateTime"]) if r.get("abatementDateTime") else None,
                                  "ref": ref, "status": r["clinicalStatus"]["coding"][0]["code"]})
                last.append(ts(r["onsetDateTime"]))
            elif t == "Procedure":
                st = r.get("performedDateTime") or r["performedPeriod"]["start"]
                self.proc.append({"name": r["code"].get("text") or r["code"]["coding"][0]["display"],
                                  "t": ts(st), "ref": ref})
                last.append(ts(st))
            elif t == "Immunization":
                self.imm.append({"name": r["vaccineCode"].get("text"), "t": ts(r["occurrenceDateTime"]),
                                 "ref": ref})
        for v in self.obs.values():
            v.sort()
        self.admin.sort(key=lambda a: a["t"])
        self.rx.sort(key=lambda a: a["t"])
        self.enc.sort(key=lambda e: e["start"])
        if self.deceased:  # a death is a fact: "now" falls after it, never between record and death
            last.append(self.deceased)
        self.last_fact = max(last)
        self.stays = [e for e in self.enc if e["cls"] == "IMP"]

    # pronouns
    @property
    def her(self) -> str:
        return "her" if self.gender == "female" else "his"

    @property
    def she(self) -> str:
        return "she" if self.gender == "female" else "he"

    def values(self, code, lo=None, hi=None):
        return [(t, v, r) for t, v, r in self.obs.get(code, []) if (lo is None or t >= lo) and (hi is None or t <= hi)]

    def admins(self, drug, lo=None, hi=None, completed=True):
        ing = DRUGS[drug][0]
        return [a for a in self.admin if ing in a["name"].lower() and (not completed or a["status"] == "completed")
                and (lo is None or a["t"] >= lo) and (hi is None or a["t"] <= hi)]


# ---------------------------------------------------------------- helpers
def day_bounds_utc(d: date):
    lo = datetime(d.year, d.month, d.day, tzinfo=UTC)
    return lo, lo + timedelta(days=1) - timedelta(microseconds=1000)


def day_bounds_local(d: date, off: timedelta):
    tz = timezone(off)
    lo = datetime(d.year, d.month, d.day, tzinfo=tz)
    return lo, lo + timedelta(days=1) - timedelta(microseconds=1000)


def fmt_date(d: date, style: int, now: datetime) -> str:
    s = style % 4
    if s == 0:
        return d.isoformat()
    if s == 1:
        return f"{d.month}/{d.day}/{d.year}"
    if s == 2:
        return d.strftime("%b ") + str(d.day) + ", " + str(d.year)
    return f"{d.month}/{d.day}"  # no year: that day in the latest year not after now


def fmt_num(x: float) -> str:
    if abs(x - round(x)) < 1e-9:
        return str(int(round(x)))
    return repr(round(x, 4))


def trend_of(first: float, last: float):
    r = (last - first) / abs(first)
    if abs(abs(r) - 0.05) < 0.005:
        return None
    return "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"


def completed_years(a: date, b: date) -> int:
    return b.year - a.year - ((b.month, b.day) < (a.month, a.day))


CAPS = {"daily_total_administered": 30, "min_max": 16, "latest_value": 12, "threshold": 14,
        "existence_negative": 12, "existence_positive": 10, "value_in_window": 12, "active_medications": 12,
        "trend": 10, "change": 8, "first_last_time": 12, "time_since": 8, "count_encounters": 8,
        "count_other": 6, "count_measurements": 6, "average": 6, "daily_dose": 6, "demographics": 8, "age": 6,
        "first_value": 5, "active_conditions": 6, "patient_lookup": 5, "after_drug": 4}


class Builder:
    def __init__(self, patients: list[Patient]):
        self.pts = patients
        self.rows: list[dict] = []

    def add(self, p, cat, q, now, atype, expected, refs, template, status="answered", tol=None):
        if tol is None:
            tol = {"number": 0.02 if cat == "change" else 0.01}.get(atype, 0)
        if atype == "list":
            expected = sorted(set(expected))
        self.rows.append({"id": None, "patient_id": p.id if p else None, "question": q,
                          "now": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "category": cat, "answer_type": atype,
                          "expected": expected if status == "answered" else [], "expected_status": status,
                          "tolerance": tol, "gold_refs": sorted(set(refs)), "template": template})

    def finish(self):
        rng = random.Random(f"{SEED_TEXT}:select")  # noqa: S311
        groups: dict = defaultdict(list)
        for r in self.rows:
            groups[(r["category"], str(r["expected"]) if r["answer_type"] == "boolean" else "")].append(r)
        keep = []
        for key in sorted(groups):
            cap = CAPS.get(key[0], 6)
            if key[1]:
                kinds = {k[1] for k in groups if k[0] == key[0]}
                cap = cap if len(kinds) == 1 else (cap + 1) // 2 if "" not in kinds else max(3, cap // 5)
            rows = groups[key]
            # spread over patterns first: one per template round-robin
            by_t: dict = defaultdict(list)
            for r in rows:
                by_t[r["template"].rsplit("/", 1)[0]].append(r)
            order = []
            lists = [rng.sample(v, len(v)) for _, v in sorted(by_t.items())]
            while any(lists):
                for lst in lists:
                    if lst:
                        order.append(lst.pop())
            keep.extend(order[:cap])
        ids = {id(r) for r in keep}
        self.rows = [r for r in self.rows if id(r) in ids]
        counters: dict[str, int] = defaultdict(int)
        for r in self.rows:
            counters[r["category"]] += 1
            r["id"] = f"{r['category']}-{counters[r['category']]:03d}"
        return self.rows


# ---------------------------------------------------------------- stay questions (now during an admission)
def stay_questions(b: Builder, p: Patient, stay: dict, rng: random.Random):
    off = stay["start"].utcoffset()
    adm_day_utc = utc_date(stay["start"])
    los = (utc_date(stay["end"]) - adm_day_utc).days
    k = rng.randint(2, max(2, min(los, 4)))
    now = datetime(adm_day_utc.year, adm_day_utc.month, adm_day_utc.day, 18, tzinfo=UTC) + timedelta(days=k)
    if now > stay["end"]:
        now = datetime(adm_day_utc.year, adm_day_utc.month, adm_day_utc.day, 18, tzinfo=UTC) + timedelta(days=2)
    her, she, nm = p.her, p.she, p.first
    who = rng.choice([her, "the pt's", f"{nm}'s", her])
    adm = stay["start"]
    adm_starts = [adm, datetime.combine(adm_day_utc, datetime.min.time(), UTC),
                  datetime.combine(adm.date(), datetime.min.time(), adm.tzinfo)]
    yday = (now - timedelta(days=1)).date()

    def robust_since(fn):
        vals = [fn(s) for s in adm_starts]
        return vals[0] if all(v == vals[0] for v in vals) else None

    # latest value (up to now)
    for code in rng.sample(["2823-3", "2160-0", "718-7", "6690-2", "4092-3", "8480-6", "2951-2"], 3):
        vs = p.values(code, hi=now)
        if not vs:
            continue
        t, v, ref = vs[-1]
        if len([x for x in vs if x[0] == t and x[1] != v]):
            continue
        name = rng.choice(ITEMS[code])
        q = rng.choice([f"latest {name}?", f"what's {who} most recent {name}", f"{name} this AM?"
                        if t.astimezone(off and timezone(off)).hour < 10 and utc_date(t) == now.date() else f"last {name}?",
                        f"most recent {name} for {nm}?"])
        b.add(p, "latest_value", q, now, "number", [v], [ref], f"latest_value/stay-{code}/{rng.randint(1, 4)}")

    # first value this admission = admission value
    for code in rng.sample(["2160-0", "2823-3", "6690-2", "2524-7", "2345-7"], 2):
        got = robust_since(lambda s, code=code: tuple(p.values(code, s, now)[:1]))
        if not got:
            continue
        t, v, ref = got[0]
        name = rng.choice(ITEMS[code])
        q = rng.choice([f"{name} on admission?", f"first {name} since admission", f"admission {name}?",
                        f"what was {who} first {name} this admission"])
        b.add(p, "value_in_window", q, now, "number", [v], [ref], f"value_in_window/first-since-adm/{rng.randint(1, 4)}")

    # latest in last 24h
    for code in rng.sample(["8867-4", "9279-1", "59408-5", "8310-5"], 1):
        lo = now - timedelta(hours=24)
        opts = [tuple(p.values(code, lo + timedelta(hours=h), now)) for h in (-2, 0, 2)]
        if not opts[1] or len(set(x[-1] for x in opts)) != 1:
            continue
        t, v, ref = opts[1][-1]
        name = rng.choice(ITEMS[code])
        q = rng.choice([f"latest {name} in the last 24h?", f"most recent {name} over the past 24 hours",
                        f"last {name} in the past 24 hrs"])
        b.add(p, "value_in_window", q, now, "number", [v], [ref], "value_in_window/latest-24h/1")

    # min/max last 24h and since admission
    for code, side, words in [("8310-5", "max", ["max temp in the last 24h", "Tmax over the past 24 hours?",
                                                 "highest temp in the last 24 hrs"]),
                              ("8480-6", "min", ["lowest SBP in the last 24h?", "min systolic over the past 24 hours",
                                                 "how low did the systolic get in the last 24 hours"]),
                              ("8867-4", "max", ["highest HR in the last 24h?", "max heart rate past 24 hours"])]:
        lo = now - timedelta(hours=24)
        res = []
        for h in (-2, 0, 2):
            vs = p.values(code, lo + timedelta(hours=h), now)
            res.append((max if side == "max" else min)(vs, key=lambda x: x[1]) [1] if vs else None)
        if res[1] is None or len(set(res)) != 1:
            continue
        vs = p.values(code, lo, now)
        refs = [r for _, v, r in vs if v == res[1]]
        b.add(p, "min_max", rng.choice(words), now, "number", [res[1]], refs, f"min_max/{side}-24h/{code}")
    for code, side in rng.sample([("8310-5", "max"), ("6690-2", "max"), ("2823-3", "max"), ("718-7", "min"),
                                  ("2951-2", "min"), ("8462-4", "min")], 2):
        def ext(s, code=code, side=side):
            vs = p.values(code, s, now)
            return (max if side == "max" else min)(x[1] for x in vs) if vs else None
        v = robust_since(ext)
        if v is None:
            continue
        name = rng.choice(ITEMS[code])
        word = "highest" if side == "max" else "lowest"
        q = rng.choice([f"{word} {name} since admission?", f"{word} {name} this admission",
                        f"what's the {'peak' if side == 'max' else 'nadir'} {name} since admit"])
        refs = [r for _, x, r in p.values(code, adm, now) if x == v]
        b.add(p, "min_max", q, now, "number", [v], refs, f"min_max/{side}-since-adm/{rng.randint(1, 3)}")

    # trend & change since admission
    for code in rng.sample(["2823-3", "2160-0", "6690-2", "718-7", "3094-0", "8310-5"], 2):
        vs = robust_since(lambda s, code=code: tuple(p.values(code, s, now)))
        if not vs or len(vs) < 2:
            continue
        tr = trend_of(vs[0][1], vs[-1][1])
        if tr is None:
            continue
        name = rng.choice(ITEMS[code])
        q = rng.choice([f"{name} trend this admission?", f"is {who} {name} trending up or down since admission",
                        f"how is the {name} trending since admit?"])
        b.add(p, "trend", q, now, "string", [tr], [vs[0][2], vs[-1][2]], f"trend/since-adm/{rng.randint(1, 3)}")
    for code in rng.sample(["2160-0", "3094-0", "6690-2", "2951-2"], 1):
        vs = robust_since(lambda s, code=code: tuple(p.values(code, s, now)))
        if not vs or len(vs) < 2:
            continue
        name = rng.choice(ITEMS[code])
        q = rng.choice([f"change in {name} since admission?", f"how much has {who} {name} changed since admit",
                        f"{name} delta since admission (latest minus admission)?"])
        b.add(p, "change", q, now, "number", [round(vs[-1][1] - vs[0][1], 6)], [vs[0][2], vs[-1][2]],
              f"change/since-adm/{rng.randint(1, 3)}")

    # thresholds
    for code, side, cut, words in [
        ("2345-7", "below", 70, ["any hypoglycemia (<70) in the past week?", "any BG below 70 in the last 7 days?"]),
        ("8310-5", "above", 38.0, ["any fever > 38 since admission?", "has {she} spiked a temp above 38 since admit?"]),
        ("2823-3", "above", 5.0, ["K above 5.0 at any point this admission?", "any K > 5 since admission?"]),
        ("59408-5", "below", 92, ["any sats below 92 in the last 24h?", "did {her} SpO2 drop below 92 in the past 24 hours?"]),
    ]:
        if "week" in words[0]:
            starts = [now - timedelta(days=7, hours=h) for h in (-24, 0, 24)]
        elif "24" in words[0]:
            starts = [now - timedelta(hours=24 + h) for h in (-2, 0, 2)]
        else:
            starts = adm_starts
        outs = []
        for s in starts:
            vs = p.values(code, s, now)
            if not vs:
                outs.append(None)
                continue
            ext = max(x[1] for x in vs) if side == "above" else min(x[1] for x in vs)
            if abs(ext - cut) <= 0.006 * abs(cut):
                outs.append("near")
            else:
                outs.append(ext > cut if side == "above" else ext < cut)
        if outs[1] in (None, "near") or len(set(outs)) != 1:
            continue
        vs = p.values(code, starts[1], now)
        refs = [r for _, x, r in vs if (x > cut if side == "above" else x < cut)]
        q = rng.choice(words).format(she=she, her=her)
        b.add(p, "threshold", q, now, "boolean", [outs[1]], refs, f"threshold/{side}-{code}/1")

    # count measurements since admission
    code = rng.choice(["2823-3", "8310-5", "2160-0"])
    n = robust_since(lambda s: len(p.values(code, s, now)))
    if n:
        name = rng.choice(ITEMS[code])
        q = rng.choice([f"how many {name} values since admission?", f"# of {name} checks this admission?"])
        b.add(p, "count_measurements", q, now, "count", [n], [r for _, _, r in p.values(code, adm, now)],
              "count_measurements/since-adm/1")

    # average last 24h
    code = rng.choice(["8867-4", "8480-6", "9279-1"])
    avgs = []
    for h in (-2, 0, 2):
        vs = p.values(code, now - timedelta(hours=24 + h), now)
        avgs.append(round(sum(x[1] for x in vs) / len(vs), 6) if len(vs) >= 2 else None)
    if avgs[1] is not None and len(set(avgs)) == 1:
        name = rng.choice(ITEMS[code])
        q = rng.choice([f"average {name} over the last 24h?", f"mean {name} in the past 24 hours"])
        b.add(p, "average", q, now, "number", [avgs[1]],
              [r for _, _, r in p.values(code, now - timedelta(hours=24), now)], "average/24h/1")

    # ---- MAR questions
    given = sorted({d for d in DRUGS if p.admins(d, hi=now)})
    # yesterday / named day totals (UTC day == local day)
    for d in given:
        unit = p.admins(d)[0]["unit"]
        for day, how in [(yday, "yesterday"), (utc_date(now) - timedelta(days=rng.randint(1, 2)), "date")]:
            lo, hi = day_bounds_utc(day)
            llo, lhi = day_bounds_local(day, off)
            a = p.admins(d, lo, min(hi, now))
            al = p.admins(d, llo, min(lhi, now))
            tot, totl = sum(x["value"] for x in a), sum(x["value"] for x in al)
            if tot != totl or len(a) != len(al):
                continue
            dn = rng.choice(DRUGS[d][1])
            when = "yesterday" if how == "yesterday" else "on " + fmt_date(day, rng.randint(0, 3), now)
            refs = [x["ref"] for x in a]
            r = rng.random()
            if not a:
                q = rng.choice([f"did {she} get any {dn} {when}?", f"was any {dn} given {when}?"])
                cat = "existence_negative"
                b.add(p, cat, q, now, "boolean", [False], [], f"existence_negative/mar-{how}/1")
            elif r < 0.35:
                q = rng.choice([f"did {she} get any {dn} {when}?", f"was {dn} given {when}?",
                                f"any {dn} doses {when}?"])
                b.add(p, "existence_positive", q, now, "boolean", [True], refs, f"existence_positive/mar-{how}/1")
            elif r < 0.6:
                q = rng.choice([f"how many doses of {dn} {when}?", f"# {dn} doses given {when}?",
                                f"how many times was {dn} given {when}"])
                b.add(p, "daily_total_administered", q, now, "count", [len(a)], refs, f"daily_total_administered/doses-{how}/1")
            else:
                if unit == "mg" and tot >= 1000 and rng.random() < 0.5:
                    q = rng.choice([f"total {dn} given {when}, in grams?", f"how many grams of {dn} {when}?"])
                    b.add(p, "daily_total_administered", q, now, "number", [tot / 1000], refs,
                          f"daily_total_administered/total-g-{how}/1")
                else:
                    q = rng.choice([f"total {dn} given {when}?", f"how much {dn} did {she} get {when}?",
                                    f"{dn} total {when}?"])
                    b.add(p, "daily_total_administered", q, now, "number", [tot], refs,
                          f"daily_total_administered/total-{how}/1")
    # drugs never given on a named day (true negatives by drug)
    for d in sorted(set(DRUGS) - set(given))[:1]:
        if any(d == x for x in given):
            continue
        dn = rng.choice(DRUGS[d][1])
        day = yday
        q = rng.choice([f"did {she} get any {dn} yesterday?", f"any {dn} given yesterday?"])
        b.add(p, "existence_negative", q, now, "boolean", [False], [], "existence_negative/mar-never/1")
    # doses since admission
    for d in rng.sample(given, min(2, len(given))):
        n = robust_since(lambda s, d=d: len(p.admins(d, s, now)))
        if n is None:
            continue
        dn = rng.choice(DRUGS[d][1])
        q = rng.choice([f"how many doses of {dn} since admission?", f"# of {dn} doses this admission?",
                        f"how many {dn} doses has {she} had since admit"])
        b.add(p, "daily_total_administered", q, now, "count", [n], [x["ref"] for x in p.admins(d, adm, now)],
              "daily_total_administered/doses-since-adm/1")
    # exceed a daily amount (highest daily sum, whole record up to now)
    for d, cut, words in [("heparin", 10000, ["more than 10,000 units of heparin in one day?",
                                             "did daily heparin ever exceed 10000 units?"]),
                          ("apap", 4000, ["daily acetaminophen total over 4 g ever?",
                                          "has {she} ever gotten more than 4 g of Tylenol in a day?"]),
                          ("vanc", 2000, ["did vanc exceed 2 g/day at any point?",
                                          "more than 2 grams of vancomycin in a single day ever?"])]:
        outs = []
        for local in (False, True):
            sums: dict = defaultdict(float)
            for x in p.admins(d, hi=now):
                k2 = x["t"].astimezone(timezone(off)).date() if local else utc_date(x["t"])
                sums[k2] += x["value"]
            outs.append(max(sums.values(), default=0) > cut)
        if outs[0] != outs[1]:
            continue
        refs = [x["ref"] for x in p.admins(d, hi=now)] if outs[0] else []
        b.add(p, "daily_total_administered", rng.choice(words).format(she=she), now, "boolean", [outs[0]], refs,
              f"daily_total_administered/exceed-{d}/1")
    # last dose given / first dose (dates, UTC == local)
    for d in rng.sample(given, min(2, len(given))):
        a = p.admins(d, hi=now)
        dn = rng.choice(DRUGS[d][1])
        if rng.random() < 0.6:
            x = a[-1]
            q = rng.choice([f"when was the last dose of {dn} given?", f"last {dn} dose given when?",
                            f"date of {who} most recent {dn} dose?"])
            tpl = "first_last_time/mar-last/1"
        else:
            x = a[0]
            q = rng.choice([f"when did {she} get the first dose of {dn}?", f"when was {dn} first given?"])
            tpl = "first_last_time/mar-first/1"
        if utc_date(x["t"]) != x["t"].date():
            continue
        b.add(p, "first_last_time", q, now, "date", [utc_date(x["t"]).isoformat()], [x["ref"]], tpl)
    # how long on X: completed days since the first dose (this stay's drug, first dose ever)
    for d in rng.sample(given, min(1, len(given))):
        first = p.admins(d, hi=now)[0]
        days = (now - first["t"]).days
        if days != (utc_date(now) - utc_date(first["t"])).days or days < 1:
            continue
        dn = rng.choice(DRUGS[d][1])
        q = rng.choice([f"how many days since the first dose of {dn}?", f"how many days since {dn} was first given?"])
        b.add(p, "time_since", q, now, "number", [days], [first["ref"]], "time_since/mar-first-days/1")
    # admission date
    if utc_date(adm) == adm.date():
        q = rng.choice([f"when was {she} admitted?", "admit date?", "date of this admission?"])
        b.add(p, "first_last_time", q, now, "date", [adm.date().isoformat()], [stay["ref"]], "first_last_time/admit/1")


# ---------------------------------------------------------------- questions after the record (general)
def general_questions(b: Builder, p: Patient, all_pts: list[Patient], rng: random.Random):
    lf = utc_date(p.last_fact) + timedelta(days=rng.randint(3, 21))
    if lf.day > 28:
        lf = lf.replace(day=28) if lf.day > 28 else lf
    now = datetime(lf.year, lf.month, lf.day, 12, tzinfo=UTC)
    if p.deceased and p.deceased <= now:
        dead = True
    else:
        dead = False
    her, she, nm = p.her, p.she, p.first

    # admissions / ED visits counts
    for cls, words in [("IMP", ["how many admissions has {she} had?", "# of hospitalizations on record?",
                                "how many times has {nm} been admitted"]),
                       ("EMER", ["how many ED visits?", "number of ER visits on record?"])]:
        n = [e for e in p.enc if e["cls"] == cls and e["start"] <= now]
        b.add(p, "count_encounters", rng.choice(words).format(she=she, nm=nm), now, "count", [len(n)],
              [e["ref"] for e in n], f"count_encounters/{cls}-all/1")
    # last admission date
    if p.stays:
        s = p.stays[-1]["start"]
        if utc_date(s) == s.date():
            q = rng.choice(["when was {her} last admission?", "date of last hospitalization?",
                            "last admit - when?"]).format(her=her)
            b.add(p, "first_last_time", q, now, "date", [s.date().isoformat()], [p.stays[-1]["ref"]],
                  "first_last_time/last-IMP/1")
        days = (now - s).days
        if days == (utc_date(now) - utc_date(s)).days:
            q = rng.choice(["how many days since {her} last admission?", "days since last hospitalization?"])
            b.add(p, "time_since", q.format(her=her), now, "number", [days], [p.stays[-1]["ref"]],
                  "time_since/last-IMP-days/1")

    # latest/first value ever
    for code in rng.sample(["2160-0", "4548-4", "29463-7", "718-7", "2823-3", "18262-6"], 2):
        vs = p.values(code, hi=now)
        if not vs:
            b.add(p, "existence_negative", f"last {ITEMS[code][0]}?", now, "number", [], [],
                  f"existence_negative/never-{code}/1", status="no-data")
            continue
        t, v, ref = vs[-1]
        if any(x[0] == t and x[1] != v for x in vs):
            continue
        name = rng.choice(ITEMS[code])
        b.add(p, "latest_value", rng.choice([f"last {name} on file?", f"most recent {name}?"]), now, "number",
              [v], [ref], "latest_value/all/1")
    code = rng.choice(["2160-0", "29463-7", "2823-3"])
    vs = p.values(code, hi=now)
    if vs and not any(x[0] == vs[0][0] and x[1] != vs[0][1] for x in vs):
        name = rng.choice(ITEMS[code])
        b.add(p, "first_value", rng.choice([f"first {name} on record?", f"earliest {name} we have?"]), now,
              "number", [vs[0][1]], [vs[0][2]], "first_value/all/1")
    # baseline Cr: lowest ever
    vs = p.values("2160-0", hi=now)
    if vs:
        v = min(x[1] for x in vs)
        b.add(p, "min_max", rng.choice(["lowest Cr on record?", "what's the lowest creatinine ever?"]), now,
              "number", [v], [r for _, x, r in vs if x == v], "min_max/min-all-Cr/1")

    # current meds
    act = sorted({r["name"] for r in p.rx if r["status"] == "active" and r["t"] <= now})
    q = rng.choice(["current meds?", f"what is {nm} on right now?", "active med list?", "home meds currently active?"])
    b.add(p, "active_medications", q, now, "list", act, [r["ref"] for r in p.rx if r["status"] == "active"],
          "active_medications/list/1")
    # still on X? (yes and no)
    for key, names in rng.sample(sorted(OUTPT_DRUGS.items()), len(OUTPT_DRUGS)):
        has = [r for r in p.rx if key in r["name"].lower() and r["t"] <= now]
        if not has:
            continue
        on = any(r["status"] == "active" for r in has)
        q = rng.choice([f"is {she} still on {{d}}?", "still taking {d}?", "is {d} still active?"]).format(d=rng.choice(names))
        b.add(p, "active_medications", q, now, "boolean", [on], [r["ref"] for r in has if r["status"] == "active"],
              f"active_medications/still-{'yes' if on else 'no'}/1")
        break
    # inpatient drug still on after discharge? (orders completed/stopped -> false)
    if p.admin:
        d = next(k for k in DRUGS if p.admins(k))
        rx = [r for r in p.rx if DRUGS[d][0] in r["name"].lower()]
        if rx:
            on = any(r["status"] == "active" for r in rx)
            q = f"is {she} still on {rng.choice(DRUGS[d][1])}?"
            b.add(p, "active_medications", q, now, "boolean", [on], [], f"active_medications/still-inpt-{on}/1")

    # daily dose from latest prescription of an inpatient drug (per order)
    for d in ["vanc", "heparin", "piptazo", "ceftriaxone"]:
        rx = [r for r in p.rx if DRUGS[d][0] in r["name"].lower() and r["t"] <= now]
        if not rx:
            continue
        di = rx[-1]["di"]
        rep = di.get("timing", {}).get("repeat", {})
        dq = (di.get("doseAndRate") or [{}])[0].get("doseQuantity")
        if not rep or not dq:
            continue
        per = rep["period"] * {"h": 1 / 24, "d": 1, "wk": 7, "mo": 30}[rep["periodUnit"]]
        dd = dq["value"] * rep.get("frequency", 1) / per
        q = rng.choice(["ordered daily dose of {d}?", "what's the daily {d} dose on the latest order?",
                        "{d} dose per day per the order?"]).format(d=rng.choice(DRUGS[d][1]))
        b.add(p, "daily_dose", q, now, "number", [round(dd, 6)], [rx[-1]["ref"]], f"daily_dose/{d}/1")
        break

    # after drug: first Cr after vanc was started (no value within 2 h of the order)
    rx = [r for r in p.rx if "vancomycin" in r["name"].lower()]
    if rx:
        t0 = rx[0]["t"]
        code = rng.choice(["2160-0", "6690-2"])
        vs = [x for x in p.values(code, hi=now) if x[0] > t0]
        if vs and not any(abs((x[0] - t0).total_seconds()) < 7200 for x in p.values(code)):
            name = rng.choice(ITEMS[code])
            q = rng.choice([f"first {name} after vanc was started?", f"{name} right after vancomycin was started?"])
            b.add(p, "after_drug", q, now, "number", [vs[0][1]], [vs[0][2], rx[0]["ref"]], "after_drug/first/1")

    # conditions
    act = sorted({c["name"] for c in p.cond if c["onset"] <= now and (c["abate"] is None or c["abate"] > now)})
    q = rng.choice(["active problems?", f"what's on {her} problem list right now?", "current diagnoses?"])
    # the doc's rule (no abatement) and clinicalStatus must agree, else the list is a data conflict: skip
    conflict = any((c["name"] in act) != (c["status"] == "active") for c in p.cond if c["onset"] <= now)
    if not conflict:
            b.add(p, "active_conditions", q, now, "list", act, [c["ref"] for c in p.cond if c["name"] in act],
              "active_conditions/now/1")
    mine = " ".join(c["name"].lower() for c in p.cond)
    others = " ".join(c["name"].lower() for o in all_pts for c in o.cond)
    for key, names in sorted(CONDS.items()):
        if key in others and key not in mine and rng.random() < 0.5:
            q = rng.choice(["hx of {c}?", "any history of {c}?", "{c} on {her} history?"]).format(c=rng.choice(names), her=her)
            b.add(p, "existence_negative", q, now, "boolean", [False], [], f"existence_negative/cond-{key}/1")
            break
    for key, names in rng.sample(sorted(CONDS.items()), len(CONDS)):
        hit = [c for c in p.cond if key in c["name"].lower()]
        if hit:
            q = rng.choice(["hx of {c}?", "does {she} have {c} on {her} history?", "any {c} history?"]).format(
                c=rng.choice(names), she=she, her=her)
            b.add(p, "existence_positive", q, now, "boolean", [True], [c["ref"] for c in hit], f"existence_positive/cond-{key}/1")
            break
    # procedures: blood cultures count
    bc = [x for x in p.proc if "blood culture" in x["name"].lower() and x["t"] <= now]
    q = rng.choice(["how many times were blood cultures drawn?", "# of blood culture sets on record?"])
    b.add(p, "count_other", q, now, "count", [len(bc)], [x["ref"] for x in bc], "count_other/proc-bcx/1")
    vr = [r for r in p.rx if "vancomycin" in r["name"].lower() and r["t"] <= now]
    q = rng.choice(["how many vanc orders on record?", "how many times was vancomycin prescribed?"])
    b.add(p, "count_other", q, now, "count", [len(vr)], [r["ref"] for r in vr], "count_other/rx-vanc/1")

    # age / demographics
    end = p.deceased.date() if dead else now.date()
    bd = p.birth
    near = any(abs((date(y, bd.month, min(bd.day, 28)) - end).days) <= 3 for y in (end.year - 1, end.year, end.year + 1))
    if not near:
        q = rng.choice(["how old is {she}?", "age?", "pt's age?"]).format(she=she)
        b.add(p, "age", q, now, "number", [completed_years(bd, end)], [f"Patient/{p.id}"], "age/now/1")
    q = rng.choice(["DOB?", "date of birth?", f"when was {nm} born?"])
    b.add(p, "demographics", q, now, "date", [bd.isoformat()], [f"Patient/{p.id}"], "demographics/dob/1")
    q = rng.choice([f"is {nm} deceased?", "is the patient deceased?"])
    b.add(p, "demographics", q, now, "boolean", [dead], [f"Patient/{p.id}"], "demographics/deceased/1")
    bstyle = rng.randint(0, 2)
    q = f"patient id for {p.first} {p.family}, DOB {fmt_date(bd, bstyle, now)}?"
    b.add(None, "patient_lookup", q, now, "string", [p.id], [f"Patient/{p.id}"], "patient_lookup/name-dob/1")


def build() -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "icu_data"
        synth(folder)
        pts = [Patient(orjson.loads(f.read_bytes())) for f in sorted(folder.glob("*.json"))]
    b = Builder(pts)
    for p in pts:
        rng = random.Random(f"{SEED_TEXT}:{p.id}:general")  # noqa: S311
        general_questions(b, p, pts, rng)
        for i, stay in enumerate(p.stays):
            rng = random.Random(f"{SEED_TEXT}:{p.id}:stay{i}")  # noqa: S311
            stay_questions(b, p, stay, rng)
    return b.finish()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    rows = build()
    text = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    out = Path(args.out)
    if args.check:
        same = out.exists() and out.read_bytes() == text
        print("up to date" if same else "stale")
        return 0 if same else 1
    out.write_bytes(text)
    cats: dict[str, int] = defaultdict(int)
    for r in rows:
        cats[r["category"]] += 1
    print(f"wrote {len(rows)} questions to {out.name}: " + ", ".join(f"{k} {v}" for k, v in sorted(cats.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
