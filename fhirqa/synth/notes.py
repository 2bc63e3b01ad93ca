"""Clinical notes (DocumentReference) written from the patient's actual chart.

Every number a note quotes comes from a :class:`~fhirqa.synth.sim.Result` that was
charted as an Observation, formatted with the same precision, so a reader (or a
test) can find the source observation of each value.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from . import catalog as cat
from .catalog import LOINC, concept
from .clinical import allergy_text
from .clock import hm, iso, md
from .meds import sig_short
from .sim import Result, Sim, ref

LAB_ORDER = [
    "sodium",
    "potassium",
    "chloride",
    "co2",
    "bun",
    "creatinine",
    "glucose",
    "calcium",
    "egfr",
    "magnesium",
    "wbc",
    "hemoglobin",
    "hematocrit",
    "platelets",
    "a1c",
    "ldl",
    "hdl",
    "triglycerides",
    "tsh",
    "bnp",
    "troponin",
    "lactate",
    "vanco_trough",
]
US_CORE_CATEGORY = "http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category"


def short(key: str) -> str:
    """Clinician abbreviation of a lab (``K``, ``Cr``, ``WBC``)."""
    return str(cat.labs()[key]["short"])


def labs_line(results: Iterable[Result], keys: list[str] | None = None) -> str:
    """``Na 139, K 4.9, Cr 1.02`` in conventional order."""
    by_key = {r.key: r for r in results}
    order = [k for k in (keys or LAB_ORDER) if k in by_key]
    return ", ".join(f"{short(k)} {by_key[k].text}" for k in order)


def vitals_line(v: dict[str, Result], with_weight: bool = False) -> str:
    """``BP 142/88, HR 76, RR 14, T 36.8, SpO2 98% RA`` (+ weight/BMI)."""
    parts = [
        f"BP {v['bp'].text}",
        f"HR {v['hr'].text}",
        f"RR {v['rr'].text}",
        f"T {v['temp'].text}",
        f"SpO2 {v['spo2'].text}% {v['o2'].text if 'o2' in v else 'RA'}",
    ]
    if with_weight and "weight" in v:
        parts += [f"Wt {v['weight'].text} kg", f"BMI {v['bmi'].text}"]
    return ", ".join(parts)


def problems(sim: Sim, t: datetime) -> str:
    """Short problem list (``T2DM, HTN, CKD3``) of chronic conditions known at ``t``."""
    keys = [k for k, c in sim.conditions.items() if k in cat.chronic() and (c.recorded or c.onset) < t]
    return ", ".join(cat.chronic()[k]["short"] for k in keys) or "no significant PMH"


def med_list(sim: Sim, t: datetime, setting: str = "community") -> list[str]:
    """Shorthand list of active medications (plus patient-reported OTC drugs for home meds)."""
    out = [sig_short(o.drug, o.dose, o.timing) for o in sim.active_orders(t, setting)]
    return out + [f"{sig_short(k)} (OTC)" for k in sim.otc] if setting == "community" else out


def allergies(sim: Sim) -> str:
    """``penicillin (hives); latex (rash)`` or ``NKDA``."""
    return "; ".join(allergy_text(k, sim) for k in sim.allergies) or "NKDA"


def intro(sim: Sim, t: datetime) -> str:
    """``67 y/o M with hx of T2DM, HTN``."""
    hx = problems(sim, t)
    who = f"{sim.physio.age(t)} y/o {sim.person.sex_short}"
    return f"{who} with hx of {hx}" if hx != "no significant PMH" else f"{who} with no significant PMH"


def trend(sim: Sim, key: str, current: Result) -> str:
    """``A1c 7.4 (prior 8.9 on 9/2/2024)`` when an earlier value exists."""
    prior = [
        r for r in sim.chart.results if r.key == key and r.time < current.time and r.obs_id != current.obs_id
    ]
    text = f"{short(key)} {current.text}"
    if prior:
        p = max(prior, key=lambda r: r.time)
        text += f" (prior {p.text} on {md(p.time)})"
    return text


def header(sim: Sim, title: str, t: datetime, author: dict[str, Any], place: str) -> str:
    """Common note header."""
    n = author["name"][0]
    who = f"{n.get('prefix', [''])[0]} {n['given'][0]} {n['family']}".strip()
    mrn = "MRN " + next(i["value"] for i in sim.chart.entries[0]["identifier"] if i.get("use") == "usual")
    return (
        f"{title.upper()}\n{place}\nDate: {md(t)} {hm(t)}    Author: {who}\n"
        f"Patient: {sim.person.given} {sim.person.family}    DOB: {md(datetime.combine(sim.person.birth, t.timetz()))}    {mrn}\n"
    )


def document(
    sim: Sim,
    note_key: str,
    text: str,
    t: datetime,
    enc_id: str,
    author: dict[str, Any],
    period: tuple[datetime, datetime],
    org_key: str,
) -> str:
    """DocumentReference holding the note as a base64 ``text/plain`` attachment."""
    nt = cat.clinical()["note_types"][note_key]
    doc: dict[str, Any] = {
        "resourceType": "DocumentReference",
        "id": sim.chart.new_id(),
        "status": "current",
        "docStatus": "final",
        "type": concept(LOINC, nt["loinc"], nt["display"]),
        "category": [concept(US_CORE_CATEGORY, "clinical-note", "Clinical Note")],
        "subject": sim.patient_ref,
        "date": iso(t),
        "author": [sim.use(author)],
        "custodian": sim.use(sim.pool[org_key]),
        "description": nt["title"],
        "content": [
            {
                "attachment": {
                    "contentType": "text/plain; charset=utf-8",
                    "language": "en-US",
                    "data": base64.b64encode(text.encode("utf-8")).decode("ascii"),
                    "title": nt["title"],
                    "creation": iso(t),
                },
                "format": cat.coding(
                    "http://ihe.net/fhir/ihe.formatcode.fhir/CodeSystem/formatcode",
                    "urn:ihe:iti:xds:2017:mimeTypeSufficient",
                    "mimeType Sufficient",
                ),
            }
        ],
        "context": {
            "encounter": [ref(enc_id)],
            "period": {"start": iso(period[0]), "end": iso(period[1])},
        },
    }
    return sim.chart.add(doc)


def numbered(items: list[str]) -> str:
    """``1. ...`` lines."""
    return "\n".join(f"{i}. {s}" for i, s in enumerate(items, 1))


def clinic_note(
    sim: Sim,
    t: datetime,
    author: dict[str, Any],
    visit_text: str,
    subjective: str,
    vitals: dict[str, Result],
    labs: list[Result],
    plan: list[str],
    ros: str,
    followup: str,
    visit_start: datetime,
) -> str:
    """Outpatient SOAP note text; ``t`` is when it is signed, meds are those before the visit."""
    meds = med_list(sim, visit_start)
    lab_parts = []
    for key in ("a1c", "ldl", "tsh"):
        r = next((x for x in labs if x.key == key), None)
        if r:
            lab_parts.append(trend(sim, key, r))
    rest = labs_line(
        [x for x in labs if x.key not in ("a1c", "ldl", "tsh")],
        ["sodium", "potassium", "creatinine", "egfr", "glucose", "magnesium", "wbc", "hemoglobin", "bnp"],
    )
    if rest:
        lab_parts.append(rest)
    body = [
        header(sim, f"Clinic note - {visit_text}", t, author, "Riverside Family Medicine"),
        f"S: {intro(sim, visit_start)} here for {subjective}. {ros}",
        "Current meds: " + ("; ".join(meds) if meds else "none") + ".",
        f"Allergies: {allergies(sim)}.",
        "",
        f"O: {vitals_line(vitals, with_weight=True)}.",
    ]
    if "pain" in vitals and vitals["pain"].value > 0:
        body.append(f"Pain {vitals['pain'].text}/10.")
    if lab_parts:
        body.append("Labs today: " + "; ".join(lab_parts) + ".")
    body += ["", "A/P:", numbered(plan) if plan else "1. Health maintenance reviewed.", "", followup]
    return "\n".join(body) + "\n"


def ed_note(
    sim: Sim,
    t: datetime,
    author: dict[str, Any],
    complaint: str,
    onset_days: int,
    vitals: dict[str, Result],
    labs: list[Result],
    studies: list[str],
    plan: list[str],
    disposition: str,
) -> str:
    """Emergency department provider note."""
    body = [
        header(
            sim, "ED provider note", t, author, "St. Brendan Regional Medical Center - Emergency Department"
        ),
        f"CC/HPI: {intro(sim, t)} who presents c/o {complaint} x {onset_days} day{'s' if onset_days != 1 else ''}.",
        "Home meds: " + ("; ".join(med_list(sim, t)) or "none") + f". Allergies: {allergies(sim)}.",
        f"Triage vitals ({hm(vitals['bp'].time)}): {vitals_line(vitals)}.",
    ]
    if labs:
        body.append(f"Labs: {labs_line(labs)}.")
    for s in studies:
        body.append(s)
    body += ["", "MDM/Plan:", numbered(plan), "", f"Disposition: {disposition}."]
    return "\n".join(body) + "\n"
