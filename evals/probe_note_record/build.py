"""Build the blind "does the note agree with the record?" probe.

Runs ``fhirqa synth`` (as a subprocess) for 8 patients, removes the generated notes, writes three notes of its own
per patient whose statements are taken from that patient's raw record (some changed on purpose), writes the
augmented bundles to ``--out`` and the questions to ``questions.jsonl`` next to this file. Imports nothing from
fhirqa; every random choice comes from an RNG seeded by a string.

    python evals/probe_note_record/build.py --out DIR      # bundles into DIR, questions rewritten
    python evals/probe_note_record/build.py --check        # exit 1 when questions.jsonl is stale
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import random
import re
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = "515151"
N_PATIENTS = 8
NS = uuid.UUID("6f1c2b9e-5d1a-4c55-9a57-0b7e6f0c1a51")

# record display name fragment -> (note shorthand, question names (full, abbr, typo))
LABS = {
    "Potassium [Moles": ("K", ("potassium", "K", "potasium")),
    "Sodium [Moles": ("Na", ("sodium", "Na", "sodum")),
    "Creatinine [Mass": ("Cr", ("creatinine", "Cr", "creatinin")),
    "Glucose [Mass/volume] in Serum": ("Glu", ("glucose", "glucose", "glucoce")),
    "Hemoglobin [Mass": ("Hgb", ("hemoglobin", "Hgb", "hemoglobn")),
    "Urea nitrogen": ("BUN", ("BUN", "BUN", "BUN")),
    "Body weight": ("Wt", ("weight", "wt", "wieght")),
}
ABSENT = [("LDL", "Cholesterol in LDL"), ("TSH", "Thyrotropin"), ("magnesium", "Magnesium"),
          ("A1c", "Hemoglobin A1c"), ("platelets", "Platelets"), ("triglycerides", "Triglyceride")]
NEVER_DRUGS = [("lisinopril", "10 mg PO daily"), ("furosemide", "40 mg PO daily"),
               ("amlodipine", "5 mg PO daily"), ("warfarin", "5 mg PO daily")]
NEVER_DX = ["Atrial fibrillation", "Congestive heart failure", "Chronic kidney disease stage 3", "Gout"]
FREQ = {(1, 1.0, "d"): "daily", (2, 1.0, "d"): "BID", (3, 1.0, "d"): "TID"}
# planted kind per patient index (None = every note agrees with the record)
PLAN = {0: None, 1: ("k", "dose"), 2: ("prior", "drug"), 3: ("k", "unit"), 4: None,
        5: ("prior", "otherday"), 6: ("k", "dx"), 7: ("prior", "dose")}


def parse(ts: str) -> dt.datetime:
    return dt.datetime.fromisoformat(ts)


def fmt_num(v: float) -> str:
    s = f"{v:.10g}"
    return s


def decimals(v: float) -> int:
    s = fmt_num(v)
    return len(s.split(".")[1]) if "." in s else 0


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def record(bundle: dict) -> dict:
    """Index the raw bundle: labs by item and local day, meds, conditions, patient."""
    res = [e["resource"] for e in bundle["entry"]]
    pat = next(r for r in res if r["resourceType"] == "Patient")
    obs: dict[str, list] = {}
    for r in res:
        if r["resourceType"] != "Observation" or "valueQuantity" not in r:
            continue
        name = r["code"].get("text") or r["code"]["coding"][0].get("display", "")
        disp = " ".join(c.get("display", "") for c in r["code"].get("coding", [])) + " " + name
        for frag in LABS:
            if frag in disp:
                obs.setdefault(frag, []).append((parse(r["effectiveDateTime"]), r["valueQuantity"]["value"],
                                                 r["valueQuantity"].get("unit"), r["id"],
                                                 (r.get("encounter") or {}).get("reference")))
    for v in obs.values():
        v.sort(key=lambda t: t[0])
    meds = []
    med_words = set()
    for r in res:
        t = r["resourceType"]
        if t in ("MedicationRequest", "MedicationStatement", "MedicationAdministration", "MedicationDispense",
                 "Medication"):
            txt = json.dumps(r.get("medicationCodeableConcept") or r.get("code") or r.get("medicationReference"))
            med_words |= set(re.findall(r"[a-z]+", txt.lower()))
        if t == "MedicationRequest" and "medicationCodeableConcept" in r:
            di = (r.get("dosageInstruction") or [{}])[0]
            dq = ((di.get("doseAndRate") or [{}])[0]).get("doseQuantity")
            rep = (di.get("timing") or {}).get("repeat") or {}
            key = (rep.get("frequency"), rep.get("period"), rep.get("periodUnit"))
            route = ((di.get("route") or {}).get("text"))
            text = r["medicationCodeableConcept"].get("text", "")
            m = re.search(r"\(([a-z ]+)\)", text)
            generic = m.group(1) if m else text.split()[0].lower()
            if dq and dq.get("unit") in ("mg", "mcg") and route == "PO" and key in FREQ and "-" not in generic:
                meds.append((parse(r["authoredOn"]), generic, dq["value"], dq["unit"], FREQ[key], r["id"], text))
    meds.sort(key=lambda t: t[0])
    conds = []
    for r in res:
        if r["resourceType"] == "Condition":
            cs = json.dumps(r.get("clinicalStatus", {}))
            conds.append((r["code"].get("text"), r.get("onsetDateTime"), '"code": "active"' in cs, r["id"]))
    cond_words = " ".join(c[0].lower() for c in conds)
    # the last recorded fact: period ends are left out (a prescription's validity or a supply runs into the future)
    stamp = r'"(?:effectiveDateTime|authoredOn|onsetDateTime|occurrenceDateTime|start|date|issued|recordedDate)": '
    last = max(parse(t) for r in res for t in re.findall(stamp + r'"(\d{4}-\d\d-\d\dT[\d:]+[+-]\d\d:\d\d)"',
                                                            json.dumps(r)))
    return {"pat": pat, "obs": obs, "meds": meds, "med_words": med_words, "conds": conds,
            "cond_words": cond_words, "last": last}


def on_day(rec: dict, frag: str, day: dt.date):
    rows = [o for o in rec["obs"].get(frag, []) if o[0].date() == day]
    return rows[-1] if len(rows) == 1 or (rows and len({o[1] for o in rows}) == 1) else None


def note_days(rec: dict) -> list[dt.date]:
    """Local days holding exactly one K, Na, Cr, glucose and BUN value: candidate note days."""
    days = sorted({o[0].date() for o in rec["obs"].get("Potassium [Moles", [])})
    ok = [d for d in days if all(on_day(rec, f, d) for f in LABS if f not in ("Hemoglobin [Mass", "Body weight"))]
    # at least 7 days apart, so a note's day window (the note's day +-1) never reaches another note's labs
    picked: list[dt.date] = []
    for d in reversed(ok):
        if not picked or (picked[-1] - d).days >= 7:
            picked.append(d)
    return sorted(picked)


def prior(rec: dict, frag: str, day: dt.date):
    rows = [o for o in rec["obs"].get(frag, []) if o[0].date() < day]
    return rows[-1] if rows else None


def wrong_value(v: float, rng: random.Random, frag: str) -> float:
    step = {"Potassium [Moles": 0.9, "Creatinine [Mass": 0.5}.get(frag, 1.0)
    d = decimals(v)
    return round(v + step * (1 if rng.random() < 0.5 or v - step <= 2.5 else -1), d)


def mdy(d: dt.date, style: int, now: str | None = None) -> str:
    """The note's day as a clinician writes it; a year-less form only when it cannot name a later day."""
    if now is not None and style < 2 and (d.month, d.day) == (2, 29):
        style += 2
    if now is not None and style < 2:
        n = dt.date.fromisoformat(now[:10])
        latest = d.replace(year=n.year) if d.replace(year=n.year) <= n else d.replace(year=n.year - 1)
        if latest != d:
            style += 2
    if style == 0:
        return f"{d.month}/{d.day}"
    if style == 1:
        return d.strftime("%B ") + str(d.day)
    if style == 2:
        return d.isoformat()
    return d.strftime("%b ") + f"{d.day} '{d.strftime('%y')}"


def build_patient(idx: int, bundle: dict) -> tuple[dict, list[dict]]:
    rng = random.Random(f"pnr-{SEED}-{idx}")  # noqa: S311 - reproducible draws, not security
    rec = record(bundle)
    pid = rec["pat"]["id"]
    first = rec["pat"]["name"][0]["given"][0]
    pron = "her" if rec["pat"].get("gender") == "female" else "his"
    days = note_days(rec)
    d1, d2, d3 = days[-3], days[-2], days[-1]
    plan = PLAN[idx]
    facts: list[dict] = []   # (note, key, agrees, refs)
    notes = []

    def val(frag, day):
        o = on_day(rec, frag, day)
        return o

    def t_of(day):
        o = val("Potassium [Moles", day)
        return o[0] + dt.timedelta(minutes=95), o[4]

    # note 1: progress note, labs list, everything agrees
    k1, na1, cr1, g1, bun1 = (val(f, d1) for f in ("Potassium [Moles", "Sodium [Moles", "Creatinine [Mass",
                                                   "Glucose [Mass/volume] in Serum", "Urea nitrogen"))
    h1 = val("Hemoglobin [Mass", d1)
    when1, enc1 = t_of(d1)
    lines = [f"PROGRESS NOTE  {d1.month}/{d1.day}/{d1.year}", "",
             f"S: {first} seen for follow-up. Feels about the same, no new complaints.", "",
             f"Labs: K {fmt_num(k1[1])}, Na {fmt_num(na1[1])}, BUN {fmt_num(bun1[1])}, Cr {fmt_num(cr1[1])}, "
             f"Glu {fmt_num(g1[1])}"]
    if h1:
        lines.append(f"CBC notable for Hgb {fmt_num(h1[1])}.")
    lines += ["", "A/P: stable, continue current regimen. RTC as scheduled."]
    n1 = {"text": "\n".join(lines), "when": when1, "enc": enc1, "type": "Progress note", "key": "n1"}
    for frag, o in (("Potassium [Moles", k1), ("Sodium [Moles", na1), ("Creatinine [Mass", cr1),
                    ("Glucose [Mass/volume] in Serum", g1), ("Urea nitrogen", bun1), ("Hemoglobin [Mass", h1)):
        if o:
            facts.append({"note": "n1", "item": frag, "agrees": True, "refs": [f"Observation/{o[3]}"]})
    notes.append(n1)

    # note 2: SOAP with a prior value in parentheses
    k2, na2, cr2 = (val(f, d2) for f in ("Potassium [Moles", "Sodium [Moles", "Creatinine [Mass"))
    when2, enc2 = t_of(d2)
    crp = prior(rec, "Creatinine [Mass", d2)
    k_written, k_ok = k2[1], True
    prior_written, prior_ok = crp[1], True
    if plan and plan[0] == "k":
        k_written, k_ok = wrong_value(k2[1], rng, "Potassium [Moles"), False
    if plan and plan[0] == "prior":
        prior_written = wrong_value(crp[1], rng, "Creatinine [Mass")
        while prior_written in {o[1] for o in rec["obs"]["Creatinine [Mass"]}:
            prior_written = round(prior_written + 0.1, decimals(crp[1]) or 1)
        prior_ok = False
    k_phr = rng.choice([f"K {fmt_num(k_written)} this AM", f"potassium {fmt_num(k_written)}",
                        f"K {fmt_num(k_written)} today"])
    text2 = "\n".join([
        f"Progress Note - {d2.strftime('%b')} {d2.day}, {d2.year}", "",
        f"S: {first} returns for recheck of labs. Tolerating meds.",
        "O: Afebrile, NAD.",
        f"BMP notable for Cr {fmt_num(cr2[1])} (prior {fmt_num(prior_written)} on "
        f"{crp[0].month}/{crp[0].day}/{crp[0].year}); Na {fmt_num(na2[1])}, {k_phr}.",
        "A: labs reviewed as above.", "P: repeat BMP at next visit."])
    notes.append({"text": text2, "when": when2, "enc": enc2, "type": "Progress note", "key": "n2"})
    facts += [{"note": "n2", "item": "Potassium [Moles", "agrees": k_ok, "refs": [f"Observation/{k2[3]}"]},
              {"note": "n2", "item": "Sodium [Moles", "agrees": True, "refs": [f"Observation/{na2[3]}"]},
              {"note": "n2", "item": "Creatinine [Mass", "agrees": True, "refs": [f"Observation/{cr2[3]}"]},
              {"note": "n2", "item": "prior-Creatinine", "agrees": prior_ok, "refs": [f"Observation/{crp[3]}"],
               "prior_day": crp[0].date()}]

    # note 3 (latest): labs, weight, a med dose, diagnoses
    g3, na3 = val("Glucose [Mass/volume] in Serum", d3), val("Sodium [Moles", d3)
    w3 = val("Body weight", d3)
    when3, enc3 = t_of(d3)
    kind = plan[1] if plan else None
    g_written, g_ok, g_ref = g3[1], True, g3[3]
    if kind == "otherday":
        g_old = val("Glucose [Mass/volume] in Serum", d2)
        assert round(g_old[1]) != round(g3[1])
        g_written, g_ok, g_ref = g_old[1], False, g3[3]
    body = [f"Office Visit {d3.month}/{d3.day}/{d3.year}", "",
            "Subjective: here for routine follow-up.", "",
            "Objective:"]
    if w3:
        unit = "lb" if kind == "unit" else "kg"
        body.append(f"  Wt {fmt_num(w3[1])} {unit}")
        facts.append({"note": "n3", "item": "Body weight", "agrees": kind != "unit",
                      "refs": [f"Observation/{w3[3]}"]})
    body.append(f"  Labs: Na {fmt_num(na3[1])}, glucose {fmt_num(g_written)} this AM")
    facts += [{"note": "n3", "item": "Sodium [Moles", "agrees": True, "refs": [f"Observation/{na3[3]}"]},
              {"note": "n3", "item": "Glucose [Mass/volume] in Serum", "agrees": g_ok, "refs": [f"Observation/{g_ref}"]}]
    body += ["", "Assessment/Plan:"]
    active = [c for c in rec["conds"] if c[2] and c[1] and parse(c[1]).date() <= d3]
    for c in active[:2]:
        body.append(f"# {c[0]} - stable.")
        facts.append({"note": "n3", "item": "dx", "name": c[0], "agrees": True, "refs": [f"Condition/{c[3]}"]})
    if kind == "dx":
        dx = next(x for x in NEVER_DX if x.split()[0].lower() not in rec["cond_words"])
        body.append(f"# {dx} - rate controlled, continue current plan.")
        facts.append({"note": "n3", "item": "dx", "name": dx, "agrees": False, "refs": []})
    meds = [m for m in rec["meds"] if m[0].date() <= d3]
    if meds:
        m = meds[-1]
        dose, ok = m[2], True
        if kind == "dose":
            strengths = {x[2] for x in rec["meds"] if x[1] == m[1]}
            dose = m[2] * 2
            while dose in strengths:
                dose *= 2
            ok = False
        body.append(f"  Meds: continue {m[1]} {fmt_num(dose)} {m[3]} PO {m[4]}.")
        facts.append({"note": "n3", "item": "drug", "name": m[1], "agrees": ok, "refs": [f"MedicationRequest/{m[5]}"]})
    if kind == "drug":
        drug, sig = next(x for x in NEVER_DRUGS if x[0] not in rec["med_words"])
        body.append(f"  Started {drug} {sig} today.")
        facts.append({"note": "n3", "item": "drug", "name": drug, "agrees": False, "refs": []})
    body.append("  Follow up in 3 months.")
    notes.append({"text": "\n".join(body), "when": when3, "enc": enc3,
                  "type": rng.choice(["Progress note", "Clinic note"]), "key": "n3"})

    # add DocumentReferences, dropping the generated notes (their statements are not gold by construction)
    entries = [e for e in bundle["entry"] if e["resource"]["resourceType"] != "DocumentReference"]
    note_ids = {}
    for n in notes:
        nid = str(uuid.uuid5(NS, f"{pid}-{n['key']}"))
        note_ids[n["key"]] = nid
        res = {"resourceType": "DocumentReference", "id": nid, "status": "current", "docStatus": "final",
               "type": {"text": n["type"]}, "subject": {"reference": f"urn:uuid:{pid}"},
               "date": n["when"].isoformat(),
               "content": [{"attachment": {"contentType": "text/plain",
                                           "data": base64.b64encode(n["text"].encode()).decode()}}]}
        if n["enc"]:
            res["context"] = {"encounter": [{"reference": n["enc"]}]}
        entries.append({"fullUrl": f"urn:uuid:{nid}", "resource": res,
                        "request": {"method": "POST", "url": "DocumentReference"}})
    out = dict(bundle)
    out["entry"] = entries

    last = max(rec["last"], when3)
    nd = (last + dt.timedelta(days=7)).date()
    if nd.day > 28:
        nd = (nd.replace(day=1) + dt.timedelta(days=32)).replace(day=5)
    now = f"{nd.isoformat()}T12:00:00Z"
    when = {"n1": notes[0], "n2": notes[1], "n3": notes[2]}
    for f in facts:
        f["nid"] = note_ids[f["note"]]
        f["day"] = when[f["note"]]["when"].date()
        f["type"] = when[f["note"]]["type"]
    ctx = {"pid": pid, "first": first, "pron": pron, "now": now, "plan": plan, "note_ids": note_ids,
           "notes": when, "rng": rng, "rec": rec}
    return out, questions_for(ctx, facts)


ITEM_Q = [
    "Does the {item} in the {date} {ntype} match the labs?",
    "is the {item} documented in {pron} {date} note right?",
    "{item} in {date} note consistent w/ lab table?",
    "CDI query: {item} value charted in the {ntype} of {date} - does it agree with the resulted lab?",
    "Quality review - does the {date} {ntype}'s {item} agree with the structured record?",
]
ITEM_Q_NEG = [
    "Is the {item} in the {date} {ntype} wrong compared to the labs?",
    "does the {item} in {pron} {date} note disagree with the lab table?",
    "any mismatch between the {date} note's {item} and the lab result?",
]


def select(facts: list[dict], rng: random.Random) -> list[dict]:
    """The statements asked about: every planted one, and a few agreeing ones per note."""
    def pick(note, items):
        c = [f for f in facts if f["note"] == note and f["item"] in items]
        return [c[rng.randrange(len(c))]] if c else []
    out = pick("n1", ("Potassium [Moles", "Glucose [Mass/volume] in Serum", "Hemoglobin [Mass"))
    out += [f for f in facts if f["note"] == "n2" and f["item"] in ("Potassium [Moles", "prior-Creatinine")]
    out += pick("n2", ("Sodium [Moles", "Creatinine [Mass"))
    out += [f for f in facts if f["note"] == "n3" and f["item"] in ("Glucose [Mass/volume] in Serum", "drug")]
    out += [f for f in facts if f["note"] == "n3" and f["item"] == "Body weight"
            and (not f["agrees"] or rng.random() < 0.5)]
    dx = [f for f in facts if f["item"] == "dx"]
    wrong = [f for f in dx if not f["agrees"]]
    out += wrong or ([dx[rng.randrange(len(dx))]] if dx else [])
    return out


def questions_for(ctx: dict, facts: list[dict]) -> list[dict]:
    rng = ctx["rng"]
    qs: list[dict] = []

    def add(cat, pattern, text, value, refs, nd=False):
        qs.append({"patient_id": ctx["pid"], "question": text, "now": ctx["now"], "category": cat,
                   "answer_type": "boolean", "expected": [] if nd else [value],
                   "expected_status": "no-data" if nd else "answered", "tolerance": 0,
                   "gold_refs": refs, "template": pattern})

    def item_name(frag):
        full, abbr, typo = LABS[frag][1]
        r = rng.random()
        return (typo, "typo") if r < 0.06 else ((abbr, "abbr") if r < 0.5 else (full, "full"))

    for f in select(facts, rng):
        if f["item"] in LABS:
            name, reg = item_name(f["item"])
            date = mdy(f["day"], rng.randrange(4), ctx["now"])
            neg = rng.random() < 0.5
            tpl = rng.choice(ITEM_Q_NEG if neg else ITEM_Q)
            text = tpl.format(item=name, date=date, ntype=f["type"].lower(), pron=ctx["pron"])
            if f["item"] == "Body weight":
                text = text.replace("the labs", "the vitals").replace("lab table", "vitals").replace(
                    "resulted lab", "charted weight").replace("lab result", "charted weight")
            add("note_item", f"note_item/{LABS[f['item']][0]}-{f['note']}/{'neg' if neg else 'pos'}.{reg}",
                text, f["agrees"] != neg, [f"DocumentReference/{f['nid']}"] + f["refs"])
        elif f["item"] == "prior-Creatinine":
            date = mdy(f["day"], rng.randrange(4), ctx["now"])
            pd = f["prior_day"]
            neg = rng.random() < 0.5
            if neg:
                text = f"The {date} note quotes a prior creatinine from {pd.month}/{pd.day}/{pd.year} - is that prior value wrong?"
            else:
                text = rng.choice([f"Is the prior Cr ({pd.month}/{pd.day}/{pd.year}) cited in the {date} progress note accurate?",
                                   f"does the 'prior' creatinine in the {date} note match what the lab showed on {mdy(pd, 1)}, {pd.year}?"])
            add("note_prior", f"note_prior/Cr/{'neg' if neg else 'pos'}", text, f["agrees"] != neg,
                [f"DocumentReference/{f['nid']}"] + f["refs"])
        elif f["item"] == "drug":
            date = mdy(f["day"], rng.randrange(4), ctx["now"])
            neg = rng.random() < 0.5
            if neg:
                text = f"Is the {f['name']} in the {date} office note something {ctx['pron']} orders don't support (wrong dose or never ordered)?"
            else:
                text = rng.choice([f"Is the {f['name']} dose in the {date} note what was ordered?",
                                   f"pharm review: {f['name']} as written in {ctx['pron']} last note consistent with the med orders?",
                                   f"Does the {f['name']} in the {date} clinic documentation match the prescriptions on file?"])
            add("note_drug", f"note_drug/{'never' if not f['refs'] else 'dose'}/{'neg' if neg else 'pos'}", text,
                f["agrees"] != neg, [f"DocumentReference/{f['nid']}"] + f["refs"])
        elif f["item"] == "dx":
            date = mdy(f["day"], rng.randrange(4), ctx["now"])
            neg = rng.random() < 0.5
            if neg:
                text = f"CDI: the {date} note lists {f['name']} - is that diagnosis unsupported by the problem list?"
            else:
                text = rng.choice([f"Is the {f['name']} in the {date} note's A/P supported by {ctx['pron']} diagnoses?",
                                   f"{f['name']} documented in last note - is it on the problem list?"])
            add("note_dx", f"note_dx/{'never' if not f['refs'] else 'present'}/{'neg' if neg else 'pos'}", text,
                f["agrees"] != neg, [f"DocumentReference/{f['nid']}"] + f["refs"])

    by_note: dict[str, bool] = {}
    for f in facts:
        by_note[f["note"]] = by_note.get(f["note"], True) and f["agrees"]
    n = ctx["notes"]
    # per note
    whole = [("n3", ["Is everything in {p} latest note consistent with the chart?",
                     "latest note - any discrepencies vs the record?"]),
             ("n1", ["Does the {d} progress note agree with the record?",
                     "Are there any discrepancies between the {d} note and the structured data?"]),
             ("n2", ["resident here: is the {d} note consistant with the labs + chart?",
                     "any mismatch in the {d} progress note vs the chart?"])]
    for key, phr in [whole[0], whole[1 + rng.randrange(2)]]:
        j = rng.randrange(2)
        text = phr[j].format(p=ctx["pron"], d=mdy(n[key]["when"].date(), rng.randrange(4), ctx["now"]))
        add("note_whole", f"note_whole/{key}/{'neg' if j else 'pos'}", text, by_note[key] != bool(j),
            [f"DocumentReference/{ctx['note_ids'][key]}"])
    # anywhere
    planted = ctx["plan"] is not None
    j = rng.randrange(3)
    text = [f"Any discrepancies between {ctx['pron']} notes and the record?",
            f"Do {ctx['first']}'s notes and labs disagree anywhere?",
            f"do all of {ctx['pron']} notes agree w/ the structured record?"][j]
    add("note_anywhere", f"note_anywhere/{'pos' if j == 2 else 'neg'}", text, planted if j < 2 else not planted,
        [f"DocumentReference/{x}" for x in ctx["note_ids"].values()])
    # items a note does not state
    for key in [("n1", "n2")[rng.randrange(2)]]:
        stated = {f["item"] for f in facts if f["note"] == key}
        cands = [a for a in ABSENT if not any(a[1] in s for s in stated)]
        a = cands[rng.randrange(len(cands))]
        d = mdy(n[key]["when"].date(), rng.randrange(4), ctx["now"])
        text = rng.choice([f"Does the {a[0]} in the {d} progress note match the lab table?",
                           f"is the {a[0]} quoted in {ctx['pron']} {d} note correct?"])
        add("note_absent", f"note_absent/{a[0]}", text, None, [f"DocumentReference/{ctx['note_ids'][key]}"], nd=True)
    return qs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", help="folder for the augmented bundles")
    ap.add_argument("--check", action="store_true", help="exit 1 when questions.jsonl is stale")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "fhirqa.cli", "synth", "--patients", str(N_PATIENTS), "--seed", SEED,  # noqa: S603
                        "--out", tmp], check=True, capture_output=True)
        files = sorted(Path(tmp).glob("*.json"))
        allq: list[dict] = []
        outs = []
        for i, f in enumerate(files):
            b, qs = build_patient(i, load(f))
            outs.append((f.name, b))
            allq += qs
    cats: dict[str, int] = {}
    lines = []
    for q in allq:
        cats[q["category"]] = cats.get(q["category"], 0) + 1
        row = {"id": f"{q['category']}-{cats[q['category']]:03d}", **q}
        lines.append(json.dumps(row, ensure_ascii=False))
    text = "\n".join(lines) + "\n"
    target = HERE / "questions.jsonl"
    if args.check:
        same = target.exists() and target.read_text() == text
        print("up to date" if same else "stale")
        return 0 if same else 1
    target.write_text(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for name, b in outs:
            (out / name).write_text(json.dumps(b))
    print(f"{len(allq)} questions; categories {cats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
