"""Build the probe_omop_ward question set: hospital clinicians asking about one patient over OMOP CDM databases.

Voice: a hospitalist, ICU resident, ward pharmacist or nurse on rounds ("is he on vanc?", "route of the
dilaudid?", "LOS of the last admission?", "# ED visits?", "dx codes of the last stay?", "was she in the unit?",
"art line this admission?", "last K?"), and an internist reading a Synthea chart over OMOP 5.4 (labs and vitals
from MEASUREMENT, conditions with onset, meds, demographics), plus honest "not in the record" questions.

Reads the raw CSVs of ``../shared/data/omop/mimic-iv-demo-omop-5.3/`` and the zip
``../shared/data/omop/synthea27nj/Synthea27Nj_5.4.zip`` with the csv and zipfile modules and imports nothing
from fhirqa. Every random choice comes from ``seeded(<string>)``, so the same data gives the same bytes.

Usage:
    python evals/probe_omop_ward/build.py [--data DIR] [--check]
    python evals/probe_omop_ward/build.py --run [--cache DIR] [--failures FILE]   # score fhirqa (offline, SQL path)
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import re
import subprocess
import sys
import zipfile
from collections import defaultdict
from datetime import date, datetime, timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "questions.jsonl")
MIMIC = "mimic-iv-demo"
SYN = "synthea27nj"

# ---------------------------------------------------------------------------------------------------------------
# Reading the CSVs


def _rows(fh) -> list[dict]:
    return list(csv.DictReader(io.TextIOWrapper(fh, encoding="utf-8", newline="")))


def read_folder(folder: str, names: list[str]) -> dict[str, list[dict]]:
    """The named tables of a CSV folder (file names in any case)."""
    files = {f.lower(): f for f in os.listdir(folder)}
    out = {}
    for n in names:
        with open(os.path.join(folder, files[f"{n}.csv"]), "rb") as fh:
            out[n] = _rows(fh)
    return out


def read_zip(path: str, names: list[str]) -> dict[str, list[dict]]:
    """The named tables of a zip of CSVs (``__MACOSX`` leftovers skipped)."""
    out = {}
    with zipfile.ZipFile(path) as z:
        files = {os.path.basename(i).lower(): i for i in z.namelist() if not i.startswith("__MACOSX")}
        for n in names:
            with z.open(files[f"{n}.csv"]) as fh:
                out[n] = _rows(fh)
    return out


def dt(text: str) -> datetime | None:
    """A CSV date or datetime (no offset: read as UTC, as written)."""
    text = (text or "").strip()
    if not text:
        return None
    if len(text) == 10:
        return datetime.strptime(text, "%Y-%m-%d")
    return datetime.strptime(text[:19], "%Y-%m-%d %H:%M:%S")


def iso_now(d: datetime) -> str:
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def seeded(seed: str) -> random.Random:
    """An RNG seeded by a string: the same data gives the same draws."""
    return random.Random(seed)  # noqa: S311 - seeded for reproducible draws, not for security


def num(v: float) -> float:
    return round(float(v), 2)


# ---------------------------------------------------------------------------------------------------------------
# Question lines


class Sink:
    """Collects question lines; ids are numbered per category in the order written."""

    def __init__(self) -> None:
        self.lines: list[dict] = []
        self.seen: set[tuple] = set()
        self.sex: dict[tuple[str, str], str] = {}

    def pronouns(self, db: str, pid: str, question: str) -> str:
        """he/his/him or she/her as the patient's recorded sex says (wordings are drawn without it)."""
        if self.sex.get((db, str(pid))) == "female":
            return re.sub(r"\b(he|his|him)\b", lambda m: {"he": "she", "his": "her", "him": "her"}[m.group(1)],
                          question)
        if self.sex.get((db, str(pid))) == "male":
            return re.sub(r"\b(she|her)\b", lambda m: {"she": "he", "her": "his"}[m.group(1)], question)
        return question

    def add(self, db, pid, question, now, category, answer_type, expected, template, refs=(), status="answered",
            tolerance=0.0):
        question = self.pronouns(db, pid, question)
        key = (db, str(pid), question.lower(), now[:10])
        if key in self.seen:
            return False
        self.seen.add(key)
        if answer_type == "number" and not tolerance:
            tolerance = 0.01
        self.lines.append({
            "id": None, "database": db, "patient_id": str(pid), "question": question, "now": now,
            "category": category, "answer_type": answer_type,
            "expected": [] if status == "no-data" else list(expected), "expected_status": status,
            "tolerance": tolerance, "gold_refs": sorted(set(refs)), "template": template,
        })
        return True

    def finish(self, targets: dict[tuple[str, str], int]) -> list[dict]:
        """Draw each (database, category) down to its target: round-robin over the template patterns, and inside a
        pattern over its items (drug, code, visit kind), so that every pattern and item is asked."""
        kept = []
        for (db, cat), target in sorted(targets.items()):
            rng = seeded(f"draw/{db}/{cat}")
            groups: dict[str, list[dict]] = defaultdict(list)
            for line in self.lines:
                if line["database"] == db and line["category"] == cat:
                    groups[line["template"].split("/")[1]].append(line)
            queues = []
            for pattern in sorted(groups):
                lines = groups[pattern]
                rng.shuffle(lines)
                seen: dict[str, int] = defaultdict(int)
                ranked = []
                for line in lines:
                    sub = line["template"].split("/", 2)[-1]
                    ranked.append((seen[sub], len(ranked), line))
                    seen[sub] += 1
                queues.append([x[2] for x in sorted(ranked, key=lambda x: (x[0], x[1]))])
            chosen: list[dict] = []
            while len(chosen) < target and any(queues):
                for q in queues:
                    if q and len(chosen) < target:
                        chosen.append(q.pop(0))
            kept.extend(chosen)
        counts: dict[str, int] = defaultdict(int)
        order = sorted(range(len(kept)), key=lambda i: (kept[i]["category"], kept[i]["database"], i))
        out = []
        for i in order:
            line = kept[i]
            counts[line["category"]] += 1
            line["id"] = f"{line['category']}-{counts[line['category']]:03d}"
            out.append(line)
        return out


# ---------------------------------------------------------------------------------------------------------------
# MIMIC-IV demo (OMOP 5.3)

# A hospital stay is a visit_occurrence that carries a MIMIC hadm_id (visit_source_value "subject|hadm", not
# "subject|date"). The ETL codes them 9201 (inpatient), 262 (ER and inpatient), 8870 (ER, multi-day), 581385
# (observation) and 8883 (same-day surgery admission). "Strict" stays are 9201/262: what an OMOP reader calls
# inpatient without knowing the ETL.
STRICT = {"9201", "262"}
ICU_WORDS = ("Intensive Care", "ICU", "CCU")

# Drugs the record names (local concept name of drug_source_concept_id, else a drug_source_value that is not an
# NDC). key: (substring of the recorded name, spoken forms). NDC-only orders carry no name in this database.
MIMIC_DRUGS = {
    "vancomycin": ("vancomycin", ["vanc", "vanco", "vancomycin", "vancomicin"]),
    "cefepime": ("cefepime", ["cefepime", "maxipime", "cefepine"]),
    "ceftriaxone": ("ceftriaxone", ["ceftriaxone", "rocephin", "ceftriaxon"]),
    "pantoprazole": ("pantoprazole", ["pantoprazole", "protonix", "IV protonix", "pantoprazol"]),
    "fentanyl": ("fentanyl", ["fentanyl", "fent gtt", "fentanyl drip", "fentanil"]),
    "hydromorphone": ("hydromorphone", ["dilaudid", "hydromorphone", "dilaudid PCA", "hydromorphon"]),
    "insulin": ("insulin", ["insulin", "SSI", "sliding scale insulin", "insulin sliding scale"]),
    "acetaminophen": ("acetaminophen", ["IV tylenol", "IV acetaminophen", "ofirmev", "IV acetaminophn"]),
    "magnesium": ("magnesium sulfate", ["mag sulfate", "IV mag", "magnesium sulfate", "Mg sulphate"]),
    "calcium": ("calcium gluconate", ["calcium gluconate", "Ca gluconate", "Ca gluc", "calcium gluconat"]),
    "nitroglycerin": ("nitroglycerin", ["nitro gtt", "NTG drip", "nitroglycerin", "nitroglycerine"]),
    "phenylephrine": ("phenylephrine", ["phenylephrine", "neo-synephrine", "phenylephrine gtt", "phenylefrine"]),
    "filgrastim": ("filgrastim", ["filgrastim", "neupogen", "G-CSF"]),
}
ANTIBIOTICS = ("vancomycin", "cefepime", "ceftriaxone", "ceftazidime", "meropenem", "piperacillin", "cefazolin")

# ICD-9-CM (no dot) / ICD-10-CM code families for "hx of X?" (prefixes of condition_source_value).
ICD_FAMILIES = {
    "htn": (["401", "402", "403", "404", "405", "I10", "I11", "I12", "I13", "I15", "I16"],
            ["HTN", "hypertension", "high blood pressure", "hypertention"]),
    "af": (["42731", "I48"], ["afib", "AF", "atrial fibrillation", "a fib", "atrial fibrilation"]),
    "chf": (["428", "I50"], ["CHF", "heart failure", "congestive heart failure", "HF"]),
    "dm": (["250", "E10", "E11", "E13"], ["DM", "diabetes", "diabetes mellitus", "diabetis"]),
    "ckd": (["585", "N18"], ["CKD", "chronic kidney disease", "chronic renal insufficiency"]),
    "aki": (["584", "N17"], ["AKI", "acute kidney injury", "acute renal failure", "ARF"]),
    "sepsis": (["038", "99591", "99592", "78552", "A40", "A41", "R652"], ["sepsis", "septic", "sepsis dx", "sepsys"]),
    "hld": (["2720", "2721", "2722", "2724", "E78"], ["HLD", "hyperlipidemia", "high cholesterol", "hyperlipidaemia"]),
    "copd": (["491", "492", "496", "J43", "J44"], ["COPD", "emphysema or COPD", "chronic obstructive pulmonary disease"]),
    "pna": (["480", "481", "482", "483", "484", "485", "486", "J12", "J13", "J14", "J15", "J16", "J17", "J18"],
            ["PNA", "pneumonia", "pneumonia (any)", "pnuemonia"]),
    "cad": (["414", "I25"], ["CAD", "coronary artery disease", "coronary disease"]),
    "gerd": (["53081", "K21"], ["GERD", "reflux", "acid reflux (GERD)"]),
    "hypothyroid": (["243", "244", "E03"], ["hypothyroidism", "hypothyroid", "low thyroid"]),
    "depression": (["311", "2962", "2963", "F32", "F33"], ["depression", "MDD", "depresion"]),
    "etoh": (["303", "3050", "F10"], ["EtOH use disorder", "alcohol abuse", "alcoholism"]),
}


def mimic_load(folder: str) -> dict:
    t = read_folder(folder, ["person", "death", "visit_occurrence", "visit_detail", "care_site", "drug_exposure",
                             "condition_occurrence", "procedure_occurrence", "concept"])
    cname = {r["concept_id"]: r["concept_name"] for r in t["concept"]}
    site = {r["care_site_id"]: r["care_site_name"] for r in t["care_site"]}
    P: dict = {}
    for r in t["person"]:
        P[r["person_id"]] = {"sex": {"M": "male", "F": "female"}[r["gender_source_value"]], "yob": int(r["year_of_birth"]),
                             "visits": [], "drugs": [], "conds": [], "procs": [], "icu": [], "ed": set(), "death": None}
    for r in t["death"]:
        P[r["person_id"]]["death"] = (dt(r["death_date"]).date(), r["person_id"])
    vis = {}
    for r in t["visit_occurrence"]:
        src = r["visit_source_value"].split("|")
        hadm = len(src) == 2 and not re.match(r"\d{4}-\d\d-\d\d$", src[1])
        v = {"id": r["visit_occurrence_id"], "concept": r["visit_concept_id"], "start": dt(r["visit_start_datetime"]),
             "end": dt(r["visit_end_datetime"]), "sd": dt(r["visit_start_date"]).date(),
             "ed_": dt(r["visit_end_date"]).date(), "hadm": hadm, "person": r["person_id"]}
        vis[v["id"]] = v
        P[r["person_id"]]["visits"].append(v)
    for r in t["visit_detail"]:
        name = site.get(r["care_site_id"], "") or ""
        d = {"id": r["visit_detail_id"], "site": name, "start": dt(r["visit_detail_start_datetime"]),
             "end": dt(r["visit_detail_end_datetime"]), "visit": r["visit_occurrence_id"]}
        if any(w in name for w in ICU_WORDS):
            P[r["person_id"]]["icu"].append(d)
        if name == "Emergency Department" or r["visit_detail_concept_id"] == "8870":
            P[r["person_id"]]["ed"].add(r["visit_occurrence_id"])
    for r in t["drug_exposure"]:
        name = cname.get(r["drug_source_concept_id"])
        if name is None and not re.fullmatch(r"\d+", r["drug_source_value"].strip()):
            name = r["drug_source_value"].strip()
        P[r["person_id"]]["drugs"].append({
            "id": r["drug_exposure_id"], "name": name, "start": dt(r["drug_exposure_start_datetime"]),
            "end": dt(r["drug_exposure_end_datetime"]), "route": r["route_source_value"].strip(),
            "visit": r["visit_occurrence_id"]})
    for r in t["condition_occurrence"]:
        P[r["person_id"]]["conds"].append({
            "id": r["condition_occurrence_id"], "code": r["condition_source_value"].strip(),
            "name": cname.get(r["condition_source_concept_id"]), "type": r["condition_type_concept_id"],
            "start": dt(r["condition_start_datetime"]) or dt(r["condition_start_date"]), "visit": r["visit_occurrence_id"]})
    for r in t["procedure_occurrence"]:
        P[r["person_id"]]["procs"].append({
            "id": r["procedure_occurrence_id"], "name": cname.get(r["procedure_source_concept_id"]) or "",
            "start": dt(r["procedure_datetime"]) or dt(r["procedure_date"]), "visit": r["visit_occurrence_id"]})
    for p in P.values():
        p["visits"].sort(key=lambda v: (v["start"], v["id"]))
        p["stays"] = [v for v in p["visits"] if v["hadm"]]
    return P


def noon(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, 12)


def later_now(p: dict, rng: random.Random) -> datetime:
    """A moment 5-20 days after everything in the record (after death for the deceased)."""
    last = max([v["end"] for v in p["visits"]] + [d["end"] or d["start"] for d in p["drugs"]]
               + [c["start"] for c in p["conds"]] + [x["start"] for x in p["procs"]])
    if p["death"]:
        last = max(last, datetime.combine(p["death"][0], datetime.min.time()))
    return noon(last.date() + timedelta(days=rng.randint(5, 20)))


def stay_at(p: dict, now: datetime) -> list[dict]:
    return [v for v in p["stays"] if v["start"] <= now <= v["end"]]


def mid_stay_moments(p: dict, rng: random.Random) -> list[tuple[dict, datetime]]:
    """Noon of an inner day of a stay of 3+ days that no other stay or visit overlaps."""
    out = []
    for v in p["stays"]:
        days = (v["ed_"] - v["sd"]).days
        if days < 3:
            continue
        now = noon(v["sd"] + timedelta(days=rng.randint(1, days - 1)))
        if len(stay_at(p, now)) != 1 or any(o["start"] <= now <= o["end"] for o in p["visits"] if o is not v):
            continue
        out.append((v, now))
    return out


def named(drugs, key):
    sub = MIMIC_DRUGS[key][0]
    return [d for d in drugs if d["name"] and sub in d["name"].lower()]


def pick(rng, seq):
    return seq[rng.randrange(len(seq))]


def build_mimic(P: dict, S: Sink) -> None:
    db = MIMIC
    people = sorted(P)
    S.sex.update({(db, pid): P[pid]["sex"] for pid in people})

    # ---- stays: admission / discharge dates, LOS, counts --------------------------------------------------
    for pid in people:
        p = P[pid]
        rng = seeded(f"{pid}/stay")
        if not p["stays"]:
            continue
        now = later_now(p, rng)
        last = p["stays"][-1]
        strict_last = [v for v in p["stays"] if v["concept"] in STRICT]
        agree = last["concept"] in STRICT
        tag = "strict" if agree else f"coded-{last['concept']}"
        ref = [f"visit_occurrence/{last['id']}"]
        kind = rng.randrange(3)
        if kind == 0:
            q = pick(rng, ["when was he last admitted?", "date of last adm?", "last admit date?",
                           "when was the pt last admitted to the hospital?", "most recent admission - what date?"])
            S.add(db, pid, q, iso_now(now), "stay", "date", [last["sd"].isoformat()], f"stay/last-admit/{tag}", ref)
        elif kind == 1:
            q = pick(rng, ["when was she discharged last time?", "last d/c date?", "date of discharge from the last stay?",
                           "when did he go home from the hospital last?", "last discharge?"])
            S.add(db, pid, q, iso_now(now), "stay", "date", [last["ed_"].isoformat()], f"stay/last-dc/{tag}", ref)
        else:
            q = pick(rng, ["LOS of the last admission?", "how long was the last hospital stay (days)?",
                           "length of stay last admit?", "how many days was she in for last time?",
                           "LOS last hospitalization?"])
            S.add(db, pid, q, iso_now(now), "stay", "count", [(last["ed_"] - last["sd"]).days],
                  f"stay/los/{tag}", ref)
        # number of admissions: asked when the strict count (9201/262) and the hadm count agree
        if len(strict_last) == len(p["stays"]) or rng.random() < 0.25:
            tag2 = "strict" if len(strict_last) == len(p["stays"]) else "coded-mixed"
            q = pick(rng, ["how many admissions has he had?", "# of hospitalizations?", "how many times admitted?",
                           "total inpatient admissions?", "how many hospital stays on record?"])
            S.add(db, pid, q, iso_now(now), "stay", "count", [len(p["stays"])], f"stay/n-admissions/{tag2}",
                  [f"visit_occurrence/{v['id']}" for v in p["stays"]])
        # ED visits: the OMOP reading (8870 + 262 visits) and the MIMIC reading (stays with an ED transfer) agree
        omop_ed = [v for v in p["visits"] if v["concept"] in ("8870", "262")]
        mimic_ed = [v for v in p["visits"] if v["id"] in p["ed"]]
        if len(omop_ed) == len(mimic_ed) and {v["id"] for v in omop_ed} == {v["id"] for v in mimic_ed}:
            q = pick(rng, ["how many ED visits?", "# ER visits total?", "how many times has she been to the ED?",
                           "number of emergency room visits?", "ED visits - how many?"])
            S.add(db, pid, q, iso_now(now), "stay", "count", [len(omop_ed)], "stay/n-ed",
                  [f"visit_occurrence/{v['id']}" for v in omop_ed])

    # ---- current stay (mid-stay now): admitted when, hospital day, ICU now ---------------------------------
    for pid in people:
        p = P[pid]
        rng = seeded(f"{pid}/current")
        moments = mid_stay_moments(p, rng)
        if not moments:
            continue
        v, now = pick(rng, moments)
        tag = v["concept"]
        q = pick(rng, ["when was he admitted?", "adm date this admission?", "when did she come in?",
                       "date of admission for this stay?", "admitted when?"])
        S.add(db, pid, q, iso_now(now), "stay", "date", [v["sd"].isoformat()], f"stay/current-admit/{tag}",
              [f"visit_occurrence/{v['id']}"])
        icu_now = [d for d in p["icu"] if d["start"] <= now <= d["end"]]
        near = [d for d in p["icu"] if abs((d["start"] - now).total_seconds()) < 6 * 3600
                or abs((d["end"] - now).total_seconds()) < 6 * 3600]
        if not near:
            q = pick(rng, ["is he in the ICU right now?", "is she currently in the unit?", "pt in ICU now?"])
            S.add(db, pid, q, iso_now(now), "icu", "boolean", [bool(icu_now)], f"icu/now/{tag}",
                  [f"visit_detail/{d['id']}" for d in icu_now])

    # ---- ICU over the last stay / whole record ---------------------------------------------------------
    for pid in people:
        p = P[pid]
        rng = seeded(f"{pid}/icu")
        if not p["stays"]:
            continue
        now = later_now(p, rng)
        last = p["stays"][-1]
        icu_last = sorted([d for d in p["icu"] if d["visit"] == last["id"]], key=lambda d: d["start"])
        q = pick(rng, ["was he in the ICU during the last admission?", "any ICU stay last admit?",
                       "did she go to the unit during her last hospitalization?", "ICU during the last stay?"])
        S.add(db, pid, q, iso_now(now), "icu", "boolean", [bool(icu_last)], f"icu/last-stay/{last['concept']}",
              [f"visit_detail/{d['id']}" for d in icu_last] or [f"visit_occurrence/{last['id']}"])
        if icu_last and rng.random() < 0.6:
            first = icu_last[0]
            if rng.random() < 0.5:
                q = pick(rng, ["when did he go to the ICU last admission?", "date of ICU transfer (last stay)?",
                               "when was she moved to the unit during the last admit?"])
                S.add(db, pid, q, iso_now(now), "icu", "date", [first["start"].date().isoformat()],
                      f"icu/transfer-date/{last['concept']}", [f"visit_detail/{first['id']}"])
            elif len({d["site"] for d in icu_last}) == 1:
                q = pick(rng, ["which ICU was he in last admission?", "what unit was she in (ICU) last stay?",
                               "which intensive care unit during the last admit?"])
                S.add(db, pid, q, iso_now(now), "icu", "string", [first["site"]], f"icu/which/{last['concept']}",
                      [f"visit_detail/{first['id']}"])
        # number of ICU stays over the record: separate ICU rows (a gap of more than an hour between them)
        rows = sorted(p["icu"], key=lambda d: d["start"])
        merged = sum(1 for i, d in enumerate(rows) if i == 0 or (d["start"] - rows[i - 1]["end"]).total_seconds() > 3600)
        if rows and merged == len(rows) and rng.random() < 0.5:
            q = pick(rng, ["how many ICU stays has he had?", "# of ICU admissions on record?", "how many times in the ICU?"])
            S.add(db, pid, q, iso_now(now), "icu", "count", [len(rows)], "icu/n-stays",
                  [f"visit_detail/{d['id']}" for d in rows])

    # ---- meds (mid-stay now) -----------------------------------------------------------------------------
    for pid in people:
        p = P[pid]
        rng = seeded(f"{pid}/meds")
        for v, now in mid_stay_moments(p, rng):
            before = [d for d in p["drugs"] if d["start"] <= now and d["name"]]
            in_stay = [d for d in before if v["start"] <= d["start"]]
            tag = v["concept"]
            keys = sorted(MIMIC_DRUGS)
            rng.shuffle(keys)
            asked = 0
            for key in keys:
                if asked >= 3:
                    break
                spoken = pick(rng, MIMIC_DRUGS[key][1])
                mine = named(before, key)
                stay_rows = named(in_stay, key)
                active = [d for d in mine if d["start"] <= now <= (d["end"] or now)]
                close = [d for d in mine if abs((d["start"] - now).total_seconds()) < 6 * 3600
                         or (d["end"] and abs((d["end"] - now).total_seconds()) < 6 * 3600)]
                if close:
                    continue
                if active and rng.random() < 0.7:
                    q = pick(rng, [f"is he on {spoken}?", f"is she still on {spoken}?", f"on {spoken} right now?",
                                   f"currently getting {spoken}?", f"pt on {spoken}?"])
                    S.add(db, pid, q, iso_now(now), "meds", "boolean", [True], f"meds/on-now/{key}",
                          [f"drug_exposure/{d['id']}" for d in active])
                    asked += 1
                elif not active and stay_rows and rng.random() < 0.6:
                    q = pick(rng, [f"is he still on {spoken}?", f"is she on {spoken} now?", f"still getting {spoken}?"])
                    S.add(db, pid, q, iso_now(now), "meds", "boolean", [False], f"meds/off-now/{key}")
                    asked += 1
                if stay_rows:
                    first = min(stay_rows, key=lambda d: d["start"])
                    r = rng.random()
                    if r < 0.35:
                        # without a stay word, "started" is the first order ever: asked so only when that is this stay's
                        forms = [f"{spoken} start date this admission?", f"when did she start {spoken} this admit?"]
                        if min(mine, key=lambda d: d["start"]) is first:
                            forms += [f"when was {spoken} started?", f"day {spoken} was started?"]
                        q = pick(rng, forms)
                        S.add(db, pid, q, iso_now(now), "meds", "date", [first["start"].date().isoformat()],
                              f"meds/start/{key}", [f"drug_exposure/{first['id']}"])
                        asked += 1
                    elif r < 0.6 and len({d["route"] for d in mine}) == 1:
                        lastd = max(mine, key=lambda d: d["start"])
                        q = pick(rng, [f"route of the {spoken}?", f"what route is the {spoken}?",
                                       f"how is the {spoken} given (route)?", f"{spoken} route?"])
                        S.add(db, pid, q, iso_now(now), "meds", "string", [lastd["route"]], f"meds/route/{key}",
                              [f"drug_exposure/{lastd['id']}"])
                        asked += 1
                    elif r < 0.8:
                        q = pick(rng, [f"how many {spoken} orders this admission?",
                                       f"# of {spoken} orders since admission?",
                                       f"how many times was {spoken} ordered this stay?"])
                        S.add(db, pid, q, iso_now(now), "meds", "count", [len(stay_rows)], f"meds/n-orders/{key}",
                              [f"drug_exposure/{d['id']}" for d in stay_rows])
                        asked += 1
            # antibiotics this admission (named orders)
            abx = sorted({d["name"] for d in in_stay if any(a in d["name"].lower() for a in ANTIBIOTICS)})
            if abx:
                q = pick(rng, ["what antibiotics has she had this admission?", "abx this admission?",
                               "which abx has he received since admission?", "list antibiotics this stay"])
                S.add(db, pid, q, iso_now(now), "meds", "list", abx, f"meds/abx-list/{tag}",
                      [f"drug_exposure/{d['id']}" for d in in_stay if d["name"] in abx])
            elif in_stay and rng.random() < 0.3:
                q = pick(rng, ["any antibiotics this admission?", "is he on any abx this stay?",
                               "has she gotten abx since admission?"])
                S.add(db, pid, q, iso_now(now), "meds", "boolean", [False], f"meds/abx-any/{tag}")

    # ---- diagnoses ---------------------------------------------------------------------------------------
    for pid in people:
        p = P[pid]
        rng = seeded(f"{pid}/dx")
        if not p["stays"]:
            continue
        now = later_now(p, rng)
        last = p["stays"][-1]
        codes = sorted({c["code"] for c in p["conds"] if c["visit"] == last["id"] and c["type"] == "32821"})
        if 0 < len(codes) <= 12 and rng.random() < 0.6:
            q = pick(rng, ["dx codes of the last stay?", "diagnoses of the last admission?", "what were the dx last admit?",
                           "list the diagnoses from his last hospitalization", "discharge diagnoses (last stay)?"])
            S.add(db, pid, q, iso_now(now), "dx", "list", codes, f"dx/last-stay-codes/{last['concept']}",
                  [f"condition_occurrence/{c['id']}" for c in p["conds"] if c["visit"] == last["id"] and c["type"] == "32821"])
        allcodes = [c for c in p["conds"] if c["type"] == "32821"]
        fams = sorted(ICD_FAMILIES)
        rng.shuffle(fams)
        n_true = n_false = 0
        for fam in fams:
            prefixes, words = ICD_FAMILIES[fam]
            hits = [c for c in allcodes if c["code"].replace(".", "").startswith(tuple(prefixes))]
            if fam == "af":
                hits += [c for c in p["conds"] if c["name"] and c["name"].startswith(("AF ", "A Flut"))]
            spoken = pick(rng, words)
            if hits and n_true < 2:
                q = pick(rng, [f"hx of {spoken}?", f"any {spoken} on record?", f"has he ever had {spoken}?",
                               f"h/o {spoken}?", f"{spoken} in the history?"])
                S.add(db, pid, q, iso_now(now), "dx", "boolean", [True], f"dx/hx-true/{fam}",
                      [f"condition_occurrence/{c['id']}" for c in hits][:20])
                n_true += 1
            elif not hits and n_false < 1 and rng.random() < 0.5:
                q = pick(rng, [f"hx of {spoken}?", f"any history of {spoken}?", f"ever dx'd with {spoken}?"])
                S.add(db, pid, q, iso_now(now), "dx", "boolean", [False], f"dx/hx-false/{fam}")
                n_false += 1
        # rhythm charted as a condition during a stay (mid-stay now)
        for v, mnoon in mid_stay_moments(p, seeded(f"{pid}/rhythm")):
            # rhythms are charted on the hour: ask at 12:30 so that no row sits at now (an "at or before now" edge)
            mnow = mnoon + timedelta(minutes=30)
            if any(c["name"] and c["type"] == "32817" and abs((c["start"] - mnow).total_seconds()) < 20 * 60
                   for c in p["conds"]):
                continue
            rh = sorted([c for c in p["conds"] if c["name"] and c["type"] == "32817" and v["start"] <= c["start"] <= mnow],
                        key=lambda c: c["start"])
            if not rh or rng.random() < 0.5:
                continue
            last_rh = rh[-1]
            if len(rh) > 1 and rh[-2]["start"] == last_rh["start"] and rh[-2]["name"] != last_rh["name"]:
                continue
            if rng.random() < 0.5:
                q = pick(rng, ["what rhythm is he in (last charted)?", "last charted rhythm?", "most recent rhythm?"])
                S.add(db, pid, q, iso_now(mnow), "dx", "string", [last_rh["name"]], f"dx/last-rhythm/{v['concept']}",
                      [f"condition_occurrence/{last_rh['id']}"])
            else:
                # AF this stay: a charted AF rhythm, or the stay's own coded AF diagnosis (ICD rows start at admission)
                af = [c for c in rh if c["name"].startswith("AF ")] + [
                    c for c in p["conds"] if c["visit"] == v["id"] and c["type"] == "32821" and c["start"] <= mnow
                    and c["code"].startswith(tuple(ICD_FAMILIES["af"][0]))]
                q = pick(rng, ["any afib this admission?", "has she been in AF this stay?", "AF charted since admission?"])
                S.add(db, pid, q, iso_now(mnow), "dx", "boolean", [bool(af)], f"dx/af-this-stay/{v['concept']}",
                      [f"condition_occurrence/{c['id']}" for c in af][:20])
            break

    # ---- procedures / lines --------------------------------------------------------------------------------
    lines = {
        "art": (("Arterial line", "Arterial Line"), ["art line", "arterial line", "A-line", "arterial line (a-line)"]),
        "picc": (("PICC",), ["PICC", "PICC line", "picc"]),
        "cvc": (("Multi Lumen",), ["central line", "CVC", "triple lumen", "multi-lumen catheter"]),
        "hd": (("Dialysis Catheter",), ["dialysis catheter", "HD line", "trialysis catheter"]),
    }
    for pid in people:
        p = P[pid]
        rng = seeded(f"{pid}/lines")
        if not p["stays"]:
            continue
        now = later_now(p, rng)
        last = p["stays"][-1]
        keys = sorted(lines)
        rng.shuffle(keys)
        for key in keys[:1]:
            prefixes, words = lines[key]
            spoken = pick(rng, words)
            rows = sorted([x for x in p["procs"] if x["visit"] == last["id"] and x["name"].startswith(prefixes)],
                          key=lambda x: x["start"])
            if rows and rng.random() < 0.5:
                ins = [x for x in rows if "Insertion" in x["name"]]
                if ins:
                    q = pick(rng, [f"when was the {spoken} placed (last admission)?",
                                   f"{spoken} insertion date last stay?", f"date the {spoken} went in last admit?"])
                    S.add(db, pid, q, iso_now(now), "procedures", "date", [ins[0]["start"].date().isoformat()],
                          f"procedures/line-date/{key}", [f"procedure_occurrence/{ins[0]['id']}"])
                    continue
            q = pick(rng, [f"did he have an {spoken} last admission?" if spoken[0].lower() in "aeio"
                           else f"did he have a {spoken} last admission?", f"any {spoken} during the last stay?",
                           f"{spoken} last admit?"])
            S.add(db, pid, q, iso_now(now), "procedures", "boolean", [bool(rows)], f"procedures/line-any/{key}",
                  [f"procedure_occurrence/{x['id']}" for x in rows][:20])

    # ---- demographics --------------------------------------------------------------------------------------
    for pid in people:
        p = P[pid]
        rng = seeded(f"{pid}/demo")
        if rng.random() < 0.45:
            continue
        now = later_now(p, rng)
        r = rng.random()
        if p["death"] and r < 0.6:
            if rng.random() < 0.5:
                q = pick(rng, ["did he die?", "is the pt deceased?", "expired?", "is she alive?"])
                alive = "alive" in q
                S.add(db, pid, q, iso_now(now), "demographics", "boolean", [not alive], "demographics/deceased-true",
                      [f"death/{pid}"])
            else:
                q = pick(rng, ["date of death?", "when did he die?", "when did she pass away?", "DOD?"])
                S.add(db, pid, q, iso_now(now), "demographics", "date", [p["death"][0].isoformat()],
                      "demographics/dod", [f"death/{pid}"])
        elif r < 0.45:
            q = pick(rng, ["sex?", "is the pt male or female?", "gender?", "pt's sex?"])
            S.add(db, pid, q, iso_now(now), "demographics", "string", [p["sex"]], "demographics/sex", [f"person/{pid}"])
        elif r < 0.75 and not p["death"]:
            if rng.random() < 0.5:
                q = pick(rng, ["is he alive?", "did she die?", "deceased?"])
                S.add(db, pid, q, iso_now(now), "demographics", "boolean", ["alive" in q], "demographics/deceased-false",
                      [f"person/{pid}"])
            else:
                q = pick(rng, ["date of death?", "when did he die?", "DOD?"])
                S.add(db, pid, q, iso_now(now), "demographics", "date", [], "demographics/dod-alive",
                      status="no-data")
        else:
            # year of birth only: the gold accepts the age either side of the birthday (now.year - yob - 1 or - 0)
            age = now.year - p["yob"]
            q = pick(rng, ["age?", "how old is he?", "pt's age?", "how old is she?"])
            S.add(db, pid, q, iso_now(now), "demographics", "number", [age - 0.5], "demographics/age-year-only",
                  [f"person/{pid}"], tolerance=round(0.5 / (age - 0.5) + 1e-6, 6))

    # ---- no data: no MEASUREMENT in this extract -------------------------------------------------------------
    nodata = ["last K?", "most recent Cr?", "Hgb this admission?", "last weight?", "latest WBC?", "last lactate?",
              "what was his last BP?", "last temp?", "plt count today?", "most recent INR?", "last Na?", "trop?",
              "latest glucose?", "last HR?", "vanc trough?"]
    for pid in people:
        p = P[pid]
        rng = seeded(f"{pid}/nodata")
        if rng.random() < 0.8:
            continue
        moments = mid_stay_moments(p, rng)
        now = moments[0][1] if moments else later_now(p, rng)
        q = pick(rng, nodata)
        S.add(db, pid, q, iso_now(now), "nodata", "number", [], "nodata/no-measurement-table", status="no-data")


# ---------------------------------------------------------------------------------------------------------------
# Synthea27Nj (OMOP 5.4)

LABS = {
    "6298-4": ["K", "potassium", "K+", "potasium"],
    "38483-4": ["Cr", "creatinine", "creat", "creatinin"],
    "2339-0": ["glucose", "BG", "blood sugar", "glucos"],
    "718-7": ["Hgb", "hemoglobin", "Hb", "hemoglobn"],
    "6690-2": ["WBC", "white count", "leukocytes", "wbc"],
    "777-3": ["plt", "platelets", "platelet count", "platlets"],
    "4548-4": ["A1c", "HbA1c", "hemoglobin A1c", "a1c"],
    "18262-6": ["LDL", "LDL cholesterol", "bad cholesterol (LDL)", "LDL-C"],
    "29463-7": ["wt", "weight", "body weight", "wieght"],
    "8480-6": ["SBP", "systolic BP", "systolic", "top BP number"],
    "8867-4": ["HR", "heart rate", "pulse", "hart rate"],
    "2947-0": ["Na", "sodium", "Na+", "sodum"],
    "6299-2": ["BUN", "urea nitrogen", "bun"],
    "39156-5": ["BMI", "body mass index", "bmi"],
    "9279-1": ["RR", "resp rate", "respiratory rate"],
    "8310-5": ["temp", "temperature", "body temp", "temprature"],
}
ABSENT_LABS = {"5902-2": ["PT", "prothrombin time"], "6301-6": ["INR", "inr"], "3016-3": ["TSH", "tsh"],
               "89579-7": ["troponin", "trop", "troponin I"], "1742-6": ["ALT", "SGPT"], "2524-7": ["lactate"],
               "33762-6": ["BNP", "NT-proBNP"], "2345-7": ["serum glucose"]}

# A test asked as never done must have no result a clinician would take for it either (blood for serum glucose).
LAB_EQUIV = {"2345-7": {"2339-0"}}

SYN_DRUGS = {
    "lisinopril": ["lisinopril", "zestril", "lisinipril"], "hydrochlorothiazide": ["HCTZ", "hydrochlorothiazide"],
    "amlodipine": ["amlodipine", "norvasc", "amlodipin"], "simvastatin": ["simvastatin", "zocor", "simva"],
    "clopidogrel": ["clopidogrel", "plavix"], "metformin": ["metformin", "glucophage"],
    "albuterol": ["albuterol", "albuterol inhaler", "ventolin"], "fluticasone": ["fluticasone", "flovent"],
    "nitroglycerin": ["nitroglycerin spray", "SL nitro", "NTG"], "carvedilol": ["carvedilol", "coreg"],
    "atorvastatin": ["atorvastatin", "lipitor"], "warfarin": ["warfarin", "coumadin"], "insulin": ["insulin"],
    "metoprolol": ["metoprolol", "lopressor"], "furosemide": ["lasix", "furosemide"],
}
SYN_CONDS = {
    "Essential hypertension": ["HTN", "hypertension", "essential hypertension"],
    "Hyperlipidemia": ["HLD", "hyperlipidemia"], "Hypertriglyceridemia": ["hypertriglyceridemia", "high triglycerides"],
    "Anemia": ["anemia", "anaemia"], "Chronic sinusitis": ["chronic sinusitis"],
    "Coronary arteriosclerosis": ["CAD", "coronary artery disease"], "Gout": ["gout"],
    "Osteoarthritis of knee": ["knee OA", "osteoarthritis of the knee"], "COVID-19": ["COVID", "covid-19"],
    "Chronic low back pain": ["chronic LBP", "chronic low back pain"], "Acute bronchitis": ["acute bronchitis"],
    "Prediabetes": ["prediabetes", "pre-diabetes"], "Asthma": ["asthma"],
    "Chronic neck pain": ["chronic neck pain"], "Severe anxiety (panic)": ["panic disorder", "severe anxiety"],
}
# Conditions asked as "hx of X?" = false: (spoken forms, words no condition name of the patient may hold).
NEVER_CONDS = {
    "Diabetes mellitus type 2": (["DM2", "type 2 diabetes"], ["diabet"]),
    "Congestive heart failure": (["CHF", "heart failure"], ["heart failure", "cardiomyopathy"]),
    "Chronic kidney disease": (["CKD"], ["kidney", "renal", "nephropathy"]),
    "Atrial fibrillation": (["afib", "AF"], ["fibrillation", "arrhythmia"]),
    "Asthma": (["asthma"], ["asthma"]),
    "Chronic obstructive lung disease": (["COPD"], ["obstructive", "emphysema", "bronchitis"]),
    "Stroke": (["stroke", "CVA"], ["stroke", "cerebral", "infarct"]),
}


def syn_load(zpath: str) -> dict:
    t = read_zip(zpath, ["person", "death", "measurement", "observation", "condition_occurrence", "drug_exposure",
                         "visit_occurrence", "procedure_occurrence", "concept"])
    cname = {r["concept_id"]: r["concept_name"] for r in t["concept"]}
    P: dict = {}
    for r in t["person"]:
        P[r["person_id"]] = {"sex": {"M": "male", "F": "female"}[r["gender_source_value"]],
                             "dob": dt(r["birth_datetime"]).date(), "death": None, "meas": defaultdict(list),
                             "codes": set(), "conds": [], "drugs": [], "facts": []}
    for r in t["death"]:
        P[r["person_id"]]["death"] = dt(r["death_date"]).date()
    for r in t["measurement"]:
        p = P[r["person_id"]]
        when = dt(r["measurement_datetime"]) or dt(r["measurement_date"])
        p["facts"].append(when)
        p["codes"].add(r["measurement_source_value"])
        if r["value_as_number"].strip():
            p["meas"][r["measurement_source_value"]].append(
                {"id": r["measurement_id"], "t": when, "v": float(r["value_as_number"]), "unit": r["unit_source_value"]})
    for r in t["observation"]:
        P[r["person_id"]]["codes"].add(r["observation_source_value"])
        P[r["person_id"]]["facts"].append(dt(r["observation_date"]))
    for r in t["condition_occurrence"]:
        P[r["person_id"]]["conds"].append({"id": r["condition_occurrence_id"], "name": cname[r["condition_concept_id"]],
                                           "start": dt(r["condition_start_date"]).date(),
                                           "end": dt(r["condition_end_date"]).date() if r["condition_end_date"] else None})
        P[r["person_id"]]["facts"].append(dt(r["condition_start_date"]))
    for r in t["drug_exposure"]:
        P[r["person_id"]]["drugs"].append({"id": r["drug_exposure_id"], "name": cname.get(r["drug_concept_id"], ""),
                                           "start": dt(r["drug_exposure_start_datetime"]),
                                           "end": dt(r["drug_exposure_end_datetime"])})
        P[r["person_id"]]["facts"].append(dt(r["drug_exposure_start_date"]))
    for tab, col in (("visit_occurrence", "visit_end_date"), ("procedure_occurrence", "procedure_date")):
        for r in t[tab]:
            P[r["person_id"]]["facts"].append(dt(r[col]))
    for p in P.values():
        for vals in p["meas"].values():
            vals.sort(key=lambda x: (x["t"], x["id"]))
    return P


def syn_now(p: dict, rng: random.Random) -> datetime:
    last = max(f for f in p["facts"] if f).date()
    if p["death"]:
        last = max(last, p["death"])
    d = last + timedelta(days=rng.randint(5, 21))
    while d.day > 28:
        d += timedelta(days=1)
    return noon(d)


def window_vals(vals, start, end):
    return [x for x in vals if start <= x["t"] <= end]


def years_back(now: datetime, n: int) -> datetime:
    return now.replace(year=now.year - n)


def robust(vals, now, n_years, fn):
    """fn over the window [now - n years, now], only when moving the start 7 days either way keeps the answer."""
    start = years_back(now, n_years)
    outs = {json.dumps(fn(window_vals(vals, start + timedelta(days=s), now)), default=str) for s in (-7, 0, 7)}
    if len(outs) != 1:
        return None
    return fn(window_vals(vals, start, now))


def trend(vs):
    if len(vs) < 2:
        return None
    r = (vs[-1]["v"] - vs[0]["v"]) / abs(vs[0]["v"])
    if abs(abs(r) - 0.05) < 0.005:
        return "skip"
    return "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"


def build_synthea(P: dict, S: Sink) -> None:
    db = SYN
    S.sex.update({(db, pid): P[pid]["sex"] for pid in P})
    for pid in sorted(P, key=int):
        p = P[pid]
        rng = seeded(f"syn/{pid}")
        now = syn_now(p, rng)
        nows = iso_now(now)
        items = sorted(c for c in LABS if len(p["meas"].get(c, [])) >= 2)
        rng.shuffle(items)
        for code in items[:4]:
            vals = [x for x in p["meas"][code] if x["t"] <= now]
            spoken = pick(rng, LABS[code])
            kind = rng.randrange(7)
            lastv = vals[-1]
            tie = len(vals) > 1 and vals[-2]["t"] == lastv["t"] and vals[-2]["v"] != lastv["v"]
            if kind == 0 and not tie:
                q = pick(rng, [f"last {spoken}?", f"most recent {spoken}", f"latest {spoken} value?", f"{spoken}?"])
                S.add(db, pid, q, nows, "labs", "number", [num(lastv["v"])], f"labs/latest/{code}",
                      [f"measurement/{lastv['id']}"])
            elif kind == 1:
                n = pick(rng, [2, 3, 5])
                res = robust(vals, now, n, lambda w: (max(x["v"] for x in w) if w else None))
                if res is not None:
                    hi = rng.random() < 0.5
                    res = robust(vals, now, n, lambda w, hi=hi: ((max if hi else min)(x["v"] for x in w) if w else None))
                    if res is not None:
                        word = pick(rng, ["highest", "max", "peak"]) if hi else pick(rng, ["lowest", "min", "nadir"])
                        q = pick(rng, [f"{word} {spoken} in the last {n} years?", f"{word} {spoken} past {n} yrs",
                                       f"what was the {word} {spoken} over the past {n} years?"])
                        w = window_vals(vals, years_back(now, n), now)
                        ref = [f"measurement/{x['id']}" for x in w if x["v"] == res]
                        S.add(db, pid, q, nows, "labs", "number", [num(res)], f"labs/{'max' if hi else 'min'}/{code}", ref)
            elif kind == 2:
                n = pick(rng, [2, 3, 5, 10])
                res = robust(vals, now, n, len)
                if res is not None:
                    q = pick(rng, [f"how many {spoken} values in the last {n} years?", f"# of {spoken} checks past {n} yrs",
                                   f"how many times was {spoken} measured in the past {n} years?"])
                    w = window_vals(vals, years_back(now, n), now)
                    S.add(db, pid, q, nows, "labs", "count", [res], f"labs/count/{code}",
                          [f"measurement/{x['id']}" for x in w])
            elif kind == 3:
                n = pick(rng, [3, 5, 10])
                res = robust(vals, now, n, trend)
                if res not in (None, "skip"):
                    q = pick(rng, [f"{spoken} trend over the last {n} years?", f"is the {spoken} going up or down (past {n} yrs)?",
                                   f"{spoken} trending? last {n} years"])
                    w = window_vals(vals, years_back(now, n), now)
                    S.add(db, pid, q, nows, "labs", "string", [res], f"labs/trend/{code}",
                          [f"measurement/{w[0]['id']}", f"measurement/{w[-1]['id']}"])
            elif kind == 4:
                hi_val = max(x["v"] for x in vals)
                lo_val = min(x["v"] for x in vals)
                if hi_val - lo_val < 1e-9:
                    continue
                cut = pick(rng, [hi_val * 0.97, hi_val * 1.03, (hi_val + lo_val) / 2])
                cut = round(cut, 1) if cut < 20 else round(cut)
                if min(abs(x["v"] - cut) for x in vals) < 0.006 * max(abs(cut), 1):
                    continue
                ans = any(x["v"] > cut for x in vals)
                q = pick(rng, [f"has the {spoken} ever been above {cut}?", f"{spoken} ever > {cut}?",
                               f"any {spoken} over {cut} on record?"])
                S.add(db, pid, q, nows, "labs", "boolean", [ans], f"labs/ever-above/{code}",
                      [f"measurement/{x['id']}" for x in vals if x["v"] > cut][:20])
            elif kind == 5:
                units = {x["unit"] for x in vals}
                if len(units) == 1:
                    q = pick(rng, [f"what units is the {spoken} in?", f"{spoken} units?", f"unit of the last {spoken}?"])
                    S.add(db, pid, q, nows, "labs", "string", [lastv["unit"]], f"labs/unit/{code}",
                          [f"measurement/{lastv['id']}"])
            else:
                if not tie and len(vals) >= 2 and not (vals[-2]["t"] == vals[-3]["t"] if len(vals) > 2 else False):
                    q = pick(rng, [f"first {spoken} on record?", f"earliest {spoken}?", f"what was the first {spoken}?"])
                    first = vals[0]
                    if len(vals) > 1 and vals[1]["t"] == first["t"] and vals[1]["v"] != first["v"]:
                        continue
                    S.add(db, pid, q, nows, "labs", "number", [num(first["v"])], f"labs/first/{code}",
                          [f"measurement/{first['id']}"])
        # no-data: a recent window with nothing, or a test this patient never had (in MEASUREMENT or OBSERVATION)
        if items and rng.random() < 0.5:
            code = items[0]
            spoken = pick(rng, LABS[code])
            q = pick(rng, [f"{spoken} in the past 48 hours?", f"latest {spoken} from the last 2 days?", f"{spoken} today?"])
            S.add(db, pid, q, nows, "nodata", "number", [], f"nodata/empty-window/{code}", status="no-data")
        absent = sorted(c for c in ABSENT_LABS if c not in p["codes"])
        if absent and rng.random() < 0.5:
            code = pick(rng, absent)
            q = pick(rng, [f"last {pick(rng, ABSENT_LABS[code])}?", f"most recent {pick(rng, ABSENT_LABS[code])} value?"])
            if not p["codes"] & LAB_EQUIV.get(code, set()):
                S.add(db, pid, q, nows, "nodata", "number", [], f"nodata/never-tested/{code}", status="no-data")

        # conditions
        conds = sorted(p["conds"], key=lambda c: (c["start"], c["id"]))
        mine = [n for n in sorted(SYN_CONDS) if any(c["name"] == n for c in conds)]
        if mine:
            name = pick(rng, mine)
            first = next(c for c in conds if c["name"] == name)
            spoken = pick(rng, SYN_CONDS[name])
            if rng.random() < 0.6:
                q = pick(rng, [f"when was the {spoken} diagnosed?", f"{spoken} onset date?", f"when was she dx'd with {spoken}?",
                               f"date of {spoken} dx?"])
                S.add(db, pid, q, nows, "conditions", "date", [first["start"].isoformat()], f"conditions/onset/{name}",
                      [f"condition_occurrence/{first['id']}"])
            else:
                q = pick(rng, [f"hx of {spoken}?", f"any {spoken}?", f"h/o {spoken}?"])
                S.add(db, pid, q, nows, "conditions", "boolean", [True], f"conditions/hx-true/{name}",
                      [f"condition_occurrence/{c['id']}" for c in conds if c["name"] == name])
        never = [n for n in sorted(NEVER_CONDS)
                 if not any(w in c["name"].lower() for w in NEVER_CONDS[n][1] for c in conds)]
        if never and rng.random() < 0.5:
            name = pick(rng, never)
            q = pick(rng, [f"hx of {pick(rng, NEVER_CONDS[name][0])}?", f"any {pick(rng, NEVER_CONDS[name][0])} on the problem list?"])
            S.add(db, pid, q, nows, "conditions", "boolean", [False], f"conditions/hx-false/{name}")

        # meds: active at now, start date
        drugs = [d for d in p["drugs"] if d["start"] <= now]
        known = [k for k in sorted(SYN_DRUGS) if any(k in d["name"].lower() for d in drugs)]
        if known:
            k = pick(rng, known)
            rows = sorted([d for d in drugs if k in d["name"].lower()], key=lambda d: (d["start"], d["id"]))
            spoken = pick(rng, SYN_DRUGS[k])
            if rng.random() < 0.5:
                q = pick(rng, [f"when was {spoken} started?", f"{spoken} start date?", f"when did he first get {spoken}?"])
                S.add(db, pid, q, nows, "meds_syn", "date", [rows[0]["start"].date().isoformat()], f"meds_syn/start/{k}",
                      [f"drug_exposure/{rows[0]['id']}"])
            else:
                active = [d for d in rows if d["start"] <= now and (d["end"] is None or d["end"] >= now)]
                q = pick(rng, [f"is she on {spoken}?", f"still taking {spoken}?", f"currently on {spoken}?"])
                S.add(db, pid, q, nows, "meds_syn", "boolean", [bool(active)], f"meds_syn/on-now/{k}",
                      [f"drug_exposure/{d['id']}" for d in active])
        notmine = [k for k in sorted(SYN_DRUGS) if not any(k in d["name"].lower() for d in p["drugs"])]
        if notmine and rng.random() < 0.4:
            k = pick(rng, notmine)
            q = pick(rng, [f"has he ever been on {pick(rng, SYN_DRUGS[k])}?", f"ever on {pick(rng, SYN_DRUGS[k])}?"])
            S.add(db, pid, q, nows, "meds_syn", "boolean", [False], f"meds_syn/never/{k}")

        # demographics
        if rng.random() < 0.5:
            age_at = p["death"] if p["death"] else now.date()
            years = age_at.year - p["dob"].year - ((age_at.month, age_at.day) < (p["dob"].month, p["dob"].day))
            near_bday = any(abs((age_at - p["dob"].replace(year=y)).days) <= 3 for y in (age_at.year - 1, age_at.year))
            if p["death"]:
                q = pick(rng, ["date of death?", "when did he die?", "DOD?"])
                S.add(db, pid, q, nows, "demographics", "date", [p["death"].isoformat()], "demographics/dod-syn",
                      [f"death/{pid}"])
            elif not near_bday:
                q = pick(rng, ["age?", "how old is she?", "pt age?"])
                S.add(db, pid, q, nows, "demographics", "number", [years], "demographics/age", [f"person/{pid}"],
                      tolerance=0.0001)


# ---------------------------------------------------------------------------------------------------------------


# Questions drawn per (database, category).
TARGETS = {
    (MIMIC, "stay"): 40, (MIMIC, "icu"): 20, (MIMIC, "meds"): 45, (MIMIC, "dx"): 25, (MIMIC, "procedures"): 12,
    (MIMIC, "demographics"): 14, (MIMIC, "nodata"): 12,
    (SYN, "labs"): 45, (SYN, "conditions"): 12, (SYN, "meds_syn"): 8, (SYN, "demographics"): 5, (SYN, "nodata"): 12,
}


def build(data: str) -> list[dict]:
    S = Sink()
    build_mimic(mimic_load(os.path.join(data, "omop", "mimic-iv-demo-omop-5.3")), S)
    build_synthea(syn_load(os.path.join(data, "omop", "synthea27nj", "Synthea27Nj_5.4.zip")), S)
    return S.finish(TARGETS)


def dump(lines: list[dict]) -> str:
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)


def run(args) -> int:
    """Score fhirqa's SQL path (offline backend) on the committed file, as evals/omop_eval.py does."""
    cmd = [sys.executable, os.path.join(ROOT, "evals", "omop_eval.py"), "--questions", OUT]
    if args.cache:
        cmd += ["--cache", args.cache]
    if args.failures:
        cmd += ["--failures", args.failures]
    return subprocess.run(cmd, check=False).returncode  # noqa: S603 (our interpreter, our script)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(ROOT), "shared", "data"))
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed file is stale")
    ap.add_argument("--run", action="store_true", help="score fhirqa on the committed file (evals/omop_eval.py)")
    ap.add_argument("--cache")
    ap.add_argument("--failures")
    args = ap.parse_args(argv)
    if args.run:
        return run(args)
    text = dump(build(args.data))
    if args.check:
        with open(OUT, encoding="utf-8") as fh:
            same = fh.read() == text
        print("up to date" if same else "stale: rebuild with python evals/probe_omop_ward/build.py")
        return 0 if same else 1
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(text)
    lines = [json.loads(x) for x in text.splitlines()]
    by = defaultdict(lambda: [0, 0])
    for x in lines:
        by[(x["database"], x["category"])][0] += 1
        by[(x["database"], x["category"])][1] += x["expected_status"] == "no-data"
    for k in sorted(by):
        print(*k, *by[k])
    print(len(lines), "questions,", sum(x["expected_status"] == "no-data" for x in lines), "no-data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
