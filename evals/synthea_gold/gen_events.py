"""Candidates about events: encounter and other counts, existence, first/last dates, time since, active lists."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from . import phrasing as ph
from . import timeutil as tu
from .candidate import Candidate, Context, stable
from .record import Event
from .vocab import (
    ABSENT_ITEMS,
    CONCEPTS,
    CORE_ITEMS,
    DOSE_CONCEPTS,
    ENCOUNTER_CLASSES,
    ENCOUNTER_SINGULAR,
    ITEMS,
    Concept,
    item_values,
)
from .windows import any_window


def _cand(ctx: Context, category: str, template: str, question: str, expected: list, refs: list[str],
          answer_type: str, tolerance: float = 0.0, status: str = "answered",
          now: datetime | None = None) -> Candidate:
    return Candidate(ctx.record.id, question, now or ctx.now, category, answer_type, expected, status, tolerance,
                     refs, template)


def _variant(ctx: Context, templates: Sequence[str]) -> tuple[int, str]:
    index = ctx.rng.randrange(len(templates))
    return index, templates[index]


def _win(wp: ph.WindowPhrase | None) -> str:
    return f" {wp.text}" if wp else ""


def _in(events: Sequence[Event], window: tu.Window) -> list[Event]:
    return [e for e in events if window.contains(e.start)]


def encounters_of(ctx: Context, klass: str) -> list[Event]:
    """Encounters of a class (``ALL`` for every encounter); time = period.start."""
    return [e for e in ctx.record.of_kind("encounter") if klass == "ALL" or e.klass == klass]


def concept_events(ctx: Context, concept: Concept) -> list[Event]:
    """The patient's events of the concept's kind whose name matches it."""
    key = ("concept", concept.key)
    if key not in ctx.record.cache:
        ctx.record.cache[key] = [e for e in ctx.record.of_kind(concept.kind) if concept.matches(e.name)]
    return list(ctx.record.cache[key])


def present_concepts(ctx: Context, kind: str) -> list[Concept]:
    """Concepts of a kind that the patient has at least once."""
    return [c for c in CONCEPTS.values() if c.kind == kind and concept_events(ctx, c)]


def absent_concepts(ctx: Context, kind: str) -> list[Concept]:
    """Concepts of a kind that other patients have and this one does not have, even loosely."""
    names = [e.name for e in ctx.record.of_kind(kind)]
    return [c for c in CONCEPTS.values() if c.kind == kind and c.key in ctx.population.concept_keys
            and not any(c.near(n) for n in names)]


ENC_T = ("How many {encs} {has} {subj} had{win}?", "Number of {encs}{win}?", "How many {encs} are on record{win}?",
         "Count of {encs}{win}?")
ENC_IMP_T = ("How many times {was} {subj} admitted to the hospital{win}?",)
ENC_EMER_T = ("How many times did {subj} go to the ER{win}?",)


def gen_count_encounters(ctx: Context) -> list[Candidate]:
    """count_encounters by class (window on period.start); zero counts included, later now for some."""
    out = []
    for klass in ("EMER", "IMP", "AMB", "ALL"):
        encs = encounters_of(ctx, klass)
        times = [e.start for e in encs] or [e.start for e in encounters_of(ctx, "ALL")]
        options = any_window(ctx, times, with_all_time=True)
        if ctx.rng.random() < 0.15:
            amount, unit = ctx.pick(((12, "months"), (2, "years"), (6, "months")))
            late = ph.last_window(ctx.late_now, amount, unit, ctx.rng)
            options, now = [late], ctx.late_now
        else:
            now = ctx.now
        wp = ctx.pick(options)
        window = wp.window if wp else tu.ALL_TIME
        ok, n = stable(window, lambda w, encs=encs: len(_in(encs, w)))
        if not ok:
            continue
        templates = ENC_T + (ENC_IMP_T if klass == "IMP" else ENC_EMER_T if klass == "EMER" else ())
        i, t = _variant(ctx, templates)
        q = ph.fill(t, ctx.voice(), encs=ctx.pick(ENCOUNTER_CLASSES[klass]), win=_win(wp))
        out.append(_cand(ctx, "count_encounters", f"count_encounters/{klass}-{wp.kind if wp else 'all'}/{i}", q,
                         [n], [e.ref for e in _in(encs, window)], "count", now=now))
    return out


RX_T = ("How many prescriptions were written for {obj}{win}?", "Number of medication orders{win}?",
        "How many prescriptions {does} {subj} have on record{win}?")
RX_DRUG_T = ("How many times {has} {subj} been prescribed {drug}{win}?", "How many {bare} prescriptions{win}?",
             "Number of {bare} prescriptions on file{win}?")
PROC_T = ("How many {plural} {has} {subj} had{win}?", "Number of {plural}{win}?",
          "How many {plural} are on record{win}?")
IMM_T = ("How many {plural} {has} {subj} received{win}?", "How many {plural} are documented{win}?",
         "Count of {plural}{win}?")
IMM_ALL_T = ("How many vaccines did {subj} get{win}?", "Number of immunizations{win}?",
             "How many immunizations {has} {subj} had{win}?")


def gen_count_other(ctx: Context) -> list[Candidate]:
    """count_other: prescriptions (all or one drug), procedures and immunizations of a concept."""
    out = []

    def add(events: list[Event], template_key: str, templates: Sequence[str], **words: str) -> None:
        times = [e.start for e in events]
        if not times:
            return
        wp = ctx.pick(any_window(ctx, times, with_all_time=True))
        window = wp.window if wp else tu.ALL_TIME
        ok, n = stable(window, lambda w: len(_in(events, w)))
        if not ok:
            return
        i, t = _variant(ctx, templates)
        q = ph.fill(t, ctx.voice(), win=_win(wp), **words)
        out.append(_cand(ctx, "count_other", f"count_other/{template_key}-{wp.kind if wp else 'all'}/{i}", q, [n],
                         [e.ref for e in _in(events, window)], "count"))

    meds = ctx.record.of_kind("medication")
    add(meds, "rx-all", RX_T)
    drugs = present_concepts(ctx, "medication")
    if drugs:
        c = ctx.pick(drugs)
        phrase = ctx.pick([p for p in c.phrases if "therapy" not in p])
        add(concept_events(ctx, c), "rx-drug", RX_DRUG_T, drug=phrase, bare=_strip_article(phrase))
    procs = [c for c in present_concepts(ctx, "procedure") if c.plural]
    if procs:
        c = ctx.pick(procs)
        add(concept_events(ctx, c), "proc", PROC_T, plural=c.plural)
    imms = present_concepts(ctx, "immunization")
    if imms:
        c = ctx.pick(imms)
        add(concept_events(ctx, c), "imm", IMM_T, plural=c.plural)
    add(ctx.record.of_kind("immunization"), "imm-all", IMM_ALL_T)
    return out


EXIST_T = {
    "condition": ("{has} {subj} ever been diagnosed with {x}?", "Any history of {x}?", "Hx of {x}?",
                  "{does} {subj} have a history of {x}?"),
    "medication": ("{has} {subj} ever been on {x}?", "Was {subj} ever prescribed {x}?",
                   "Any {x} in {poss} medication history?"),
    "procedure": ("{has} {subj} ever had {x}?", "Any record of {x}?", "Did {subj} ever undergo {x}?"),
    "immunization": ("Did {subj} ever get {x}?", "{has} {subj} had {x}?", "Is there {x} in {poss} immunization record?"),
}
LAB_EXIST_T = ("{has} {subj} ever had {own} {item} checked?", "Is there any {item} on file?",
               "Any {item} {res}s in the chart?")
NODATA_T = ("What was {poss} last {item}?", "Most recent {item}?", "What was {poss} highest {item}?",
            "Latest {item} value?")


def _exist_question(ctx: Context, concept: Concept, kind: str) -> tuple[int, str]:
    templates = EXIST_T[kind]
    i, t = _variant(ctx, templates)
    phrase = ctx.pick(concept.phrases)
    if kind == "medication" and t.startswith("Any {x}"):
        phrase = phrase.removeprefix("a ").removeprefix("an ")
    if kind == "immunization" and "Is there {x}" in t and phrase.startswith("the "):
        phrase = "a " + phrase.removeprefix("the ")
    return i, ph.fill(t, ctx.voice(), x=phrase)


def gen_existence(ctx: Context) -> list[Candidate]:
    """existence_positive (true) and existence_negative (false; no-data for value questions on absent labs)."""
    out = []
    for kind in ("condition", "medication", "procedure", "immunization"):
        present = present_concepts(ctx, kind)
        if present:
            c = ctx.pick(present)
            i, q = _exist_question(ctx, c, kind)
            out.append(_cand(ctx, "existence_positive", f"existence_positive/{kind}/{i}", q, [True],
                             [concept_events(ctx, c)[0].ref], "boolean"))
        absent = absent_concepts(ctx, kind)
        if absent:
            c = ctx.pick(absent)
            i, q = _exist_question(ctx, c, kind)
            out.append(_cand(ctx, "existence_negative", f"existence_negative/{kind}/{i}", q, [False], [], "boolean"))
    # labs
    have = [ITEMS[k] for k in CORE_ITEMS if item_values(ctx.record, ITEMS[k])]
    lacking = [i for i in ITEMS.values() if i.key in ctx.population.item_keys
               and not item_values(ctx.record, i)]
    voice = ctx.voice()
    if have:
        item = ctx.pick(have)
        i, t = _variant(ctx, LAB_EXIST_T)
        q = ph.fill(t, voice, item=ctx.pick(item.phrases), res="result" if item.lab else "reading")
        out.append(_cand(ctx, "existence_positive", f"existence_positive/lab/{i}", q, [True],
                         [item_values(ctx.record, item)[-1].ref], "boolean"))
    if lacking:
        item = ctx.pick(lacking)
        i, t = _variant(ctx, LAB_EXIST_T)
        q = ph.fill(t, voice, item=ctx.pick(item.phrases), res="result" if item.lab else "reading")
        out.append(_cand(ctx, "existence_negative", f"existence_negative/lab/{i}", q, [False], [], "boolean"))
        item = ctx.pick(lacking)
        i, t = _variant(ctx, NODATA_T)
        q = ph.fill(t, ctx.voice(), item=ctx.pick(item.phrases))
        out.append(_cand(ctx, "existence_negative", f"existence_negative/lab-nodata/{i}", q, [], [], "number",
                         status="no-data"))
    if ctx.rng.random() < 0.3:
        phrases = ABSENT_ITEMS[ctx.pick(sorted(ABSENT_ITEMS))]
        i, t = _variant(ctx, NODATA_T)
        q = ph.fill(t, ctx.voice(), item=ctx.pick(phrases))
        out.append(_cand(ctx, "existence_negative", f"existence_negative/absent-item/{i}", q, [], [], "number",
                         status="no-data"))
    return out


LAST_LAB_T = ("When was {poss} last {item}?", "Date of the most recent {item}?",
              "When did {subj} last have {own} {item} checked?")
FIRST_LAB_T = ("When was {poss} {item} first measured?", "Date of the first {item} on record?",
               "When was {poss} first {item} done?")
DX_T = ("When was {subj} first diagnosed with {x}?", "Date of {y} diagnosis?", "When did {poss} {y} start?")
LAST_ENC_T = ("When was {poss} last {enc}?", "Date of the most recent {enc}?", "Most recent {enc} date?")
FIRST_ENC_T = ("When was {poss} first {enc}?", "Date of the first {enc} on record?", "First {enc} date?")
RX_FIRST_T = ("When was {subj} first prescribed {x}?", "When did {subj} start {x}?", "Date {y} was first ordered?")
RX_LAST_T = ("When was {y} last prescribed for {obj}?", "Most recent {y} prescription date?",
             "When did {subj} last get a prescription for {y}?")
IMM_LAST_T = ("When did {subj} last get {x}?", "Date of {poss} most recent {y}?", "Last {y} date?")
PROC_LAST_T = ("When was {poss} last {y}?", "Date of {poss} most recent {y}?", "When did {subj} last have {x}?")


def _strip_article(phrase: str) -> str:
    for art in ("a ", "an ", "the "):
        if phrase.startswith(art):
            return phrase[len(art):]
    return phrase


def gen_first_last_time(ctx: Context) -> list[Candidate]:
    """first_last_time: dates (UTC calendar date) of first/last measurements and events."""
    out = []

    def add(template: str, templates: Sequence[str], moment: datetime, ref: str, phrase: str = "",
            **words: str) -> None:
        i, t = _variant(ctx, templates)
        q = ph.fill(t, ctx.voice(), x=phrase, y=_strip_article(phrase), **words)
        out.append(_cand(ctx, "first_last_time", f"first_last_time/{template}/{i}", q, [tu.iso_date(moment)], [ref],
                         "date"))

    items = [ITEMS[k] for k in CORE_ITEMS if item_values(ctx.record, ITEMS[k])]
    if items:
        item = ctx.pick(items)
        vals = item_values(ctx.record, item)
        last = ctx.rng.random() < 0.6
        m = vals[-1] if last else vals[0]
        add("lab-last" if last else "lab-first", LAST_LAB_T if last else FIRST_LAB_T, m.time, m.ref,
            item=ctx.pick(item.phrases))
    conds = present_concepts(ctx, "condition")
    if conds:
        c = ctx.pick(conds)
        evs = concept_events(ctx, c)
        # "When did her X start?" is only unambiguous when X happened once
        add("dx-first", DX_T if len(evs) == 1 else DX_T[:1], evs[0].start, evs[0].ref, ctx.pick(c.phrases))
    for klass in ("EMER", "IMP", "AMB"):
        encs = encounters_of(ctx, klass)
        if encs and ctx.rng.random() < 0.5:
            last = ctx.rng.random() < 0.75
            e = encs[-1] if last else encs[0]
            add(f"enc-{'last' if last else 'first'}", LAST_ENC_T if last else FIRST_ENC_T, e.start, e.ref,
                enc=ctx.pick(ENCOUNTER_SINGULAR[klass]))
    drugs = present_concepts(ctx, "medication")
    if drugs:
        c = ctx.pick(drugs)
        evs = concept_events(ctx, c)
        first = ctx.rng.random() < 0.6
        e = evs[0] if first else evs[-1]
        add("rx-first" if first else "rx-last", RX_FIRST_T if first else RX_LAST_T, e.start, e.ref,
            ctx.pick(c.phrases))
    imms = present_concepts(ctx, "immunization")
    if imms:
        c = ctx.pick(imms)
        e = concept_events(ctx, c)[-1]
        add("imm-last", IMM_LAST_T, e.start, e.ref, ctx.pick(c.phrases))
    procs = present_concepts(ctx, "procedure")
    if procs:
        c = ctx.pick(procs)
        e = concept_events(ctx, c)[-1]
        add("proc-last", PROC_LAST_T, e.start, e.ref, ctx.pick(c.phrases))
    return out


SINCE_T = {
    "days": ("How many days since {poss} last {x}?", "How long ago was {poss} last {x}, in days?",
             "Days since the most recent {x}?"),
    "months": ("How many months since {poss} last {x}?", "How many months ago was {poss} last {x}?",
               "Months since the most recent {x}?"),
    "years": ("How many years since {poss} last {x}?", "How many years ago was {poss} last {x}?",
              "Years since the most recent {x}?"),
}
SINCE_DX_T = ("How many years {has} {subj} had {x}?", "How many years since {subj} was diagnosed with {x}?",
              "How long ago, in years, was {own} {y} diagnosed?")


def time_since(event: datetime, now: datetime, unit: str) -> int | None:
    """Completed units from event to now; None when the answer depends on time of day or a few days' slip."""
    if unit == "days":
        value = tu.completed_days(event, now)
        return value if value == (now.date() - event.date()).days else None
    if unit == "months":
        value = tu.completed_months(event, now)
        probes = [tu.completed_months(event + timedelta(days=d), now) for d in (-3, 3)]
    else:
        value = tu.completed_years(event, now)
        probes = [tu.completed_years(event + timedelta(days=d), now) for d in (-3, 3)]
    return value if all(p == value for p in probes) else None


def gen_time_since(ctx: Context) -> list[Candidate]:
    """time_since: completed days/months/years between an event and now."""
    out = []
    subjects: list[tuple[str, datetime, str]] = []  # (phrase, time, ref)
    for item in [ITEMS[k] for k in CORE_ITEMS if item_values(ctx.record, ITEMS[k])][:8]:
        m = item_values(ctx.record, item)[-1]
        subjects.append((ctx.pick(item.phrases), m.time, m.ref))
    for klass in ("EMER", "IMP", "AMB", "ALL"):
        encs = encounters_of(ctx, klass)
        if encs:
            subjects.append((ctx.pick(ENCOUNTER_SINGULAR[klass]), encs[-1].start, encs[-1].ref))
    for c in present_concepts(ctx, "immunization") + present_concepts(ctx, "procedure"):
        e = concept_events(ctx, c)[-1]
        subjects.append((_strip_article(ctx.pick(c.phrases)), e.start, e.ref))
    ctx.rng.shuffle(subjects)
    for phrase, moment, ref in subjects[:3]:
        unit = ctx.pick(("days", "days", "months", "years"))
        value = time_since(moment, ctx.now, unit)
        if value is None or value < 1:
            continue
        i, t = _variant(ctx, SINCE_T[unit])
        q = ph.fill(t, ctx.voice(), x=phrase)
        out.append(_cand(ctx, "time_since", f"time_since/last-{unit}/{i}", q, [value], [ref], "number"))
    chronic = [c for c in present_concepts(ctx, "condition") if all(e.end is None for e in concept_events(ctx, c))]
    if chronic:
        c = ctx.pick(chronic)
        e = concept_events(ctx, c)[0]
        value = time_since(e.start, ctx.now, "years")
        if value is not None and value >= 1:
            i, t = _variant(ctx, SINCE_DX_T)
            phrase = ctx.pick(c.phrases)
            q = ph.fill(t, ctx.voice(), x=phrase, y=_strip_article(phrase))
            out.append(_cand(ctx, "time_since", f"time_since/dx-years/{i}", q, [value], [e.ref], "number"))
    return out


ACTIVE_NOW_T = ("What are {poss} active problems?", "Current problem list?",
                "Which conditions {does} {subj} currently have?", "What active diagnoses {does} {subj} have right now?")
ACTIVE_AT_T = ("What were {poss} active conditions on {d}?", "Problem list as of {d}?",
               "Which conditions were active for {obj} on {d}?")
STILL_T = ("{does} {subj} still have {x}?", "Is {poss} {y} still active?", "Is {x} on {poss} current problem list?")
EPISODES = {"mi", "stroke", "overdose", "concussion", "hip_fracture"}  # events, not states: never "still have"


def active_conditions(ctx: Context, moment: datetime) -> list[Event]:
    """Conditions with onset ≤ moment and (no abatement or abatement > moment)."""
    return [e for e in ctx.record.of_kind("condition")
            if e.start <= moment and (e.end is None or e.end > moment)]


def _near(events: Sequence[Event], moment: datetime, days: int) -> bool:
    gap = timedelta(days=days)
    return any(abs(e.start - moment) <= gap or (e.end is not None and abs(e.end - moment) <= gap) for e in events)


def _names(events: Sequence[Event]) -> list[str]:
    return sorted({e.name for e in events})


def gen_active_conditions(ctx: Context) -> list[Candidate]:
    """active_conditions: lists at now or a date; and "still active?" booleans."""
    out = []
    conds = ctx.record.of_kind("condition")
    if not conds:
        return out
    if not _near(conds, ctx.now, 2):
        act = active_conditions(ctx, ctx.now)
        if act:
            i, t = _variant(ctx, ACTIVE_NOW_T)
            out.append(_cand(ctx, "active_conditions", f"active_conditions/now/{i}", ph.fill(t, ctx.voice()),
                             _names(act), [e.ref for e in act], "list"))
    for _ in range(2):
        anchor = ctx.pick(conds).start + timedelta(days=ctx.rng.randint(20, 400))
        day = anchor.date()
        moment = tu.day_end(day)
        if moment >= ctx.now or _near(conds, moment, 2) or day < ctx.record.birth_date:
            continue
        act = active_conditions(ctx, moment)
        if not act:
            continue
        i, t = _variant(ctx, ACTIVE_AT_T)
        q = ph.fill(t, ctx.voice(), d=ph.fmt_date(day, ctx.rng))
        out.append(_cand(ctx, "active_conditions", f"active_conditions/at-date/{i}", q, _names(act),
                         [e.ref for e in act], "list"))
        break
    for c in present_concepts(ctx, "condition"):
        evs = concept_events(ctx, c)
        if c.key in EPISODES or _near(evs, ctx.now, 3) or ctx.rng.random() < 0.5:
            continue
        active = [e for e in evs if e.start <= ctx.now and (e.end is None or e.end > ctx.now)]
        i, t = _variant(ctx, STILL_T)
        phrase = ctx.pick(c.phrases)
        q = ph.fill(t, ctx.voice(), x=phrase, y=_strip_article(phrase))
        out.append(_cand(ctx, "active_conditions", f"active_conditions/still/{i}", q, [bool(active)],
                         [e.ref for e in evs], "boolean"))
    return out


ACTIVE_MEDS_T = ("What medications {is_} {subj} currently on?", "Current med list?",
                 "What {is_} {subj} taking right now?", "List {poss} active prescriptions.")
ON_DRUG_T = ("{is_} {subj} currently on {x}?", "{is_} {subj} still taking {x}?", "Is {x} an active medication for {obj}?")


def gen_active_medications(ctx: Context) -> list[Candidate]:
    """active_medications: "currently" = MedicationRequest.status == active (names as recorded)."""
    out = []
    meds = ctx.record.of_kind("medication")
    if not meds:
        return out
    active = [e for e in meds if e.status == "active"]
    i, t = _variant(ctx, ACTIVE_MEDS_T)
    out.append(_cand(ctx, "active_medications", f"active_medications/list/{i}", ph.fill(t, ctx.voice()),
                     _names(active), [e.ref for e in active], "list"))
    for c in present_concepts(ctx, "medication"):
        if ctx.rng.random() < 0.5:
            continue
        evs = concept_events(ctx, c)
        on = any(e.status == "active" for e in evs)
        i, t = _variant(ctx, ON_DRUG_T)
        q = ph.fill(t, ctx.voice(), x=ctx.pick(c.phrases))
        out.append(_cand(ctx, "active_medications", f"active_medications/on-drug/{i}", q, [on],
                         [e.ref for e in evs], "boolean"))
    return out


DOSE_T = ("How many doses of {x} per day {is_} {subj} prescribed?", "What is {poss} total daily dose of {x}, in doses per day?",
          "{x}: how many doses a day per the latest prescription?", "How many {x} doses a day {is_} {subj} on?")


def gen_daily_dose(ctx: Context) -> list[Candidate]:
    """daily_dose: doseQuantity × frequency ÷ period (per day) from the latest matching MedicationRequest."""
    out = []
    for key in DOSE_CONCEPTS:
        c = CONCEPTS[key]
        evs = concept_events(ctx, c)
        if not evs:
            continue
        latest_time = evs[-1].start
        latest = [e for e in evs if e.start == latest_time]
        doses = {e.daily_dose for e in latest}
        if len(doses) != 1 or None in doses:
            continue
        dose = doses.pop()
        assert dose is not None
        i, t = _variant(ctx, DOSE_T)
        phrase = _strip_article(ctx.pick(c.phrases))
        q = ph.fill(t, ctx.voice(), x=phrase)
        out.append(_cand(ctx, "daily_dose", f"daily_dose/{key}/{i}", q, [round(dose, 9)], [latest[0].ref],
                         "number", tolerance=0.01))
    return out
