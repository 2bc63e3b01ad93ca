"""Candidates about the person: age, demographics, and finding a patient's id from name and birth date."""

from __future__ import annotations

import random
from datetime import date, datetime

from . import phrasing as ph
from . import timeutil as tu
from .candidate import Candidate, Context
from .gen_events import concept_events, present_concepts

AGE_T = ("How old {is_} {subj}?", "What's {poss} age?", "Age?", "What is {poss} current age in years?")
AGE_DEAD_T = ("How old was {subj} when {subj} died?", "Age at death?", "How old was {subj} at the time of death?")
AGE_DX_T = ("How old was {subj} when first diagnosed with {x}?", "Age at {y} diagnosis?",
            "At what age was {subj} diagnosed with {x}?")
DOB_T = ("When was {subj} born?", "What's {poss} date of birth?", "DOB?", "What is {poss} birth date?")
GENDER_T = ("What is {poss} gender?", "Is the patient male or female?", "Sex?", "What gender is listed for {obj}?")
DEAD_T = ("Is the patient deceased?", "Has {subj} died?", "Is {subj} deceased?")
DEATH_DATE_T = ("When did {subj} die?", "Date of death?", "What was {poss} date of death?")
LOOKUP_T = ("What is the patient ID for {name}, born {dob}?", "Find {name} (DOB {dob}): what's the patient id?",
            "Look up the record of {name}, date of birth {dob}.", "Which patient id belongs to {name} born {dob}?",
            "Patient id for {name}, DOB {dob}?")


def _birthday_near(birth: date, moment: datetime | date, days: int = 3) -> bool:
    """True when the reference day is within ``days`` of a birthday (time-zone-sensitive ages are skipped)."""
    day = moment.date() if isinstance(moment, datetime) else moment
    for year in (day.year - 1, day.year, day.year + 1):
        try:
            anniversary = birth.replace(year=year)
        except ValueError:  # 29 February
            anniversary = date(year, 3, 1)
        if abs((anniversary - day).days) <= days:
            return True
    return False


def _third_person(ctx: Context) -> ph.Voice:
    """A voice that is not "I" (for questions about death)."""
    voice = ctx.voice()
    while voice.subj == "I":
        voice = ctx.voice()
    return voice


def _cand(ctx: Context, category: str, template: str, question: str, expected: list, refs: list[str],
          answer_type: str) -> Candidate:
    return Candidate(ctx.record.id, question, ctx.now, category, answer_type, expected, "answered", 0.0, refs,
                     template)


def gen_age(ctx: Context) -> list[Candidate]:
    """age: completed years at now (or at death if earlier); age at first diagnosis of a condition."""
    out = []
    rec = ctx.record
    ref = f"Patient/{rec.id}"
    end = rec.deceased if rec.deceased and rec.deceased < ctx.now else ctx.now
    if not _birthday_near(rec.birth_date, end):
        if rec.deceased and ctx.rng.random() < 0.6:
            i = ctx.rng.randrange(len(AGE_DEAD_T))
            q, template = ph.fill(AGE_DEAD_T[i], _third_person(ctx)), f"age/at-death/{i}"
        else:
            i = ctx.rng.randrange(len(AGE_T))
            q, template = ph.fill(AGE_T[i], ctx.voice()), f"age/now/{i}"
        out.append(_cand(ctx, "age", template, q, [tu.completed_years(rec.birth_date, end.date())], [ref],
                         "number"))
    for c in present_concepts(ctx, "condition"):
        evs = concept_events(ctx, c)
        if ctx.rng.random() < 0.6 or len(evs) != 1:  # "age at X diagnosis" needs a single episode
            continue
        e = evs[0]
        if _birthday_near(rec.birth_date, e.start):
            continue
        i = ctx.rng.randrange(len(AGE_DX_T))
        phrase = ctx.pick(c.phrases)
        y = phrase.removeprefix("a ").removeprefix("an ")
        q = ph.fill(AGE_DX_T[i], ctx.voice(), x=phrase, y=y)
        out.append(_cand(ctx, "age", f"age/at-diagnosis/{i}", q, [tu.completed_years(rec.birth_date, e.start.date())],
                         [ref, e.ref], "number"))
        break
    return out


def gen_demographics(ctx: Context) -> list[Candidate]:
    """demographics: birth date, gender, deceased (true/false) and date of death."""
    rec = ctx.record
    ref = f"Patient/{rec.id}"
    out = []
    i = ctx.rng.randrange(len(DOB_T))
    out.append(_cand(ctx, "demographics", f"demographics/dob/{i}", ph.fill(DOB_T[i], ctx.voice()),
                     [rec.birth_date.isoformat()], [ref], "date"))
    i = ctx.rng.randrange(len(GENDER_T))
    out.append(_cand(ctx, "demographics", f"demographics/gender/{i}", ph.fill(GENDER_T[i], ctx.voice()),
                     [rec.gender], [ref], "string"))
    dead = rec.deceased is not None and rec.deceased <= ctx.now
    i = ctx.rng.randrange(len(DEAD_T))
    out.append(_cand(ctx, "demographics", f"demographics/deceased/{i}", ph.fill(DEAD_T[i], _third_person(ctx)),
                     [dead], [ref], "boolean"))
    if dead and rec.deceased is not None:
        i = ctx.rng.randrange(len(DEATH_DATE_T))
        out.append(_cand(ctx, "demographics", f"demographics/death-date/{i}",
                         ph.fill(DEATH_DATE_T[i], _third_person(ctx)), [tu.iso_date(rec.deceased)], [ref], "date"))
    return out


def gen_patient_lookup(ctx: Context) -> list[Candidate]:
    """patient_lookup: the Patient.id from first name, family name and birth date (patient_id is null)."""
    rec = ctx.record
    rng: random.Random = ctx.rng
    i = rng.randrange(len(LOOKUP_T))
    name = f"{rec.given} {rec.family}"
    q = ph.fill(LOOKUP_T[i], name=name, dob=ph.fmt_date(rec.birth_date, rng))
    return [Candidate(None, q, ctx.now, "patient_lookup", "string", [rec.id], "answered", 0.0, [f"Patient/{rec.id}"],
                      f"patient_lookup/{i}")]
