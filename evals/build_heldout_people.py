"""Held-out gold, step 8: the patient now: active problems, current medications, age, demographics, lookup.

Active at day D: a diagnosis with onset ≤ D and (no abatement, or abatement > D); at now, a condition whose
``clinicalStatus`` says inactive / resolved / remission is not active either. Current medications are
MedicationRequests with ``status = active`` (names as recorded, each once).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta

import build_heldout_time as tm
from build_heldout_core import Context, Question, tidy
from build_heldout_events import diagnoses, say
from build_heldout_fhir import Fact, Record
from build_heldout_vocab import CONCEPTS

INACTIVE = {"inactive", "resolved", "remission"}

PROBLEMS = {"short": ["active probs", "active problems?", "problem list", "current dx list", "active dx?"],
            "ask": ["Could you list {w} active problems?", "I need {w} current problem list.",
                    "Please give me the conditions {s} has right now."],
            "narr": ["What conditions does the patient currently have?"]}
PROBLEMS_AT = {"short": ["active probs as of {d}", "problem list on {d}?"],
               "ask": ["Could you list the problems {s} had active on {d}?"],
               "narr": ["On {d}, what was on the patient's active problem list?"]}
STILL = {"short": ["still has {x}?", "{x} still active?", "{x} - still active?"],
         "ask": ["Could you tell me if {s} still has {x}?", "Is {x} still on {w} active problem list?"],
         "narr": ["Does the patient still carry a diagnosis of {x}?"]}
MEDS = {"short": ["current meds", "med list?", "active meds", "meds now?", "active Rx list"],
        "ask": ["Could you list {w} current medications?", "I need {w} active med list.",
                "Please give me what {s} is prescribed right now."],
        "narr": ["What medications is the patient currently prescribed?"]}
ON_DRUG = {"short": ["on {x}?", "still on {x}?", "{x} active?", "currently on {x}?"],
           "ask": ["Could you tell me if {s} is still taking {x}?", "Is {s} currently prescribed {x}?"],
           "narr": ["Is the patient presently prescribed {x}?"]}
AGE = {"short": ["pt age", "age?", "how old?"],
       "ask": ["Could you tell me how old {s} is?", "Remind me of {w} age.", "I need {w} age in years."],
       "narr": ["The patient is how old?"]}
AGE_DEATH = {"short": ["age at death?", "age at time of death"],
             "ask": ["Could you tell me how old {s} was at death?"],
             "narr": ["How old was the patient when they died?"]}
AGE_DX = {"short": ["age at {x} dx?", "age when dx'd with {x}"],
          "ask": ["Could you tell me how old {s} was when first diagnosed with {x}?"],
          "narr": ["The patient was how old at the {x} diagnosis?"]}
DEMO = {"dob": {"short": ["DOB", "DOB?", "birthdate?"], "ask": ["Could you tell me {w} date of birth?",
                                                              "Remind me of {w} birthday (full date)."],
                "narr": ["The patient was born on what date?"]},
        "gender": {"short": ["sex?", "gender?"], "ask": ["Could you tell me {w} recorded gender?"],
                   "narr": ["Is the patient male or female?"]},
        "deceased": {"short": ["deceased?", "pt deceased?", "expired?"],
                     "ask": ["Could you check whether {s} has died?"], "narr": ["Is the patient deceased?"]},
        "alive": {"short": ["alive?", "pt still living?"], "ask": ["Could you confirm {s} is still alive?"],
                  "narr": ["Is the patient still alive?"]},
        "dod": {"short": ["DOD?", "date of death?"], "ask": ["Could you tell me when {s} died?"],
                "narr": ["The patient died on what date?"]}}
LOOKUP = {"short": ["Find pt: {F}, {G}, DOB {d}", "pt id for {G} {F} DOB {d}?", "{F}, {G} ({d}) - id?"],
          "ask": ["Could you look up the patient ID for {G} {F}, born {d}?",
                  "I need the chart id for {G} {F} (DOB {d}).", "Please find {G} {F}, b. {d}, and give me the id."],
          "narr": ["A patient named {G} {F}, born {d}, is in the system; what is the patient id?"]}


def _q(ctx: Context, category: str, pattern: str, text: str, form: str, answer_type: str, expected: list,
       refs: Sequence[str], reg: str = "any") -> Question:
    return Question(ctx.record.id, text, ctx.now, category, answer_type, expected,
                    f"{category}/{pattern}/{form}.{reg}", list(refs))


def active_at(conditions: Sequence[Fact], moment: datetime, now: datetime) -> list[Fact]:
    """Diagnoses active at an instant."""
    out = []
    for c in conditions:
        if c.start > moment or (c.end is not None and c.end <= moment):
            continue
        if moment >= now and c.status in INACTIVE:
            continue
        out.append(c)
    return out


def _near(conditions: Sequence[Fact], day: date) -> bool:
    edges = {day + timedelta(days=k) for k in (-1, 0, 1)}
    return any(c.start.date() in edges or (c.end and c.end.date() in edges) for c in conditions)


def gen_active_conditions(ctx: Context) -> list[Question]:
    """The problem list now or at a date, and "does she still have X?"."""
    dx = diagnoses(ctx)
    now_list = active_at(dx, ctx.now, ctx.now)
    names = sorted({c.name for c in now_list})
    text, form = say(ctx, PROBLEMS)
    out = [_q(ctx, "active_conditions", "list-now" if names else "list-now-empty", text, form, "list", names,
              [c.ref for c in now_list])]
    if dx:
        day = dx[ctx.rng.randrange(len(dx))].start.date() + timedelta(days=ctx.rng.randint(20, 200))
        if day < ctx.now.date() and not _near(dx, day):
            then = active_at(dx, tm.end_of(day), ctx.now)
            d, _ = tm.say_day(day, ctx.rng)
            text, form = say(ctx, PROBLEMS_AT, d=d)
            pattern = "list-at-date" if then else "list-at-date-empty"
            out.append(_q(ctx, "active_conditions", pattern, text, form, "list", sorted({c.name for c in then}),
                          [c.ref for c in then]))
    for concept in CONCEPTS.values():
        if concept.kind != "condition":
            continue
        ever = [c for c in dx if concept.matches(c.name)]
        if not ever or any(concept.close(c.name) and not concept.matches(c.name) for c in dx):
            continue
        if any(c.name.lower().startswith("history of") for c in ever):
            continue  # "still has a heart attack?" against "History of myocardial infarction": not asked
        active = [c for c in now_list if concept.matches(c.name)]
        name, reg = ctx.name(concept)
        text, form = say(ctx, STILL, x=name)
        out.append(_q(ctx, "active_conditions", f"still-has-{concept.key}", text, form, "boolean", [bool(active)],
                      [(active or ever)[0].ref], reg))
    return out


def gen_active_medications(ctx: Context) -> list[Question]:
    """Current medication list, and "is he still on X?" for drugs and classes he has been prescribed."""
    meds = [m for m in ctx.record.of("medication") if m.start <= ctx.now]
    active = [m for m in meds if m.status == "active"]
    # Drugs the patient reports taking (MedicationStatement) make "current meds" ambiguous: not asked then.
    reported = [s for s in ctx.record.of("statement") if s.status in ("active", "intended")]
    names = sorted({m.name for m in active})
    text, form = say(ctx, MEDS)
    out = [] if reported else [_q(ctx, "active_medications", "list" if names else "list-empty", text, form, "list",
                                  names, [m.ref for m in active])]
    for concept in CONCEPTS.values():
        if concept.kind != "medication" or any(concept.close(s.name) for s in reported):
            continue
        ever = [m for m in meds if concept.close(m.name)]
        if not ever:
            continue
        on = [m for m in active if concept.matches(m.name)]
        if not on and any(concept.close(m.name) for m in active):
            continue
        name, reg = ctx.name(concept)
        text, form = say(ctx, ON_DRUG, x=name)
        out.append(_q(ctx, "active_medications", f"on-{concept.key}", text, form, "boolean", [bool(on)],
                      [(on or ever)[-1].ref], reg))
    return out


def _birthday_safe(birth: date, moment: date) -> bool:
    """False within 3 days of a birthday (the age would depend on the time of day or the time zone)."""
    ages = {tm.completed_years(birth, moment + timedelta(days=k)) for k in (-3, 3)}
    return len(ages) == 1


def gen_age(ctx: Context) -> list[Question]:
    """Age now (or at death), at death, at a single-episode diagnosis."""
    r: Record = ctx.record
    out = []
    end = r.deceased if r.deceased and r.deceased <= ctx.now else ctx.now
    if _birthday_safe(r.birth, end.date()):
        text, form = say(ctx, AGE_DEATH if end != ctx.now else AGE)
        pattern = "at-death" if end != ctx.now else "now"
        out.append(_q(ctx, "age", pattern, text, form, "number", [tm.completed_years(r.birth, end.date())],
                      [f"Patient/{r.id}"]))
    for concept in CONCEPTS.values():
        if concept.kind != "condition":
            continue
        hits = [c for c in diagnoses(ctx) if concept.matches(c.name)]
        if hits and _birthday_safe(r.birth, hits[0].start.date()) and hits[0].start.date() > r.birth:
            name, reg = ctx.name(concept)
            text, form = say(ctx, AGE_DX, x=name)
            out.append(_q(ctx, "age", "at-diagnosis", text, form, "number",
                          [tm.completed_years(r.birth, hits[0].start.date())], [hits[0].ref], reg))
    return out


def gen_demographics(ctx: Context) -> list[Question]:
    """Birth date, gender, deceased (and "alive?"), date of death."""
    r = ctx.record
    dead = r.deceased_flag and (r.deceased is None or r.deceased <= ctx.now)
    ref = [f"Patient/{r.id}"]
    rows = [("dob", "date", [r.birth.isoformat()]), ("gender", "string", [r.gender]),
            ("deceased", "boolean", [dead]), ("alive", "boolean", [not dead])]
    if dead and r.deceased:
        rows.append(("dod", "date", [tm.iso(r.deceased)]))
    out = []
    for key, answer_type, expected in rows:
        text, form = say(ctx, DEMO[key])
        pattern = f"{key}={expected[0]}" if answer_type == "boolean" else key
        out.append(_q(ctx, "demographics", pattern.split("=")[0], text, form, answer_type, expected, ref))
    return out


def gen_lookup(ctx: Context, everyone: Sequence[Record]) -> list[Question]:
    """Patient id from first name, family name and birth date (unique in the data set)."""
    r = ctx.record
    same = [p for p in everyone if (p.given, p.family, p.birth) == (r.given, r.family, r.birth)]
    if len(same) != 1 or not r.given or not r.family:
        return []
    d = ctx.pick([tm.say_day(r.birth, ctx.rng)[0], f"{r.birth.month:02d}/{r.birth.day:02d}/{r.birth.year}"])
    form = ctx.pick(sorted(LOOKUP))
    text = tidy(ctx.pick(LOOKUP[form]).format(G=r.given, F=r.family, d=d))
    return [Question(None, text, ctx.now, "patient_lookup", "string", [r.id], f"patient_lookup/name-dob/{form}.any",
                     [f"Patient/{r.id}"])]
