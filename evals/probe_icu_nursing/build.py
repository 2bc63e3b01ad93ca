"""Build the blind ICU-nursing probe (``questions.jsonl``) from raw synthetic FHIR bundles.

The voice is an ICU nurse at handover or a resident on night float: "K?", "Tmax 24h", "pressors?", "any PRN
tylenol o/n", "why was the zosyn held", "UOP last 6h". Every question is asked at a **handover moment inside a
hospital stay** (07:30 or 19:30 on the stay's own clock), so the record also holds facts after ``now``; the gold
only ever looks at facts up to ``now``.

Gold answers are computed here from the raw JSON (``urn:uuid:`` references resolved by hand); nothing is
imported from fhirqa. The bundles come from ``fhirqa.cli synth --patients 40 --seed 771177 --now
2026-03-15T10:00:00Z`` run as a subprocess (the command a user would type).

    python evals/probe_icu_nursing/build.py            # synthesises into a temp dir, rewrites questions.jsonl
    python evals/probe_icu_nursing/build.py --check    # exit 1 when the committed file is stale
    python evals/probe_icu_nursing/build.py --data DIR # reuse bundles already written by the synth command

Same data in, same bytes out: every random choice comes from ``random.Random(<string>)``.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "questions.jsonl"
SEED = "771177"
SYNTH_NOW = "2026-03-15T10:00:00Z"
N_PATIENTS = "40"
H = timedelta(hours=1)

# item key -> (LOINC codes, spoken names). Mg is charted under two codes (mg/dL and mmol/L); a patient's stay
# uses one of them, and Mg questions are asked only when the stay has a single one.
ITEMS = {
    "K": (("2823-3",), ["K", "K+", "potassium", "K", "potasium"]),
    "Na": (("2951-2",), ["Na", "sodium", "Na+"]),
    "Cr": (("2160-0",), ["Cr", "creat", "creatinine", "creatinin"]),
    "BUN": (("3094-0",), ["BUN"]),
    "CO2": (("2028-9",), ["bicarb", "CO2"]),
    "Mg": (("19123-9", "2601-3"), ["Mg", "mag", "magnesium"]),
    "WBC": (("6690-2",), ["WBC", "white count", "wbc"]),
    "Hgb": (("718-7",), ["Hgb", "hemoglobin", "Hb", "hgb"]),
    "plt": (("777-3",), ["plts", "platelets", "plt", "platlets"]),
    "lactate": (("2524-7",), ["lactate", "lactic", "lactic acid"]),
    "trop": (("89579-7",), ["trop", "troponin", "trop I"]),
    "trough": (("4092-3",), ["vanc trough", "vanco trough", "vanc level"]),
    "temp": (("8310-5",), ["temp", "temperature"]),
    "HR": (("8867-4",), ["HR", "heart rate"]),
    "RR": (("9279-1",), ["RR", "resp rate"]),
    "SpO2": (("59408-5",), ["sat", "SpO2", "O2 sat", "sats"]),
    "SBP": (("8480-6",), ["SBP", "systolic", "sbp"]),
    "FSBG": (("41653-7",), ["FSBG", "fingerstick glucose", "POC glucose", "accucheck"]),
}
LABS = ["K", "Na", "Cr", "BUN", "CO2", "Mg", "WBC", "Hgb", "plt"]
VITALS = ["temp", "HR", "RR", "SpO2", "SBP"]
# ingredient key -> (words in the record's drug names, spoken names)
DRUGS = {
    "heparin": (("heparin",), ["heparin", "hep", "SQ heparin", "heprin"]),
    "vancomycin": (("vancomycin",), ["vanc", "vanco", "vancomycin", "vancomyin"]),
    "pip-tazo": (("piperacillin",), ["zosyn", "pip-tazo", "Zosyn"]),
    "ceftriaxone": (("ceftriaxone",), ["ceftriaxone", "rocephin"]),
    "acetaminophen": (("acetaminophen",), ["tylenol", "APAP", "acetaminophen"]),
    "insulin": (("insulin",), ["insulin", "sliding scale insulin", "humalog"]),
}
ANTIBIOTICS = ("vancomycin", "pip-tazo", "ceftriaxone")
# drugs ICU nurses ask about that these records never hold (checked per bundle before asking)
ABSENT_DRUGS = {
    "norepinephrine": ["is she on levo", "pressors?", "any pressors running", "on norepi?", "levophed?",
                       "is he on any vasopressors"],
    "haloperidol": ["any PRN haldol o/n", "haldol given overnight?", "did she get haldol last night"],
    "propofol": ["sedation? on propofol?", "is she on a propofol gtt", "any sedation running (prop/precedex)?"],
    "potassium chloride": ["was K repleted", "any KCl given today", "did she get K repletion"],
    "furosemide": ["lasix given today?", "did he get any lasix", "diuresed w/ lasix today?"],
}
# questions about things these records never chart: the honest answer is "not in the record"
ABSENT_VALUES = [
    ("abg", ["last ABG", "pH on the last gas?", "last PaO2", "ABG results?", "last art gas"]),
    ("uop", ["UOP last 6h", "urine output overnight?", "how much UOP since midnight", "UOP last shift"]),
    ("map", ["MAP trend since 0600", "last MAP", "lowest MAP overnight", "MAPs o/n?"]),
    ("fluids", ["how much fluid today", "I/O today?", "net fluid balance last 24h", "total IVF in today"]),
    ("rass", ["RASS?", "last RASS score", "CAM-ICU result?"]),
    ("cvp", ["CVP?", "last CVP"]),
    ("next-trough", ["when's the next vanc trough due", "next vanc trough time?"]),
]


def ts(s: str) -> datetime:
    """Parse an ISO 8601 timestamp with offset into an aware datetime (no offset: UTC)."""
    d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    return d if d.tzinfo else d.replace(tzinfo=UTC)


def iso(d: datetime) -> str:
    return d.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rid(ref: str) -> str:
    return ref.split(":")[-1].split("/")[-1]


def drug_key(name: str) -> str | None:
    low = name.lower()
    for k, (words, _) in DRUGS.items():
        if any(w in low for w in words):
            return k
    return None


class Patient:
    """One bundle, flattened into what the questions need."""

    def __init__(self, bundle: dict):
        res = [e["resource"] for e in bundle["entry"]]
        self.raw = json.dumps(bundle).lower()
        pat = next(r for r in res if r["resourceType"] == "Patient")
        self.id = pat["id"]
        self.gender = pat.get("gender")
        meds = {r["id"]: r for r in res if r["resourceType"] == "Medication"}
        stays = sorted((r for r in res if r["resourceType"] == "Encounter" and r["class"]["code"] == "IMP"
                        and r["period"].get("end")), key=lambda r: r["period"]["start"])
        self.stay = (ts(stays[-1]["period"]["start"]), ts(stays[-1]["period"]["end"])) if stays else None
        self.obs: dict[str, list] = {}
        codes = {c: k for k, v in ITEMS.items() for c in v[0]}
        self.mg_codes: set[str] = set()
        for r in res:
            if r["resourceType"] != "Observation":
                continue
            t = r.get("effectiveDateTime") or (r.get("effectivePeriod") or {}).get("start") or r.get("issued")
            parts = [(r["code"]["coding"][0]["code"], r.get("valueQuantity"))]
            parts += [(c["code"]["coding"][0]["code"], c.get("valueQuantity")) for c in r.get("component", [])]
            for code, vq in parts:
                if code in codes and vq and "value" in vq:
                    self.obs.setdefault(codes[code], []).append((ts(t), float(vq["value"]), r["id"], code))
        for v in self.obs.values():
            v.sort(key=lambda x: x[0])
        self.admin = []
        for r in res:
            if r["resourceType"] != "MedicationAdministration":
                continue
            cc = r.get("medicationCodeableConcept") or meds[rid(r["medicationReference"]["reference"])]["code"]
            name = cc.get("text") or cc["coding"][0]["display"]
            t = r.get("effectiveDateTime") or r["effectivePeriod"]["start"]
            dose = r.get("dosage", {}).get("dose", {})
            self.admin.append({"name": name, "key": drug_key(name), "t": ts(t), "status": r["status"],
                               "reason": (r.get("statusReason") or [{}])[0].get("text"), "id": r["id"],
                               "dose": dose.get("value"), "unit": dose.get("unit"),
                               "route": (r.get("dosage", {}).get("route") or {}).get("text")})
        self.admin.sort(key=lambda a: a["t"])
        self.notes = []
        for r in res:
            if r["resourceType"] != "DocumentReference":
                continue
            att = r["content"][0]["attachment"]
            text = base64.b64decode(att["data"]).decode() if "data" in att else ""
            self.notes.append((ts(r["date"]), text, r["id"]))
        self.notes.sort(key=lambda n: n[0])
        # a drug named only in a note (a plan line, a home med list) still counts as "in the record"
        self.raw += "\n".join(n[1] for n in self.notes).lower()

    # ---- windows (closed intervals of instants) -------------------------------------------------
    def vals(self, item, lo=None, hi=None):
        """Values of an item in [lo, hi]; Mg only when the stay uses a single Mg code."""
        vs = [o for o in self.obs.get(item, []) if (lo is None or o[0] >= lo) and (hi is None or o[0] <= hi)]
        if item == "Mg" and len({o[3] for o in self.obs.get(item, [])}) > 1:
            return None
        return vs

    def doses(self, key, lo, hi, status="completed"):
        return [a for a in self.admin if a["key"] == key and lo <= a["t"] <= hi
                and (status is None or a["status"] == status)]


def pron(p, kind="sub"):
    table = {"sub": {"female": "she", "male": "he"}, "pos": {"female": "her", "male": "his"}}
    return table[kind].get(p.gender, "the patient")


class Builder:
    def __init__(self):
        self.rows = []

    def add(self, p, now, cat, tmpl, q, atype, expected, refs, status="answered", tol=None):
        if tol is None:
            tol = 0.01 if atype == "number" else 0
        self.rows.append({"patient_id": p.id, "question": q, "now": iso(now), "category": cat,
                          "answer_type": atype, "expected": expected if status == "answered" else [],
                          "expected_status": status, "tolerance": tol, "gold_refs": refs if status == "answered" else [],
                          "template": tmpl})


def local_at(day_anchor: datetime, days: int, hour: int, minute: int = 0) -> datetime:
    """hour:minute on the local day `days` after the anchor's local day, on the anchor's clock."""
    d = day_anchor.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=days)
    return d.replace(hour=hour, minute=minute)


def stable(fn, lo, hi, shift=timedelta(minutes=60)):
    """fn(lo, hi) when moving the window's start by ±shift does not change it, else None."""
    a = fn(lo, hi)
    if a is None or fn(lo - shift, hi) != a or fn(lo + shift, hi) != a:
        return None
    return a


def ext(p, item, lo, hi, kind):
    vs = p.vals(item, lo, hi)
    if not vs:
        return None
    pick = max(vs, key=lambda o: o[1]) if kind == "max" else min(vs, key=lambda o: o[1])
    return (pick[1], pick[2])


def latest(p, item, lo, hi):
    vs = p.vals(item, lo, hi)
    if not vs:
        return None
    if len(vs) > 1 and vs[-1][0] == vs[-2][0] and vs[-1][1] != vs[-2][1]:
        return None
    return (vs[-1][1], vs[-1][2])


def trend_of(vs):
    """increasing / decreasing / stable by the 5 % rule; None when r is within 3 points of a cut."""
    if len(vs) < 2 or vs[0][1] == 0:
        return None
    r = (vs[-1][1] - vs[0][1]) / abs(vs[0][1])
    if abs(abs(r) - 0.05) < 0.03:
        return None
    return "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"


def typo(r, s):
    """Occasionally a slip of the keyboard (swap two inner letters of the longest word of 6+ letters)."""
    if r.random() > 0.06:
        return s
    words = s.split()
    long_ = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
    if not long_:
        return s
    i = max(long_, key=lambda j: len(words[j]))
    w = words[i]
    k = r.randrange(1, len(w) - 2)
    words[i] = w[:k] + w[k + 1] + w[k] + w[k + 2:]
    return " ".join(words)


def build_patient(b: Builder, p: Patient):
    r = random.Random(f"{p.id}:probe_icu_nursing")  # noqa: S311 - reproducible draws, not security
    start, end = p.stay
    she, her = pron(p), pron(p, "pos")
    # handover moments: 07:30 on hospital day 3, and 19:30 on hospital day 2 (the stay's own clock)
    am = local_at(start, 2, 7, 30)
    pm = local_at(start, 1, 19, 30)
    if not (start + 24 * H < pm < am < end):
        return
    nm = lambda item: r.choice(ITEMS[item][1])  # noqa: E731
    dn = lambda key: r.choice(DRUGS[key][1])  # noqa: E731
    ask = lambda now, cat, tmpl, q, *a, **k: b.add(p, now, cat, tmpl, typo(r, q), *a, **k)  # noqa: E731

    # ---------------- latest value ----------------
    for now in (am, pm):
        for item in r.sample(LABS, 3) + r.sample(VITALS, 1):
            v = latest(p, item, start - 72 * H, now)
            if v is None:
                continue
            n = nm(item)
            q = r.choice([f"{n}?", f"last {n}", f"latest {n}", f"what's {her} most recent {n}", f"{n} now?",
                          f"most recent {n} pls"])
            ask(now, "latest_value", f"latest/{item}", q, "number", [v[0]], [f"Observation/{v[1]}"])
        for item in ("lactate", "trop", "trough"):
            vs = p.vals(item, None, now)
            n = nm(item)
            q = r.choice([f"last {n}", f"{n}?", f"most recent {n}", f"what was the last {n}"])
            if vs and vs[-1][0] >= start - 24 * H:
                ask(now, "latest_value", f"latest/{item}", q, "number", [vs[-1][1]], [f"Observation/{vs[-1][2]}"])
            elif not vs and r.random() < 0.5:
                ask(now, "absence", f"absent-value/{item}", q, "number", [], [], "no-data")

    # ---------------- trend (the stay so far) ----------------
    for item in r.sample(["Cr", "WBC", "plt", "Hgb", "K", "Na", "trop", "lactate", "BUN"], 4):
        vs = p.vals(item, start, am)
        if not vs or len(vs) < 2:
            continue
        t = trend_of(vs)
        if t is None:
            continue
        whole = p.vals(item, None, am)
        n = nm(item)
        forms = [f"{n} trend since admit", f"how is {her} {n} trending this admission", f"{n} trending up or down since admission?"]
        if trend_of(whole) == t:  # window-less forms only when the whole record agrees with the stay
            forms += [f"{n} trend", f"{n} trending?", f"is {her} {n} going up or down"]
        ask(am, "trend", f"trend/{item}", r.choice(forms), "string", [t], [f"Observation/{o[2]}" for o in (vs[0], vs[-1])])
        if r.random() < 0.4:
            ch = round(vs[-1][1] - vs[0][1], 4)
            if ch != 0:
                q = r.choice([f"change in {n} since admission?", f"how much has {her} {n} changed since admit"])
                ask(am, "trend", f"change/{item}", q, "number", [ch], [f"Observation/{o[2]}" for o in (vs[0], vs[-1])], tol=0.02)

    # ---------------- windows ----------------
    night_lo, night_hi = local_at(am, -1, 19), local_at(am, 0, 7)

    def night(fn):
        a = fn(night_lo, night_hi)
        if a is None or any(fn(night_lo + d, night_hi + e) != a for d in (-H, H) for e in (-H / 2, 0 * H)):
            return None
        return a

    for item, kind, forms in (
        ("SBP", "min", ["lowest SBP o/n", "SBP nadir overnight", "lowest systolic last night"]),
        ("HR", "max", ["max HR overnight", "highest heart rate o/n", "HR peak last night"]),
        ("SpO2", "min", ["lowest sat overnight", "lowest SpO2 o/n", "did sats dip overnight - lowest?"]),
        ("temp", "max", ["Tmax overnight", "max temp o/n", "highest temp last night"]),
        ("FSBG", "max", ["highest FSBG overnight", "max accucheck o/n", "glucose overnight - highest fingerstick?"]),
    ):
        v = night(lambda lo, hi, item=item, kind=kind: ext(p, item, lo, hi, kind))
        if v is not None:
            ask(am, "window", f"overnight/{kind}-{item}", r.choice(forms), "number", [v[0]], [f"Observation/{v[1]}"])
    # Tmax 24h / last N h
    for now in (am, pm):
        v = stable(lambda lo, hi: ext(p, "temp", lo, hi, "max"), now - 24 * H, now)
        if v is not None:
            q = r.choice(["Tmax 24h", "temp max 24h", "Tmax last 24 hrs?", "highest temp in the past 24 hours"])
            ask(now, "window", "last24/tmax", q, "number", [v[0]], [f"Observation/{v[1]}"])
        for item, kind, hours, forms in (
            ("SBP", "min", 12, ["lowest SBP last 12h", "SBP low in the past 12 hrs?"]),
            ("HR", "max", 12, ["max HR past 12h", "highest HR last 12 hours"]),
            ("SpO2", "min", 24, ["lowest sat last 24h", "sat nadir past 24 hrs"]),
            ("FSBG", "min", 24, ["lowest fingerstick in the last 24h", "any low BG? lowest accucheck 24h"]),
        ):
            v = stable(lambda lo, hi, item=item, kind=kind: ext(p, item, lo, hi, kind), now - hours * H, now)
            if v is not None and r.random() < 0.5:
                ask(now, "window", f"last{hours}/{kind}-{item}", r.choice(forms), "number", [v[0]], [f"Observation/{v[1]}"])
        # labs in the last N hours (empty → no-data)
        item = r.choice(["K", "Cr", "Hgb", "WBC", "Na"])
        hours = r.choice([6, 8, 12])
        v = stable(lambda lo, hi, item=item: latest(p, item, lo, hi) or ("none",), now - hours * H, now)
        if v is not None:
            n = nm(item)
            q = r.choice([f"{n} in the last {hours}h?", f"{n} value from the past {hours} hrs?", f"{n} last {hours} hours"])
            if v == ("none",):
                ask(now, "window", f"last{hours}h/{item}-empty", q, "number", [], [], "no-data")
            else:
                ask(now, "window", f"last{hours}h/{item}", q, "number", [v[0]], [f"Observation/{v[1]}"])
    # since admission and on admission
    for item, kind, forms in (
        ("temp", "max", ["Tmax since admit", "highest temp this admission"]),
        ("lactate", "max", ["highest lactate this admission", "peak lactate since admit"]),
        ("Hgb", "min", ["lowest Hgb since admission", "Hgb nadir this stay"]),
        ("SBP", "min", ["lowest SBP since admit", "lowest systolic this admission"]),
    ):
        v = ext(p, item, start, pm, kind)
        if v is not None and r.random() < 0.5:
            ask(pm, "window", f"since-admit/{kind}-{item}", r.choice(forms), "number", [v[0]], [f"Observation/{v[1]}"])
    item = r.choice(["K", "Cr", "WBC", "lactate"])
    vs = p.vals(item, start, pm)
    if vs and (len(vs) == 1 or vs[0][0] != vs[1][0]):
        n = nm(item)
        q = r.choice([f"admission {n}?", f"{n} on admit", f"what was {her} {n} when {she} came in"])
        ask(pm, "window", f"on-admit/{item}", q, "number", [vs[0][1]], [f"Observation/{vs[0][2]}"])
    # this morning's lab, asked at evening handover: the one value of the day before noon, none after
    day0 = local_at(pm, 0, 0)
    for item in r.sample(["K", "Cr", "Hgb", "plt", "Na", "WBC"], 2):
        morning = p.vals(item, day0, local_at(pm, 0, 12))
        later = p.vals(item, local_at(pm, 0, 12), pm)
        if morning is not None and len(morning) == 1 and not later:
            n = nm(item)
            q = r.choice([f"AM {n}?", f"this morning's {n}", f"what was {n} on AM labs", f"{n} this AM"])
            ask(pm, "window", f"this-am/{item}", q, "number", [morning[0][1]], [f"Observation/{morning[0][2]}"])

    # ---------------- medications: active / given / held ----------------
    given_keys = sorted({a["key"] for a in p.admin if a["key"] and start <= a["t"] <= am})
    for key in given_keys:
        last24 = p.doses(key, am - 24 * H, am)
        after = p.doses(key, am, am + 24 * H)
        n = dn(key)
        if key in ANTIBIOTICS or key == "heparin":
            if last24 and after:
                q = r.choice([f"is {she} still on {n}", f"still getting {n}?", f"{n} still going?", f"is {she} on {n}"])
                ask(am, "med_active", f"on/{key}-yes", q, "boolean", [True], [f"MedicationAdministration/{last24[-1]['id']}"])
            elif not p.doses(key, am - 36 * H, am) and not after and r.random() < 0.7:
                q = r.choice([f"is {she} still on {n}", f"still getting {n}?"])
                ask(am, "med_active", f"on/{key}-stopped", q, "boolean", [False], [])
        # last dose given (date)
        done = p.doses(key, start, am)
        if done and done[-1]["t"].date() == done[-1]["t"].astimezone(UTC).date():  # local day = UTC day
            q = r.choice([f"when was the last {n} dose", f"last {n} given when?", f"when did {she} last get {n}"])
            ask(am, "med_given", f"last-dose/{key}", q, "date", [done[-1]["t"].date().isoformat()], [f"MedicationAdministration/{done[-1]['id']}"])
    # antibiotics on now (given in the last 24 h and again after now)
    abx = [k for k in ANTIBIOTICS if p.doses(k, am - 24 * H, am) and p.doses(k, am, am + 24 * H)]
    stale = [k for k in ANTIBIOTICS if p.doses(k, start, am) and k not in abx and p.doses(k, am - 36 * H, am + 24 * H)]
    if abx and not stale:
        names = sorted({p.doses(k, am - 24 * H, am)[-1]["name"] for k in abx})
        q = r.choice(["what abx is she on", "current antibiotics?", "abx?", "which antibiotics is he getting"])
        q = q.replace("she", she).replace("he getting", f"{she} getting")
        ask(am, "med_active", "abx-list", q, "list", names, [f"MedicationAdministration/{p.doses(k, am - 24 * H, am)[-1]['id']}" for k in abx])
    # heparin SC only: never a drip
    if p.doses("heparin", start, am) and all(a["route"] == "SC" for a in p.admin if a["key"] == "heparin"):
        q = r.choice(["is she on a heparin gtt?", "heparin drip running?"]).replace("she", she)
        ask(am, "med_active", "route/heparin-drip-no", q, "boolean", [False], [])
    # given in a window (yes/no), overnight and last 24 h
    for key in ("acetaminophen", "insulin", "heparin", "pip-tazo", "ceftriaxone"):
        n = dn(key)
        v = night(lambda lo, hi, key=key: bool(p.doses(key, lo, hi)))
        if v is not None and (p.doses(key, start, am) or r.random() < 0.3):
            q = r.choice([f"any {n} o/n?", f"did {she} get {n} overnight", f"{n} given last night?", f"any PRN {n} overnight"
                          if key == "acetaminophen" else f"was {n} given overnight"])
            refs = [f"MedicationAdministration/{a['id']}" for a in p.doses(key, night_lo, night_hi)]
            ask(am, "med_given", f"overnight/{key}-{'yes' if v else 'no'}", q, "boolean", [v], refs)
    # held doses
    held = [a for a in p.admin if a["status"] == "not-done" and start <= a["t"] <= am]
    if r.random() < 0.6 or held:
        q = r.choice(["any doses held?", "any meds held since admit", "were any doses missed this admission?",
                      "any held meds?"])
        ask(am, "med_held", f"any-held/{'yes' if held else 'no'}", q, "boolean", [bool(held)], [f"MedicationAdministration/{a['id']}" for a in held])
    by_drug: dict[str, list] = {}
    for a in held:
        by_drug.setdefault(a["key"], []).append(a)
    for key, hs in by_drug.items():
        n = dn(key)
        if len(hs) == 1:
            q = r.choice([f"why was the {n} held", f"reason {n} dose held?", f"why was {n} not given"])
            ask(am, "med_held", f"why/{key}", q, "string", [hs[0]["reason"]], [f"MedicationAdministration/{hs[0]['id']}"])
    if held and r.random() < 0.6:
        names = sorted({a["name"] for a in held})
        q = r.choice(["which meds were held?", "what doses were held since admission", "any doses held and which ones?"])
        ask(am, "med_held", "which", q, "list", names, [f"MedicationAdministration/{a['id']}" for a in held])

    # ---------------- counts and totals ----------------
    for key in r.sample(given_keys, min(2, len(given_keys))):
        n = dn(key)
        c = p.doses(key, start, am)
        q = r.choice([f"how many {n} doses since admit", f"# of {n} doses given this admission", f"{n} doses so far this stay?"])
        ask(am, "count_total", f"count-since-admit/{key}", q, "count", [len(c)], [f"MedicationAdministration/{a['id']}" for a in c])
        c24 = stable(lambda lo, hi, key=key: len(p.doses(key, lo, hi)), am - 24 * H, am)
        if c24 is not None and r.random() < 0.5:
            q = r.choice([f"how many doses of {n} in the last 24h", f"{n} doses past 24 hrs?"])
            ask(am, "count_total", f"count-24h/{key}", q, "count", [c24], [])
    for key, unit, forms in (("heparin", "units", ["total heparin units since admit", "how many units of heparin has she had this admission"]),
                             ("vancomycin", "mg", ["total vanc given since admission (mg)", "how much vanc has she gotten this stay in mg"])):
        c = p.doses(key, start, am)
        if c and all(a["unit"] == unit for a in c) and r.random() < 0.6:
            tot = sum(a["dose"] for a in c)
            ask(am, "count_total", f"total-since-admit/{key}", r.choice(forms).replace("she", she), "number", [tot],
                [f"MedicationAdministration/{a['id']}" for a in c])
    for item, forms in (("K", ["how many K checks since admission", "# of potassium levels this admission"]),
                        ("FSBG", ["how many fingersticks in the last 24h", "# accuchecks past 24 hrs"]),
                        ("temp", ["how many temps charted overnight", "# temp checks o/n"])):
        if item == "K":
            c = len(p.vals(item, start, am))
        elif item == "FSBG":
            c = stable(lambda lo, hi, item=item: len(p.vals(item, lo, hi)), am - 24 * H, am)
        else:
            c = night(lambda lo, hi, item=item: len(p.vals(item, lo, hi)))
        if c is not None and (c > 0 or item != "FSBG") and r.random() < 0.5:
            ask(am, "count_total", f"count/{item}", r.choice(forms), "count", [c], [])

    # ---------------- states (robust to "in the last 24 h" vs "the latest value") ----------------
    for state, item, test, forms in (
        ("febrile", "temp", lambda v: v >= 38.0, ["is she febrile", "febrile?", "any fever?"]),
        ("hypotensive", "SBP", lambda v: v < 90, ["is he hypotensive", "hypotensive?"]),
        ("hypoxic", "SpO2", lambda v: v < 90, ["is she hypoxic", "hypoxic?"]),
        ("tachycardic", "HR", lambda v: v > 100, ["tachy?", "is he tachycardic"]),
    ):
        for now in (am, pm):
            w = stable(lambda lo, hi, item=item, test=test: any(test(o[1]) for o in p.vals(item, lo, hi)), now - 24 * H, now)
            lv = latest(p, item, None, now)
            if w is None or lv is None or test(lv[0]) != w or r.random() < 0.5:
                continue
            q = r.choice(forms).replace("she", she).replace(" he ", f" {she} ")
            ask(now, "state", f"{state}/now-{'yes' if w else 'no'}", q, "boolean", [w], [])
        w = night(lambda lo, hi, item=item, test=test: any(test(o[1]) for o in p.vals(item, lo, hi)))
        if w is not None and r.random() < 0.6:
            word = {"febrile": "febrile", "hypotensive": "hypotensive", "hypoxic": "hypoxic", "tachycardic": "tachycardic"}[state]
            q = r.choice([f"was {she} {word} overnight", f"{word} o/n?", f"any {word} episodes last night?"])
            ask(am, "state", f"{state}/overnight-{'yes' if w else 'no'}", q, "boolean", [w], [])
    # since admission: the state's own threshold over [admission, now]
    for state, item, test in (("febrile", "temp", lambda v: v >= 38.0), ("hypotensive", "SBP", lambda v: v < 90),
                              ("tachycardic", "HR", lambda v: v > 100), ("hypoxic", "SpO2", lambda v: v < 90)):
        vs = p.vals(item, start, pm)
        if vs:
            w = any(test(o[1]) for o in vs)
            q = r.choice([f"has {she} been {state} at all since admission?", f"any {state} episodes this admission?",
                          f"{state} since admit?"])
            ask(pm, "state", f"{state}/since-admit-{'yes' if w else 'no'}", q, "boolean", [w], [])
    # since admission, a threshold the nurse names
    for item, cut, side, forms in (("temp", 38.5, ">", ["any temp > 38.5 since admit?", "spiked above 38.5 this admission?"]),
                                   ("SBP", 100, "<", ["any SBP < 100 since admission?", "SBPs ever under 100 this stay?"]),
                                   ("SpO2", 92, "<", ["sats below 92 at any point this admission?"])):
        vs = p.vals(item, start, am)
        if vs and r.random() < 0.4:
            w = any(o[1] > cut for o in vs) if side == ">" else any(o[1] < cut for o in vs)
            ask(am, "state", f"threshold/{item}{side}{cut}", r.choice(forms), "boolean", [w], [])

    # ---------------- absence (never charted in these records) ----------------
    now = r.choice([am, pm])
    for key in r.sample(sorted(ABSENT_DRUGS), 2):
        if key in p.raw:
            continue
        q = r.choice(ABSENT_DRUGS[key]).replace("she", she).replace(" he ", f" {she} ")
        ask(now, "absence", f"absent-drug/{key}", q, "boolean", [False], [])
    for key, forms in r.sample(ABSENT_VALUES, 2):
        ask(now, "absence", f"absent-value/{key}", r.choice(forms), "number", [], [], "no-data")
    # code status: written in the admission H&P
    hp = [n for n in p.notes if start - 12 * H <= n[0] <= pm and "Code status:" in n[1]]
    if hp and r.random() < 0.5:
        m = re.search(r"Code status:\s*([^.\n]+)", hp[-1][1])
        if m:
            q = r.choice(["code status?", "what's her code status", "is he full code?" if "full" in m.group(1).lower() else "code status?"])
            if q.startswith("is he full"):
                ask(pm, "notes", "code-status/full-yes", q.replace("he", she, 1), "boolean", [True], [f"DocumentReference/{hp[-1][2]}"])
            else:
                ask(pm, "notes", "code-status", q.replace("her", her), "string", [m.group(1).strip()], [f"DocumentReference/{hp[-1][2]}"])


def load(data: Path) -> list[Patient]:
    pats = []
    for f in sorted(data.glob("*.json")):
        p = Patient(json.loads(f.read_text()))
        if p.stay and p.stay[1] - p.stay[0] >= timedelta(days=3) and len(p.doses("heparin", *p.stay)) + sum(
                len(p.doses(k, *p.stay)) for k in ANTIBIOTICS) >= 15:
            pats.append(p)
    return pats


# how many questions of each category the set keeps (drawn from the candidates build_patient writes)
QUOTA = {"latest_value": 28, "trend": 20, "window": 38, "med_active": 18, "med_given": 20, "med_held": 15,
         "count_total": 18, "state": 24, "absence": 30, "notes": 8}


def select(rows: list[dict]) -> list[dict]:
    """Keep QUOTA[category] candidates per category, spreading over patterns (template) and patients.

    Greedy and deterministic: the next pick is the candidate whose template, then patient, has been picked
    least so far (ties broken by a seeded shuffle), so rare patterns (a yes among many no's) are kept first.
    """
    keep = []
    for cat, n in QUOTA.items():
        cands = [row for row in rows if row["category"] == cat]
        random.Random(f"select:{cat}").shuffle(cands)  # noqa: S311 - reproducible draws
        tmpl: dict[str, int] = {}
        pat: dict[str, int] = {}
        chosen = []
        for _ in range(min(n, len(cands))):
            best = min(range(len(cands)), key=lambda i: (tmpl.get(cands[i]["template"], 0),
                                                         pat.get(cands[i]["patient_id"], 0), i))
            row = cands.pop(best)
            tmpl[row["template"]] = tmpl.get(row["template"], 0) + 1
            pat[row["patient_id"]] = pat.get(row["patient_id"], 0) + 1
            chosen.append(row)
        keep += chosen
    order = {id(row): i for i, row in enumerate(rows)}
    return sorted(keep, key=lambda row: order[id(row)])


def build(pats: list[Patient]) -> list[dict]:
    b = Builder()
    for p in pats:
        build_patient(b, p)
    rows = select(b.rows)
    for i, row in enumerate(rows, 1):
        row["id"] = f"icu-{i:03d}"
    return [{"id": r["id"], **{k: v for k, v in r.items() if k != "id"}} for r in rows]


def render(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main(argv=None) -> int:
    """Build (or ``--check``) the probe; ``--data`` reuses bundles already synthesised."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--data", type=Path)
    a = ap.parse_args(argv)
    if a.data:
        text = render(build(load(a.data)))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "data"
            argv_ = [sys.executable, "-m", "fhirqa.cli", "synth", "--patients", N_PATIENTS, "--seed", SEED,
                     "--now", SYNTH_NOW, "--out", str(data)]
            subprocess.run(argv_, check=True, capture_output=True)  # noqa: S603 - fixed argv
            text = render(build(load(data)))
    if a.check:
        ok = OUT.exists() and OUT.read_text() == text
        print("up to date" if ok else "stale")
        return 0 if ok else 1
    OUT.write_text(text)
    print(f"wrote {text.count(chr(10))} questions to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
