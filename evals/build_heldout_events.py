"""Held-out gold, step 7: questions about dated records (encounters, prescriptions, procedures, vaccines,
diagnoses): counts, existence, first/last dates, time since, daily dose.

A condition counts as a diagnosis unless its ``verificationStatus`` is ``refuted`` or ``entered-in-error``
(the synthetic sample records ruled-out heart attacks that way; Synthea has none).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

import build_heldout_time as tm
from build_heldout_core import Context, Question, tidy
from build_heldout_fhir import Fact
from build_heldout_vocab import CONCEPTS, ENCOUNTER_WORDS, ITEMS, Concept
from build_heldout_windows import EVER_WORDS, UNSTABLE, options, stable

NOT_A_DIAGNOSIS = {"refuted", "entered-in-error"}
# Items grouped under a lay word; "has X ever been checked?" is true when any member has a value.
ITEM_GROUPS = {"sugar test": ("glucose", "a1c"), "kidney function test": ("creatinine", "egfr", "bun"),
               "cholesterol panel": ("cholesterol", "ldl", "hdl", "triglycerides"),
               "blood count": ("hemoglobin", "wbc", "platelets", "hematocrit"), "liver tests": ("alt", "albumin")}
ENC_SINGULAR = {"EMER": {"abbr": ("ED visit", "ER visit"), "lay": ("ER trip", "trip to the ER"),
                         "full": ("emergency department visit",)},
                "IMP": {"abbr": ("admit", "IP stay"), "lay": ("hospital stay", "hospital admission"),
                        "full": ("inpatient admission", "hospitalization")},
                "AMB": {"abbr": ("outpt visit", "amb visit"), "lay": ("office visit", "clinic appointment"),
                        "full": ("outpatient encounter",)}}

ENC_COUNT = {"short": ["# {e} {win}", "{e} {win}: how many?", "count of {e} {win}"],
             "ask": ["Could you tell me how many {e} {s} has had {win}?", "I need the number of {e} {win}.",
                     "Please count {w} {e} {win}."],
             "narr": ["The patient has had how many {e} {win}?"]}
OTHER_COUNT = {"short": ["# times {x} {win}", "{x} count {win}?", "{x} x how many {win}?"],
               "ask": ["How many times {verb} {win}?", "Could you count how often {s} {past} {x} {win}?"],
               "narr": ["The patient {past} {x} how many times {win}?"]}
RX_COUNT = {"short": ["# {x} Rx {win}", "{x} prescriptions {win}: how many?", "{x} orders {win}, count?"],
            "ask": ["How many times {verb} {win}?", "Could you count the {x} prescriptions {win}?"],
            "narr": ["The patient {past} {x} how many times {win}?"]}
EXISTS = {"condition": {"short": ["hx of {x}?", "{x} hx?", "ever dx'd with {x}?", "any {x} on record?"],
                        "ask": ["Could you check if {s} has ever had {x}?",
                                "I need to know whether {s} was ever diagnosed with {x}."],
                        "narr": ["Has the patient ever been diagnosed with {x}?"]},
          "medication": {"short": ["ever on {x}?", "{x} ever prescribed?", "any {x} in the med hx?"],
                         "ask": ["Could you tell me if {s} has ever been on {x}?",
                                 "Please check whether {s} was ever prescribed {x}."],
                         "narr": ["Was the patient ever given a prescription for {x}?"]},
          "procedure": {"short": ["ever had {x}?", "{x} ever done?", "any {x} on file?"],
                        "ask": ["Could you check whether {s} ever had any {x}?"],
                        "narr": ["Has the patient ever undergone any {x}?"]},
          "immunization": {"short": ["ever had {x}?", "{x} ever given?", "any {x} on file?"],
                           "ask": ["Could you check whether {s} ever got {x}?"],
                           "narr": ["Has the patient ever received any {x}?"]},
          "item": {"short": ["{x} ever checked?", "ever had {x} done?", "any {x} on file?"],
                   "ask": ["Could you tell me whether {s} has ever had {x} done?"],
                   "narr": ["Has the patient ever had {x} done?"]}}
WHEN = {"medi-first": {"short": ["{x} start date", "{x} started when?", "date {x} first ordered?"],
                       "ask": ["Remind me when {s} was started on {x}.", "Could you tell me when {x} was first prescribed?"],
                       "narr": ["The patient was first put on {x} on what date?"]},
        "cond-first": {"short": ["{x} dx date?", "date of {x} dx", "when was {x} diagnosed?"],
                       "ask": ["Remind me when {s} was diagnosed with {x}.", "Could you tell me the {x} diagnosis date?"],
                       "narr": ["The patient's {x} was first diagnosed on what date?"]},
        "first": {"short": ["first {x} when?", "date of first {x}?", "{x}, first date"],
                  "ask": ["Remind me when {s} first had {x}.", "Could you tell me the date of {w} first {x}?"],
                  "narr": ["The patient's first {x} was on what date?"]},
        "last": {"short": ["date of last {x}", "last {x} when?", "most recent {x} date?"],
                 "ask": ["Could you tell me when {s} last had {x}?", "I need the date of {w} most recent {x}."],
                 "narr": ["The patient's last {x} was on what date?"]}}
SINCE = {"short": ["{u} since last {x}?", "time since last {x}, in {u}", "# {u} since the last {x}"],
         "ask": ["Could you tell me how many {unit} it's been since {w} last {x}?",
                 "Remind me how many {unit} since {s} last had {x}."],
         "narr": ["How many full {unit} have passed since the patient's last {x}?"]}
SINCE_RX = {"short": ["{u} since last {x} Rx?", "time since {x} last ordered, in {u}"],
            "ask": ["Could you tell me how many {unit} since {x} was last prescribed?",
                    "Remind me how many {unit} ago {w} last {x} prescription was written."],
            "narr": ["How many full {unit} have passed since the patient's last {x} prescription?"]}
ONSET_YEARS = {"short": ["yrs since {x} dx?", "{x} duration in yrs?"],
               "ask": ["How many years has {s} had {x}?", "Could you tell me how long, in years, {s} has had {x}?"],
               "narr": ["The patient was diagnosed with {x} how many years ago?"]}
# Synthea's doseQuantity has no unit (one dose): the daily dose is a number of doses, "times a day".
DOSE = {"short": ["{x} doses/day?", "{x} daily dose?", "{x} per day?"],
        "ask": ["How many times a day does {s} take {x}?", "Could you tell me the daily dose of {x}?",
                "I need {w} total daily {x} dose."],
        "narr": ["Per the latest prescription, how much {x} does the patient take each day?"]}
# With a unit (mg, g, units) the daily dose is an amount: never ask "how many times a day".
DOSE_AMOUNT = {"short": ["{x} {u}/day?", "{x} daily dose?", "total daily {x}, in {u}?"],
               "ask": ["How many {u} of {x} does {s} take per day?", "Could you tell me the daily dose of {x}?",
                       "I need {w} total daily {x} dose."],
               "narr": ["Per the latest prescription, how much {x} does the patient take each day?"]}


def say(ctx: Context, table: dict[str, list[str]], **slots: str) -> tuple[str, str]:
    """One wording from a table of forms; returns (question, form)."""
    form = ctx.pick(sorted(table))
    w, _ = ctx.who()
    s, _ = ctx.subj()
    return tidy(ctx.pick(table[form]).format(w=w, s=s, **slots)), form


def diagnoses(ctx: Context) -> list[Fact]:
    """Conditions that are diagnoses (not refuted, not entered in error), up to now."""
    return [f for f in ctx.record.of("condition") if f.verification not in NOT_A_DIAGNOSIS and f.start <= ctx.now]


def records_of(ctx: Context, kind: str) -> list[Fact]:
    """Records of a kind up to now (conditions: diagnoses only)."""
    if kind == "condition":
        return diagnoses(ctx)
    return [f for f in ctx.record.of(kind) if f.start <= ctx.now]


def _q(ctx: Context, category: str, pattern: str, text: str, form: str, reg: str, answer_type: str, value: object,
       refs: Sequence[str], now: object = None) -> Question:
    return Question(ctx.record.id, text, now or ctx.now, category, answer_type, [value],  # type: ignore[arg-type]
                    f"{category}/{pattern}/{form}.{reg}", list(refs))


def _ever(ctx: Context) -> tm.Window:
    return tm.Window(tm.EVER.start, tm.EVER.end, ctx.pick(EVER_WORDS))


def gen_count_encounters(ctx: Context) -> list[Question]:
    """Encounters of a class (or all) whose start lies in a window; zeros included."""
    out = []
    encounters = records_of(ctx, "encounter")
    for klass, words in ENCOUNTER_WORDS.items():
        mine = [e for e in encounters if klass == "ALL" or e.klass == klass]
        times = [e.start for e in mine]
        wins = [("all", _ever(ctx))] + options(ctx, times) if mine else [("all", _ever(ctx))]
        if not mine and encounters:
            day = encounters[len(encounters) // 2].start.date()
            wins.append(("since", tm.since_window(day, ctx.now, ctx.rng, month_only=ctx.rng.random() < 0.5)))
        for kind, win in wins:
            got = stable(win, lambda w, m=mine: tuple(e.ref for e in m if w.has(e.start)))
            if got is UNSTABLE or not win.clear_of(times):
                continue
            reg = ctx.pick(sorted(words))
            text, form = say(ctx, ENC_COUNT, e=ctx.pick(words[reg]), win=win.phrase)
            out.append(_q(ctx, "count_encounters", f"{klass}-{kind}", text, form, reg, "count", len(got), got))
    return out


def _concepts(ctx: Context, kinds: Sequence[str], limit: int) -> list[tuple[Concept, list[Fact]]]:
    """Concepts of some kinds the patient has, with the matching records; a concept is left out when the
    patient also has near records (a combination product holding the drug), which would make counts and
    dates depend on whether they count."""
    out = []
    for concept in CONCEPTS.values():
        if concept.kind in kinds:
            mine = records_of(ctx, concept.kind)
            hits = [f for f in mine if concept.matches(f.name)]
            # A reported drug (MedicationStatement) may have started before its first prescription.
            reported = concept.kind == "medication" and any(concept.close(s.name) for s in ctx.record.of("statement"))
            if hits and not reported and not any(concept.close(f.name) and not concept.matches(f.name) for f in mine):
                out.append((concept, hits))
    return ctx.rng.sample(out, min(limit, len(out)))


_VERBS = {"medication": ("was {s} prescribed {x}", "was prescribed"), "procedure": ("has {s} had {x}", "had"),
          "immunization": ("has {s} received {x}", "received")}


def gen_count_other(ctx: Context) -> list[Question]:
    """Prescriptions of a drug or class, procedures and vaccines of a kind, ever or in a window."""
    out = []
    for concept, hits in _concepts(ctx, ("medication", "procedure", "immunization"), 5):
        times = [f.start for f in hits]
        everything = [f.start for f in records_of(ctx, concept.kind) if concept.close(f.name)]
        for kind, win in [("all", _ever(ctx)), *options(ctx, times)]:
            got = stable(win, lambda w, h=hits: tuple(f.ref for f in h if w.has(f.start)))
            if got is UNSTABLE or not win.clear_of(everything):
                continue
            name, reg = ctx.name(concept)
            subj, _ = ctx.subj()
            verb, past = _VERBS[concept.kind]
            table = RX_COUNT if concept.kind == "medication" else OTHER_COUNT
            text, form = say(ctx, table, x=name, verb=verb.format(s=subj, x=name), past=past, win=win.phrase)
            out.append(_q(ctx, "count_other", f"{concept.kind[:4]}-{concept.key}-{kind}", text, form, reg, "count",
                          len(got), got))
    return out


def gen_existence(ctx: Context) -> list[Question]:
    """Ever had X: true for what the patient has; false for what others have and this patient has not."""
    out = []
    for concept, hits in _concepts(ctx, ("condition", "medication", "procedure", "immunization"), 6):
        name, reg = ctx.name(concept)
        text, form = say(ctx, EXISTS[concept.kind], x=name)
        out.append(_q(ctx, "existence_positive", f"{concept.kind}-{concept.key}", text, form, reg, "boolean", True,
                      [hits[0].ref]))
    absent = []
    for concept in CONCEPTS.values():
        everything = [f for f in ctx.record.of(concept.kind) if concept.close(f.name)]
        refuted = [f for f in everything if f.verification in NOT_A_DIAGNOSIS]
        if concept.key not in ctx.population.concepts and not refuted:
            continue
        if len(refuted) == len(everything):
            absent.append((concept, "refuted" if refuted else "none"))
    for concept, why in ctx.rng.sample(absent, min(4, len(absent))):
        name, reg = ctx.name(concept)
        text, form = say(ctx, EXISTS[concept.kind], x=name)
        pattern = f"refuted-{concept.kind}-{concept.key}" if why == "refuted" else f"{concept.kind}-{concept.key}"
        out.append(_q(ctx, "existence_negative", pattern, text, form, reg, "boolean", False, []))
    for phrase, keys in ITEM_GROUPS.items():
        hits = [v for k in keys for v in ctx.record.series(ITEMS[k].codes) if v.time <= ctx.now]
        if not keys or ctx.rng.random() < 0.5:
            continue
        text, form = say(ctx, EXISTS["item"], x=phrase)
        cat = "existence_positive" if hits else "existence_negative"
        out.append(_q(ctx, cat, f"item-{phrase.replace(' ', '-')}", text, form, "lay", "boolean", bool(hits),
                      [hits[0].ref] if hits else []))
    return out


def _when_subjects(ctx: Context) -> list[tuple[str, str, str, list[tuple]]]:
    """(pattern, name, register, [(time, ref)]) for things a date question may ask about."""
    out = []
    for concept, hits in _concepts(ctx, ("condition", "medication", "procedure", "immunization"), 5):
        name, reg = ctx.name(concept)
        out.append((f"{concept.kind[:4]}-{concept.key}", name, reg, [(f.start, f.ref) for f in hits]))
    for klass, words in ENC_SINGULAR.items():
        mine = [(e.start, e.ref) for e in records_of(ctx, "encounter") if e.klass == klass]
        if mine:
            reg = ctx.pick(sorted(words))
            out.append((f"enc-{klass}", ctx.pick(words[reg]), reg, mine))
    for key in ctx.rng.sample(["a1c", "ldl", "creatinine", "weight", "potassium", "glucose", "hemoglobin"], 3):
        series = ctx.record.series(ITEMS[key].codes)
        if series:
            name, reg = ctx.name(ITEMS[key], ("abbr", "full", "typo"))
            out.append((f"value-{key}", name, reg, [(v.time, v.ref) for v in series]))
    return out


def gen_first_last_time(ctx: Context) -> list[Question]:
    """Date of the first / last matching record; "last bloodwork" = the latest laboratory Observation."""
    out = []
    for pattern, name, reg, hits in _when_subjects(ctx):
        side = "first" if pattern.startswith(("cond", "medi")) or ctx.rng.random() < 0.35 else "last"
        t, ref = min(hits) if side == "first" else max(hits)
        table = WHEN.get(f"{pattern[:4]}-{side}", WHEN[side])
        text, form = say(ctx, table, x=name)
        if pattern.startswith("cond") and len(hits) > 1:
            continue  # "when was X diagnosed?" names no episode: asked only of single-episode conditions
        out.append(_q(ctx, "first_last_time", f"{side}-{pattern.split('-')[0]}", text, form, reg, "date",
                      tm.iso(t), [ref]))
    labs = [v for v in ctx.record.values if "laboratory" in v.category and v.time <= ctx.now]
    if labs and ctx.record.lab_times and max(ctx.record.lab_times).date() == labs[-1].time.date():
        text, form = say(ctx, WHEN["last"], x=ctx.pick(["bloodwork", "labs", "blood test"]))
        out.append(_q(ctx, "first_last_time", "last-bloodwork", text, form, "lay", "date", tm.iso(labs[-1].time),
                      [labs[-1].ref]))
    return out


def gen_time_since(ctx: Context) -> list[Question]:
    """Completed days / months / years since a last event; years since a chronic condition's first onset."""
    out = []
    for pattern, name, reg, hits in _when_subjects(ctx):
        if pattern.startswith("cond"):
            if not any(f.ref == max(hits)[1] and f.end is None and f.status not in ("resolved", "inactive")
                       for f in diagnoses(ctx)):
                continue  # only chronic conditions still present
            t, ref = min(hits)
            years = tm.completed_years(t.date(), ctx.now.date())
            if years < 1 or any(tm.completed_years((t + timedelta(days=d)).date(), ctx.now.date()) != years
                                for d in (-3, 3)):
                continue
            text, form = say(ctx, ONSET_YEARS, x=name)
            out.append(_q(ctx, "time_since", "onset-years", text, form, reg, "number", years, [ref]))
            continue
        t, ref = max(hits)
        unit = ctx.pick(["days", "months", "years"])
        if unit == "days":
            got = tm.completed_days(t, ctx.now)
            ok = got == (ctx.now.date() - t.date()).days and got <= 400
        else:
            f = tm.completed_months if unit == "months" else (lambda a, b: tm.completed_years(a.date(), b.date()))
            got = f(t, ctx.now)
            ok = got >= 1 and all(f(t + timedelta(days=d), ctx.now) == got for d in (-3, 3))
        if not ok:
            continue
        short = {"days": ctx.pick(["days", "d"]), "months": ctx.pick(["months", "mos"]),
                 "years": ctx.pick(["years", "yrs"])}[unit]
        text, form = say(ctx, SINCE_RX if pattern.startswith("medi") else SINCE, x=name, unit=unit, u=short)
        out.append(_q(ctx, "time_since", f"last-{unit}", text, form, reg, "number", got, [ref]))
    return out


def gen_daily_dose(ctx: Context) -> list[Question]:
    """Dose per day from the latest prescription of a drug (in the unit of doseQuantity)."""
    out = []
    meds = records_of(ctx, "medication")
    for concept in CONCEPTS.values():
        if concept.kind != "medication" or concept.key in ("statin", "diuretic", "thinner", "bp_med", "birth_control"):
            continue
        hits = [f for f in meds if concept.close(f.name)]
        if not hits:
            continue
        latest = max(hits, key=lambda f: f.start)
        if not concept.matches(latest.name):
            continue  # the latest near prescription is a combination product: "latest X" would be ambiguous
        if latest.daily is None or latest.daily < 0.25 or sum(f.start == latest.start for f in hits) > 1:
            continue
        name, reg = ctx.name(concept, ("abbr", "full", "typo"))
        unit = {"[iU]": "units"}.get(latest.dose_unit or "", latest.dose_unit)
        text, form = say(ctx, DOSE_AMOUNT if unit else DOSE, x=name, u=unit or "")
        out.append(_q(ctx, "daily_dose", f"dose-{concept.key}", text, form, reg, "number",
                      round(latest.daily, 9), [latest.ref]))
    for q in out:
        q.tolerance = 0.01
    return out
