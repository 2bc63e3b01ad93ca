"""Write evals/vendor/questions.jsonl: questions about the vendor-shaped probe data, gold from the raw JSON.

Reads evals/vendor/data/ (Bundles of any type and NDJSON) with the standard library only, resolves
``urn:uuid:`` fullUrls, absolute URLs, ``Type/id`` and ``#contained`` references by hand, and computes every
answer following docs/questions.md. Imports nothing from fhirqa. Seeded by strings; same data in, same bytes
out. Run after build_vendor.py: ``python evals/vendor/build_questions.py``.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
OUT = HERE / "questions.jsonl"
LOINC = "http://loinc.org"
CLIN = "http://terminology.hl7.org/CodeSystem/condition-clinical"

ITEMS = {  # question name -> LOINC
    "potassium": "2823-3", "creatinine": "2160-0", "hemoglobin": "718-7", "glucose": "2345-7",
    "hemoglobin A1c": "4548-4", "sodium": "2951-2", "platelet count": "777-3", "white blood cell count": "6690-2",
    "weight": "29463-7", "heart rate": "8867-4", "systolic blood pressure": "8480-6",
    "diastolic blood pressure": "8462-4",
}
COND_WORDS = {  # question words -> words any name of the condition contains
    "high blood pressure": ["hypertension"], "type 2 diabetes": ["type 2 diabetes"],
    "high cholesterol": ["hyperlipidemia"], "chronic kidney disease": ["chronic kidney disease"],
    "atrial fibrillation": ["atrial fibrillation"], "asthma": ["asthma"], "hypothyroidism": ["hypothyroidism"],
    "gout": ["gout"], "pneumonia": ["pneumonia"], "a urinary tract infection": ["urinary tract infection"],
    "bronchitis": ["bronchitis"], "cellulitis": ["cellulitis"],
}
DRUG_WORDS = ["metformin", "lisinopril", "atorvastatin", "amlodipine", "furosemide", "levothyroxine", "apixaban",
              "allopurinol", "albuterol", "gabapentin"]
VAX = {"flu shots": ["influenza"], "COVID vaccines": ["sars-cov-2"], "Tdap shots": ["tdap"],
       "pneumonia vaccines": ["pneumococcal"], "shingles vaccines": ["zoster"], "hepatitis B vaccines": ["hepatitis b"]}
ONE = {"flu shots": "a flu shot", "COVID vaccines": "a COVID vaccine", "Tdap shots": "a Tdap shot",
       "pneumonia vaccines": "a pneumonia vaccine", "shingles vaccines": "a shingles vaccine",
       "hepatitis B vaccines": "a hepatitis B vaccine"}
PROC_WORDS = {"an ECG": "electrocardiographic", "a colonoscopy": "colonoscopy", "a chest X-ray": "chest x-ray",
              "an echocardiogram": "echocardiography"}


def rng(*keys: str) -> random.Random:
    return random.Random(hashlib.sha256("|".join(keys).encode()).hexdigest())  # noqa: S311 (not crypto)


def ts(s: str | None) -> datetime | None:
    if not s:
        return None
    if len(s) == 10:
        s += "T00:00:00+00:00"
    return datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)


# ------------------------------------------------------------------ loading
def load() -> list[dict]:
    """All resources, references rewritten to 'Type/id' (contained '#id' kept)."""
    out = []
    for path in sorted(DATA.rglob("*")):
        if path.suffix == ".json":
            b = json.loads(path.read_text())
            urls = {}
            for e in b["entry"]:
                r = e["resource"]
                urls[e["fullUrl"]] = f"{r['resourceType']}/{r['id']}"
            for e in b["entry"]:
                out.append(fix_refs(e["resource"], urls))
        elif path.suffix == ".ndjson":
            out += [fix_refs(json.loads(line), {}) for line in path.read_text().splitlines() if line.strip()]
    return out


def fix_refs(obj, urls: dict):
    if isinstance(obj, dict):
        res = {}
        for k, v in obj.items():
            if k == "reference" and isinstance(v, str):
                if v in urls:
                    v = urls[v]
                elif v.startswith("http"):
                    v = "/".join(v.rstrip("/").split("/")[-2:])
            res[k] = fix_refs(v, urls)
        return res
    if isinstance(obj, list):
        return [fix_refs(x, urls) for x in obj]
    return obj


def cc_name(c: dict | None) -> str | None:
    if not c:
        return None
    if c.get("text"):
        return c["text"]
    for cd in c.get("coding", []):
        if cd.get("display"):
            return cd["display"]
    return None


def all_names(c: dict | None) -> str:
    if not c:
        return ""
    return " | ".join([c.get("text", "")] + [cd.get("display", "") for cd in c.get("coding", [])]).lower()


def loinc_of(c: dict) -> str | None:
    for cd in c.get("coding", []):
        if cd.get("system") == LOINC:
            return cd["code"]
    return None


class Chart:
    def __init__(self, pid: str) -> None:
        self.pid = pid
        self.patient: dict = {}
        self.values: dict[str, list] = defaultdict(list)  # loinc -> [(t, v, ref)]
        self.tests: dict[str, list] = defaultdict(list)  # loinc -> [(t, ref)] any result incl. strings
        self.enc: list = []  # (t, class, ref)
        self.cond: list = []  # dict
        self.rx: list = []  # dict
        self.mar: list = []
        self.imm: list = []
        self.proc: list = []
        self.allergy: list = []
        self.times: list[datetime] = []


def charts() -> dict[str, Chart]:
    res = load()
    by_ref = {f"{r['resourceType']}/{r['id']}": r for r in res}
    ch: dict[str, Chart] = {}

    def chart(r: dict) -> Chart:
        ref = (r.get("subject") or r.get("patient"))["reference"]
        pid = ref.split("/")[-1]
        return ch.setdefault(pid, Chart(pid))

    for r in res:
        rt, ref = r["resourceType"], f"{r['resourceType']}/{r['id']}"
        if rt == "Patient":
            ch.setdefault(r["id"], Chart(r["id"])).patient = r
        elif rt == "Observation":
            c = chart(r)
            t = ts(r.get("effectiveDateTime")) or ts((r.get("effectivePeriod") or {}).get("start")) or ts(
                r.get("issued"))
            c.times.append(t)
            lo = loinc_of(r["code"])
            if "valueQuantity" in r:
                c.values[lo].append((t, r["valueQuantity"]["value"], ref, r["valueQuantity"].get("comparator")))
            if any(k.startswith("value") for k in r):
                c.tests[lo].append((t, ref))
            for comp in r.get("component", []):
                if "valueQuantity" in comp:
                    c.values[loinc_of(comp["code"])].append((t, comp["valueQuantity"]["value"], ref, None))
        elif rt == "Encounter":
            c = chart(r)
            t = ts(r["period"]["start"])
            c.times.append(t)
            c.enc.append((t, r["class"]["code"], ref))
        elif rt == "Condition":
            c = chart(r)
            onset = ts(r.get("onsetDateTime")) or ts((r.get("onsetPeriod") or {}).get("start"))
            abat = ts(r.get("abatementDateTime"))
            clin = [cd["code"] for cd in r.get("clinicalStatus", {}).get("coding", []) if cd.get("system") == CLIN]
            c.cond.append(dict(ref=ref, name=cc_name(r["code"]), names=all_names(r["code"]), onset=onset,
                               abated=bool(abat or r.get("abatementString")), abatement=abat,
                               clin=clin[0] if clin else None, recorded=ts(r.get("recordedDate")),
                               localfirst=r.get("clinicalStatus", {}).get("coding", [{}])[0].get("system") != CLIN,
                               onset_age=(r.get("onsetAge") or {}).get("value")))
            c.times += [x for x in (onset, abat, ts(r.get("recordedDate"))) if x]
        elif rt == "MedicationRequest":
            c = chart(r)
            if "medicationCodeableConcept" in r:
                mcc = r["medicationCodeableConcept"]
            else:
                mref = r["medicationReference"]["reference"]
                if mref.startswith("#"):
                    mcc = next(x for x in r["contained"] if x["id"] == mref[1:])["code"]
                else:
                    mcc = by_ref[mref]["code"]
            t = ts(r["authoredOn"])
            c.times.append(t)
            c.rx.append(dict(ref=ref, name=cc_name(mcc), names=all_names(mcc), t=t, status=r["status"],
                             dosage=r.get("dosageInstruction", [])))
        elif rt == "MedicationAdministration":
            c = chart(r)
            mref = r["medicationReference"]["reference"]
            mcc = (next(x for x in r["contained"] if x["id"] == mref[1:])["code"] if mref.startswith("#")
                   else by_ref[mref]["code"])
            t = ts(r.get("effectiveDateTime")) or ts(r["effectivePeriod"]["start"])
            c.times.append(t)
            c.mar.append(dict(ref=ref, names=all_names(mcc), t=t, status=r["status"],
                              dose=r["dosage"]["dose"]["value"], unit=r["dosage"]["dose"]["unit"]))
        elif rt == "Immunization":
            c = chart(r)
            t = ts(r.get("occurrenceDateTime"))
            if t:
                c.times.append(t)
            c.imm.append(dict(ref=ref, names=all_names(r["vaccineCode"]), t=t, status=r["status"]))
        elif rt == "Procedure":
            c = chart(r)
            t = ts(r.get("performedDateTime")) or ts(r["performedPeriod"]["start"])
            c.times.append(t)
            c.proc.append(dict(ref=ref, names=all_names(r["code"]), t=t))
        elif rt == "AllergyIntolerance":
            chart(r).allergy.append(dict(ref=ref, names=all_names(r["code"])))
    return ch


# ------------------------------------------------------------------ helpers
def fmt_date(d: date, k: int) -> str:
    return [d.isoformat(), f"{d.strftime('%B')} {d.day}, {d.year}", f"{d.month}/{d.day}/{d.year}",
            f"{d.strftime('%b')} {d.day}, {d.year}"][k % 4]


def add_months(t: datetime, n: int) -> datetime:
    m = t.month - 1 + n
    y, mo = t.year + m // 12, m % 12 + 1
    last = (date(y + mo // 12, mo % 12 + 1, 1) - timedelta(days=1)).day
    return t.replace(year=y, month=mo, day=min(t.day, last))


def completed_months(a: datetime, b: datetime) -> int:
    n = (b.year - a.year) * 12 + b.month - a.month
    if add_months(a, n) > b:
        n -= 1
    return n


def completed_years(a: date, b: date) -> int:
    return b.year - a.year - ((b.month, b.day) < (a.month, a.day))


def num(v: float) -> float:
    return round(float(v), 6)


def no_tie(vals: list, t: datetime) -> bool:
    return len({v for (tt, v, *_) in vals if tt == t}) == 1


class Gen:
    def __init__(self, c: Chart, others: list[Chart]) -> None:
        self.c = c
        self.others = others
        p = c.patient
        self.sex = p["gender"]
        self.her = "her" if self.sex == "female" else "his"
        self.she = "she" if self.sex == "female" else "he"
        off = [n for n in p["name"] if n.get("use") == "official"][0]
        self.first, self.family = off["given"][0], off["family"]
        self.birth = date.fromisoformat(p["birthDate"])
        self.death = ts(p.get("deceasedDateTime"))
        last = max(c.times)
        r = rng("now", c.pid)
        choices = [d for d in range(3, 22) if (last + timedelta(days=d)).day <= 28]
        self.now = (last + timedelta(days=r.choice(choices))).replace(hour=12, minute=0, second=0, microsecond=0)
        self.late = add_months(self.now, 12 * r.choice([2, 3, 4]))
        self.r = rng("gen", c.pid)
        self.out: dict[str, list[dict]] = defaultdict(list)

    def q(self, cat, text, atype, expected, refs, template, status="answered", now=None, tol=None):
        if tol is None:
            tol = 0.02 if cat == "change" else 0.01 if atype == "number" else 0
        pid = None if cat == "patient_lookup" else self.c.pid
        self.out[cat].append(dict(patient_id=pid, question=text, now=(now or self.now).isoformat().replace(
            "+00:00", "Z"), category=cat, answer_type=atype, expected=expected, expected_status=status,
            tolerance=tol, gold_refs=sorted(set(refs)), template=template))

    def items(self):
        for name, lo in ITEMS.items():
            vals = sorted(v for v in self.c.values.get(lo, []) if v[0] <= self.now)
            if lo == "33914-3":
                continue
            if vals:
                yield name, vals

    # ------------------------------------------------------------ value questions
    def values(self) -> None:
        her, k = self.her, self.r.randrange(4)
        for name, vals in self.items():
            k += 1
            last, first = vals[-1], vals[0]
            if no_tie(vals, last[0]):
                self.q("latest_value", [f"What was {her} most recent {name}?", f"Last {name}?",
                                        f"What is the latest {name} on file for this patient?"][k % 3],
                       "number", [num(last[1])], [last[2]], "latest_value/ever")
            if no_tie(vals, first[0]):
                self.q("first_value", [f"What was {her} first {name} on record?", f"Earliest {name}?",
                                       f"What was the first {name} measured?"][k % 3],
                       "number", [num(first[1])], [first[2]], "first_value/ever")
            # year window
            years = sorted({v[0].year for v in vals})
            y = years[k % len(years)]
            iny = [v for v in vals if v[0].year == y]
            edge = any(abs((v[0] - datetime(yy, 1, 1, tzinfo=UTC)).total_seconds()) < 86400 * 2
                       for v in vals for yy in (y, y + 1))
            if not edge and no_tie(iny, iny[-1][0]):
                self.q("value_in_window", f"What was {her} last {name} in {y}?", "number", [num(iny[-1][1])],
                       [iny[-1][2]], "value_in_window/latest-year")
            # relative window, robust to +-7 days
            for n in (6, 12, 18):
                def win(shift, n=n, vals=vals):
                    s = add_months(self.now, -n) + timedelta(days=shift)
                    return [v for v in vals if s <= v[0] <= self.now]
                w = win(0)
                if w and w == win(-7) == win(7) and no_tie(w, w[0][0]) and len(w) < len(vals):
                    self.q("value_in_window", f"What was {her} first {name} in the last {n} months?", "number",
                           [num(w[0][1])], [w[0][2]], "value_in_window/first-last")
                    break
            # empty window at late now
            if k % 3 == 0:
                self.q("value_in_window", f"What was {her} most recent {name} in the past year?", "number", [], [],
                       "value_in_window/empty-last", status="no-data", now=self.late)
            # min / max
            mx = max(vals, key=lambda v: v[1])
            mn = min(vals, key=lambda v: v[1])
            if k % 2:
                self.q("min_max", f"What was {her} highest {name}?", "number", [num(mx[1])],
                       [v[2] for v in vals if v[1] == mx[1]], "min_max/max-ever")
            else:
                self.q("min_max", f"What was {her} lowest {name} ever?", "number", [num(mn[1])],
                       [v[2] for v in vals if v[1] == mn[1]], "min_max/min-ever")
            if len(vals) >= 2:
                self.q("average", [f"What is {her} average {name}?", f"Mean {name} across all results?"][k % 2],
                       "number", [num(sum(v[1] for v in vals) / len(vals))], [v[2] for v in vals], "average/ever")
            self.q("count_measurements", [f"How many {name} measurements does {self.she} have?",
                                          f"How many times has {her} {name} been checked?"][k % 2],
                   "count", [len(vals)], [v[2] for v in vals], "count_measurements/ever")
            # change between the first and last measurement dates
            if len(vals) >= 3:
                a, b = vals[0], vals[-1]
                da, db = a[0].date(), b[0].date()
                if da != db and len([v for v in vals if v[0].date() == da]) == 1 and len(
                        [v for v in vals if v[0].date() == db]) == 1:
                    self.q("change", f"How much did {her} {name} change from {fmt_date(da, k)} to {fmt_date(db, k)}?",
                           "number", [num(b[1] - a[1])], [a[2], b[2]], "change/between-dates")
                r = (b[1] - a[1]) / abs(a[1])
                if abs(abs(r) - 0.05) > 0.005 and no_tie(vals, a[0]) and no_tie(vals, b[0]):
                    trend = "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"
                    self.q("trend", f"Is {her} {name} going up, down or staying stable?", "string", [trend],
                           [a[2], b[2]], "trend/ever")
            # thresholds both sides
            side = k % 2
            if side:
                cut = mx[1] * (0.95 if k % 4 == 1 else 1.05)
                cut = round(cut, 1)
                if abs(cut - mx[1]) > 0.006 * abs(mx[1]):
                    self.q("threshold", f"Has {her} {name} ever been above {cut:g}?", "boolean", [mx[1] > cut],
                           [mx[2]] if mx[1] > cut else [], "threshold/above-ever")
            else:
                cut = round(mn[1] * (1.05 if k % 4 == 0 else 0.95), 1)
                if abs(cut - mn[1]) > 0.006 * abs(mn[1]):
                    self.q("threshold", f"Was {her} {name} ever below {cut:g}?", "boolean", [mn[1] < cut],
                           [mn[2]] if mn[1] < cut else [], "threshold/below-ever")

    # ------------------------------------------------------------ encounters, counts, existence, dates
    def events(self) -> None:
        c, her, she = self.c, self.her, self.she
        enc = [e for e in c.enc if e[0] <= self.now]
        er = [e for e in enc if e[1] == "EMER"]
        imp = [e for e in enc if e[1] in ("IMP", "ACUTE")]
        amb = [e for e in enc if e[1] == "AMB"]
        cls = {e[1] for e in enc}
        self.q("count_encounters", f"How many ER visits has {she} had?", "count", [len(er)], [e[2] for e in er],
               "count_encounters/EMER")
        self.q("count_encounters", f"How many times has {she} been admitted to the hospital?", "count", [len(imp)],
               [e[2] for e in imp], "count_encounters/IMP" + ("-as-ACUTE" if "ACUTE" in cls else ""))
        self.q("count_encounters", f"How many encounters does {she} have in total?", "count", [len(enc)],
               [e[2] for e in enc], "count_encounters/all")
        y = sorted({e[0].year for e in amb})[0] + 1
        ya = [e for e in amb if e[0].year == y]
        self.q("count_encounters", f"How many outpatient visits did {she} have in {y}?", "count", [len(ya)],
               [e[2] for e in ya], "count_encounters/AMB-year")
        if er:
            last = max(er)
            self.q("first_last_time", f"When was {her} last ER visit?", "date", [last[0].date().isoformat()],
                   [last[2]], "first_last_time/last-EMER")
            d = (self.now - last[0]).days
            if d == (self.now.date() - last[0].date()).days:
                self.q("time_since", f"How many days since {her} last emergency room visit?", "number", [d],
                       [last[2]], "time_since/days-EMER")
        if imp:
            last = max(imp)
            m = {completed_months(last[0] + timedelta(days=s), self.now) for s in (-3, 0, 3)}
            if len(m) == 1:
                self.q("time_since", f"How many months since {her} last hospital admission?", "number", [m.pop()],
                       [last[2]], "time_since/months-IMP" + ("-as-ACUTE" if "ACUTE" in cls else ""))
        # prescriptions
        rx = [x for x in c.rx if x["t"] <= self.now]
        self.q("count_other", f"How many prescriptions does {she} have on record?", "count", [len(rx)],
               [x["ref"] for x in rx], "count_other/rx-all")
        for drug in DRUG_WORDS:
            mine = [x for x in rx if drug in x["names"]]
            if mine:
                self.q("count_other", f"How many times has {she} been prescribed {drug}?", "count", [len(mine)],
                       [x["ref"] for x in mine], "count_other/rx-drug")
                self.q("existence_positive", f"Has {she} ever been on {drug}?", "boolean", [True],
                       [mine[0]["ref"]], "existence_positive/drug")
                last = max(mine, key=lambda x: x["t"])
                self.q("first_last_time", f"When was {drug} last prescribed?", "date", [last["t"].date().isoformat()],
                       [last["ref"]], "first_last_time/last-rx")
            elif any(drug in x["names"] for o in self.others for x in o.rx):
                self.q("existence_negative", f"Has {she} ever taken {drug}?", "boolean", [False], [],
                       "existence_negative/drug")
        # vaccines
        for words, keys in VAX.items():
            mine = [x for x in c.imm if any(k in x["names"] for k in keys) and x["status"] == "completed"]
            if mine:
                shape = "-string" if any(x["t"] is None for x in mine) else ""
                self.q("count_other", f"How many {words} has {she} had?", "count", [len(mine)],
                       [x["ref"] for x in mine], "count_other/imm" + shape)
                dated = [x for x in mine if x["t"]]
                if dated and not shape:
                    last = max(dated, key=lambda x: x["t"])
                    self.q("first_last_time", f"When did {she} last get {ONE[words]}?",
                           "date", [last["t"].date().isoformat()], [last["ref"]], "first_last_time/last-imm")
                self.q("existence_positive", f"Has {she} ever had {ONE[words]}?", "boolean", [True], [mine[0]["ref"]], "existence_positive/imm" + shape)
        for words, key in PROC_WORDS.items():
            mine = [x for x in c.proc if key in x["names"]]
            if mine:
                self.q("count_other", f"How many times has {she} had {words.split(' ', 1)[1]} done?", "count",
                       [len(mine)], [x["ref"] for x in mine], "count_other/proc")
                self.q("existence_positive", f"Has {she} ever had {words}?", "boolean", [True], [mine[0]["ref"]],
                       "existence_positive/proc")
            elif any(key in x["names"] for o in self.others for x in o.proc):
                self.q("existence_negative", f"Has {she} ever had {words}?", "boolean", [False], [],
                       "existence_negative/proc")
        # conditions
        for words, keys in COND_WORDS.items():
            mine = [x for x in c.cond if any(k in x["names"] for k in keys)]
            shape = ""
            if mine:
                x = mine[0]
                shape = ("-onsetDateTime/Period" if x["onset"] else "-recordedDate-only/onsetAge")
                self.q("existence_positive", f"Has {she} ever been diagnosed with {words}?", "boolean", [True],
                       [x["ref"] for x in mine], "existence_positive/condition" + shape)
                active = self.active(x, self.now)
                self.q("active_conditions", f"Does {she} still have {words}?", "boolean", [active], [x["ref"]],
                       "active_conditions/still" + ("-abatementString" if x["abated"] and not x["abatement"]
                                                     else "-localStatusFirst" if self.local_status(x) else ""))
                if x["onset"]:
                    self.q("first_last_time", f"When was {she} first diagnosed with {words}?", "date",
                           [x["onset"].date().isoformat()], [x["ref"]], "first_last_time/first-condition")
                    if not x["abated"]:
                        ys = {completed_years((x["onset"] + timedelta(days=s)).date(), self.now.date())
                              for s in (-3, 0, 3)}
                        if len(ys) == 1:
                            self.q("time_since", f"How many years has {she} had {words}?", "number", [ys.pop()],
                                   [x["ref"]], "time_since/onset-years")
                    od = x["onset"].date()
                    near = abs((od.replace(year=self.birth.year) - self.birth).days) <= 3
                    if not near:
                        self.q("age", f"How old was {she} when {she} was diagnosed with {words}?", "number",
                               [completed_years(self.birth, od)], [x["ref"]], "age/at-diagnosis")
                elif x["onset_age"] is not None:
                    self.q("age", f"How old was {she} when {she} was diagnosed with {words}?", "number",
                           [x["onset_age"]], [x["ref"]], "age/at-diagnosis-onsetAge")
            elif any(any(k in y["names"] for k in keys) for o in self.others for y in o.cond) and not (
                    words == "high cholesterol" and any("lipid" in y["names"] for y in c.cond)):
                self.q("existence_negative", f"Does {she} have a history of {words}?", "boolean", [False], [],
                       "existence_negative/condition")
        for a in c.allergy:
            word = a["names"].split(" | ")[0].split(" (")[0]
            self.q("existence_positive", f"Is {she} allergic to {word.lower()}?", "boolean", [True], [a["ref"]],
                   "existence_positive/allergy")
        # labs never had -> no-data; qualitative tests exist
        for name, lo in ITEMS.items():
            if not c.values.get(lo) and any(o.values.get(lo) for o in self.others):
                self.q("existence_negative", f"What was {her} last {name}?", "number", [], [],
                       "existence_negative/never-lab", status="no-data")
        for words, lo in (("a COVID test", "94500-6"), ("a urine protein test", "20454-5"),
                          ("an eGFR", "33914-3")):
            if c.tests.get(lo):
                self.q("existence_positive", f"Has {she} had {words}?", "boolean", [True],
                       [x[1] for x in c.tests[lo]], "existence_positive/test-nonnumeric")

    @staticmethod
    def local_status(x) -> bool:
        return x["localfirst"]

    @staticmethod
    def active(x: dict, at: datetime) -> bool:
        if x["clin"] not in (None, "active", "recurrence", "relapse"):
            return False
        if x["abated"] and (x["abatement"] is None or x["abatement"] <= at):
            return False
        return x["onset"] is None or x["onset"] <= at

    # ------------------------------------------------------------ lists, doses, after drug, demographics
    def lists(self) -> None:
        c, her, she = self.c, self.her, self.she
        act = sorted({x["name"] for x in c.cond if self.active(x, self.now)})
        shape = "".join(sorted({"-localStatusFirst" for x in c.cond if x["localfirst"]} | {
            "-abatementString" for x in c.cond if x["abated"] and not x["abatement"]}))
        self.q("active_conditions", f"What are {her} current active problems?", "list", act,
               [x["ref"] for x in c.cond if self.active(x, self.now)], "active_conditions/now" + shape)
        meds = sorted({x["name"] for x in c.rx if x["status"] == "active"})
        self.q("active_medications", f"What medications is {she} currently on?", "list", meds,
               [x["ref"] for x in c.rx if x["status"] == "active"], "active_medications/now")
        for drug in DRUG_WORDS:
            mine = [x for x in c.rx if drug in x["names"]]
            if mine:
                on = any(x["status"] == "active" for x in mine)
                self.q("active_medications", f"Is {she} still taking {drug}?", "boolean", [on],
                       [x["ref"] for x in mine if x["status"] == "active"] or [max(mine, key=lambda x: x["t"])["ref"]],
                       "active_medications/still")
                latest = max(mine, key=lambda x: x["t"])
                dd, shape = daily_dose(latest["dosage"])
                if dd is not None:
                    self.q("daily_dose", f"What is {her} total daily dose of {drug}?", "number", [num(dd)],
                           [latest["ref"]], f"daily_dose/{shape}")
                # after drug
                first = min(mine, key=lambda x: x["t"])["t"]
                for name, lo in ITEMS.items():
                    after = sorted(v for v in c.values.get(lo, []) if v[0] > first and v[0] <= self.now)
                    near = any(abs((v[0] - first).total_seconds()) < 86400 for v in c.values.get(lo, []))
                    if after and not near and no_tie(after, after[0][0]):
                        self.q("after_drug", f"What was {her} first {name} after starting {drug}?", "number",
                               [num(after[0][1])], [after[0][2]], "after_drug/first")
                        break
        # MAR day totals
        for drug in ("vancomycin", "heparin", "ceftriaxone"):
            given = [x for x in c.mar if drug in x["names"] and x["status"] == "completed"]
            days = sorted({x["t"].date() for x in given})
            if days:
                d = days[len(days) // 2]
                on = [x for x in given if x["t"].date() == d]
                unit = on[0]["unit"]
                word = (f"How much {drug} was given on {fmt_date(d, 1)}?" if drug != "vancomycin" else
                        f"What was the total dose of {drug} given on {fmt_date(d, 1)}?")
                self.q("daily_total_administered", word, "number",
                       [num(sum(x["dose"] for x in on))], [x["ref"] for x in on], f"daily_total_administered/total-{drug}"
                       f"-{unit}")
                self.q("daily_total_administered", f"How many doses of {drug} were given on {fmt_date(d, 2)}?",
                       "count", [len(on)], [x["ref"] for x in on], f"daily_total_administered/doses-{drug}")

    def demographics(self) -> None:
        her, she = self.her, self.she
        p = self.c.patient
        self.q("demographics", f"What is {her} date of birth?", "date", [p["birthDate"]], [f"Patient/{p['id']}"],
               "demographics/birth-date")
        self.q("demographics", "What is the patient's gender?", "string", [p["gender"]], [f"Patient/{p['id']}"],
               "demographics/gender")
        dec = bool(p.get("deceasedBoolean")) or "deceasedDateTime" in p
        self.q("demographics", f"Is {self.first} deceased?", "boolean", [dec], [f"Patient/{p['id']}"],
               "demographics/deceased" + ("-boolean" if "deceasedBoolean" in p else "-datetime" if dec else ""))
        if self.death:
            self.q("demographics", f"When did {she} die?", "date", [self.death.date().isoformat()],
                   [f"Patient/{p['id']}"], "demographics/death-date")
        end = self.death or self.now
        bd = self.birth
        if abs((date(end.year, bd.month, min(bd.day, 28)) - end.date()).days) > 3 and not p.get("deceasedBoolean"):
            self.q("age", f"How old is {self.first}?" if not self.death else f"How old was {she} when {she} died?",
                   "number", [completed_years(bd, end.date())], [f"Patient/{p['id']}"],
                   "age/now" if not self.death else "age/at-death")
        self.q("patient_lookup", f"What is the patient ID of {self.first} {self.family}, born "
               f"{fmt_date(self.birth, 1)}?", "string", [p["id"]], [f"Patient/{p['id']}"],
               "patient_lookup/official-name" + ("-usual-first" if p["name"][0].get("use") == "usual" else ""),
               now=self.now)


def daily_dose(dosage: list[dict]) -> tuple[float | None, str]:
    if not dosage:
        return None, ""
    d = dosage[0]
    dq = None
    for dr in d.get("doseAndRate", []):
        if "doseQuantity" in dr:
            dq = dr["doseQuantity"]["value"]
    timing = d.get("timing", {})
    rep = timing.get("repeat")
    if rep and dq is not None:
        days = rep["period"] * {"h": 1 / 24, "d": 1, "wk": 7, "mo": 30}[rep["periodUnit"]]
        return dq * rep["frequency"] / days, "repeat"
    if "code" in timing and dq is not None:
        code = timing["code"]["coding"][0]["code"]
        return dq * {"QD": 1, "BID": 2, "TID": 3, "Q8H": 3, "QID": 4}[code], "timing-code"
    text = d.get("text", "")
    m = re.match(r"(?:Take|Inhale) (\d+(?:\.\d+)?) (\w+) .*?(once|twice|three times) daily", text)
    if m:
        return float(m.group(1)) * {"once": 1, "twice": 2, "three times": 3}[m.group(3)], "text-only"
    return None, ""


SHAPES = ("-as-ACUTE", "abatementString", "localStatusFirst", "-string", "timing-code", "text-only",
          "recordedDate-only", "onsetAge", "usual-first", "deceased-boolean", "total-vancomycin", "doses-heparin",
          "test-nonnumeric")


def shaped(template: str) -> bool:
    return any(m in template for m in SHAPES)


QUOTA = {"existence_negative": 8, "existence_positive": 7, "daily_total_administered": 5, "daily_dose": 8,
         "active_conditions": 8, "active_medications": 7, "count_encounters": 7, "value_in_window": 6, "age": 6,
         "count_other": 6, "demographics": 6}


def main() -> None:
    ch = charts()
    pids = sorted(ch)
    per_cat: dict[str, list[dict]] = defaultdict(list)
    for pid in pids:
        g = Gen(ch[pid], [ch[o] for o in pids if o != pid])
        g.values()
        g.events()
        g.lists()
        g.demographics()
        for cat, qs in g.out.items():
            rng("pick", pid, cat).shuffle(qs)
            per_cat[cat].append(qs)
    lines = []
    for ci, cat in enumerate(sorted(per_cat)):
        want = QUOTA.get(cat, 5)
        start = (ci * 3) % len(per_cat[cat])
        pools = per_cat[cat][start:] + per_cat[cat][:start]
        chosen: list[dict] = []
        seen_tpl: dict[str, int] = defaultdict(int)
        rounds = 0
        while len(chosen) < want and any(pools) and rounds < 50:
            rounds += 1
            for pool in pools:
                if not pool or len(chosen) >= want:
                    continue
                # prefer templates not yet used (spreads the data shapes)
                pool.sort(key=lambda q: (not (shaped(q["template"]) and seen_tpl[q["template"]] == 0),
                                         seen_tpl[q["template"]]))
                q = pool.pop(0)
                seen_tpl[q["template"]] += 1
                chosen.append(q)
        have = {q["template"] for q in chosen}
        for pool in pools:  # every data-shape template at least once
            for q in pool:
                if shaped(q["template"]) and q["template"] not in have:
                    have.add(q["template"])
                    chosen.append(q)
        for i, q in enumerate(chosen, 1):
            lines.append({"id": f"{cat}-{i:03d}", **q})
    OUT.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    print(f"wrote {OUT.name}: {len(lines)} questions")


if __name__ == "__main__":
    main()
