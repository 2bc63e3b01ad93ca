"""Statements a checker must leave alone: negations, family history, plans, goals, home readings, allergies.

Each is labelled ``unverifiable`` (with why): the note names an item, sometimes with a number, but says
nothing the record could confirm or contradict. A checker that flags one has made a false positive.
"""

from __future__ import annotations

from evals.consistency.entities import Writer
from evals.consistency.vocab import ABSENT_CONDITIONS


def _absent_condition(w: Writer) -> str | None:
    from evals.consistency.inject import absent_condition_ok

    options = [c[0] for c in ABSENT_CONDITIONS if c[0] not in w.used and absent_condition_ok(w.record, c[0])]
    return w.rng.choice(options) if options else None


def negation(w: Writer) -> None:
    """"Denies h/o DVT." / "No history of CHF." (a condition the patient does not have)."""
    name = _absent_condition(w)
    if name is None:
        return
    w.used.add(name)
    lead = w.rng.choice(("Denies h/o ", "No history of ", "Negative for ", "No known "))
    w.unverifiable([(lead, None), (name, "name"), (". ", None)], "condition", "negated")


def family_history(w: Writer) -> None:
    """FHx with conditions (any, including ones the patient has)."""
    first = w.rng.choice(("T2DM", "HTN", "CAD", "breast cancer", "colon cancer", "stroke"))
    second = w.rng.choice(("MI at 62", "HTN", "COPD", "CKD", "Alzheimer's disease"))
    w.note.put(w.rng.choice(("FHx: ", "Family history: ")))
    w.unverifiable([("mother with ", None), (first, "name")], "condition", "family history")
    w.note.put(w.rng.choice(("; ", ", ")))
    w.unverifiable([("father with ", None), (second.split(" at ")[0], "name"),
                    (" at 62" if " at " in second else "", None)], "condition", "family history")
    w.note.line(".")


def allergy(w: Writer) -> None:
    """An allergy line naming a drug."""
    if w.rng.random() < 0.45:
        w.note.line(w.rng.choice(("Allergies: NKDA", "Allergies: NKA", "NKDA")))
        return
    drug, reaction = w.rng.choice((("PCN", "rash"), ("sulfa", "hives"), ("codeine", "nausea"),
                                   ("penicillin", "hives"), ("amoxicillin", "rash"), ("morphine", "itching")))
    w.note.put("Allergies: ")
    w.unverifiable([(drug, "name"), (f" ({reaction})", None)], "medication", "allergy")
    w.note.line("")


def home_reading(w: Writer) -> None:
    """Patient-reported numbers from home."""
    kind = w.rng.choice(("bg", "bp", "wt", "temp"))
    if kind == "bg":
        low = w.rng.randrange(90, 130)
        w.unverifiable([("Home ", None), ("BG", "name"), (" readings ", None), (str(low), "value"),
                        (f"-{low + 40} per pt log. ", None)], "lab", "home reading")
    elif kind == "bp":
        w.unverifiable([("Reports home ", None), ("BP", "name"), (" ~", None), (str(w.rng.randrange(118, 150)), "value"),
                        (f"/{w.rng.randrange(70, 92)}. ", None)], "vital", "home reading")
    elif kind == "wt":
        w.unverifiable([("States her ", None), ("weight", "name"), (" at home is about ", None),
                        (str(w.rng.randrange(120, 240)), "value"), (" lb. ", None)], "vital", "home reading")
    else:
        w.unverifiable([("Tmax", "name"), (" at home ", None), (f"{w.rng.uniform(99.5, 102.5):.1f}", "value"),
                        (" per family. ", None)], "vital", "home reading")


def plan(w: Writer, labs: list[str], drug: str) -> None:
    """Future orders, a goal, a conditional drug."""
    lab = w.rng.choice(labs) if labs else "BMP"
    w.note.put("Plan: ")
    w.unverifiable([(w.rng.choice(("recheck ", "will check ", "repeat ")), None), (lab, "name"),
                    (w.rng.choice((" in 3 months", " at next visit", " in 6 wk")), None), ("; ", None)], "lab", "plan")
    if w.rng.random() < 0.6:
        w.unverifiable([("goal ", None), ("A1c", "name"), (" <", None), ("7", "value"), ("%; ", None)], "lab", "goal")
    else:
        w.unverifiable([("goal ", None), ("BP", "name"), (" <", None), ("130", "value"), ("/80; ", None)], "vital", "goal")
    w.unverifiable([("consider ", None), (drug, "name"), (" ", None), (w.rng.choice(("20", "40", "10")), "value"),
                    (" mg if not at goal.", None)], "medication", "plan")
    w.note.line("")


def subjective(w: Writer) -> str:
    """A sentence of history with nothing to check."""
    return w.rng.choice((
        "Feels well overall, no acute complaints.", "Reports occasional knee pain, improved with rest.",
        "Sleeping ok, appetite good.", "Pt states she has been walking 20 min most days.",
        "Here with spouse; mood good.", "Mild fatigue last few weeks, no fevers or chills.",
    ))


def parameter(w: Writer) -> None:
    """Hold and call parameters: thresholds, not measurements."""
    kind = w.rng.random()
    if kind < 0.4:
        w.note.put(w.rng.choice(("Hold antihypertensives for ", "Hold BP meds if ", "Notify MD for ")))
        w.unverifiable([("SBP", "name"), (" < ", None), (str(w.rng.choice((90, 100, 110))), "value")], "vital", "parameter")
    elif kind < 0.7:
        w.note.put(w.rng.choice(("Call MD for ", "Notify provider if ", "Page for ")))
        w.unverifiable([("T", "name"), (" > ", None), ("101.5", "value")], "vital", "parameter")
    else:
        w.note.put(w.rng.choice(("Sliding scale insulin for ", "Correctional insulin if ")))
        w.unverifiable([("BG", "name"), (" > ", None), (str(w.rng.choice((150, 180, 200))), "value")], "lab", "parameter")
    w.note.line(".")


def outside(w: Writer) -> None:
    """Results from elsewhere, which this record does not hold."""
    lab, value = w.rng.choice((("Cr", "1.9"), ("WBC", "12.4"), ("Hgb", "10.8"), ("A1c", "8.1"), ("K", "3.2")))
    lead = w.rng.choice(("Outside hospital records note ", "Per urgent care paperwork, ", "Records from her previous PCP: ",
                         "Labs at an OSH last year showed "))
    w.unverifiable([(lead, None), (lab, "name"), (" ", None), (value, "value"), (". ", None)], "lab", "outside result")


def relatives(w: Writer) -> None:
    """Family history inside the HPI, without a heading."""
    who = w.rng.choice(("Her mother", "His father", "Sister", "Brother", "Maternal grandmother"))
    cond = w.rng.choice(("breast cancer", "T1DM", "colon cancer", "MI", "CVA", "COPD", "CKD"))
    verb = w.rng.choice((" had ", " with ", " was diagnosed with "))
    w.unverifiable([(who + verb, None), (cond, "name"), (". ", None)], "condition", "family history")


def declined(w: Writer) -> None:
    """A refused vaccine or drug (nothing was given)."""
    if w.rng.random() < 0.5:
        w.unverifiable([(w.rng.choice(("Declined ", "Pt declined ", "Refused ")), None),
                        (w.rng.choice(("Shingrix", "pneumococcal vaccine", "hep B vaccine")), "name"), (" today. ", None)],
                       "immunization", "declined")
    else:
        w.unverifiable([(w.rng.choice(("Pt refuses ", "Declines ", "Not interested in ")), None),
                        (w.rng.choice(("rosuvastatin", "metformin", "lisinopril", "pravastatin")), "name"), (". ", None)],
                       "medication", "declined")


def discussed(w: Writer) -> None:
    """Counselling about a drug or a condition, nothing done."""
    if w.rng.random() < 0.5:
        w.unverifiable([("Discussed risks and benefits of ", None),
                        (w.rng.choice(("apixaban", "alendronate", "sertraline", "nadolol")), "name"), (". ", None)],
                       "medication", "discussed")
    else:
        w.unverifiable([("Counseled on signs of ", None), (w.rng.choice(("stroke", "DVT", "cellulitis", "sepsis")), "name"),
                        (" and when to return. ", None)], "condition", "discussed")


def target(w: Writer) -> None:
    """A target phrased without the word goal."""
    if w.rng.random() < 0.5:
        w.unverifiable([("Aim for ", None), ("LDL", "name"), (" under ", None), ("100", "value"), (". ", None)], "lab", "target")
    else:
        w.unverifiable([("Would like ", None), ("A1c", "name"), (" below ", None), ("7", "value"), (". ", None)], "lab", "target")


def conditional(w: Writer) -> None:
    """If-then plans."""
    w.unverifiable([("If ", None), (w.rng.choice(("UTI", "cellulitis", "PNA")), "name"),
                    (" symptoms develop, start ", None), (w.rng.choice(("nitrofurantoin", "cephalexin", "doxycycline")), None),
                    (". ", None)], "condition", "conditional")


EXTRA = [parameter, outside, relatives, declined, discussed, target, conditional]


def some(w: Writer, n: int = 2) -> None:
    """``n`` of the extra distractors, chosen at random."""
    for fn in w.rng.sample(EXTRA, n):
        fn(w)
