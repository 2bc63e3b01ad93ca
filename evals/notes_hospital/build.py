"""Blind probe: questions answered from the TEXT of hospital-style notes (H&P, progress, discharge, ED, clinic).

Generates 10 synthetic patients with `fhirqa synth` (a subprocess, into a temp folder), decodes the
DocumentReference attachments itself (imports nothing from fhirqa) and writes questions.jsonl beside this file.

    python evals/notes_hospital/build.py            # rewrite questions.jsonl
    python evals/notes_hospital/build.py --check    # exit 1 when the committed file is stale
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
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

SEED = 424242
PATIENTS = 10
HERE = Path(__file__).resolve().parent
OUT = HERE / "questions.jsonl"

# item key in the note -> (spoken names, answer type)
ITEMS = {
    "K": ["K", "potassium", "K+"],
    "Na": ["Na", "sodium"],
    "Cr": ["Cr", "creatinine", "creat"],
    "WBC": ["WBC", "white count"],
    "Hgb": ["Hgb", "hemoglobin"],
    "Plt": ["plt", "platelets"],
    "Glu": ["glucose", "BG"],
    "BUN": ["BUN"],
    "HR": ["HR", "heart rate", "pulse"],
    "RR": ["RR", "resp rate"],
    "T": ["temp", "temperature"],
    "SpO2": ["SpO2", "O2 sat"],
    "BP": ["BP", "blood pressure"],
    "Wt": ["weight", "wt"],
    "Lactate": ["lactate"],
    "BNP": ["BNP"],
    "Mg": ["Mg", "magnesium"],
    "Tmax": ["Tmax"],
}
NEG_ITEMS = {"BNP": ["BNP"], "Lactate": ["lactate"], "hsTnI": ["troponin"], "A1c": ["A1c"],
             "Vanc trough": ["vanc trough", "vancomycin trough"], "INR": ["INR"], "TSH": ["TSH"]}


def _rng(name: str) -> random.Random:
    return random.Random(name)  # noqa: S311 (reproducible draws, not security)


def synth(out: Path) -> None:
    subprocess.run([sys.executable,  # noqa: S603 (our own interpreter, fixed arguments)
                    "-m", "fhirqa.cli", "synth", "--patients", str(PATIENTS), "--seed", str(SEED),
                    "--out", str(out)], check=True, capture_output=True, cwd=HERE.parent.parent)


def parse_time(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def parse_values(text: str) -> dict[str, str]:
    """`BP 118/79, HR 99, T 38.2, SpO2 97% RA` / `Na 138, K 4.4` -> {name: value as written}."""
    vals: dict[str, str] = {}
    for m in re.finditer(r"(?:(?<=[\s:;,(])|^)(BP|Vanc trough|[A-Za-z][A-Za-z0-9]*) (\d+/\d+|\d+(?:\.\d+)?)(?=[%,;.)\s]|$)",
                         text):
        name, v = m.group(1), m.group(2)
        vals.setdefault(name, v)
    return vals


def load(folder: Path) -> list[dict]:
    pats = []
    for f in sorted(folder.glob("*.json")):
        bundle = json.loads(f.read_text())
        res = [e["resource"] for e in bundle["entry"]]
        pat = next(r for r in res if r["resourceType"] == "Patient")
        notes = []
        for d in res:
            if d["resourceType"] != "DocumentReference":
                continue
            text = base64.b64decode(d["content"][0]["attachment"]["data"]).decode()
            t = parse_time(d["date"])
            notes.append({"id": d["id"], "ref": f"DocumentReference/{d['id']}", "time": t,
                          "kind": d.get("description", ""), "text": text,
                          "lines": text.splitlines(), "local": t.date(), "utc": t.astimezone(UTC).date()})
        notes.sort(key=lambda n: n["time"])
        obs = []
        last = max(n["time"] for n in notes)
        for r in res:
            for k in ("effectiveDateTime", "authoredOn", "occurrenceDateTime", "date"):
                if isinstance(r.get(k), str) and len(r[k]) > 10:
                    last = max(last, parse_time(r[k]))
            if r["resourceType"] == "Observation":
                c = r.get("code", {})
                name = (c.get("text") or (c.get("coding") or [{}])[0].get("display") or "").lower()
                obs.append((name, r.get("effectiveDateTime", "")[:10]))
        first = pat["name"][0]["given"][0]
        sex = pat.get("gender")
        pats.append({"id": pat["id"], "first": first, "sex": sex, "notes": notes, "obs": obs,
                     "now": (last + timedelta(days=6)).astimezone(UTC).replace(
                         hour=12, minute=0, second=0, microsecond=0)})
    return pats


def anchor_ok(p: dict, note: dict) -> bool:
    """The note is the only one of its local day, and the docs' rule (UTC day, else closest within 14 h) picks it."""
    d = note["local"]
    if sum(1 for n in p["notes"] if n["local"] == d) != 1:
        return False
    same_utc = [n for n in p["notes"] if n["utc"] == d]
    if same_utc:
        return same_utc == [note]
    lo = datetime(d.year, d.month, d.day, tzinfo=UTC)
    hi = lo + timedelta(days=1)

    def dist(n: dict) -> float:
        t = n["time"]
        return 0.0 if lo <= t < hi else min(abs((t - lo).total_seconds()), abs((t - hi).total_seconds()))
    near = sorted((dist(n), i) for i, n in enumerate(p["notes"]) if dist(n) <= 14 * 3600)
    if not near or p["notes"][near[0][1]] is not note:
        return False
    return len(near) == 1 or near[1][0] > near[0][0]


def fmt_date(rng: random.Random, d: date, now: datetime) -> str:
    forms = [f"{d.month}/{d.day}/{d.year}", d.isoformat(), f"{d:%b} {d.day}, {d.year}", f"{d:%B} {d.day}, {d.year}"]
    # year-less only when the latest such day not after now is the note's
    nxt = date(d.year + 1, d.month, d.day) if not (d.month == 2 and d.day == 29) else None
    if nxt is not None and nxt > now.date():
        forms += [f"{d.month}/{d.day}", f"{d:%b} {d.day}"]
    return rng.choice(forms)


def line_after(note: dict, prefix: str) -> str | None:
    for ln in note["lines"]:
        if ln.startswith(prefix):
            return ln
    return None


def pro(p: dict) -> tuple[str, str]:
    return ("her", "she") if p["sex"] == "female" else ("his", "he")


def stays(p: dict) -> list[dict]:
    """H&P, progress notes and discharge summary of each admission."""
    out = []
    for i, n in enumerate(p["notes"]):
        if n["kind"] != "Admission History and Physical":
            continue
        stay = {"hp": n, "prog": [], "dc": None}
        for m in p["notes"][i + 1:]:
            if m["kind"] == "Hospitalist Progress Note":
                stay["prog"].append(m)
            elif m["kind"] == "Discharge Summary":
                stay["dc"] = m
                break
            else:
                break
        out.append(stay)
    return out


def stay_now(p: dict, stay: dict) -> str | None:
    """A now just after the stay's discharge summary and before the next note (so 'on admission' = this stay)."""
    end = stay["dc"]["time"] if stay["dc"] else None
    if end is None:
        return None
    now = (end + timedelta(days=1)).astimezone(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    later = [n for n in p["notes"] if n["time"] > end]
    if later and later[0]["time"] <= now:
        return None
    return now.isoformat().replace("+00:00", "Z")


class Builder:
    def __init__(self, pats: list[dict]):
        self.pats = pats
        self.rows: list[dict] = []
        self.rng = _rng(f"notes-hospital-{SEED}")

    def add(self, kind, pattern, p, q, atype, expected, status="answered", refs=(), now=None):
        n = sum(1 for r in self.rows if r["template"].startswith(f"{kind}/{pattern}/"))
        self.rows.append({
            "id": "", "patient_id": p["id"], "question": q,
            "now": now or p["now"].isoformat().replace("+00:00", "Z"), "category": kind, "answer_type": atype,
            "expected": expected, "expected_status": status,
            "tolerance": 0.01 if atype == "number" else 0, "gold_refs": list(refs),
            "template": f"{kind}/{pattern}/{n}"})

    # ---- values ---------------------------------------------------------------------------------------
    def values_admission(self):
        rng = _rng(f"adm-{SEED}")
        for p in self.pats:
            for st in stays(p):
                hp = st["hp"]
                vit = parse_values(line_after(hp, "Vitals on arrival") or "")
                labs = parse_values(line_after(hp, "Labs on admission") or "")
                her, _ = pro(p)
                keys = [k for k in ("K", "Na", "Cr", "WBC", "Hgb", "Lactate", "BNP", "Glu") if k in labs]
                vkeys = [k for k in ("BP", "HR", "T", "SpO2", "RR") if k in vit]
                now = stay_now(p, st)
                for k in rng.sample(keys, min(2, len(keys))) + rng.sample(vkeys, min(1, len(vkeys))):
                    v = labs.get(k) or vit[k]
                    name = rng.choice(ITEMS[k])
                    atype = "string" if k == "BP" else "number"
                    exp = [v] if k == "BP" else [float(v)]
                    if now and rng.random() < 0.5:
                        q = rng.choice([f"{name} on admission per the H&P?", f"What was {her} {name} on admission?",
                                        f"admission {name} in the H&P", f"{name} on arrival?"])
                        self.add("value_admission", f"{k}-undated", p, q, atype, exp, refs=[hp["ref"]], now=now)
                    else:
                        d = fmt_date(rng, hp["local"], p["now"])
                        if not anchor_ok(p, hp):
                            q = f"{name} on admission per the H&P of the {hp['local']:%B %Y} admission?"
                        else:
                            q = rng.choice([f"{name} on admission per the {d} H&P?",
                                            f"What {name} was documented in the H&P on {d}?",
                                            f"admit {name} in the {d} H&P"])
                        self.add("value_admission", f"{k}-dated", p, q, atype, exp, refs=[hp["ref"]])

    def values_progress(self):
        rng = _rng(f"prog-{SEED}")
        for p in self.pats:
            for st in stays(p):
                progs = [n for n in st["prog"] if anchor_ok(p, n)]
                for n in rng.sample(progs, min(2, len(progs))):
                    o = line_after(n, "O:") or ""
                    tmax = re.search(r"Tmax (\d+\.\d)", o)
                    vit = parse_values(o.split("Vitals", 1)[-1])
                    labs = parse_values(line_after(n, "Labs this AM") or "")
                    d = fmt_date(rng, n["local"], p["now"])
                    picks = rng.sample([k for k in ("K", "Cr", "WBC", "Hgb", "Na", "Plt") if k in labs], 1)
                    picks.append(rng.choice(["T", "Tmax", "HR", "SpO2", "BP"]))
                    if "Vanc trough" in labs:
                        picks.append("Vanc trough")
                    for k in picks:
                        if k == "Tmax":
                            v = tmax.group(1)
                        elif k == "Vanc trough":
                            v = labs[k]
                        else:
                            v = labs.get(k) or vit.get(k)
                        if v is None:
                            continue
                        if k == "Vanc trough":
                            q = rng.choice([f"what was the vanc trough noted on {d}?",
                                            f"vancomycin trough in the {d} progress note?",
                                            f"Vanc trough per the progress note from {d}"])
                        else:
                            name = rng.choice(ITEMS[k])
                            q = rng.choice([f"{name} in the {d} progress note?",
                                            f"What {name} did the hospitalist note on {d} document?",
                                            f"{name} per the progress note from {d}",
                                            f"What was the {name} written in the {d} progress note?"])
                        atype = "string" if k == "BP" else "number"
                        exp = [v] if k == "BP" else [float(v)]
                        self.add("value_progress", k.replace(" ", "-"), p, q, atype, exp, refs=[n["ref"]])

    def values_discharge(self):
        rng = _rng(f"dc-{SEED}")
        for p in self.pats:
            for st in stays(p):
                dc = st["dc"]
                if dc is None:
                    continue
                now = stay_now(p, st)
                course = line_after(dc, "Hospital course") or ""
                arrows = {m.group(1): m.group(3) for m in
                          re.finditer(r"\b(WBC|Cr|K|Na) (\d+(?:\.\d+)?) on admission -> (\d+(?:\.\d+)?)", course)}
                lastlabs = parse_values(line_after(dc, "Last labs") or "")
                ll_date = re.search(r"Last labs \((\d+)/(\d+)/(\d+)\)", dc["text"])
                dc_day = re.search(r"Discharge: (\d+)/(\d+)/(\d+)", dc["text"])
                same = ll_date and dc_day and ll_date.groups() == dc_day.groups()
                keys = [k for k in arrows if same and lastlabs.get(k) == arrows[k]]
                her, _ = pro(p)
                d = fmt_date(rng, dc["local"], p["now"])
                for k in rng.sample(keys, min(2, len(keys))):
                    name = rng.choice(ITEMS[k])
                    if now and rng.random() < 0.5:
                        q = rng.choice([f"{name} at discharge?", f"What was {her} {name} at discharge?",
                                        f"discharge {name} per the DC summary"])
                        self.add("value_discharge", f"{k}-undated", p, q, "number", [float(arrows[k])],
                                 refs=[dc["ref"]], now=now)
                    else:
                        q = rng.choice([f"{name} at discharge per the {d} discharge summary?",
                                        f"What discharge {name} does the {d} DC summary give?"])
                        self.add("value_discharge", f"{k}-dated", p, q, "number", [float(arrows[k])], refs=[dc["ref"]])
                los = re.search(r"LOS: (\d+) days", dc["text"])
                if los and anchor_ok(p, dc):
                    q = rng.choice([f"LOS per the {d} discharge summary?",
                                    f"How many days was the length of stay in the {d} DC summary?"])
                    self.add("value_discharge", "los", p, q, "number", [float(los.group(1))], refs=[dc["ref"]])
            # ED disposition vitals
            for n in p["notes"]:
                if n["kind"] == "ED Provider Note" and anchor_ok(p, n):
                    m = re.search(r"Disposition: discharged home .* BP (\d+/\d+), HR (\d+)", n["text"])
                    if m:
                        d = fmt_date(rng, n["local"], p["now"])
                        q = rng.choice([f"BP at ED discharge on {d}?", f"What was the BP when discharged from the ED on {d}?"])
                        self.add("value_discharge", "ed-BP", p, q, "string", [m.group(1)], refs=[n["ref"]])

    # ---- findings ---------------------------------------------------------------------------------------
    def findings(self):
        rng = _rng(f"find-{SEED}")
        for p in self.pats:
            her, she = pro(p)
            for st in stays(p):
                hp = st["hp"]
                if not anchor_ok(p, hp):
                    continue
                d = fmt_date(rng, hp["local"], p["now"])
                cc = (line_after(hp, "CC:") or "")[4:].rstrip(".")
                syms = [s.strip() for s in re.split(r",| and ", cc) if s.strip()]
                s = rng.choice(syms)
                s = re.sub(r"^(worsening|spreading|productive) ", "", s)
                q = rng.choice([f"Did {she} c/o {s} on admission {d}?", f"{s} reported in the {d} H&P?",
                                f"Was {s} among {her} presenting complaints in the {d} H&P?"])
                self.add("finding", "hp-reported", p, q, "boolean", [True], refs=[hp["ref"]])
                q = rng.choice([f"Did {she} report recent travel in the {d} H&P?",
                                f"any sick contacts per the {d} H&P?"])
                self.add("finding", "hp-denied", p, q, "boolean", [False], refs=[hp["ref"]])
                febrile = "he was febrile" in hp["text"] or "she was febrile" in hp["text"]
                q = rng.choice([f"Was {she} febrile in the ED per the {d} H&P?",
                                f"febrile in the ED? (H&P {d})"])
                self.add("finding", "hp-febrile-ed", p, q, "boolean", [febrile], refs=[hp["ref"]])
                for n in st["prog"]:
                    if not anchor_ok(p, n):
                        continue
                    s_line = line_after(n, "S:") or ""
                    if rng.random() < 0.5:
                        continue
                    dd = fmt_date(rng, n["local"], p["now"])
                    fever = s_line.startswith("S: Febrile")
                    q = rng.choice([f"Febrile overnight per the {dd} progress note?",
                                    f"Did {she} have a fever overnight according to the {dd} progress note?"])
                    self.add("finding", "prog-fever", p, q, "boolean", [fever], refs=[n["ref"]])
                    break
            clinic = [n for n in p["notes"] if n["kind"] == "Clinic Note" and anchor_ok(p, n)]
            for n in rng.sample(clinic, min(1, len(clinic))):
                s_line = line_after(n, "S:") or ""
                m = re.search(r"Denies ([^.]*)\.", s_line)
                if not m:
                    continue
                den = [x.strip() for x in re.split(r",| or ", m.group(1)) if x.strip()]
                x = rng.choice(den)
                dd = fmt_date(rng, n["local"], p["now"])
                q = rng.choice([f"Did {she} report {x} at the {dd} visit?", f"any {x} at the {dd} clinic visit?",
                                f"c/o {x} on {dd}?"])
                self.add("finding", "clinic-denied", p, q, "boolean", [False], refs=[n["ref"]])

    # ---- medications --------------------------------------------------------------------------------------
    def meds(self):
        rng = _rng(f"meds-{SEED}")
        for p in self.pats:
            her, she = pro(p)
            for st in stays(p):
                hp, dc = st["hp"], st["dc"]
                if anchor_ok(p, hp):
                    d = fmt_date(rng, hp["local"], p["now"])
                    m = re.search(r"Start (vancomycin) ([\d,]+ mg) IV", hp["text"])
                    if m:
                        q = rng.choice([f"What vanc dose was started per the {d} H&P?",
                                        f"vancomycin dose in the plan of the {d} H&P?"])
                        self.add("med_dose", "hp-start", p, q, "string", [m.group(2)], refs=[hp["ref"]])
                    m = re.search(r"heparin ([\d,]+ units)", hp["text"])
                    if m and rng.random() < 0.5:
                        q = rng.choice([f"heparin dose for VTE ppx in the {d} H&P?",
                                        f"What dose of heparin was ordered for DVT prophylaxis on {d}?"])
                        self.add("med_dose", "hp-heparin", p, q, "string", [m.group(1)], refs=[hp["ref"]])
                if dc and anchor_ok(p, dc):
                    d = fmt_date(rng, dc["local"], p["now"])
                    m = re.search(r"NEW: ([a-z]+) (\d+ mg)", dc["text"])
                    if m:
                        q = rng.choice([f"What {m.group(1)} dose was {she} discharged on per the {d} DC summary?",
                                        f"dose of {m.group(1)} in the discharge meds, {d} summary?"])
                        self.add("med_dose", "dc-new", p, q, "string", [m.group(2)], refs=[dc["ref"]])
                        q = rng.choice([f"Was {she} discharged on {m.group(1)} per the {d} discharge summary?",
                                        f"{m.group(1)} on the discharge med list ({d})?"])
                        self.add("med_dose", "dc-new-yes", p, q, "boolean", [True], refs=[dc["ref"]])
                    other = "doxycycline" if "doxycycline" not in dc["text"] else "levofloxacin"
                    q = f"Was {she} discharged on {other} per the {d} discharge summary?"
                    self.add("med_dose", "dc-absent-no", p, q, "boolean", [False], refs=[dc["ref"]])
            clinic = [n for n in p["notes"] if n["kind"] == "Clinic Note" and anchor_ok(p, n)]
            withmeds = [n for n in clinic if re.search(r"Current meds: [a-z]", n["text"])
                        and "Current meds: none" not in n["text"]]
            for n in rng.sample(withmeds, min(1, len(withmeds))):
                ml = (line_after(n, "Current meds:") or "")[len("Current meds: "):].rstrip(".")
                items = [x.strip() for x in ml.split(";")]
                it = rng.choice(items)
                m = re.match(r"([a-z ]+?) (\d+(?:\.\d+)? (?:mg|mcg|units))", it)
                if not m:
                    continue
                dd = fmt_date(rng, n["local"], p["now"])
                q = rng.choice([f"What dose of {m.group(1)} was listed at the {dd} visit?",
                                f"{m.group(1)} dose on the med list at the {dd} visit?"])
                self.add("med_dose", "clinic-medlist", p, q, "string", [m.group(2)], refs=[n["ref"]])

    # ---- assessment / disposition ----------------------------------------------------------------------
    def assessment(self):
        rng = _rng(f"assess-{SEED}")
        for p in self.pats:
            her, she = pro(p)
            for st in stays(p):
                hp, dc = st["hp"], st["dc"]
                m = re.search(r"admitted for ([^.]+)\.", hp["text"])
                if m and anchor_ok(p, hp):
                    d = fmt_date(rng, hp["local"], p["now"])
                    q = rng.choice([f"What was {she} admitted for per the {d} H&P?",
                                    f"admitting dx in the {d} H&P?", f"Assessment in the H&P of {d}?"])
                    self.add("assessment", "hp-dx", p, q, "string", [m.group(1)], refs=[hp["ref"]])
                if dc and anchor_ok(p, dc):
                    d = fmt_date(rng, dc["local"], p["now"])
                    m = re.search(r"Principal dx: ([^\n]+)", dc["text"])
                    q = rng.choice([f"Principal dx on the {d} discharge summary?",
                                    f"What was the principal diagnosis per the {d} DC summary?"])
                    self.add("assessment", "dc-principal", p, q, "string", [m.group(1).strip()], refs=[dc["ref"]])
                    m = re.search(r"Disposition: ([^\n]+)", dc["text"])
                    q = rng.choice([f"Disposition per the {d} discharge summary?",
                                    f"Where was {she} discharged to ({d} DC summary)?"])
                    self.add("disposition", "dc-dispo", p, q, "string", [m.group(1).strip()], refs=[dc["ref"]])
                    q = rng.choice([f"Was repeat BMP/CBC part of the follow-up in the {d} discharge summary?",
                                    f"did the {d} DC summary ask for repeat labs at follow-up?"])
                    self.add("disposition", "dc-followup-labs", p, q, "boolean",
                             [bool(re.search(r"Follow-up:.*repeat BMP/CBC", dc["text"]))], refs=[dc["ref"]])
                    q = rng.choice([f"Was cardiology follow-up arranged per the {d} discharge summary?",
                                    f"any cardiology f/u in the {d} DC summary?"])
                    self.add("disposition", "dc-followup-absent", p, q, "boolean",
                             ["cardiology" in dc["text"].lower()], refs=[dc["ref"]])
            for n in p["notes"]:
                if n["kind"] == "Clinic Note" and "CLINIC NOTE - ACUTE VISIT" in n["text"] and anchor_ok(p, n):
                    m = re.search(r"A/P:\n1\. ([^-.\n]+?)(?: - |\.)", n["text"])
                    if m:
                        d = fmt_date(rng, n["local"], p["now"])
                        q = rng.choice([f"What was the assessment at the {d} visit?", f"dx at the {d} acute visit?"])
                        self.add("assessment", "clinic-acute", p, q, "string", [m.group(1).strip()], refs=[n["ref"]])
                if n["kind"] == "ED Provider Note" and anchor_ok(p, n):
                    d = fmt_date(rng, n["local"], p["now"])
                    q = rng.choice([f"Was ACS ruled out in the ED on {d}?", f"ED note {d}: ACS ruled out?"])
                    self.add("assessment", "ed-acs", p, q, "boolean", ["ACS ruled out" in n["text"]], refs=[n["ref"]])
                    m = re.search(r"Disposition: (discharged home)", n["text"])
                    if m:
                        q = rng.choice([f"Was {she} sent home from the ED on {d}?", f"ED dispo on {d} - discharged home?"])
                        self.add("disposition", "ed-home", p, q, "boolean", [True], refs=[n["ref"]])

    # ---- mentions and negatives ------------------------------------------------------------------------
    def mentions(self):
        rng = _rng(f"mention-{SEED}")
        for p in self.pats:
            her, she = pro(p)
            for st in stays(p):
                for n in [st["hp"]] + st["prog"]:
                    if not anchor_ok(p, n) or rng.random() < 0.55:
                        continue
                    d = fmt_date(rng, n["local"], p["now"])
                    kind = "H&P" if n is st["hp"] else "progress note"
                    terms = [("MRSA nares", "MRSA nares"), ("blood cultures", "Blood cx"), ("code status", "Code status"),
                             ("lactate", "lactate"), ("BNP", "BNP"), ("piperacillin-tazobactam", "piperacillin"),
                             ("ceftriaxone", "ceftriaxone"), ("heparin", "heparin"), ("acetaminophen", "acetaminophen"),
                             ("a vanc trough", "Vanc trough"), ("imaging", "Imaging"), ("furosemide", "furosemide")]
                    t, needle = rng.choice(terms)
                    yes = needle.lower() in n["text"].lower()
                    q = rng.choice([f"Was {t} mentioned in the {d} {kind}?", f"anything about {t} in the {d} {kind}?",
                                    f"{t} documented in the {kind} from {d}?"])
                    self.add("mention", ("yes-" if yes else "no-") + needle.split()[0].lower(), p, q, "boolean",
                             [yes], refs=[n["ref"]])

    def negatives(self):
        rng = _rng(f"neg-{SEED}")
        for p in self.pats:
            her, she = pro(p)
            for st in stays(p):
                for n in [st["hp"]] + st["prog"][:1]:
                    if not anchor_ok(p, n):
                        continue
                    day = n["local"].isoformat()
                    absent = [k for k in NEG_ITEMS if k.lower() not in n["text"].lower()
                              and not any(NEG_ITEMS[k][0].lower() in o[0] and o[1] == day for o in p["obs"])
                              and not any(k.lower() in o[0] for o in p["obs"])]
                    if not absent:
                        continue
                    k = rng.choice(absent)
                    name = rng.choice(NEG_ITEMS[k])
                    d = fmt_date(rng, n["local"], p["now"])
                    kind = "H&P" if n is st["hp"] else "progress note"
                    q = rng.choice([f"{name} in the {d} {kind}?", f"What {name} was documented in the {kind} on {d}?"])
                    self.add("negative", f"nodata-{k.split()[0].lower()}", p, q, "number", [], status="no-data")

    def build(self) -> list[dict]:
        self.values_admission()
        self.values_progress()
        self.values_discharge()
        self.findings()
        self.meds()
        self.assessment()
        self.mentions()
        self.negatives()
        self.rows = subsample(self.rows)
        for i, r in enumerate(self.rows, 1):
            r["id"] = f"{r['category']}-{i:03d}"
        return self.rows


CAPS = {"value_admission": 14, "value_progress": 16, "value_discharge": 12, "finding": 16, "med_dose": 14,
        "assessment": 10, "disposition": 8, "mention": 13, "negative": 10}


def subsample(rows: list[dict]) -> list[dict]:
    """At most CAPS[kind] per kind, patterns taken round-robin (seeded), original order kept."""
    keep: set[int] = set()
    for kind, cap in CAPS.items():
        by_pat: dict[str, list[int]] = {}
        for i, r in enumerate(rows):
            if r["category"] == kind:
                by_pat.setdefault(r["template"].split("/")[1], []).append(i)
        rng = _rng(f"cap-{kind}-{SEED}")
        for lst in by_pat.values():
            rng.shuffle(lst)
        pats = sorted(by_pat)
        while len([i for i in keep if rows[i]["category"] == kind]) < cap and any(by_pat.values()):
            for pat in pats:
                if by_pat[pat] and len([i for i in keep if rows[i]["category"] == kind]) < cap:
                    keep.add(by_pat[pat].pop())
    return [r for i, r in enumerate(rows) if i in keep]


def render(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--data", help="an existing synth output folder (else generated into a temp folder)")
    a = ap.parse_args()
    if a.data:
        rows = Builder(load(Path(a.data))).build()
    else:
        with tempfile.TemporaryDirectory() as tmp:
            synth(Path(tmp))
            rows = Builder(load(Path(tmp))).build()
    text = render(rows)
    if a.check:
        same = OUT.exists() and OUT.read_text() == text
        print("up to date" if same else "stale")
        return 0 if same else 1
    OUT.write_text(text)
    from collections import Counter
    print(len(rows), dict(Counter(r["category"] for r in rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
