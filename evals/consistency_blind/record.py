"""Read one raw Synthea R4 bundle into plain lists (no fhirqa import)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime


def ts(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


@dataclass
class Obs:
    name: str
    code: str
    value: float
    unit: str
    time: datetime
    enc: str
    ref: str


@dataclass
class Med:
    name: str
    time: datetime
    enc: str
    ref: str
    freq: tuple | None  # (frequency, period, unit)


@dataclass
class Item:  # condition, procedure, immunization
    name: str
    time: datetime
    end: datetime | None
    enc: str
    ref: str


@dataclass
class Enc:
    id: str
    cls: str
    type: str
    start: datetime
    end: datetime


@dataclass
class Record:
    pid: str
    name: str
    gender: str
    birth: datetime
    obs: list = field(default_factory=list)
    meds: list = field(default_factory=list)
    conds: list = field(default_factory=list)
    procs: list = field(default_factory=list)
    imms: list = field(default_factory=list)
    encs: list = field(default_factory=list)
    allergies: list = field(default_factory=list)


def _eid(ref: dict | None) -> str:
    return (ref or {}).get("reference", "").replace("urn:uuid:", "")


def load(path: str) -> Record:
    with open(path, encoding="utf-8") as f:
        bundle = json.load(f)
    res = [e["resource"] for e in bundle["entry"]]
    p = next(r for r in res if r["resourceType"] == "Patient")
    nm = p["name"][0]
    name = re.sub(r"\d+", "", " ".join(nm.get("given", [])[:1] + [nm.get("family", "")]))
    rec = Record(p["id"], name, p.get("gender", ""), ts(p["birthDate"] + "T00:00:00+00:00"))
    for r in res:
        t = r["resourceType"]
        ref = f"{t}/{r['id']}"
        if t == "Observation":
            when = ts(r["effectiveDateTime"])
            parts = [(r["code"], r.get("valueQuantity"))]
            parts += [(c["code"], c.get("valueQuantity")) for c in r.get("component", [])]
            for code, vq in parts:
                if vq and "value" in vq:
                    cd = code["coding"][0]
                    rec.obs.append(Obs(cd["display"].replace("\u200b", ""), cd["code"], float(vq["value"]),
                                       vq.get("unit", ""), when, _eid(r.get("encounter")), ref))
        elif t == "MedicationRequest":
            cc = r.get("medicationCodeableConcept")
            if not cc:
                continue
            freq = None
            di = r.get("dosageInstruction")
            if di and di[0].get("timing", {}).get("repeat"):
                rp = di[0]["timing"]["repeat"]
                freq = (rp.get("frequency"), rp.get("period"), rp.get("periodUnit"))
            rec.meds.append(Med(cc["text"], ts(r["authoredOn"]), _eid(r.get("encounter")), ref, freq))
        elif t == "Condition":
            end = r.get("abatementDateTime")
            rec.conds.append(Item(r["code"]["text"], ts(r["onsetDateTime"]), ts(end) if end else None,
                                  _eid(r.get("encounter")), ref))
        elif t == "Procedure":
            pp = r.get("performedPeriod") or {}
            start = pp.get("start") or r.get("performedDateTime")
            rec.procs.append(Item(r["code"]["text"], ts(start), ts(pp["end"]) if pp.get("end") else None,
                                  _eid(r.get("encounter")), ref))
        elif t == "Immunization":
            rec.imms.append(Item(r["vaccineCode"]["text"], ts(r["occurrenceDateTime"]), None,
                                 _eid(r.get("encounter")), ref))
        elif t == "Encounter":
            rec.encs.append(Enc(r["id"], r["class"]["code"], r["type"][0]["text"],
                                ts(r["period"]["start"]), ts(r["period"]["end"])))
        elif t == "AllergyIntolerance":
            rec.allergies.append(r["code"]["text"])
    rec.encs.sort(key=lambda e: e.start)
    return rec
