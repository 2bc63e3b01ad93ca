"""Synthetic people: the patient's demographics and a seeded pool of clinicians and organizations."""

from __future__ import annotations

import random
import uuid
from datetime import date, datetime
from typing import Any

from . import catalog as cat
from .catalog import MRN_SYSTEM, NPI, concept
from .clock import iso_date
from .sim import Person

V2_0203 = "http://terminology.hl7.org/CodeSystem/v2-0203"
MARITAL = "http://terminology.hl7.org/CodeSystem/v3-MaritalStatus"
ROLES = {
    "pcp": 4,
    "hospitalist": 4,
    "ed": 3,
    "radiologist": 2,
    "nurse": 6,
    "pharmacist": 2,
    "gastroenterologist": 1,
    "cardiologist": 1,
}
QUALIFICATION = {
    "nurse": ("RN", "Registered Nurse"),
    "pharmacist": ("PharmD", "Doctor of Pharmacy"),
}


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _npi(rng: random.Random) -> str:
    return str(rng.randint(1_000_000_000, 1_999_999_999))


def make_pool(seed: int) -> dict[str, Any]:
    """Practitioners and organizations shared by all patients of one seed.

    They use their own RNG stream so the pool is identical however many patients
    are generated; each bundle includes only the members it references.
    """
    rng = random.Random(f"fhirqa-synth-pool-{seed}")  # noqa: S311 - synthetic data, not crypto
    names = cat.people()["clinicians"]
    pool: dict[str, Any] = {}
    for org in cat.clinical()["organizations"]:
        pool[org["key"]] = {
            "resourceType": "Organization",
            "id": _uuid(rng),
            "identifier": [{"system": NPI, "value": _npi(rng)}],
            "active": True,
            "type": [
                concept(
                    "http://terminology.hl7.org/CodeSystem/organization-type",
                    org["type"],
                    org["type_display"],
                )
            ],
            "name": org["name"],
            "telecom": [
                {"system": "phone", "value": f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}"}
            ],
            "address": [
                {
                    "line": [f"{rng.randint(10, 999)} Hospital Way"],
                    "city": "Springfield",
                    "state": "MA",
                    "postalCode": "01103",
                    "country": "US",
                }
            ],
        }
    used: set[tuple[str, str]] = set()
    for role, count in ROLES.items():
        members = []
        for _ in range(count):
            while True:
                given, family = rng.choice(names["given"]), rng.choice(names["family"])
                if (given, family) not in used:
                    used.add((given, family))
                    break
            code, display = QUALIFICATION.get(role, ("MD", "Doctor of Medicine"))
            name: dict[str, Any] = {"use": "official", "family": family, "given": [given]}
            if code == "MD":
                name["prefix"] = ["Dr."]
            members.append(
                {
                    "resourceType": "Practitioner",
                    "id": _uuid(rng),
                    "identifier": [{"system": NPI, "value": _npi(rng)}],
                    "active": True,
                    "name": [name],
                    "gender": "female"
                    if given
                    in {
                        "Beatriz",
                        "Catherine",
                        "Elena",
                        "Grace",
                        "Hannah",
                        "Julia",
                        "Laura",
                        "Nadia",
                        "Priyanka",
                        "Rachel",
                        "Teresa",
                    }
                    else "male",
                    "qualification": [
                        {
                            "code": concept(
                                "http://terminology.hl7.org/CodeSystem/v2-0360", code, display, code
                            )
                        }
                    ],
                }
            )
        pool[role] = members
    return pool


def person(rng: random.Random, now: datetime) -> tuple[Person, dict[str, Any]]:
    """Draw demographics; returns the Person and the address/city facts used later."""
    p = cat.people()
    gender = rng.choice(["male", "female"])
    age = rng.choices(
        [rng.randint(22, 39), rng.randint(40, 64), rng.randint(65, 92)], weights=[0.22, 0.4, 0.38]
    )[0]
    birth = date(now.year - age, 1, 1).toordinal() - rng.randint(0, 364)
    given = rng.choice(p["given_male" if gender == "male" else "given_female"])
    family = rng.choice(p["family"])
    r = rng.random()
    prefix = None
    if r < 0.3:
        prefix = "Mr." if gender == "male" else rng.choice(["Mrs.", "Ms."])
    elif r < 0.33:
        prefix = "Dr."
    city = rng.choice(p["cities"])
    smoking = rng.choices(["never", "former", "current"], weights=[0.58, 0.27, 0.15])[0]
    who = Person(_uuid(rng), gender, date.fromordinal(birth), given, family, prefix, int(city["tz"]), smoking)
    facts = {
        "city": city,
        "zip": rng.choice(city["zip"]),
        "street": f"{rng.randint(3, 9999)} {rng.choice(p['streets'])}",
        "middle": rng.choice(p["middle_initials"]) if rng.random() < 0.6 else None,
        "phone": f"555-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
        "mrn": f"{rng.randint(1_000_000, 9_999_999)}",
        "ssn": f"999-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}",
        "marital": rng.choice(p["marital"]),
        "spanish": given in {"María", "Lucía", "Jorge", "Luis", "Mateo", "Rosa"} and rng.random() < 0.6,
    }
    return who, facts


def patient_resource(
    who: Person, facts: dict[str, Any], pcp: dict[str, Any], clinic: dict[str, Any]
) -> dict[str, Any]:
    """The Patient resource (deceasedDateTime is filled in if the person dies)."""
    given = [who.given] + ([facts["middle"]] if facts["middle"] else [])
    name: dict[str, Any] = {"use": "official", "family": who.family, "given": given}
    if who.prefix:
        name["prefix"] = [who.prefix]
    city = facts["city"]
    res: dict[str, Any] = {
        "resourceType": "Patient",
        "id": who.id,
        "identifier": [
            {
                "use": "usual",
                "type": concept(V2_0203, "MR", "Medical record number", "MRN"),
                "system": MRN_SYSTEM,
                "value": facts["mrn"],
            },
            {
                "type": concept(V2_0203, "SS", "Social Security number"),
                "system": "http://hl7.org/fhir/sid/us-ssn",
                "value": facts["ssn"],
            },
        ],
        "active": True,
        "name": [name],
        "telecom": [{"system": "phone", "value": facts["phone"], "use": "home"}],
        "gender": who.gender,
        "birthDate": iso_date(who.birth),
        "address": [
            {
                "use": "home",
                "line": [facts["street"]],
                "city": city["city"],
                "state": city["state"],
                "postalCode": facts["zip"],
                "country": "US",
            }
        ],
        "maritalStatus": concept(MARITAL, facts["marital"][0], facts["marital"][1]),
        "communication": [
            {
                "language": concept(
                    "urn:ietf:bcp:47",
                    "es" if facts["spanish"] else "en-US",
                    "Spanish" if facts["spanish"] else "English (United States)",
                ),
                "preferred": True,
            }
        ],
        "generalPractitioner": [{"reference": f"urn:uuid:{pcp['id']}"}],
        "managingOrganization": {"reference": f"urn:uuid:{clinic['id']}"},
    }
    return res
