"""Build the blind `probe_followup` evaluation set: sign-out, primary-care and case-manager voices.

Gold answers are computed here from the raw FHIR JSON (bundles read with orjson, `urn:uuid:` references
resolved by hand); nothing is imported from fhirqa. Two data sources:

* the 100 Synthea bundles of ``../shared/data/synthea-r4`` (relative to the repository root), and
* 10 synthetic patients made by ``fhirqa synth --patients 10 --seed 777001`` (run as a subprocess into a
  temporary folder; the generator is seeded, so the same command gives the same bundles).

    python evals/probe_followup/build.py            # rewrites evals/probe_followup/questions.jsonl
    python evals/probe_followup/build.py --check    # exit 1 when the committed file is stale

Same data in, same bytes out: every random choice comes from ``seeded(<string>)``.
"""
from __future__ import annotations

import argparse
import calendar
import glob
import json
import os
import random
import subprocess
import sys
import tempfile
from datetime import UTC, date, datetime, timedelta

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "questions.jsonl")
SYNTHEA = os.path.join(REPO, "..", "shared", "data", "synthea-r4")
SYNTH_SEED = "777001"



def seeded(key: str) -> random.Random:
    """An RNG seeded by a string: reproducible draws (not for security)."""
    return random.Random(key)  # noqa: S311


# ----------------------------------------------------------------------------------------------------------
# items: LOINC codes (both sources) and the words of each voice
# ----------------------------------------------------------------------------------------------------------
ITEMS = {
    "K": {"codes": {"2823-3", "6298-4"}, "abbr": ["K", "K+"], "full": ["potassium"], "typo": ["potasium"],
          "unit": "mmol/L", "hi": [5.0, 5.2], "lo": [3.5, 3.8]},
    "Na": {"codes": {"2951-2", "2947-0"}, "abbr": ["Na"], "full": ["sodium"], "typo": ["sodum"],
           "unit": "mmol/L", "hi": [145], "lo": [135, 138]},
    "Cr": {"codes": {"2160-0", "38483-4"}, "abbr": ["Cr", "creat"], "full": ["creatinine"], "typo": ["creatinin"],
           "unit": "mg/dL", "hi": [1.2, 1.5], "lo": []},
    "BUN": {"codes": {"3094-0", "6299-2"}, "abbr": ["BUN"], "full": ["urea nitrogen"], "typo": [],
            "unit": "mg/dL", "hi": [20, 25], "lo": []},
    "A1c": {"codes": {"4548-4"}, "abbr": ["A1c", "HbA1c"], "full": ["hemoglobin A1c"], "typo": ["A1C lvl", "hba1c"],
            "unit": "%", "hi": [6.5, 7.0, 8.0], "lo": [5.7]},
    "LDL": {"codes": {"18262-6"}, "abbr": ["LDL"], "full": ["LDL cholesterol"], "typo": ["LDL cholesteral"],
            "unit": "mg/dL", "hi": [100, 130, 160], "lo": [70, 100]},
    "HDL": {"codes": {"2085-9"}, "abbr": ["HDL"], "full": ["HDL cholesterol"], "typo": [],
            "unit": "mg/dL", "hi": [60], "lo": [40, 50]},
    "TC": {"codes": {"2093-3"}, "abbr": ["total chol", "TC"], "full": ["total cholesterol"], "typo": ["total choleterol"],
           "unit": "mg/dL", "hi": [200, 240], "lo": []},
    "TG": {"codes": {"2571-8"}, "abbr": ["TG", "trigs"], "full": ["triglycerides"], "typo": ["triglicerides"],
           "unit": "mg/dL", "hi": [150, 200], "lo": []},
    "Hgb": {"codes": {"718-7"}, "abbr": ["Hgb", "Hb"], "full": ["hemoglobin"], "typo": ["hemoglobn"],
            "unit": "g/dL", "hi": [], "lo": [10, 12, 13]},
    "plt": {"codes": {"777-3"}, "abbr": ["plt", "plts"], "full": ["platelets"], "typo": ["platlets"],
            "unit": "10*3/uL", "hi": [400], "lo": [150]},
    "WBC": {"codes": {"6690-2"}, "abbr": ["WBC"], "full": ["white count"], "typo": [],
            "unit": "10*3/uL", "hi": [11], "lo": [4]},
    "SBP": {"codes": {"8480-6"}, "abbr": ["SBP"], "full": ["systolic BP", "systolic"], "typo": ["systolc"],
            "unit": "mm[Hg]", "hi": [130, 140, 160], "lo": [100, 110]},
    "DBP": {"codes": {"8462-4"}, "abbr": ["DBP"], "full": ["diastolic BP", "diastolic"], "typo": [],
            "unit": "mm[Hg]", "hi": [80, 90], "lo": [60]},
    "wt": {"codes": {"29463-7"}, "abbr": ["wt"], "full": ["weight"], "typo": ["wieght"],
           "unit": "kg", "hi": [], "lo": []},
    "BMI": {"codes": {"39156-5"}, "abbr": ["BMI"], "full": ["BMI"], "typo": [],
            "unit": "kg/m2", "hi": [30, 35], "lo": [25]},
}
CODE_ITEM = {c: k for k, v in ITEMS.items() for c in v["codes"]}
SIGNOUT_ITEMS = ["K", "Na", "Cr", "BUN", "Hgb", "plt", "WBC"]
PCP_ITEMS = ["A1c", "LDL", "HDL", "TC", "TG", "SBP", "DBP", "wt", "BMI", "Cr"]
# labs nobody in either source has (value questions about them are no-data)
ABSENT_LABS = ["TSH", "INR", "ferritin", "vitamin D level", "free T4", "uric acid"]
LB_PER_KG = 2.2046226218


# ----------------------------------------------------------------------------------------------------------
# reading the raw bundles
# ----------------------------------------------------------------------------------------------------------
def parse_dt(s: str) -> datetime:
    """An ISO instant (or a date: midnight UTC) as an aware datetime."""
    if len(s) == 10:
        return datetime(int(s[:4]), int(s[5:7]), int(s[8:10]), tzinfo=UTC)
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def local_date(s: str) -> date:
    """The calendar date as written in the record (its own offset)."""
    return date.fromisoformat(s[:10])


def ref_id(ref: str | None) -> str | None:
    if not ref:
        return None
    return ref.split(":")[-1].split("/")[-1]


def cc_name(cc: dict | None) -> str:
    if not cc:
        return ""
    return cc.get("text") or next((c.get("display") for c in cc.get("coding", []) if c.get("display")), "")


class Rec:
    """One patient's facts, as the builder needs them."""

    def __init__(self, source: str, resources: list[dict]) -> None:
        self.source = source
        by_id = {r["id"]: r for r in resources}
        pat = next(r for r in resources if r["resourceType"] == "Patient")
        self.pid = pat["id"]
        self.gender = pat.get("gender")
        given = pat["name"][0]["given"][0]
        self.first = "".join(ch for ch in given if not ch.isdigit())
        self.birth = pat.get("birthDate")
        self.deceased = pat.get("deceasedDateTime")
        self.obs: dict[str, list[tuple]] = {}   # item -> [(dt, value, raw_time, ref, enc_id)]
        self.all_obs_codes: set[str] = set()
        self.obs_names: set[str] = set()
        self.encs: list[dict] = []
        self.imms: list[tuple] = []   # (dt, raw, name, ref)
        self.meds: list[tuple] = []   # (dt, raw, name, ref, status)
        self.procs: list[tuple] = []
        self.conds: list[tuple] = []
        times: list[datetime] = []
        for r in resources:
            t = r["resourceType"]
            if t == "Observation":
                raw = r.get("effectiveDateTime") or (r.get("effectivePeriod") or {}).get("start") or r.get("issued")
                if not raw:
                    continue
                dt = parse_dt(raw)
                times.append(dt)
                enc = ref_id((r.get("encounter") or {}).get("reference"))
                codes = [c.get("code") for c in r["code"].get("coding", [])]
                self.all_obs_codes.update(codes)
                self.obs_names.add(cc_name(r["code"]))
                ref = f"Observation/{r['id']}"
                if r.get("status") in ("entered-in-error", "cancelled"):
                    continue
                for code in codes:
                    if code in CODE_ITEM and "valueQuantity" in r:
                        self.obs.setdefault(CODE_ITEM[code], []).append((dt, float(r["valueQuantity"]["value"]), raw, ref, enc))
                for comp in r.get("component", []):
                    for c in comp["code"].get("coding", []):
                        if c.get("code") in CODE_ITEM and "valueQuantity" in comp:
                            self.obs.setdefault(CODE_ITEM[c["code"]], []).append(
                                (dt, float(comp["valueQuantity"]["value"]), raw, ref, enc))
            elif t == "Encounter":
                p = r.get("period") or {}
                if not p.get("start"):
                    continue
                dt = parse_dt(p["start"])
                times.append(dt)
                self.encs.append({"cls": (r.get("class") or {}).get("code"), "start": dt, "raw": p["start"],
                                  "end": parse_dt(p["end"]) if p.get("end") else None, "raw_end": p.get("end"),
                                  "id": r["id"], "ref": f"Encounter/{r['id']}",
                                  "type": cc_name((r.get("type") or [{}])[0])})
            elif t == "Immunization":
                raw = r.get("occurrenceDateTime")
                if not raw or r.get("status") not in (None, "completed"):
                    continue
                dt = parse_dt(raw)
                times.append(dt)
                self.imms.append((dt, raw, cc_name(r.get("vaccineCode")), f"Immunization/{r['id']}"))
            elif t == "MedicationRequest":
                raw = r.get("authoredOn")
                if not raw:
                    continue
                if "medicationCodeableConcept" in r:
                    name = cc_name(r["medicationCodeableConcept"])
                else:
                    mref = (r.get("medicationReference") or {})
                    med = by_id.get(ref_id(mref.get("reference")) or "")
                    name = cc_name(med.get("code")) if med else mref.get("display", "")
                dt = parse_dt(raw)
                times.append(dt)
                self.meds.append((dt, raw, name, f"MedicationRequest/{r['id']}", r.get("status")))
            elif t == "Procedure":
                raw = r.get("performedDateTime") or (r.get("performedPeriod") or {}).get("start")
                if not raw:
                    continue
                dt = parse_dt(raw)
                times.append(dt)
                self.procs.append((dt, raw, cc_name(r.get("code")), f"Procedure/{r['id']}"))
            elif t == "Condition":
                raw = r.get("onsetDateTime") or r.get("recordedDate")
                if raw:
                    times.append(parse_dt(raw))
                self.conds.append((parse_dt(raw) if raw else None, raw, cc_name(r.get("code")), f"Condition/{r['id']}"))
        for v in self.obs.values():
            v.sort(key=lambda x: x[0])
        self.encs.sort(key=lambda e: e["start"])
        self.imms.sort()
        self.meds.sort()
        self.procs.sort()
        self.last_fact = max(times) if times else None
        rng = seeded(f"now|{self.pid}")
        if self.last_fact:
            d = self.last_fact.date() + timedelta(days=rng.randint(3, 21))
            while d.day > 28:
                d += timedelta(days=1)
            self.now = datetime(d.year, d.month, d.day, 12, tzinfo=UTC)
        else:
            self.now = None

    # pronouns ---------------------------------------------------------------------------------------------
    @property
    def she(self) -> str:
        return "she" if self.gender == "female" else "he"

    @property
    def her(self) -> str:
        return "her" if self.gender == "female" else "his"


def load_bundle(path: str, source: str) -> Rec | None:
    b = orjson.loads(open(path, "rb").read())
    res = [e["resource"] for e in b.get("entry", []) if "resource" in e]
    if not any(r["resourceType"] == "Patient" for r in res):
        return None
    return Rec(source, res)


def make_synth(folder: str) -> None:
    """Write the seeded synthetic patients with fhirqa's own generator (a subprocess: nothing imported)."""
    cmd = [sys.executable, "-m", "fhirqa.cli", "synth", "--patients", "10", "--seed", SYNTH_SEED, "--out", folder]
    subprocess.run(cmd, check=True, cwd=REPO, stdout=subprocess.DEVNULL)  # noqa: S603 - fixed argument list


# ----------------------------------------------------------------------------------------------------------
# time helpers
# ----------------------------------------------------------------------------------------------------------
def minus_months(dt: datetime, n: int) -> datetime:
    y, m = dt.year, dt.month - n
    while m <= 0:
        m += 12
        y -= 1
    d = min(dt.day, calendar.monthrange(y, m)[1])
    return dt.replace(year=y, month=m, day=d)


def window_start(now: datetime, n: int, unit: str) -> datetime:
    if unit == "d":
        return now - timedelta(days=n)
    if unit == "wk":
        return now - timedelta(weeks=n)
    if unit == "mo":
        return minus_months(now, n)
    return minus_months(now, 12 * n)


def robust_start(now: datetime, n: int, unit: str) -> list[datetime]:
    """The start and its shifted versions the answer must not depend on (7 days; 1 day for short windows)."""
    s = window_start(now, n, unit)
    j = timedelta(days=1) if unit in ("d", "wk") else timedelta(days=7)
    return [s - j, s, s + j]


def utc_local_agree(raw: str) -> bool:
    return parse_dt(raw).astimezone(UTC).date() == local_date(raw)


def completed_months(a: datetime, b: datetime) -> int:
    """Completed calendar months from instant a to instant b (both compared in UTC)."""
    a, b = a.astimezone(UTC), b.astimezone(UTC)
    m = (b.year - a.year) * 12 + (b.month - a.month)
    if (b.day, b.time()) < (a.day, a.time()):
        m -= 1
    return m


def fmt_date(d: date, rng: random.Random) -> str:
    forms = [d.isoformat(), f"{d.month}/{d.day}/{d.year}", f"{calendar.month_abbr[d.month]} {d.day}, {d.year}",
             f"{calendar.month_name[d.month]} {d.day}, {d.year}"]
    return rng.choice(forms)


RW = {  # relative windows: (n, unit, phrasings)
    "2wk": (2, "wk", ["past 2 wks", "last 2 weeks", "past two weeks"]),
    "48h": (2, "d", ["last 48h", "past 48 hrs", "last 2 days"]),
    "3mo": (3, "mo", ["past 3 mo", "last 3 months", "last three months"]),
    "6mo": (6, "mo", ["past 6 mo", "last 6 months", "past six months"]),
    "1y": (1, "y", ["past yr", "last 12 months", "past year"]),
    "2y": (2, "y", ["past 2 yrs", "last 2 years", "past two years"]),
}


# ----------------------------------------------------------------------------------------------------------
# question records
# ----------------------------------------------------------------------------------------------------------
def q(p: Rec, text: str, cat: str, atype: str, expected: list, status: str, tol: float, refs: list[str],
      template: str) -> dict:
    return {"patient_id": p.pid, "question": text, "now": p.now.strftime("%Y-%m-%dT%H:%M:%SZ"), "category": cat,
            "answer_type": atype, "expected": expected, "expected_status": status, "tolerance": tol,
            "gold_refs": refs, "template": template}


def name_of(item: str, rng: random.Random) -> tuple[str, str]:
    """(register, word) for an item: mostly shorthand, some full names, ~5 % misspelt."""
    spec = ITEMS[item]
    r = rng.random()
    if r < 0.06 and spec["typo"]:
        return "typo", rng.choice(spec["typo"])
    if r < 0.6:
        return "abbr", rng.choice(spec["abbr"])
    return "full", rng.choice(spec["full"])


def values_in(p: Rec, item: str, start: datetime | None, end: datetime | None = None) -> list[tuple]:
    end = end or p.now
    return [v for v in p.obs.get(item, []) if (start is None or v[0] >= start) and v[0] <= end]


def no_tie_last(vals: list[tuple], first: bool = False) -> tuple | None:
    if not vals:
        return None
    pick = vals[0] if first else vals[-1]
    same = [v for v in vals if v[0] == pick[0]]
    if len({round(v[1], 9) for v in same}) > 1:
        return None
    return pick


# --- sign-out / cross-cover -------------------------------------------------------------------------------
def gen_signout(p: Rec) -> list[dict]:
    rng = seeded(f"signout|{p.pid}")
    out: list[dict] = []
    items = [i for i in SIGNOUT_ITEMS if p.obs.get(i)]
    rng.shuffle(items)
    for item in items[:3]:
        last = no_tie_last(values_in(p, item, None))
        if not last:
            continue
        reg, w = name_of(item, rng)
        forms = {
            "K": ["any K repletion needed - what was the last {w}?", "x-cover: last {w}? deciding on repletion",
                  "last {w} (mmol/L)? need to know if she needs KCl tonight"],
            "Na": ["last {w}? want to make sure not hyponatremic", "x-cover q: most recent {w}, in mmol/L?"],
            "Cr": ["renal fxn check before ordering contrast - last {w}?", "signout: what was the most recent {w}?"],
            "BUN": ["last {w}? (checking for prerenal picture)"],
            "Hgb": ["transfusion threshold check - last {w}?", "cross-cover: most recent {w} pls"],
            "plt": ["last {w}? ok for SQ heparin?", "most recent {w} count pls - checking before LP"],
            "WBC": ["febrile pt on cross-cover - last {w}?", "what was the latest {w}?"],
        }[item]
        text = rng.choice(forms).format(w=w).replace("she", p.she)
        out.append(q(p, text, "latest_value", "number", [last[1]], "answered", 0.01, [last[3]],
                     f"latest_value/signout-{item}/{reg}"))
    # empty short windows: "in the last 48h" with nothing there -> no-data
    for key in ("48h", "2wk"):
        n, unit, phr = RW[key]
        cand = [i for i in SIGNOUT_ITEMS if p.obs.get(i)]
        if not cand:
            continue
        item = rng.choice(cand)
        if any(values_in(p, item, s) for s in robust_start(p.now, n, unit)):
            continue
        reg, w = name_of(item, rng)
        text = rng.choice(["value of the {w} drawn in the {r}?", "{w} over the {r}?", "what's {h} {w} been in the {r}?"]
                          ).format(w=w, r=rng.choice(phr), h=p.her)
        out.append(q(p, text, "value_in_window", "number", [], "no-data", 0.01, [], f"value_in_window/empty-{key}/{reg}"))
    # thresholds in a window: hyperkalemia etc.
    for item in items[:2]:
        key = rng.choice(["6mo", "1y", "2y"])
        n, unit, phr = RW[key]
        sets = [values_in(p, item, s) for s in robust_start(p.now, n, unit)]
        if not sets[1] or len({len(s) for s in sets}) > 1:
            continue
        vals = [v[1] for v in sets[1]]
        for side in ("hi", "lo"):
            cuts = ITEMS[item][side]
            if not cuts:
                continue
            cut = rng.choice(cuts)
            ext = max(vals) if side == "hi" else min(vals)
            if abs(ext - cut) <= 0.006 * abs(cut):
                continue
            ans = ext > cut if side == "hi" else ext < cut
            reg, w = name_of(item, rng)
            op = ">" if side == "hi" else "<"
            text = rng.choice(["any {w} {op} {c} in the {r}?", "has {h} {w} been {op}{c} at all in the {r}?",
                               "{w} ever {word} {c} over the {r}? y/n"]).format(
                w=w, op=op, c=cut, r=rng.choice(phr), h=p.her, word="above" if side == "hi" else "below")
            refs = [v[3] for v in sets[1] if (v[1] > cut if side == "hi" else v[1] < cut)] if ans else []
            out.append(q(p, text, "threshold", "boolean", [ans], "answered", 0, refs,
                         f"threshold/{key}-{'above' if side == 'hi' else 'below'}/{reg}"))
    # min/max during the last inpatient stay (care of the ward) or the past yr
    for item in items[:2]:
        key = rng.choice(["1y", "2y"])
        n, unit, phr = RW[key]
        sets = [values_in(p, item, s) for s in robust_start(p.now, n, unit)]
        if len(sets[1]) < 2 or len({len(s) for s in sets}) > 1:
            continue
        side = rng.choice(["max", "min"])
        vals = sets[1]
        ext = max(vals, key=lambda v: v[1]) if side == "max" else min(vals, key=lambda v: v[1])
        reg, w = name_of(item, rng)
        word = rng.choice(["highest", "peak", "max"]) if side == "max" else rng.choice(["lowest", "nadir", "min"])
        text = rng.choice(["{word} {w} in the {r}?", "what was {h} {word} {w} over the {r}?", "{w} {word} - {r}"]
                          ).format(word=word, w=w, r=rng.choice(phr), h=p.her)
        out.append(q(p, text, "min_max", "number", [ext[1]], "answered", 0.01, [ext[3]],
                     f"min_max/{key}-{side}/{reg}"))
    return out


# --- primary-care follow-up -------------------------------------------------------------------------------
STATIN = ("simvastatin", "simvistatin", "atorvastatin", "rosuvastatin", "pravastatin", "lovastatin", "zocor", "lipitor")


def gen_pcp(p: Rec) -> list[dict]:
    rng = seeded(f"pcp|{p.pid}")
    out: list[dict] = []
    encs = [e for e in p.encs if e["start"] <= p.now]
    last_enc = encs[-1] if encs else None
    # item "at her last visit": the latest encounter holds the item's latest value
    if last_enc and last_enc["cls"] == "AMB" and sum(e["start"] == last_enc["start"] for e in encs) == 1:
        items = [i for i in PCP_ITEMS if p.obs.get(i)]
        rng.shuffle(items)
        for item in items[:2]:
            last = no_tie_last(values_in(p, item, None))
            if not last or last[4] != last_enc["id"]:
                continue
            reg, w = name_of(item, rng)
            if item == "wt" and rng.random() < 0.5:
                text = rng.choice(["{h} weight at the last visit, in lbs?", "wt in pounds at {h} last appt?"]).format(h=p.her)
                out.append(q(p, text, "latest_value", "number", [last[1] * LB_PER_KG], "answered", 0.01, [last[3]],
                             "latest_value/lastvisit-wt-lb/full"))
                continue
            text = rng.choice(["{w} at {h} last visit?", "what was the {w} at the last PCP visit",
                               "{w} at {h} most recent appt?", "at {h} last visit, what was {h} {w}"]).format(w=w, h=p.her)
            out.append(q(p, text, "latest_value", "number", [last[1]], "answered", 0.01, [last[3]],
                         f"latest_value/lastvisit-{item}/{reg}"))
    # flu shot: is she due? (date of the last one)
    flu = [i for i in p.imms if "influenza" in i[2].lower() and i[0] <= p.now]
    if flu and utc_local_agree(flu[-1][1]):
        text = rng.choice(["is {s} due for a flu shot (last one when)?", "when was {h} last flu vaccine?",
                           "date of last flu shot? trying to see if due", "last influenza vaccination - date?"]
                          ).format(s=p.she, h=p.her)
        out.append(q(p, text, "first_last_time", "date", [local_date(flu[-1][1]).isoformat()], "answered", 0,
                     [flu[-1][3]], "first_last_time/imm-flu-last/any"))
        # months since the last flu shot (robust to moving the event 3 days)
        ms = {completed_months(flu[-1][0] + timedelta(days=d), p.now) for d in (-3, 0, 3)}
        if len(ms) == 1 and rng.random() < 0.7:
            text = rng.choice(["how many months since {h} last flu shot?", "months since last flu vaccine?"]).format(h=p.her)
            out.append(q(p, text, "time_since", "number", [ms.pop()], "answered", 0, [flu[-1][3]],
                         "time_since/imm-flu-months/any"))
    elif not flu and p.imms is not None:
        text = rng.choice(["has {s} ever had a flu shot?", "any flu vaccine on file?"]).format(s=p.she)
        out.append(q(p, text, "existence_negative", "boolean", [False], "answered", 0, [], "existence_negative/imm-flu/any"))
    # last PCP (ambulatory) visit date
    amb = [e for e in encs if e["cls"] == "AMB"]
    if amb and utc_local_agree(amb[-1]["raw"]) and rng.random() < 0.5:
        text = rng.choice(["when was {h} last outpatient visit?", "date of last clinic visit?", "last office visit - when?"]).format(h=p.her)
        out.append(q(p, text, "first_last_time", "date", [local_date(amb[-1]["raw"]).isoformat()], "answered", 0,
                     [amb[-1]["ref"]], "first_last_time/enc-AMB-last/any"))
    # count of flu shots (a number in a year window or ever)
    if flu and rng.random() < 0.6:
        yrs = sorted({i[0].year for i in flu})
        y = rng.choice(yrs)
        robust = all(not (i[0].month == 1 and i[0].day <= 1) and not (i[0].month == 12 and i[0].day >= 31) for i in flu)
        if robust:
            n = sum(1 for i in flu if i[0].year >= y)
            text = rng.choice(["how many flu shots since {y}?", "# of flu vaccines {s}'s had since {y}"]).format(y=y, s=p.she)
            out.append(q(p, text, "count_other", "count", [n], "answered", 0, [i[3] for i in flu if i[0].year >= y],
                         "count_other/imm-flu-since-year/any"))
    # ED visits this year (calendar year to date == rolling 12 months, both robust)
    for cls, words in (("EMER", ["ED visits", "ER visits", "trips to the ED"]), ("AMB", ["office visits", "clinic visits"])):
        if rng.random() < (0.75 if cls == "EMER" else 0.35):
            jan1 = datetime(p.now.year, 1, 1, tzinfo=UTC)
            starts = [jan1 - timedelta(days=1), jan1, jan1 + timedelta(days=1)] + robust_start(p.now, 1, "y")
            counts = {sum(1 for e in encs if e["cls"] == cls and s <= e["start"] <= p.now) for s in starts}
            if len(counts) == 1:
                n = counts.pop()
                if n == 0 and rng.random() < 0.5:
                    continue
                text = rng.choice(["how many {w} this year?", "# {w} this yr", "{w} so far this year - how many?"]
                                  ).format(w=rng.choice(words))
                out.append(q(p, text, "count_encounters", "count", [n], "answered", 0,
                             [e["ref"] for e in encs if e["cls"] == cls and jan1 <= e["start"]],
                             f"count_encounters/{cls}-this-year/any"))
    # LDL before vs after the statin: after - before
    statin_rx = [m for m in p.meds if any(s in m[2].lower() for s in STATIN) and m[0] <= p.now]
    ldl = p.obs.get("LDL", [])
    if statin_rx and ldl:
        t0 = statin_rx[0][0]
        before = [v for v in ldl if v[0] < t0 - timedelta(days=1)]
        after = [v for v in ldl if v[0] > t0 + timedelta(days=1)]
        near = [v for v in ldl if abs(v[0] - t0) <= timedelta(days=1)]
        b = no_tie_last(before)
        a = no_tie_last(after, first=True)
        if b and a and not near:
            drug = rng.choice(["the statin", "the statin", "simva" if "simv" in statin_rx[0][2].lower() else "the statin"])
            text = rng.choice(["LDL before vs after starting {d}: how much did it change (after minus before)?",
                               "change in LDL from the last one before {d} to the first one after?"]).format(d=drug)
            out.append(q(p, text, "change", "number", [a[1] - b[1]], "answered", 0.02, [b[3], a[3]],
                         "change/before-after-statin/abbr"))
            text = rng.choice(["first LDL after {h} statin was started?", "LDL after starting the statin?"]).format(h=p.her)
            out.append(q(p, text, "after_drug", "number", [a[1]], "answered", 0.01, [a[3]],
                         "after_drug/first-LDL-statin/abbr"))
    # A1c / wt change over the past 1-2 yrs
    for item in ("A1c", "wt", "LDL", "SBP"):
        if not p.obs.get(item) or rng.random() < 0.5:
            continue
        key = rng.choice(["1y", "2y"])
        n, unit, phr = RW[key]
        sets = [values_in(p, item, s) for s in robust_start(p.now, n, unit)]
        if len(sets[1]) < 2 or len({len(s) for s in sets}) > 1:
            continue
        f, la = no_tie_last(sets[1], first=True), no_tie_last(sets[1])
        if not f or not la or f[0] == la[0]:
            continue
        reg, w = name_of(item, rng)
        text = rng.choice(["how much has {h} {w} changed over the {r}?", "{w} change over the {r} (last minus first)?",
                           "net change in {w}, {r}?"]).format(h=p.her, w=w, r=rng.choice(phr))
        out.append(q(p, text, "change", "number", [la[1] - f[1]], "answered", 0.02, [f[3], la[3]],
                     f"change/{key}/{reg}"))
        break
    # latest value in a window (PCP: "A1c in the past 6 mo?")
    for item in rng.sample(PCP_ITEMS, 3):
        if not p.obs.get(item):
            continue
        key = rng.choice(["3mo", "6mo", "1y"])
        n, unit, phr = RW[key]
        sets = [values_in(p, item, s) for s in robust_start(p.now, n, unit)]
        if len({len(s) for s in sets}) > 1:
            continue
        reg, w = name_of(item, rng)
        text = rng.choice(["{w} in the {r}? most recent one", "latest {w} over the {r}", "what was the {w} in the {r}? (latest)"]
                          ).format(w=w, r=rng.choice(phr))
        if not sets[1]:
            out.append(q(p, text, "value_in_window", "number", [], "no-data", 0.01, [], f"value_in_window/empty-{key}/{reg}"))
        else:
            la = no_tie_last(sets[1])
            if la:
                out.append(q(p, text, "value_in_window", "number", [la[1]], "answered", 0.01, [la[3]],
                             f"value_in_window/latest-{key}/{reg}"))
    # threshold ever (A1c ever >= goal etc.)
    for item in rng.sample(["A1c", "LDL", "SBP", "BMI", "TC", "HDL"], 3):
        vals = p.obs.get(item)
        if not vals:
            continue
        side = rng.choice(["hi", "lo"]) if ITEMS[item]["lo"] else "hi"
        cut = rng.choice(ITEMS[item][side])
        ext = max(v[1] for v in vals) if side == "hi" else min(v[1] for v in vals)
        if abs(ext - cut) <= 0.006 * abs(cut):
            continue
        ans = ext > cut if side == "hi" else ext < cut
        reg, w = name_of(item, rng)
        text = rng.choice(["has {h} {w} ever been {word} {c}?", "{w} ever {op} {c}?", "was {h} {w} ever {word} {c} on any check?"]
                          ).format(h=p.her, w=w, c=cut, op=">" if side == "hi" else "<",
                                   word="over" if side == "hi" else "under")
        refs = [v[3] for v in vals if (v[1] > cut if side == "hi" else v[1] < cut)] if ans else []
        out.append(q(p, text, "threshold", "boolean", [ans], "answered", 0, refs,
                     f"threshold/ever-{'above' if side == 'hi' else 'below'}/{reg}"))
    return out


DRUG_ITEMS = [  # (words for the drug, substrings of record names, items followed after it)
    (["the statin", "simvastatin", "Zocor"], ("simvastatin", "simvistatin", "zocor"), ["LDL", "TC"]),
    (["the statin", "atorvastatin"], ("atorvastatin", "lipitor"), ["LDL", "TC"]),
    (["metformin", "Glucophage", "metfromin"], ("metformin", "glucophage"), ["A1c"]),
    (["lisinopril"], ("lisinopril",), ["SBP", "Cr"]),
    (["HCTZ", "hydrochlorothiazide"], ("hydrochlorothiazide",), ["SBP"]),
    (["amlodipine", "Norvasc"], ("amlodipine", "norvasc"), ["SBP"]),
    (["insulin glargine", "Lantus"], ("glargine",), ["A1c"]),
]


def gen_drug(p: Rec) -> list[dict]:
    """Values after a drug was first prescribed, and prescription counts (PCP follow-up)."""
    rng = seeded(f"drug|{p.pid}")
    out: list[dict] = []
    meds = [m for m in p.meds if m[0] <= p.now]
    for words, keys, items in DRUG_ITEMS:
        rx = [m for m in meds if any(k in m[2].lower() for k in keys)]
        if not rx:
            continue
        if words[0] == "the statin" and any(s in m[2].lower() for m in meds for s in STATIN if s not in keys):
            continue  # two statins: "the statin" would be ambiguous
        t0 = rx[0][0]
        drug = rng.choice(words)
        for item in items:
            vals = p.obs.get(item, [])
            if not vals or any(abs(v[0] - t0) <= timedelta(days=1) for v in vals):
                continue
            after = [v for v in vals if v[0] > t0]
            if not after:
                continue
            reg, w = name_of(item, rng)
            if rng.random() < 0.5:
                a = no_tie_last(after, first=True)
                text = rng.choice(["first {w} after {d} was started?", "{w} right after starting {d}?",
                                   "what was {h} first {w} once {s} started {d}?"])
                tpl = "first"
            else:
                a = no_tie_last(after)
                text = rng.choice(["latest {w} since starting {d}?", "most recent {w} after {d} was begun?"])
                tpl = "last"
            if a:
                out.append(q(p, text.format(w=w, d=drug, h=p.her, s=p.she), "after_drug", "number", [a[1]], "answered",
                             0.01, [a[3]], f"after_drug/{tpl}-{item}/{reg}"))
        if rng.random() < 0.5:
            text = rng.choice(["how many {d} Rx on file?", "# of prescriptions for {d}?", "how many times was {d} prescribed?"])
            if drug != "the statin":
                out.append(q(p, text.format(d=drug), "count_other", "count", [len(rx)], "answered", 0,
                             [m[3] for m in rx], "count_other/rx-drug/any"))
    return out


# --- care coordinator / case manager ----------------------------------------------------------------------
def gen_cm(p: Rec) -> list[dict]:
    rng = seeded(f"cm|{p.pid}")
    out: list[dict] = []
    encs = [e for e in p.encs if e["start"] <= p.now]
    imp = [e for e in encs if e["cls"] == "IMP"]
    emer = [e for e in encs if e["cls"] == "EMER"]
    if imp:
        last = imp[-1]
        if len([e for e in imp if e["start"] == last["start"]]) == 1:
            if utc_local_agree(last["raw"]):
                text = rng.choice(["when was {s} last admitted?", "date of last hospital admission?",
                                   "last inpatient admit - what date?"]).format(s=p.she)
                out.append(q(p, text, "admissions", "date", [local_date(last["raw"]).isoformat()], "answered", 0,
                             [last["ref"]], "admissions/last-admit-date/any"))
            if last["raw_end"] and utc_local_agree(last["raw_end"]) and last["end"] <= p.now:
                text = rng.choice(["last discharge date?", "when was {s} discharged from the hospital most recently?",
                                   "date of {h} most recent discharge"]).format(s=p.she, h=p.her)
                out.append(q(p, text, "admissions", "date", [local_date(last["raw_end"]).isoformat()], "answered", 0,
                             [last["ref"]], "admissions/last-discharge-date/any"))
                # length of stay: calendar days between admit and discharge, kept when it equals completed days
                los_cal = (local_date(last["raw_end"]) - local_date(last["raw"])).days
                los_full = int((last["end"] - last["start"]).total_seconds() // 86400)
                if los_cal == los_full:
                    text = rng.choice(["when was {s} last admitted and for how long? (LOS in days)",
                                       "length of stay of {h} last admission, in days?", "how many days was {h} last hospitalization?"]
                                      ).format(s=p.she, h=p.her)
                    out.append(q(p, text, "admissions", "number", [los_cal], "answered", 0, [last["ref"]],
                                 "admissions/last-los-days/any"))
                # days since discharge (completed days = calendar difference)
                dd = (p.now.date() - last["end"].astimezone(UTC).date()).days
                full = int((p.now - last["end"]).total_seconds() // 86400)
                if dd == full and last["end"].astimezone(UTC).date() == local_date(last["raw_end"]):
                    text = rng.choice(["how many days since {h} last discharge?", "days since discharge?"]).format(h=p.her)
                    out.append(q(p, text, "time_since", "number", [dd], "answered", 0, [last["ref"]],
                                 "time_since/discharge-days/any"))
        # admissions in the past 12 months / ever
        sets = [[e for e in imp if s <= e["start"]] for s in robust_start(p.now, 1, "y")]
        if len({len(s) for s in sets}) == 1:
            text = rng.choice(["# admissions in the past 12 months", "how many hospitalizations in the last year?",
                               "number of inpatient admits past 12 mo?"])
            out.append(q(p, text, "count_encounters", "count", [len(sets[1])], "answered", 0, [e["ref"] for e in sets[1]],
                         "count_encounters/IMP-1y/any"))
        text = rng.choice(["total # of admissions on record?", "how many times has {s} been admitted, ever?"]).format(s=p.she)
        out.append(q(p, text, "count_encounters", "count", [len(imp)], "answered", 0, [e["ref"] for e in imp],
                     "count_encounters/IMP-all/any"))
    else:
        # never admitted: no discharge date, zero admissions, "ever hospitalized?" false
        r = rng.random()
        if r < 0.25:
            text = rng.choice(["last discharge date?", "when was {s} last admitted?"]).format(s=p.she)
            out.append(q(p, text, "admissions", "date", [], "no-data", 0, [], "admissions/never-admitted-date/any"))
        elif r < 0.5:
            text = rng.choice(["has {s} ever been hospitalized?", "any inpatient admissions on record?"]).format(s=p.she)
            out.append(q(p, text, "existence_negative", "boolean", [False], "answered", 0, [], "existence_negative/enc-IMP/any"))
        elif r < 0.65:
            text = rng.choice(["# admissions in the past 12 months", "how many hospitalizations ever?"])
            out.append(q(p, text, "count_encounters", "count", [0], "answered", 0, [], "count_encounters/IMP-zero/any"))
    if emer:
        last = emer[-1]
        if utc_local_agree(last["raw"]) and len([e for e in emer if e["start"] == last["start"]]) == 1:
            text = rng.choice(["last ED visit - when?", "when was {h} most recent ER visit?", "date of last emergency visit"]
                              ).format(h=p.her)
            out.append(q(p, text, "first_last_time", "date", [local_date(last["raw"]).isoformat()], "answered", 0,
                         [last["ref"]], "first_last_time/enc-EMER-last/any"))
        if rng.random() < 0.6:
            text = rng.choice(["has {s} ever been to the ED?", "any ER visits on file?"]).format(s=p.she)
            out.append(q(p, text, "existence_positive", "boolean", [True], "answered", 0, [emer[-1]["ref"]],
                         "existence_positive/enc-EMER/any"))
        # ED visits in the past 2 yrs
        key = rng.choice(["1y", "2y"])
        n, unit, phr = RW[key]
        sets = [[e for e in emer if s <= e["start"]] for s in robust_start(p.now, n, unit)]
        if len({len(s) for s in sets}) == 1 and (sets[1] or rng.random() < 0.4):
            text = rng.choice(["# ED visits in the {r}", "how many ER visits over the {r}?", "ED utilization - visits in the {r}?"]
                              ).format(r=rng.choice(phr))
            out.append(q(p, text, "count_encounters", "count", [len(sets[1])], "answered", 0, [e["ref"] for e in sets[1]],
                         f"count_encounters/EMER-{key}/any"))
    return out


# --- existence (positive and negative) ---------------------------------------------------------------------
VACCINES = {  # lay phrase -> substrings of a record name
    "a pneumonia shot": ("pneumococcal", "prevnar", "pcv", "ppsv"),
    "the shingles vaccine": ("zoster", "shingrix"),
    "a tetanus shot": ("td ", "tdap", "td (", "dtap", "boostrix"),
    "a COVID vaccine": ("covid", "sars-cov-2"),
    "hep B vaccine": ("hep b",),
}
PROCS = {
    "a colonoscopy": ("colonoscopy",),
    "spirometry": ("spirometry",),
    "an echo": ("echocardiogram", "echocardiography"),
    "an EKG": ("ecg", "electrocardiogram", "ekg"),
    "a chest x-ray": ("chest x-ray", "radiography of chest", "chest x ray"),
}
DX = {
    "HTN": ("hypertension",), "diabetes": ("diabetes",), "CKD": ("chronic kidney disease", "ckd"),
    "COPD": ("copd", "chronic obstructive"), "CHF": ("heart failure",), "asthma": ("asthma",),
    "hyperlipidemia": ("hyperlipidemia",), "depression": ("depress",), "osteoarthritis": ("osteoarthritis",),
}
NEAR = {"spirometry": ("respiratory function", "fev1", "pulmonary function"), "an echo": ("ejection fraction",),
        "diabetes": ("prediabetes", "diabetic", "a1c"), "CKD": ("kidney",), "CHF": ("cardiac", "heart"),
        "hyperlipidemia": ("lipid", "cholesterol"), "COPD": ("emphysema", "bronchitis"), "HTN": ("blood pressure",)}


def has_any(names: list[str], keys: tuple) -> bool:
    return any(k in n.lower() + " " for n in names for k in keys)


def gen_existence(p: Rec, everyone: dict[str, set]) -> list[dict]:
    rng = seeded(f"exist|{p.pid}")
    out: list[dict] = []
    imm_names = [i[2] for i in p.imms if i[0] <= p.now]
    proc_names = [x[2] for x in p.procs if x[0] <= p.now]
    cond_names = [c[2] for c in p.conds if c[0] is None or c[0] <= p.now]
    pools = [("imm", VACCINES, imm_names, p.imms), ("proc", PROCS, proc_names, p.procs), ("dx", DX, cond_names, p.conds)]
    rng.shuffle(pools)
    made_pos = made_neg = 0
    for kind, table, names, recs in pools:
        keys = list(table)
        rng.shuffle(keys)
        for k in keys:
            if has_any(names, table[k]) and made_pos < 1:
                refs = [r[3] for r in recs if r[2] and has_any([r[2]], table[k]) and (r[0] is None or r[0] <= p.now)]
                text = {"imm": ["has {s} had {k}?", "{k} on file?", "ever gotten {k}?"],
                        "proc": ["has {s} ever had {k}?", "{k} done at any point?", "any record of {k}?"],
                        "dx": ["{k} on {h} problem list (ever)?", "hx of {k}?", "has {s} ever been dx'd with {k}?"]}[kind]
                out.append(q(p, rng.choice(text).format(s=p.she, h=p.her, k=k), "existence_positive", "boolean", [True],
                             "answered", 0, refs[:5], f"existence_positive/{kind}/any"))
                made_pos += 1
            elif (not has_any(names, table[k]) and k in everyone[kind] and made_neg < 1
                  and not has_any(names + cond_names + proc_names + sorted(p.obs_names), NEAR.get(k, ("\0",)))):
                text = {"imm": ["has {s} had {k}?", "any {k} on file?"],
                        "proc": ["has {s} ever had {k}?", "{k} ever done?"],
                        "dx": ["hx of {k}?", "{k} on {h} problem list?"]}[kind]
                out.append(q(p, rng.choice(text).format(s=p.she, h=p.her, k=k), "existence_negative", "boolean", [False],
                             "answered", 0, [], f"existence_negative/{kind}/any"))
                made_neg += 1
    # value questions about a lab the patient never had (PSA, A1c, LDL...) or nobody has -> no-data
    never = [i for i in ("A1c", "LDL", "Hgb", "plt", "TG") if not p.obs.get(i) and i in everyone["item"]]
    if never and rng.random() < 0.6:
        item = rng.choice(never)
        reg, w = name_of(item, rng)
        text = rng.choice(["last {w}?", "{w} at {h} last visit?", "what was {h} most recent {w}"]).format(w=w, h=p.her)
        out.append(q(p, text, "existence_negative", "number", [], "no-data", 0.01, [], f"existence_negative/never-{item}/{reg}"))
    elif rng.random() < 0.5:
        lab = rng.choice(ABSENT_LABS)
        text = rng.choice(["last {l}?", "{l} value on file?", "{l} result from {h} last visit?"]).format(l=lab, h=p.her)
        out.append(q(p, text, "existence_negative", "number", [], "no-data", 0.01, [], "existence_negative/absent-lab/full"))
    return out


# ----------------------------------------------------------------------------------------------------------
CAPS = {"latest_value": 18, "value_in_window": 16, "min_max": 15, "threshold": 18, "count_encounters": 18,
        "admissions": 16, "first_last_time": 16, "time_since": 15, "change": 15, "after_drug": 15,
        "existence_positive": 15, "existence_negative": 16, "count_other": 15}


def balance_key(x: dict) -> str:
    """Draw evenly over true/false answers, no-data answers and the value patterns."""
    if x["answer_type"] == "boolean":
        return f"bool-{x['expected'][0]}"
    if x["expected_status"] == "no-data":
        return "no-data"
    return x["template"].rsplit("/", 1)[0]


def build(synth_dir: str | None = None) -> list[dict]:
    recs: list[Rec] = []
    for f in sorted(glob.glob(os.path.join(SYNTHEA, "*.json"))):
        r = load_bundle(f, "synthea")
        if r and r.now and not r.deceased:   # a dead patient is nobody's follow-up
            recs.append(r)
    with tempfile.TemporaryDirectory() as tmp:
        folder = synth_dir or os.path.join(tmp, "synth")
        if not synth_dir:
            make_synth(folder)
        for f in sorted(glob.glob(os.path.join(folder, "*.json"))):
            r = load_bundle(f, "synth")
            if r and r.now:
                recs.append(r)
    everyone: dict[str, set] = {"imm": set(), "proc": set(), "dx": set(), "item": set()}
    for r in recs:
        everyone["imm"].update(k for k, v in VACCINES.items() if has_any([i[2] for i in r.imms], v))
        everyone["proc"].update(k for k, v in PROCS.items() if has_any([x[2] for x in r.procs], v))
        everyone["dx"].update(k for k, v in DX.items() if has_any([c[2] for c in r.conds], v))
        everyone["item"].update(r.obs)
    cands: dict[str, list[dict]] = {}
    for r in recs:
        for gen in (gen_signout, gen_pcp, gen_cm, gen_drug):
            for item in gen(r):
                cands.setdefault(item["category"], []).append(item)
        for item in gen_existence(r, everyone):
            cands.setdefault(item["category"], []).append(item)
    rows: list[dict] = []
    for cat in CAPS:
        pool = cands.get(cat, [])
        rng = seeded(f"pick|{cat}")
        # synth patients first-class: keep their questions, then fill from Synthea, spread over templates
        synth_ids = {r.pid for r in recs if r.source == "synth"}
        s = [x for x in pool if x["patient_id"] in synth_ids]
        o = [x for x in pool if x["patient_id"] not in synth_ids]
        rng.shuffle(s)
        rng.shuffle(o)
        cap = CAPS[cat]
        take = []
        by_t: dict[str, list[dict]] = {}
        for x in s[: cap // 3] + o + s[cap // 3:]:
            by_t.setdefault(balance_key(x), []).append(x)
        order = sorted(by_t)
        while len(take) < cap and any(by_t.values()):
            for t in order:
                if by_t[t] and len(take) < cap:
                    take.append(by_t[t].pop(0))
        take.sort(key=lambda x: (x["template"], x["patient_id"], x["question"]))
        for i, x in enumerate(take, 1):
            rows.append({"id": f"{cat}-{i:03d}", **x})
    return rows


def dump(rows: list[dict]) -> bytes:
    """JSON Lines with the keys in the README's order."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed file is stale")
    ap.add_argument("--synth-dir", help="use these bundles instead of running fhirqa synth (same seed expected)")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    data = dump(build(args.synth_dir))
    if args.check:
        old = open(args.out, "rb").read() if os.path.exists(args.out) else b""
        if old != data:
            print(f"{args.out} is stale", file=sys.stderr)
            return 1
        print("up to date")
        return 0
    with open(args.out, "wb") as fh:
        fh.write(data)
    print(f"wrote {len(data.splitlines())} questions to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
