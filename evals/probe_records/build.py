"""Blind probe of the record areas earlier probes hardly asked about.

Reads the raw Synthea R4 bundles (``../shared/data/synthea-r4``) with ``orjson`` and computes every gold
answer by hand; imports nothing from ``fhirqa``. Voices: a PCP at an annual physical, specialists reading a
referral, an allergist, a social worker, an intake nurse. Areas: specialist results (EF, NT-proBNP,
FEV1/FVC, PSA, MMSE, DXA T-score, UACR), allergen IgE panels, AllergyIntolerance, social-history screens,
smoking status / pain score / temperature, urinalysis (coded and numeric), CarePlan, Goal, ImagingStudy,
death, immunization series.

    python evals/probe_records/build.py           # rewrites questions.jsonl
    python evals/probe_records/build.py --check   # exit 1 when questions.jsonl is stale

Same data in, same bytes out: every random choice comes from ``random.Random`` seeded by a string.
"""

# Seeded random.Random is for reproducible draws, not security:
# ruff: noqa: S311
from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from collections import defaultdict
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DATA = REPO.parent / "shared" / "data" / "synthea-r4"
OUT = HERE / "questions.jsonl"
SEED = "probe_records-v1"

UTC = dt.UTC
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]

# How many questions each category keeps (drawn with a seeded RNG from all candidates).
CAPS = {
    "specialist": 32, "allergy_ige": 14, "allergy": 22, "social": 12, "intake": 28, "urinalysis": 14,
    "care_plan": 26, "goal": 10, "imaging": 18, "death": 16, "immunization": 28,
}


# ---------------------------------------------------------------------------------------------- data


def parse_t(s: str) -> dt.datetime:
    """An ISO date or datetime as an aware UTC datetime (a bare date is midnight UTC)."""
    if len(s) == 10:
        return dt.datetime.fromisoformat(s).replace(tzinfo=UTC)
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)


def text_of(cc: dict | None) -> str | None:
    """code.text, else the first coding.display (how docs/questions.md names things)."""
    if not cc:
        return None
    if cc.get("text"):
        return cc["text"]
    for c in cc.get("coding", []):
        if c.get("display"):
            return c["display"]
    return None


class Pt:
    """One patient's bundle, resources grouped by type, with urn:uuid references resolvable."""

    def __init__(self, path: Path):
        bundle = orjson.loads(path.read_bytes())
        self.by_url: dict[str, dict] = {}
        self.res: dict[str, list[dict]] = defaultdict(list)
        for e in bundle["entry"]:
            r = e["resource"]
            self.by_url[e.get("fullUrl", "")] = r
            self.res[r["resourceType"]].append(r)
        self.patient = self.res["Patient"][0]
        self.id = self.patient["id"]
        self.given = "".join(ch for ch in self.patient["name"][0]["given"][0] if not ch.isdigit())
        self.gender = self.patient.get("gender")
        self.birth = dt.date.fromisoformat(self.patient["birthDate"])
        self.death = parse_t(self.patient["deceasedDateTime"]) if "deceasedDateTime" in self.patient else None
        self.now = self._now()

    def obs(self, code: str) -> list[tuple[dt.datetime, dict]]:
        """Observations with this LOINC code (first coding), sorted by time."""
        out = []
        for r in self.res["Observation"]:
            if r["code"]["coding"][0]["code"] == code:
                out.append((obs_time(r), r))
        out.sort(key=lambda x: x[0])
        return out

    def _facts(self):
        for r in self.res["Observation"]:
            yield obs_time(r)
        for r in self.res["Encounter"]:
            yield parse_t(r["period"]["start"])
            if r["period"].get("end"):
                yield parse_t(r["period"]["end"])
        for r in self.res["Procedure"]:
            p = r.get("performedPeriod", {}).get("start") or r.get("performedDateTime")
            if p:
                yield parse_t(p)
        for r in self.res["MedicationRequest"]:
            yield parse_t(r["authoredOn"])
        for r in self.res["Immunization"]:
            yield parse_t(r["occurrenceDateTime"])
        for r in self.res["Condition"]:
            for k in ("onsetDateTime", "abatementDateTime"):
                if r.get(k):
                    yield parse_t(r[k])
        for r in self.res["CarePlan"]:
            yield parse_t(r["period"]["start"])
        for r in self.res["ImagingStudy"]:
            yield parse_t(r["started"])
        for r in self.res["AllergyIntolerance"]:
            yield parse_t(r["recordedDate"])
        if self.death:
            yield self.death

    def _now(self) -> dt.datetime:
        last = max(self._facts())
        rng = random.Random(f"{SEED}|{self.id}|now")
        day = last.date() + dt.timedelta(days=rng.randint(3, 21))
        while day.day > 28:
            day += dt.timedelta(days=1)
        return dt.datetime(day.year, day.month, day.day, 12, tzinfo=UTC)

    def pronoun(self) -> tuple[str, str]:
        return ("her", "she") if self.gender == "female" else ("his", "he")


def obs_time(r: dict) -> dt.datetime:
    s = r.get("effectiveDateTime") or r.get("effectivePeriod", {}).get("start") or r["issued"]
    return parse_t(s)


def load() -> list[Pt]:
    pts = [Pt(p) for p in sorted(DATA.glob("*.json"))]
    pts.sort(key=lambda p: p.id)
    return pts


# ------------------------------------------------------------------------------------------ wording


def fmt_date(d: dt.date, rng: random.Random) -> str:
    k = rng.randrange(4)
    if k == 0:
        return d.isoformat()
    if k == 1:
        return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"
    if k == 2:
        return f"{MONTHS[d.month - 1][:3]} {d.day}, {d.year}"
    return f"{d.month}/{d.day}/{d.year}"


def who(p: Pt, rng: random.Random) -> str:
    """'her' / 'the patient's' / '<First>'s' (a possessive)."""
    k = rng.randrange(3)
    return [p.pronoun()[0], "the patient's", f"{p.given}'s"][k]


def q(p: Pt, cat: str, pattern: str, voice: str, forms: list[str], rng: random.Random, atype: str,
      expected: list, refs: list[str], status: str = "answered", tol: float = 0.0) -> dict:
    """One question dict (id added later); one of ``forms`` drawn by ``rng``."""
    k = rng.randrange(len(forms))
    return {
        "patient_id": p.id,
        "question": forms[k],
        "now": p.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "category": cat,
        "answer_type": atype,
        "expected": expected if status == "answered" else [],
        "expected_status": status,
        "tolerance": tol if atype == "number" else 0,
        "gold_refs": sorted(set(refs)) if status == "answered" else [],
        "template": f"{cat}/{pattern}/{voice}.{k}",
    }


def ref(r: dict) -> str:
    return f"{r['resourceType']}/{r['id']}"


def rnd(x: float) -> float:
    return round(x, 4)


def unique_latest(rows: list[tuple[dt.datetime, dict]], val) -> tuple[object, dict] | None:
    """The latest row's value, or None when two different values share the latest time."""
    if not rows:
        return None
    t = rows[-1][0]
    vals = {val(r) for tt, r in rows if tt == t}
    if len(vals) != 1:
        return None
    return val(rows[-1][1]), rows[-1][1]


def unique_first(rows, val):
    if not rows:
        return None
    t = rows[0][0]
    vals = {val(r) for tt, r in rows if tt == t}
    if len(vals) != 1:
        return None
    return val(rows[0][1]), rows[0][1]


def vq(r: dict) -> float:
    return r["valueQuantity"]["value"]


def vtext(r: dict) -> str:
    if "valueString" in r:
        return r["valueString"]
    return text_of(r["valueCodeableConcept"])


def trend_of(first: float, last: float) -> str | None:
    """increasing / decreasing / stable by the ±5 % rule; None within 0.5 % of a cut-off."""
    r = (last - first) / abs(first)
    if abs(abs(r) - 0.05) < 0.005:
        return None
    return "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"


# ------------------------------------------------------------------------------------- specialists

# code: (names, cut-off, side, voice)
SPECIALIST = {
    "10230-1": (["EF", "LVEF", "ejection fraction", "LV ejection fraction"], 40.0, "below", "cardio"),
    "33762-6": (["NT-proBNP", "NT pro-BNP", "proBNP"], 125.0, "above", "cardio"),
    "19926-5": (["FEV1/FVC", "FEV1/FVC ratio", "FEV1 to FVC ratio"], 70.0, "below", "pulm"),
    "2857-1": (["PSA", "prostate specific antigen"], 4.0, "above", "uro"),
    "72106-8": (["MMSE", "MMSE score", "mini-mental (MMSE) score"], 24.0, "below", "neuro"),
    "38265-5": (["DXA T-score", "T-score on DXA", "bone density T-score"], -2.5, "below", "bone"),
    "14959-1": (["urine microalbumin/creatinine ratio", "UACR", "microalbumin creatinine ratio"], 30.0,
                "above", "nephro"),
}


def gen_specialist(p: Pt) -> list[dict]:
    out = []
    for code, (names, cut, side, voice) in SPECIALIST.items():
        rng = random.Random(f"{SEED}|{p.id}|spec|{code}")
        rows = p.obs(code)
        nm = rng.choice(names)
        w = who(p, rng)
        cat = "specialist"
        if not rows:
            continue
        refs = [ref(r) for _, r in rows]
        vals = [vq(r) for _, r in rows]
        lat = unique_latest(rows, vq)
        if lat:
            out.append(q(p, cat, "latest", voice, [f"{nm}?", f"last {nm}", f"What was {w} most recent {nm}?",
                                                   f"Referral review: latest {nm} value?"], rng, "number",
                         [rnd(lat[0])], [ref(lat[1])], tol=0.01))
        if len(rows) >= 2:
            fst = unique_first(rows, vq)
            if fst and rows[0][0] != rows[-1][0]:
                out.append(q(p, cat, "first", voice, [f"first {nm} on file?", f"What was {w} earliest {nm}?",
                                                      f"Baseline {nm} (the first one recorded)?"], rng, "number",
                             [rnd(fst[0])], [ref(fst[1])], tol=0.01))
            out.append(q(p, cat, "count", voice, [f"How many {nm} results are on file?", f"# of {nm} values?",
                                                  f"How many times has {w} {nm} been measured?"], rng, "count",
                         [len(rows)], refs))
            ext = min(vals) if side == "below" else max(vals)
            word = "lowest" if side == "below" else "highest"
            out.append(q(p, cat, f"{word}", voice, [f"{word} {nm} ever?", f"What is {w} {word} {nm} on record?"],
                         rng, "number", [rnd(ext)], refs, tol=0.01))
            if rows[0][0] != rows[-1][0]:
                fr, lr = unique_first(rows, vq), unique_latest(rows, vq)
                if fr and lr:
                    tr = trend_of(fr[0], lr[0])
                    if tr:
                        out.append(q(p, cat, "trend", voice, [f"{nm} trend over the whole record?",
                                                              f"Is {w} {nm} increasing, decreasing or stable overall?"],
                                     rng, "string", [tr], [ref(fr[1]), ref(lr[1])]))
        # threshold, ever (skip when the extreme is within 0.6 % of the cut-off)
        ext = min(vals) if side == "below" else max(vals)
        if abs(ext - cut) > 0.006 * abs(cut):
            ans = ext < cut if side == "below" else ext > cut
            cs = f"{cut:g}"
            out.append(q(p, cat, f"ever-{side}", voice, [f"Has {w} {nm} ever been {side} {cs}?",
                                                         f"any {nm} {'<' if side == 'below' else '>'} {cs}?"],
                         rng, "boolean", [ans], refs))
        # value on a date with exactly one value that day
        byday = defaultdict(list)
        for t, r in rows:
            byday[t.date()].append(r)
        days = sorted(d for d, rs in byday.items() if len(rs) == 1)
        if days:
            d = rng.choice(days)
            r = byday[d][0]
            ds = fmt_date(d, rng)
            out.append(q(p, cat, "on-date", voice, [f"{nm} on {ds}?", f"What was {w} {nm} on {ds}?"], rng,
                         "number", [rnd(vq(r))], [ref(r)], tol=0.01))
        # date of the latest result
        out.append(q(p, cat, "last-date", voice, [f"When was {w} last {nm} done?", f"date of last {nm}?"], rng,
                     "date", [rows[-1][0].date().isoformat()], [ref(rows[-1][1])]))
    return out


def gen_specialist_none(p: Pt) -> list[dict]:
    """Value questions about specialist results the patient never had: no-data."""
    out = []
    rng = random.Random(f"{SEED}|{p.id}|specnone")
    codes = [c for c in SPECIALIST if not p.obs(c)]
    if p.gender == "female" and "2857-1" in codes:
        codes.remove("2857-1")
    for code in rng.sample(codes, min(2, len(codes))):
        names, _, _, voice = SPECIALIST[code]
        nm = rng.choice(names)
        out.append(q(p, "specialist", "none", voice, [f"{nm}?", f"last {nm}", f"What was {who(p, rng)} latest {nm}?"],
                     rng, "number", [], [], status="no-data"))
    return out


# -------------------------------------------------------------------------------------------- IgE

IGE = {
    "6206-7": ["peanut IgE", "peanut-specific IgE"], "6246-3": ["shrimp IgE"], "6833-8": ["cat dander IgE"],
    "6273-7": ["walnut IgE"], "6082-2": ["codfish IgE"], "6276-0": ["wheat IgE"], "6106-9": ["egg white IgE"],
    "6248-9": ["soybean IgE", "soy IgE"], "7258-7": ["cow milk IgE", "milk IgE"], "6189-5": ["white oak IgE"],
    "6085-5": ["ragweed IgE"], "6095-4": ["dust mite IgE"], "6075-6": ["Cladosporium IgE"],
    "6844-5": ["honey bee IgE", "bee venom IgE"], "6158-0": ["latex IgE"],
}


def gen_ige(p: Pt) -> list[dict]:
    out = []
    rng = random.Random(f"{SEED}|{p.id}|ige")
    have = {c: p.obs(c) for c in IGE}
    have = {c: rows for c, rows in have.items() if rows}
    cat = "allergy_ige"
    if have:
        first = ["6206-7"] if "6206-7" in have else []
        for code in first + rng.sample(sorted(set(have) - set(first)), 3 - len(first)):
            rows = have[code]
            lat = unique_latest(rows, vq)
            nm = rng.choice(IGE[code])
            if lat:
                out.append(q(p, cat, "latest", "allergist", [f"{nm}?", f"What was {who(p, rng)} {nm} level?",
                                                             f"{nm} result (kU/L)?"], rng, "number",
                             [rnd(lat[0])], [ref(lat[1])], tol=0.01))
        code = rng.choice(sorted(have))
        rows = have[code]
        mx = max(vq(r) for _, r in rows)
        if abs(mx - 0.35) > 0.006 * 0.35:
            nm = rng.choice(IGE[code])
            out.append(q(p, cat, "ever-above", "allergist", [f"Was {who(p, rng)} {nm} ever above 0.35 kU/L?",
                                                             f"{nm} > 0.35?"], rng, "boolean", [mx > 0.35],
                         [ref(r) for _, r in rows]))
        rows = have[sorted(have)[0]]
        out.append(q(p, cat, "panel-date", "allergist", ["When was the allergen IgE panel drawn?",
                                                         f"date of {who(p, rng)} specific IgE testing?"], rng,
                     "date", [rows[-1][0].date().isoformat()], [ref(rows[-1][1])]))
        code = rng.choice(sorted(have))
        out.append(q(p, cat, "ever-tested", "allergist", [f"Has {p.pronoun()[1]} ever had a {rng.choice(IGE[code])} test?",
                                                          f"any {rng.choice(IGE[code])} on file?"], rng, "boolean",
                     [True], [ref(r) for _, r in have[code]]))
    else:
        code = rng.choice(sorted(IGE))
        nm = rng.choice(IGE[code])
        out.append(q(p, cat, "none", "allergist", [f"{nm}?", f"What was {who(p, rng)} {nm} level?"], rng, "number",
                     [], [], status="no-data"))
        code = rng.choice(sorted(IGE))
        nm = rng.choice(IGE[code])
        out.append(q(p, cat, "never-tested", "allergist", [f"Has {p.pronoun()[1]} ever had a {nm} test?",
                                                           f"any {nm} on file?"], rng, "boolean", [False], []))
    return out


# ---------------------------------------------------------------------------------- AllergyIntolerance

LAY_ALLERGEN = {
    "Allergy to mould": "mold", "Dander (animal) allergy": "animal dander", "House dust mite allergy": "dust mites",
    "Allergy to tree pollen": "tree pollen", "Allergy to grass pollen": "grass pollen",
    "Shellfish allergy": "shellfish", "Allergy to bee venom": "bee venom", "Allergy to fish": "fish",
    "Allergy to nut": "nuts", "Latex allergy": "latex", "Allergy to dairy product": "dairy",
    "Allergy to wheat": "wheat", "Allergy to eggs": "eggs", "Allergy to peanuts": "peanuts",
}
# Allergens whose names overlap: a negative about one needs the patient to have neither.
NEAR = {"nuts": {"peanuts"}, "peanuts": {"nuts"}, "fish": {"shellfish"}, "shellfish": {"fish"}}


def gen_allergy(p: Pt, all_names: list[str]) -> list[dict]:
    out = []
    rng = random.Random(f"{SEED}|{p.id}|allergy")
    als = p.res["AllergyIntolerance"]
    cat = "allergy"
    names = sorted({text_of(a["code"]) for a in als})
    lays = {LAY_ALLERGEN[n] for n in names}
    h, s = p.pronoun()
    if als:
        out.append(q(p, cat, "list", "pcp", ["Allergies?", f"What allergies are on {who(p, rng)} list?",
                                             "List the recorded allergies."], rng, "list", names,
                     [ref(a) for a in als]))
        out.append(q(p, cat, "count", "pcp", ["How many allergies are recorded?", f"# of allergies on {h} chart?"],
                     rng, "count", [len(als)], [ref(a) for a in als]))
        a = rng.choice(als)
        lay = LAY_ALLERGEN[text_of(a["code"])]
        out.append(q(p, cat, "has", "allergist", [f"Is {s} allergic to {lay}?", f"{lay} allergy on file?"], rng,
                     "boolean", [True], [ref(a)]))
        a = rng.choice(als)
        n = text_of(a["code"])
        out.append(q(p, cat, "criticality", "allergist", [f"Criticality of {h} {n.lower()}?",
                                                          f"How critical is the {LAY_ALLERGEN[n]} allergy recorded as?"],
                     rng, "string", [a["criticality"]], [ref(a)]))
        a = rng.choice(als)
        n = text_of(a["code"])
        out.append(q(p, cat, "recorded", "allergist", [f"When was the {LAY_ALLERGEN[n]} allergy recorded?",
                                                       f"date {h} {n.lower()} was entered?"], rng, "date",
                     [parse_t(a["recordedDate"]).date().isoformat()], [ref(a)]))
        a = rng.choice(als)
        n = text_of(a["code"])
        out.append(q(p, cat, "category", "allergist", [f"What category is {h} {LAY_ALLERGEN[n]} allergy recorded under?",
                                                       f"{n}: category as recorded?"], rng, "string",
                     [a["category"][0]], [ref(a)]))
        a = rng.choice(als)
        n = text_of(a["code"])
        out.append(q(p, cat, "reaction-none", "allergist", [f"What reaction does {s} have to {LAY_ALLERGEN[n]}?",
                                                            f"reaction documented for the {LAY_ALLERGEN[n]} allergy?"],
                     rng, "string", [], [], status="no-data"))
        out.append(q(p, cat, "drug-allergy", "pcp", ["Any drug allergies?", f"Is {s} allergic to any medication?"], rng,
                     "boolean", [any("medication" in a.get("category", []) for a in als)], [ref(a) for a in als]))
    # negatives: an allergen another patient has, none near it here
    cands = sorted({LAY_ALLERGEN[n] for n in all_names} - lays)
    cands = [c for c in cands if not (NEAR.get(c, set()) & lays)]
    if cands:
        lay = rng.choice(cands)
        out.append(q(p, cat, "has-not", "allergist", [f"Is {s} allergic to {lay}?", f"{lay} allergy on file?"], rng,
                     "boolean", [False], []))
    if not als:
        out.append(q(p, cat, "any", "pcp", ["Any allergies on file?", f"Does {s} have any recorded allergies?"], rng,
                     "boolean", [False], []))
    return out


# ------------------------------------------------------------------------------------ social history

SOCIAL = {
    "71802-3": (["housing status", "Housing status as recorded"], "housing"),
    "63513-6": (["health insurance coverage answer", "answer to the insurance coverage screening question"],
                "insurance"),
    "28245-9": (["abuse screen result", "abuse status (OMAHA)"], "abuse"),
    "76690-7": (["sexual orientation as recorded", "documented sexual orientation"], "orientation"),
    "55277-8": (["HIV status as recorded", "HIV status"], "hiv"),
}


def gen_social(p: Pt) -> list[dict]:
    out = []
    rng = random.Random(f"{SEED}|{p.id}|social")
    cat = "social"
    for code, (names, tag) in SOCIAL.items():
        rows = p.obs(code)
        nm = rng.choice(names)
        if rows:
            lat = unique_latest(rows, vtext)
            if lat:
                out.append(q(p, cat, f"latest-{tag}", "sw", [f"{nm}?", f"What is {who(p, rng)} latest {nm}?"], rng,
                             "string", [lat[0]], [ref(lat[1])]))
            if tag == "housing":
                out.append(q(p, cat, "housing-date", "sw", ["When was housing status last screened?",
                                                            f"date of {who(p, rng)} last housing screen?"],
                             rng, "date", [rows[-1][0].date().isoformat()], [ref(rows[-1][1])]))
                out.append(q(p, cat, "housing-count", "sw", ["How many times was housing status recorded?"],
                             rng, "count", [len(rows)], [ref(r) for _, r in rows]))
    return out


def gen_social_none(p: Pt) -> list[dict]:
    rng = random.Random(f"{SEED}|{p.id}|socialnone")
    code = rng.choice(sorted(SOCIAL))
    names, tag = SOCIAL[code]
    return [q(p, "social", f"none-{tag}", "sw", [f"{rng.choice(names)}?", f"What is {who(p, rng)} {names[0]}?"], rng,
              "string", [], [], status="no-data")]


# ---------------------------------------------------------------------------------------- intake

SMOKE = "72166-2"
PAIN = "72514-3"
TEMP = "8331-1"


def gen_intake(p: Pt) -> list[dict]:
    out = []
    rng = random.Random(f"{SEED}|{p.id}|intake")
    cat = "intake"
    h, s = p.pronoun()
    rows = p.obs(SMOKE)
    if rows:
        lat = unique_latest(rows, vtext)
        if lat:
            out.append(q(p, cat, "smoking-latest", "nurse", ["smoking status?", "Smoker? (status as last recorded)",
                                                             f"What is {who(p, rng)} current tobacco smoking status?"],
                         rng, "string", [lat[0]], [ref(lat[1])]))
            out.append(q(p, cat, "smoking-current", "nurse", [f"Is {s} a current smoker?", "current smoker?"], rng,
                         "boolean", [lat[0].lower().startswith("current")], [ref(lat[1])]))
        ever = [r for _, r in rows if not vtext(r).lower().startswith("never")]
        out.append(q(p, cat, "smoking-ever", "pcp", [f"Has {s} ever been recorded as a current or former smoker?",
                                                     "any smoking history (former or current) on record?"], rng,
                     "boolean", [bool(ever)], [ref(r) for r in ever] or [ref(r) for _, r in rows]))
    rows = p.obs(PAIN)
    if rows:
        lat = unique_latest(rows, vq)
        if lat:
            out.append(q(p, cat, "pain-latest", "nurse", ["last pain score?", "Pain 0-10 most recent?",
                                                          f"What was {who(p, rng)} latest pain score?"], rng,
                         "number", [rnd(lat[0])], [ref(lat[1])], tol=0.01))
        years = sorted({t.year for t, _ in rows})
        y = rng.choice(years)
        yr = [(t, r) for t, r in rows if t.year == y]
        if len(yr) >= 1:
            mx = max(vq(r) for _, r in yr)
            out.append(q(p, cat, "pain-max-year", "nurse", [f"highest pain score in {y}?",
                                                            f"What was {who(p, rng)} worst pain score during {y}?"],
                         rng, "number", [rnd(mx)], [ref(r) for _, r in yr], tol=0.01))
            out.append(q(p, cat, "pain-count-year", "nurse", [f"How many pain scores were recorded in {y}?",
                                                              f"# pain scores in {y}?"], rng, "count", [len(yr)],
                         [ref(r) for _, r in yr]))
        mx = max(vq(r) for _, r in rows)
        cut = rng.choice([3, 5, 7])
        if mx != cut:
            out.append(q(p, cat, "pain-ever-above", "nurse", [f"Has {s} ever reported pain above {cut}/10?",
                                                              f"any pain score > {cut}?"], rng, "boolean", [mx > cut],
                         [ref(r) for _, r in rows]))
        byday = defaultdict(list)
        for t, r in rows:
            byday[t.date()].append(r)
        days = sorted(d for d, rs in byday.items() if len(rs) == 1)
        if days:
            d = rng.choice(days)
            ds = fmt_date(d, rng)
            out.append(q(p, cat, "pain-on-date", "nurse", [f"pain score on {ds}?", f"What pain score was charted on {ds}?"],
                         rng, "number", [rnd(vq(byday[d][0]))], [ref(byday[d][0])], tol=0.01))
        # an empty calendar year before the first pain score, after birth: no-data
        y0 = rows[0][0].year - rng.randint(2, 4)
        if y0 > p.birth.year:
            out.append(q(p, cat, "pain-empty-year", "nurse", [f"pain score in {y0}?", f"highest pain score in {y0}?"],
                         rng, "number", [], [], status="no-data"))
    rows = p.obs(TEMP)
    if rows:
        lat = unique_latest(rows, vq)
        if lat:
            out.append(q(p, cat, "temp-latest", "nurse", ["last temp?", f"What was {who(p, rng)} most recent oral temperature?"],
                         rng, "number", [rnd(lat[0])], [ref(lat[1])], tol=0.01))
    return out


def gen_temp_none(p: Pt) -> list[dict]:
    rng = random.Random(f"{SEED}|{p.id}|tempnone")
    return [q(p, "intake", "temp-none", "nurse", ["last temp?", f"What was {who(p, rng)} latest temperature?"], rng,
              "number", [], [], status="no-data")]


# ------------------------------------------------------------------------------------- urinalysis

UA_CODED = {
    "25428-4": ["UA glucose", "urine glucose (dipstick)"], "20454-5": ["UA protein", "urine protein on dipstick"],
    "5794-3": ["UA blood", "blood on urine dipstick"], "5799-2": ["UA leukocyte esterase", "urine LE"],
    "5802-4": ["UA nitrite", "urine nitrites"], "2514-8": ["UA ketones", "urine ketones"],
    "5778-6": ["urine color", "color of urine"], "32167-9": ["urine clarity"],
}
UA_NUM = {"5811-5": ["urine specific gravity", "UA SG", "specific gravity of urine"],
          "5803-2": ["urine pH", "UA pH"],
          "5792-7": ["urine glucose in mg/dL", "UA glucose (mg/dL)"],
          "5804-0": ["urine protein in mg/dL", "UA protein (mg/dL)"]}
# Synthea charts glucose, protein, ketones and bilirubin twice on one strip: a coded presence result and a
# numeric mg/dL result at the same instant. "UA glucose?" alone could mean either, so where a numeric twin
# exists the question names the kind it asks ("presence" or "mg/dL").
UA_TWIN = {"25428-4": "5792-7", "20454-5": "5804-0", "2514-8": "5797-6", "5770-3": "20505-4"}


def gen_ua(p: Pt) -> list[dict]:
    out = []
    rng = random.Random(f"{SEED}|{p.id}|ua")
    cat = "urinalysis"
    for code in rng.sample(sorted(UA_CODED), 4):
        rows = p.obs(code)
        if not rows:
            continue
        lat = unique_latest(rows, vtext)
        nm = rng.choice(UA_CODED[code])
        twin = p.obs(UA_TWIN[code]) if code in UA_TWIN else []
        if twin and lat and any(t == rows[-1][0] for t, _ in twin):
            nm = f"{nm} (presence, +/-)"
        if lat:
            out.append(q(p, cat, "coded-latest", "pcp", [f"{nm}?", f"last {nm} result?",
                                                         f"What did {who(p, rng)} most recent {nm} show?"], rng,
                         "string", [lat[0]], [ref(lat[1])]))
    for code, names in UA_NUM.items():
        rows = p.obs(code)
        if not rows:
            continue
        nm = rng.choice(names)
        lat = unique_latest(rows, vq)
        if lat:
            out.append(q(p, cat, "num-latest", "pcp", [f"{nm}?", f"last {nm}", f"What was {who(p, rng)} latest {nm}?"],
                         rng, "number", [rnd(lat[0])], [ref(lat[1])], tol=0.01))
        fst = unique_first(rows, vq)
        if fst and len(rows) >= 2:
            out.append(q(p, cat, "num-first", "pcp", [f"first {nm} on record?"], rng, "number", [rnd(fst[0])],
                         [ref(fst[1])], tol=0.01))
    rows = p.obs("5811-5")
    if rows:
        out.append(q(p, cat, "last-date", "pcp", ["When was the last urinalysis?", "date of last UA?"], rng, "date",
                     [rows[-1][0].date().isoformat()], [ref(rows[-1][1])]))
    return out


def gen_ua_none(p: Pt) -> list[dict]:
    rng = random.Random(f"{SEED}|{p.id}|uanone")
    code = rng.choice(sorted(UA_NUM))
    return [q(p, "urinalysis", "none", "pcp", [f"{rng.choice(UA_NUM[code])}?", f"last {UA_NUM[code][0]}"], rng,
              "number", [], [], status="no-data")]


# -------------------------------------------------------------------------------------- care plans


def cp_name(c: dict) -> str:
    return text_of(c["category"][0])


def gen_careplan(p: Pt) -> list[dict]:
    out = []
    rng = random.Random(f"{SEED}|{p.id}|careplan")
    cat = "care_plan"
    cps = sorted(p.res["CarePlan"], key=lambda c: c["period"]["start"])
    h, s = p.pronoun()
    if not cps:
        out.append(q(p, cat, "any-none", "pcp", [f"Does {s} have any care plans?", "any care plan on file?"], rng,
                     "boolean", [False], []))
        return out
    active = [c for c in cps if c["status"] == "active"]
    out.append(q(p, cat, "active-list", "pcp", ["active care plans?", f"What care plans is {s} currently on?",
                                                f"List {who(p, rng)} active care plans."], rng, "list",
                 sorted({cp_name(c) for c in active}), [ref(c) for c in active]))
    out.append(q(p, cat, "count", "pcp", ["How many care plans are on record?", f"# care plans {s} has had (ever)?"],
                 rng, "count", [len(cps)], [ref(c) for c in cps]))
    byname = defaultdict(list)
    for c in cps:
        byname[cp_name(c)].append(c)
    # a named plan: one of its kind, not Synthea's "(record artifact)" placeholders
    single = sorted(n for n, cs in byname.items() if len(cs) == 1 and "artifact" not in n)
    if single:
        n = rng.choice(single)
        c = byname[n][0]
        n = n if "plan" in n.lower() else f"{n} care plan"
        out.append(q(p, cat, "is-active", "pcp", [f"Is {h} {n} still active?", f"{n}: active?"], rng,
                     "boolean", [c["status"] == "active"], [ref(c)]))
        acts = sorted({text_of(a["detail"]["code"]) for a in c.get("activity", []) if a.get("detail", {}).get("code")})
        if acts:
            out.append(q(p, cat, "activities", "pcp", [f"What activities are in {h} {n}?",
                                                       f"{n} activities?"], rng, "list", acts, [ref(c)]))
        addr = []
        for a in c.get("addresses", []):
            cond = p.by_url.get(a["reference"])
            if cond:
                addr.append(text_of(cond["code"]))
        if len(set(addr)) == 1:
            cond = p.by_url[c["addresses"][0]["reference"]]
            out.append(q(p, cat, "addresses", "pcp", [f"What condition does the {n} address?",
                                                      f"{n} is for which problem?"], rng, "string", [addr[0]],
                         [ref(c), ref(cond)]))
        out.append(q(p, cat, "start", "pcp", [f"When did the {n} start?", f"start date of {h} {n}?"],
                     rng, "date", [parse_t(c["period"]["start"]).date().isoformat()], [ref(c)]))
    return out


def gen_goal(p: Pt) -> list[dict]:
    out = []
    rng = random.Random(f"{SEED}|{p.id}|goal")
    cat = "goal"
    gs = p.res["Goal"]
    if not gs:
        if p.res["CarePlan"]:
            out.append(q(p, cat, "any-none", "pcp", ["Any care goals documented?", "Are there any goals on file?"], rng,
                         "boolean", [False], []))
        return out
    descs = sorted({g["description"]["text"] for g in gs})
    out.append(q(p, cat, "list", "pcp", ["What goals are documented?", f"List {who(p, rng)} care goals."], rng, "list",
                 descs, [ref(g) for g in gs]))
    bp = [g for g in gs if "blood pressure" in g["description"]["text"].lower()]
    out.append(q(p, cat, "bp-goal", "pcp", ["Is there a blood pressure goal?", "any BP goal documented?"], rng, "boolean",
                 [bool(bp)], [ref(g) for g in bp]))
    return out


# ----------------------------------------------------------------------------------------- imaging


def gen_imaging(p: Pt) -> list[dict]:
    out = []
    rng = random.Random(f"{SEED}|{p.id}|imaging")
    cat = "imaging"
    ims = sorted(p.res["ImagingStudy"], key=lambda r: r["started"])
    h, s = p.pronoun()
    out.append(q(p, cat, "any", "pcp", ["any imaging?", f"Has {s} had any imaging studies?"], rng, "boolean",
                 [bool(ims)], [ref(r) for r in ims]))
    out.append(q(p, cat, "count", "pcp", ["How many imaging studies are on file?", "# imaging studies?"], rng, "count",
                 [len(ims)], [ref(r) for r in ims]))
    if not ims:
        out.append(q(p, cat, "last-date-none", "pcp", ["When was the last imaging study?", "date of last imaging?"], rng,
                     "date", [], [], status="no-data"))
        return out
    last = ims[-1]
    if len(ims) == 1 or ims[-2]["started"] != last["started"]:
        se = last["series"][0]
        out.append(q(p, cat, "last-modality", "pcp", ["modality of the last imaging study?",
                                                      f"What kind of imaging was {h} most recent study?"], rng, "string",
                     [se["modality"]["display"]], [ref(last)]))
        out.append(q(p, cat, "last-bodysite", "pcp", ["What body site was imaged most recently?",
                                                      "last imaging study: body part?"], rng, "string",
                     [se["bodySite"]["display"]], [ref(last)]))
        out.append(q(p, cat, "last-date", "pcp", ["When was the last imaging study?", "date of last imaging?"], rng,
                     "date", [parse_t(last["started"]).date().isoformat()], [ref(last)]))
    us = [r for r in ims if any(se["modality"]["code"] == "US" for se in r["series"])]
    out.append(q(p, cat, "any-us", "pcp", ["Any ultrasound studies?", f"Has {s} had an ultrasound?"], rng, "boolean",
                 [bool(us)], [ref(r) for r in us]))
    return out


# ------------------------------------------------------------------------------------------- death

COD = "69453-9"


def age_at(birth: dt.date, d: dt.date) -> int | None:
    """Completed years; None within 3 days of a birthday."""
    for k in range(-3, 4):
        dd = d + dt.timedelta(days=k)
        if (dd.month, dd.day) == (birth.month, birth.day):
            return None
    return d.year - birth.year - ((d.month, d.day) < (birth.month, birth.day))


def gen_death(p: Pt) -> list[dict]:
    out = []
    rng = random.Random(f"{SEED}|{p.id}|death")
    cat = "death"
    h, s = p.pronoun()
    dead = p.death is not None
    out.append(q(p, cat, "deceased", "pcp", [f"Is {p.given} deceased?", "deceased?", f"Has {s} died?"], rng, "boolean",
                 [dead], [ref(p.patient)]))
    if not dead:
        return out
    out.append(q(p, cat, "date", "pcp", ["date of death?", f"When did {s} die?"], rng, "date",
                 [p.death.date().isoformat()], [ref(p.patient)]))
    rows = p.obs(COD)
    if rows:
        out.append(q(p, cat, "cause", "pcp", ["cause of death?", f"What was {who(p, rng)} cause of death?",
                                              "COD per the death certificate?"], rng, "string", [vtext(rows[-1][1])],
                     [ref(rows[-1][1])]))
    else:
        out.append(q(p, cat, "cause-none", "pcp", ["cause of death?", "COD per the death certificate?"], rng, "string",
                     [], [], status="no-data"))
    a = age_at(p.birth, p.death.date())
    if a is not None:
        out.append(q(p, cat, "age-at-death", "pcp", ["age at death?", f"How old was {s} when {s} died?"], rng,
                     "number", [a], [ref(p.patient)], tol=0.0))
    return out


# ------------------------------------------------------------------------------------- immunizations

# name in the question -> predicate on the vaccine text (lower case)
VACCINES = {
    "flu shots": lambda t: "influenza" in t,
    "HPV doses": lambda t: "hpv" in t,
    "PCV13 doses": lambda t: "pcv 13" in t or "pcv13" in t,
    "polio (IPV) doses": lambda t: t == "ipv",
    "Hib doses": lambda t: t.startswith("hib"),
    "hep B doses": lambda t: t.startswith("hep b"),
    "hep A doses": lambda t: t.startswith("hep a"),
    "MMR doses": lambda t: t == "mmr",
    "varicella doses": lambda t: t == "varicella",
    "shingles (zoster) shots": lambda t: t == "zoster",
    "rotavirus doses": lambda t: t.startswith("rotavirus"),
    "meningococcal doses": lambda t: t.startswith("meningococcal"),
    "DTaP doses": lambda t: t == "dtap",
    "tetanus shots (Td, Tdap or DTaP)": lambda t: t.startswith("td") or t == "dtap",
}
SINGULAR = {
    "flu shots": "flu shot", "HPV doses": "HPV dose", "PCV13 doses": "PCV13", "polio (IPV) doses": "IPV dose",
    "Hib doses": "Hib dose", "hep B doses": "hep B vaccine", "hep A doses": "hep A vaccine", "MMR doses": "MMR",
    "varicella doses": "varicella vaccine", "shingles (zoster) shots": "shingles (zoster) shot",
    "rotavirus doses": "rotavirus vaccine", "meningococcal doses": "meningococcal vaccine", "DTaP doses": "DTaP",
    "tetanus shots (Td, Tdap or DTaP)": "tetanus shot (Td, Tdap or DTaP)",
}


def an(word: str) -> str:
    """'a' or 'an' before a vaccine name (an MMR, an HPV dose)."""
    return "an" if word[0].lower() in "aeiomh" and not word.lower().startswith(("hep", "hib", "men")) else "a"


def gen_imm(p: Pt) -> list[dict]:
    out = []
    rng = random.Random(f"{SEED}|{p.id}|imm")
    cat = "immunization"
    ims = sorted(p.res["Immunization"], key=lambda r: r["occurrenceDateTime"])
    h, s = p.pronoun()
    have = {k: [r for r in ims if f(text_of(r["vaccineCode"]).lower())] for k, f in VACCINES.items()}
    pos = sorted(k for k, v in have.items() if v)
    neg = sorted(k for k, v in have.items() if not v)
    if pos:
        k = rng.choice(pos)
        rs = have[k]
        out.append(q(p, cat, "count", "pcp", [f"How many {k} has {s} had?", f"# {k} on record?",
                                              f"Number of {k} in {who(p, rng)} immunization history?"], rng, "count",
                     [len(rs)], [ref(r) for r in rs]))
        k = rng.choice(pos)
        rs = have[k]
        one = SINGULAR[k]
        out.append(q(p, cat, "last-date", "pcp", [f"date of last {one}?", f"When was {h} most recent {one}?"], rng,
                     "date", [parse_t(rs[-1]["occurrenceDateTime"]).date().isoformat()], [ref(rs[-1])]))
        k = rng.choice(pos)
        rs = have[k]
        if len(rs) >= 2:
            one = SINGULAR[k]
            out.append(q(p, cat, "first-date", "pcp", [f"When was {h} first {one}?", f"date of first {one}?"], rng,
                         "date", [parse_t(rs[0]["occurrenceDateTime"]).date().isoformat()], [ref(rs[0])]))
        # flu shots since a year boundary (no dose within a day of it)
        fl = have["flu shots"]
        if len(fl) >= 3:
            y = rng.choice(sorted({parse_t(r["occurrenceDateTime"]).year for r in fl}))
            b = dt.datetime(y, 1, 1, tzinfo=UTC)
            if all(abs((parse_t(r["occurrenceDateTime"]) - b).total_seconds()) > 86400 for r in fl):
                rs = [r for r in fl if parse_t(r["occurrenceDateTime"]) >= b]
                out.append(q(p, cat, "count-since", "pcp", [f"How many flu shots since January {y}?",
                                                            f"# flu vaccines since {y}-01-01?"], rng, "count",
                             [len(rs)], [ref(r) for r in rs]))
        k = rng.choice(pos)
        out.append(q(p, cat, "ever", "pcp", [f"Has {s} ever had {an(SINGULAR[k])} {SINGULAR[k]}?", f"any {SINGULAR[k]} on record?"], rng,
                     "boolean", [True], [ref(r) for r in have[k]]))
    if neg:
        k = rng.choice(neg)
        out.append(q(p, cat, "never", "pcp", [f"Has {s} ever had {an(SINGULAR[k])} {SINGULAR[k]}?", f"any {SINGULAR[k]} on record?"], rng,
                     "boolean", [False], []))
    return out


# ------------------------------------------------------------------------------------------ build


def build() -> list[dict]:
    pts = load()
    all_allergy_names = sorted({text_of(a["code"]) for p in pts for a in p.res["AllergyIntolerance"]})
    pools: dict[str, list[dict]] = defaultdict(list)
    for p in pts:
        for gen in (gen_specialist, gen_ige, gen_social, gen_intake, gen_ua, gen_careplan, gen_goal, gen_imaging,
                    gen_death, gen_imm):
            for x in gen(p):
                pools[x["category"]].append(x)
        for x in gen_allergy(p, all_allergy_names):
            pools[x["category"]].append(x)
    # no-data candidates in the categories whose positives are rare
    rng = random.Random(f"{SEED}|nodata-patients")
    none_pts = rng.sample(pts, 30)
    for p in none_pts[:8]:
        for x in gen_specialist_none(p):
            pools["specialist"].append(x)
    for p in none_pts[8:14]:
        if not any(p.obs(c) for c in SOCIAL):
            pools["social"].extend(gen_social_none(p))
    for p in none_pts[14:20]:
        if not p.obs("5811-5"):
            pools["urinalysis"].extend(gen_ua_none(p))
    for p in none_pts[20:24]:
        if not p.obs(TEMP):
            pools["intake"].extend(gen_temp_none(p))
    out = []
    for cat, cap in CAPS.items():
        pool = pools[cat]
        r = random.Random(f"{SEED}|pick|{cat}")
        # keep every no-data and every rare pattern first, then fill from the rest
        nodata = [x for x in pool if x["expected_status"] == "no-data"]
        rest = [x for x in pool if x["expected_status"] == "answered"]
        nodata_keep = r.sample(nodata, min(len(nodata), max(3, cap // 5)))
        # round-robin key: the specialty for specialist results (every specialty asked), else the pattern
        by_pat = defaultdict(list)
        for x in rest:
            kind, pat, voice = x["template"].split("/")
            by_pat[voice.split(".")[0] if cat == "specialist" else pat].append(x)
        picked = []
        pats = sorted(by_pat)
        for pat in pats:
            r.shuffle(by_pat[pat])
        # round-robin over patterns so every pattern is represented
        while len(picked) + len(nodata_keep) < cap and any(by_pat[pt] for pt in pats):
            for pat in pats:
                if by_pat[pat] and len(picked) + len(nodata_keep) < cap:
                    picked.append(by_pat[pat].pop())
        sel = picked + nodata_keep
        sel.sort(key=lambda x: (x["patient_id"], x["template"], x["question"]))
        for i, x in enumerate(sel, 1):
            out.append({"id": f"{cat}-{i:03d}", **x})
    return out


def render(rows: list[dict]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when questions.jsonl is stale")
    args = ap.parse_args()
    data = render(build())
    if args.check:
        if not OUT.exists() or OUT.read_bytes() != data:
            print(f"{OUT.name} is stale: run build.py", file=sys.stderr)
            return 1
        print(f"{OUT.name} is up to date")
        return 0
    OUT.write_bytes(data)
    print(f"wrote {OUT} ({len(data.splitlines())} questions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
