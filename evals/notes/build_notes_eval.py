"""Build the notes evaluation sets from the raw note text, by rules, without fhirqa.

    python evals/notes/build_notes_eval.py            # rewrites the .jsonl files beside this script
    python evals/notes/build_notes_eval.py --check    # exit 1 when a committed file is stale

Reads the FHIR JSON directly (base64 note attachments decoded here) and writes:

- ``sample-questions.jsonl``: questions about ``examples/sample`` notes (values on admission/arrival/at a visit,
  doses, symptoms present or denied, and "not documented" negatives), gold from the note text;
- ``bulk10-questions.jsonl``: the same kinds about ``../shared/data/synthea-bulk-10`` (chief complaints,
  medication strengths, presenting findings; negatives), when the shared data is there;
- ``bulk10-retrieval.jsonl``: labelled retrieval queries (rare drugs, findings, procedures, complaints per
  patient) whose relevant notes are the ones whose raw text contains the key phrase.

Every choice is seeded by a string, so the same data gives the same bytes.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SAMPLE = ROOT / "examples" / "sample"
BULK = ROOT.parent / "shared" / "data" / "synthea-bulk-10"

ANALYTES = {"K": "potassium", "Na": "sodium", "Cr": "creatinine", "WBC": "white blood cell count", "Lactate": "lactate",
            "Hgb": "hemoglobin", "Glu": "glucose", "BUN": "BUN", "Plt": "platelet count", "A1c": "A1c", "LDL": "LDL",
            "BNP": "BNP", "eGFR": "eGFR", "hsTnI": "troponin"}
VITALS = {"BP": "blood pressure", "HR": "heart rate", "RR": "respiratory rate", "SpO2": "oxygen saturation"}
SYMPTOMS = {"chest pain": "chest pain", "SOB": "shortness of breath", "palpitations": "palpitations",
            "dizziness": "dizziness", "abdominal pain": "abdominal pain", "polyuria": "polyuria",
            "fever": "fever", "dysuria": "dysuria", "confusion": "confusion", "rigors": "chills"}
ABSENT_SYMPTOMS = ["hallucinations", "hemoptysis", "diplopia", "hematuria", "syncope"]
ABSENT_DRUGS = ["warfarin", "digoxin", "lithium", "methotrexate"]


def rng(*parts: str) -> random.Random:
    return random.Random(int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:16], 16))  # noqa: S311


def decode(resource: dict[str, Any]) -> list[str]:
    """Text of a DocumentReference's text attachments, or a DiagnosticReport's presentedForm/conclusion."""
    out = []
    attachments = [c.get("attachment", {}) for c in resource.get("content", [])] + resource.get("presentedForm", [])
    for a in attachments:
        if a.get("data") and str(a.get("contentType", "")).startswith("text/"):
            out.append(base64.b64decode(a["data"]).decode("utf-8"))
    if not out and resource.get("conclusion"):
        out.append(resource["conclusion"])
    return out


def local_date(text: str) -> str | None:
    """The note's own date line: ``Date: 7/18/2025 20:18`` → 7/18/2025, or a Synthea ``1987-11-19`` first line."""
    m = re.search(r"^Date:\s*(\d{1,2}/\d{1,2}/\d{4})", text, re.M) or re.search(r"^DATE:\s*(\d{1,2}/\d{1,2}/\d{4})",
                                                                                   text, re.M)
    if m:
        return m[1]
    m = re.match(r"\s*(\d{4}-\d{2}-\d{2})\s*$", text.strip().split("\n")[0])
    return m[1] if m else None


def pairs(line: str) -> dict[str, str]:
    """``Na 136, K 5.0, BP 87/67`` → {"Na": "136", "K": "5.0", "BP": "87/67"} (first value of each name)."""
    found: dict[str, str] = {}
    for name, value in re.findall(r"\b([A-Za-z][A-Za-z0-9]*)\s+(\d+(?:\.\d+)?(?:/\d+)?)(?![\d/])", line):
        found.setdefault(name, value)
    return found


def number(value: str) -> Any:
    return value if "/" in value else float(value)


def q(qid: str, pid: str, question: str, kind: str, answer: Any, refs: list[str], only_in_notes: bool,
      category: str) -> dict[str, Any]:
    return {"id": qid, "patient_id": pid, "question": question, "kind": kind, "answer": answer, "gold_refs": refs,
            "only_in_notes": only_in_notes, "category": category}


# -- examples/sample --------------------------------------------------------------------------------------
def sample_notes() -> tuple[dict[str, list[dict[str, Any]]], dict[str, set[str]]]:
    notes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    observed: dict[str, set[str]] = defaultdict(set)  # patient → "display|YYYY-MM-DD"
    for path in sorted(SAMPLE.glob("*.json")):
        bundle = json.loads(path.read_text("utf-8"))
        for entry in bundle.get("entry", []):
            r = entry["resource"]
            subject = (r.get("subject") or {}).get("reference", "")
            pid = subject.split("/")[-1].removeprefix("urn:uuid:")
            if r["resourceType"] in ("DocumentReference", "DiagnosticReport"):
                for text in decode(r):
                    notes[pid].append({"ref": f"{r['resourceType']}/{r['id']}", "text": text,
                                       "type": ((r.get("type") or r.get("code") or {}).get("coding") or [{}])[0]
                                       .get("display", ""), "date": local_date(text)})
            elif r["resourceType"] == "Observation":
                display = ((r.get("code") or {}).get("coding") or [{}])[0].get("display", "").lower()
                observed[pid].add(f"{display}|{str(r.get('effectiveDateTime', ''))[:10]}")
    return notes, observed


def _observed(observed: set[str], name: str, mdy: str) -> bool:
    m, d, y = (int(x) for x in mdy.split("/"))
    days = {f"{y:04d}-{m:02d}-{dd:02d}" for dd in (d - 1, d, d + 1)}
    word = {"white blood cell count": "leukocytes", "platelet count": "platelets", "A1c": "a1c", "BUN": "urea",
            "troponin": "troponin", "blood pressure": "blood pressure"}.get(name, name.lower())
    return any(word in key.split("|")[0] and key.split("|")[1] in days for key in observed)


def build_sample() -> list[dict[str, Any]]:
    notes, observed = sample_notes()
    out: list[dict[str, Any]] = []
    for pid in sorted(notes):
        for note in notes[pid]:
            text, ref, day = note["text"], note["ref"], note["date"]
            if not day or not note["type"]:
                continue
            r = rng(pid, ref)
            same_day = [n["ref"] for n in notes[pid] if n["date"] == day]
            adm = re.search(r"^Labs on admission[^:]*:(.*)$", text, re.M)
            if adm:
                values = pairs(adm[1])
                known = sorted(a for a in values if a in ANALYTES)
                for abbr in r.sample(known, k=min(3, len(known))):
                    name = ANALYTES[abbr]
                    refs = [ref] + [n["ref"] for n in notes[pid] if f"{abbr} {values[abbr]} on admission" in n["text"]]
                    out.append(q("", pid, f"What was the {name} on admission on {day}?", "value",
                                 number(values[abbr]), refs, not _observed(observed[pid], name, day), "admission value"))
                out.append(q("", pid, f"What was the troponin on admission on {day}?", "value", None, [], True,
                             "not documented") if "TnI" not in text and "trop" not in text.lower() else None)
            arrival = re.search(r"^(?:Vitals on arrival|Triage vitals)[^:]*:(.*)$", text, re.M)
            if arrival:
                values = pairs(arrival[1])
                abbr = r.choice(sorted(a for a in values if a in VITALS))
                out.append(q("", pid, f"What was the {VITALS[abbr]} on arrival on {day}?", "value",
                             number(values[abbr]), [ref], not _observed(observed[pid], VITALS[abbr], day),
                             "arrival vital"))
            today = re.search(r"^Labs today:(.*)$", text, re.M)
            if today and r.random() < 0.5:
                values = pairs(today[1])
                keys = sorted(a for a in values if a in ANALYTES)
                if keys:
                    abbr = r.choice(keys)
                    out.append(q("", pid, f"What was the {ANALYTES[abbr]} at the visit on {day}?", "value",
                                 number(values[abbr]), same_day, not _observed(observed[pid], ANALYTES[abbr], day),
                                 "visit value"))
            meds = re.search(r"^(?:Current meds|Home meds):(.*)$", text, re.M)
            if meds and r.random() < 0.5:
                doses = re.findall(r"([a-z][a-z-]+)(?: [a-z]+)? (\d+(?:\.\d+)?) (mg|mcg|units)", meds[1])
                if doses:
                    drug, amount, unit = r.choice(doses)
                    out.append(q("", pid, f"What dose of {drug} was listed at the visit on {day}?", "dose",
                                 f"{amount} {unit}", same_day, False, "dose"))
            new = re.search(r"NEW: ([a-z][a-z-]+) (\d+(?:\.\d+)?) (mg|mcg|g|units)", text)
            if new and "DISCHARGE" in text[:40]:
                out.append(q("", pid, f"What dose of {new[1]} was started at discharge on {day}?", "dose",
                             f"{new[2]} {new[3]}", [ref], False, "dose"))
            denies = re.search(r"Denies ([^.]*)\.", text)
            if denies and r.random() < 0.6:
                listed = [s for s in SYMPTOMS if re.search(r"\b" + re.escape(s) + r"\b", denies[1])]
                if listed:
                    s = r.choice(listed)
                    out.append(q("", pid, f"Did the patient report {SYMPTOMS[s]} at the visit on {day}?", "finding",
                                 False, [ref], True, "denied symptom"))
            cc = re.search(r"^CC(?:/HPI)?:(.*)$", text, re.M)
            if cc:
                listed = [s for s in SYMPTOMS if re.search(r"\b" + re.escape(s) + r"\b", cc[1])]
                if listed:
                    s = r.choice(listed)
                    out.append(q("", pid, f"Did the patient have {SYMPTOMS[s]} on presentation on {day}?", "finding",
                                 True, [ref], True, "presenting symptom"))
            overnight = re.search(r"^S: (Afebrile|Febrile) overnight", text, re.M)
            if overnight:
                out.append(q("", pid, f"Did the patient have a fever on {day}?", "finding", overnight[1] == "Febrile",
                             [ref], True, "inpatient symptom"))
            if r.random() < 0.3:
                absent = r.choice([s for s in ABSENT_SYMPTOMS if s not in text.lower()])
                out.append(q("", pid, f"Did the patient report {absent} at the visit on {day}?", "finding", None, [],
                             True, "not documented"))
        all_text = " ".join(n["text"].lower() for n in notes[pid])
        drug = rng(pid, "absent-drug").choice([d for d in ABSENT_DRUGS if d not in all_text])
        out.append(q("", pid, f"What dose of {drug} is the patient on?", "dose", None, [], True, "not documented"))
    return _number([x for x in out if x], "sample")


# -- synthea-bulk-10 --------------------------------------------------------------------------------------
def bulk_notes() -> dict[str, list[dict[str, Any]]]:
    notes: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with (BULK / "DocumentReference.000.ndjson").open(encoding="utf-8") as handle:
        for line in handle:
            r = json.loads(line)
            pid = r["subject"]["reference"].split("/")[-1]
            for text in decode(r):
                notes[pid].append({"ref": f"DocumentReference/{r['id']}", "text": text, "date": local_date(text)})
    return notes


def section(text: str, name: str) -> str:
    m = re.search(r"^# " + re.escape(name) + r"\s*$(.*?)(?=^# |\Z)", text, re.M | re.S)
    return m[1].strip() if m else ""


def build_bulk() -> list[dict[str, Any]]:
    notes = bulk_notes()
    out: list[dict[str, Any]] = []
    for pid in sorted(notes):
        chosen = rng(pid, "notes").sample(notes[pid], k=min(8, len(notes[pid])))
        for note in chosen:
            text, ref, day = note["text"], note["ref"], note["date"]
            r = rng(pid, ref)
            complaints = re.findall(r"^- (.+)$", section(text, "Chief Complaint"), re.M)
            if complaints:
                c = r.choice(complaints)
                out.append(q("", pid, f"Did the patient complain of {c.lower()} at the visit on {day}?", "finding",
                             True, [ref], True, "chief complaint"))
            meds = section(text, "Medications")
            strengths = re.findall(r"(?:^|; )(?:\d+ hr )?([a-z]+)(?: [a-z]+)? (\d+(?:\.\d+)?) (mg/ml|mg|mcg)(?! /)", meds)
            strengths = [s for s in strengths if len(re.findall(r"\b" + s[0] + r"\b", meds)) == 1]  # one strength
            if strengths:
                drug, amount, unit = r.choice(strengths)
                out.append(q("", pid, f"What dose of {drug} was listed on {day}?", "dose", f"{amount} {unit}", [ref],
                             False, "dose"))
            presenting = re.search(r"Patient is presenting with (.+?)\.\s*$", text, re.M)
            if presenting:
                finding = re.sub(r"\s*\([^)]*\)", "", r.choice(presenting[1].split(", "))).strip()
                if finding and len(finding) < 40:
                    out.append(q("", pid, f"Was the patient presenting with {finding} at the visit on {day}?",
                                 "finding", True, [ref], False, "presenting finding"))
            absent = r.choice([s for s in ABSENT_SYMPTOMS + ["chest pain", "headache"]
                               if s.split()[0] not in text.lower()])
            if r.random() < 0.4:
                    out.append(q("", pid, f"Did the patient report {absent} at the visit on {day}?", "finding", None, [],
                             True, "not documented"))
    return _number(out, "bulk10")


def build_retrieval() -> list[dict[str, Any]]:
    """Per patient, phrases found in 1-5 of their notes; relevant = the notes whose raw text contains the phrase."""
    notes = bulk_notes()
    out: list[dict[str, Any]] = []
    for pid in sorted(notes):
        texts = {n["ref"]: n["text"].lower() for n in notes[pid]}
        candidates: dict[str, tuple[str, str]] = {}
        for n in notes[pid]:
            t = n["text"]
            for drug in re.findall(r"^- (?:\d+ (?:hr|ml) )?([a-z]{4,}) [^\n]*?\d+(?:\.\d+)? (?:mg|mcg|ml|unt)", t, re.M):
                candidates.setdefault(drug, ("drug", f"Was the patient ever treated with {drug}?"))
            for proc in re.findall(r"^- (.+?) \(procedure\)$", t, re.M):
                candidates.setdefault(proc.lower(), ("procedure", f"When was a {proc.lower()} done?"))
            for c in re.findall(r"^- (.+)$", section(t, "Chief Complaint"), re.M):
                candidates.setdefault(c.lower(), ("complaint", f"When did the patient complain of {c.lower()}?"))
            m = re.search(r"Patient is presenting with (.+?)\.\s*$", t, re.M)
            for f in (m[1].split(", ") if m else []):
                f = re.sub(r"\s*\([^)]*\)", "", f).strip().lower()
                if 3 < len(f) < 50:
                    candidates.setdefault(f, ("finding", f"Notes about {f}"))
        pool = []
        for phrase, (kind, query) in sorted(candidates.items()):
            relevant = sorted(ref for ref, t in texts.items() if phrase in t)
            if 1 <= len(relevant) <= 5:
                pool.append({"patient_id": pid, "query": query, "phrase": phrase, "kind": kind, "relevant": relevant})
        r = rng(pid, "retrieval")
        by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for item in pool:
            by_kind[item["kind"]].append(item)
        for kind in sorted(by_kind):
            out += r.sample(by_kind[kind], k=min(3, len(by_kind[kind])))
    for i, item in enumerate(out, 1):
        item["id"] = f"retrieval-{i:03d}"
    return out


def _number(items: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    for i, item in enumerate(items, 1):
        item["id"] = f"{prefix}-{i:03d}"
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a committed file differs")
    args = parser.parse_args(argv)
    outputs = {"sample-questions.jsonl": build_sample}
    if BULK.is_dir():
        outputs |= {"bulk10-questions.jsonl": build_bulk, "bulk10-retrieval.jsonl": build_retrieval}
    else:
        print(f"{BULK} is absent: only the sample set is built", file=sys.stderr)
    stale = 0
    for name, build in outputs.items():
        text = "".join(json.dumps(item, sort_keys=True) + "\n" for item in build())
        path = HERE / name
        if args.check:
            if not path.exists() or path.read_text("utf-8") != text:
                print(f"{path} is stale", file=sys.stderr)
                stale += 1
        else:
            path.write_text(text, "utf-8")
            print(f"{path}: {text.count(chr(10))} lines")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
