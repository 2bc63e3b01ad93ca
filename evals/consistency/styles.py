"""Five note styles written from one encounter: clinic progress, nursing, results follow-up, admission H&P, discharge.

Notes are written the way clinicians write: shorthand, lists and prose, times as clock times, dates or
narrative phrases ("yesterday", "HD #2", "on admission", "3 months ago"), and statements that cannot be
checked (plans, goals, family history, negations, home readings).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from evals.consistency import distract
from evals.consistency import inject as rules
from evals.consistency.entities import Writer
from evals.consistency.inject import When
from evals.consistency.record import Encounter, Event, Med, Obs, Record
from evals.consistency.vocab import (
    CLOCK_STYLES,
    CONDITION_NAMES,
    DATE_STYLES,
    ITEMS,
    PANEL_TITLES,
    PANELS,
    PHRASES,
    PROCEDURE_NAMES,
    VACCINE_NAMES,
    clean,
    drug_words,
)
from evals.consistency.writer import clock, date_text

VITAL_ORDER = ("bp", "29463-7", "8302-2", "39156-5", "72514-3", "8331-1")
SLASH_BMP = ("2947-0", "6298-4", "2069-3", "20565-8", "6299-2", "38483-4", "2339-0")


def visit_obs(record: Record, enc: Encounter) -> dict[str, Obs]:
    """The first value of every item the encounter measured."""
    out: dict[str, Obs] = {}
    for o in record.obs:
        if o.encounter == enc.id and o.code in ITEMS and o.code not in out:
            out[o.code] = o
    return out


def age(record: Record, at: datetime) -> int:
    """Age in years at ``at``."""
    years = at.year - record.birth.year
    return years - ((at.month, at.day) < (record.birth.month, record.birth.day))


def sex(record: Record) -> str:
    """M or F."""
    return {"male": "M", "female": "F"}.get(record.gender, "pt")


INPATIENT_ONLY = ("alteplase", "atropine", "amiodarone", "leucovorin", "oxaliplatin", "docetaxel", "ampicillin",
                  "meperidine", "epinephrine")


def current_meds(record: Record, at: datetime, limit: int = 4) -> list[Med]:
    """The latest request of each nameable outpatient drug authored in the three years before ``at``."""
    latest: dict[str, Med] = {}
    for m in sorted(record.meds, key=lambda m: m.time):
        key = drug_words(m.name)[0]
        if key and key not in INPATIENT_ONLY and at - timedelta(days=1096) <= m.time <= at:
            latest[key] = m
    return sorted(latest.values(), key=lambda m: m.time, reverse=True)[:limit]


def nameable(ev: Event) -> bool:
    """True when a note has a name for the event."""
    low = clean(ev.name)
    if ev.kind == "condition":
        return low in CONDITION_NAMES
    if ev.kind == "procedure":
        return low in PROCEDURE_NAMES
    return any(low.startswith(k) for k in VACCINE_NAMES)


def history(record: Record, at: datetime, limit: int = 5) -> list[Event]:
    """Distinct nameable conditions with onset before ``at``, most recent first."""
    seen: dict[str, Event] = {}
    for e in sorted(record.events, key=lambda e: e.time, reverse=True):
        if e.kind == "condition" and e.time <= at and nameable(e) and clean(e.name) not in seen:
            seen[clean(e.name)] = e
    return list(seen.values())[:limit]


def listing(w: Writer, thunks: list[Callable[[], object]], sep: str, absent: Callable[[], object] | None = None) -> None:
    """Write entities separated by ``sep``; maybe slip in one the record does not hold."""
    thunks = list(thunks)
    if absent is not None and w.rng.random() < w.rate:
        thunks.insert(w.rng.randrange(len(thunks) + 1), absent)
    written = False
    for fn in thunks:
        before = w.note.size
        if written:
            w.note.put(sep)
        golds = len(w.note.golds)
        fn()
        if len(w.note.golds) == golds and w.note.size == before + (len(sep) if written else 0):
            w.note.rollback(before)  # the thunk wrote nothing: no dangling separator
            continue
        written = True


def vitals(w: Writer, obs: dict[str, Obs], when: When, shifted: bool = False) -> None:
    """A vitals line (BP, weight, height, BMI, pain, temperature)."""
    thunks: list[Callable[[], object]] = []
    for key in VITAL_ORDER:
        if key == "bp" and "8480-6" in obs and "8462-4" in obs:
            thunks.append(lambda: w.bp(obs["8480-6"], obs["8462-4"], when, shifted_line=shifted))
        elif key in obs:
            thunks.append(lambda key=key: w.obs(key, obs[key], when, shifted_line=shifted))
    listing(w, thunks, w.rng.choice((", ", ", ", "  ", "; ")), None if shifted else (lambda: w.absent_obs(vital=True)))


def labs(w: Writer, obs: dict[str, Obs], when: When, lead: str = "") -> list[str]:
    """Lab lines per panel, in list, slash or prose form; returns the names of the panels written."""
    written = []
    for panel, codes in PANELS.items():
        present = [c for c in codes if c in obs]
        if panel == "cbc":
            present = present[: w.rng.choice((3, 4, 6, 10))]
        if not present:
            continue
        written.append({"other": "A1c", "lfts": "LFTs"}.get(panel, PANEL_TITLES[panel][0]))
        title = w.rng.choice(PANEL_TITLES[panel])
        if panel == "bmp" and all(c in obs for c in SLASH_BMP) and w.rng.random() < 0.2:
            span = w.note.put(title or "BMP")
            w.note.put(lead + ": ")
            for i, code in enumerate(SLASH_BMP):
                if i:
                    w.note.put("/")
                w.obs(code, obs[code], when, bare=span)
            w.note.line("")
            continue
        if title:
            w.note.put(f"{title}{lead}: ")
        if panel == "other" and w.rng.random() < 0.5:
            for code in present:
                w.obs(code, obs[code], when, prose=True)
                w.note.put(". ")
            w.note.line("")
            continue
        thunks = [lambda c=c: w.obs(c, obs[c], when) for c in present]
        listing(w, thunks, w.rng.choice((", ", ", ", "  ", "; ")), (lambda: w.absent_obs()) if panel != "other" else None)
        w.note.line("")
    return written


def meds_line(w: Writer, meds: list[Med], when: When, header: str) -> None:
    """A medication list (each needs a request authored before the window ends)."""
    w.note.put(header)
    if not meds:
        w.note.line("none")
        return
    listing(w, [lambda m=m: w.med(m, when, listed=True) for m in meds], w.rng.choice(("; ", ", ", "; ")),
            lambda: w.absent_med())
    w.note.line("")


def pmh_line(w: Writer, conds: list[Event], when: When, header: str = "PMH: ") -> None:
    """A history list (each needs a condition with onset before the window ends)."""
    w.note.put(header)
    if not conds:
        w.note.line("none")
        return
    listing(w, [lambda e=e: w.event(e, when) for e in conds], w.rng.choice((", ", ", ", "; ")),
            lambda: w.absent_event("condition"))
    w.note.line("")


def header(w: Writer, titles: tuple[str, ...], at: datetime) -> None:
    """Title and date/time line."""
    w.note.line(w.rng.choice(titles))
    w.note.line(f"Date: {date_text(at, w.rng.choice(DATE_STYLES[:4]))} {clock(at, w.rng.choice((0, 1)))}")
    w.note.line("")


def progress(w: Writer, obs: dict[str, Obs]) -> None:
    """Clinic progress note (SOAP) for a visit with vitals and labs; window: note day ±1."""
    rec, at = w.record, w.note_time
    header(w, ("PROGRESS NOTE", "Clinic Progress Note", "OFFICE VISIT", "Internal Medicine Progress Note"), at)
    reason = "annual physical" if "check" in w.enc.type.lower() else "follow-up"
    w.note.put(f"S: {age(rec, at)} y/o {sex(rec)} here for {reason}. {distract.subjective(w)} ")
    if w.rng.random() < 0.5:
        distract.home_reading(w)
    if w.rng.random() < 0.5:
        distract.negation(w)
    if w.rng.random() < 0.5:
        distract.some(w, 1)
    w.note.line("")
    pmh_line(w, history(rec, at), w.default)
    meds_line(w, current_meds(rec, at), w.default, w.rng.choice(("Meds: ", "Current meds: ", "Medications: ")))
    distract.allergy(w)
    if w.rng.random() < 0.6:
        distract.family_history(w)
    w.note.line("")
    w.note.line("O:")
    w.note.put(w.rng.choice(("Vitals: ", "VS: ", "Vitals - ")))
    vitals(w, obs, w.default)
    w.note.line("")
    when = w.default
    choice = w.rng.random()
    if choice < 0.3 and w.enc.start.date() == at.date():  # "today" only when the visit did not cross midnight
        text = w.rng.choice(PHRASES["labs_today"])
        when = rules.narrative_when(text, "today", w.enc, at)
        w.note.line(text)
    elif choice < 0.5:
        text = date_text(w.enc.start, w.rng.choice(DATE_STYLES))
        when = rules.date_when(text, w.enc.start)
        w.note.line(f"Labs ({text}):")
    panels = labs(w, obs, when)
    w.note.line("")
    w.note.line(w.rng.choice(("A/P:", "Assessment/Plan:", "ASSESSMENT AND PLAN")))
    w.note.line(f"{age(rec, at)} y/o {sex(rec)} seen for {reason}.")
    for cond in history(rec, at, 3):
        w.note.put("# ")
        w.event(cond, w.default)
        w.note.put(": ")
        repeat = {"prediabetes": "4548-4", "diabetes": "4548-4", "hyperlipidemia": "18262-6", "anemia": "718-7",
                  "body mass index 30+ - obesity": "39156-5"}.get(clean(cond.name))
        if repeat and repeat in obs:
            w.obs(repeat, obs[repeat], w.default, prose=True)
            w.note.put(w.rng.choice((", stable.", "; continue current plan.", ".")))
        else:
            w.note.put(w.rng.choice(("stable.", "continue current management.", "no changes today.")))
        w.note.line("")
    for ev in (e for e in rec.events if e.encounter == w.enc.id and e.kind == "immunization" and nameable(e)):
        w.note.put("# HCM: ")
        w.event(ev, w.default, tail=w.rng.choice((" given today", " administered", " given")))
        w.note.line(".")
        break
    if w.rng.random() < 0.6:
        distract.some(w, 1)
        w.note.line("")
    distract.plan(w, panels or ["BMP"], w.rng.choice(("atorvastatin", "lisinopril", "metformin")))
    w.note.line(w.rng.choice(("RTC 1 yr.", "F/u in 6 months.", "Return in 3 months or sooner prn.")))


def nursing(w: Writer, obs: dict[str, Obs]) -> None:
    """Nursing note: clock-timed lines; a line's time applies to everything on it (±15 min)."""
    start = w.enc.start
    header(w, ("NURSING NOTE", "Nursing Progress Note", "RN Note"), w.note_time)
    style = w.rng.choice(CLOCK_STYLES)
    moments = sorted(start + timedelta(minutes=w.rng.randrange(0, 12)) for _ in range(3))
    groups = [[k for k in VITAL_ORDER[:3] if k in obs or (k == "bp" and "8480-6" in obs)],
              [k for k in VITAL_ORDER[3:] if k in obs]]
    for moment, keys in zip(moments, groups, strict=False):
        if not keys:
            continue
        shifted = w.rng.random() < w.rate * 0.8
        real = rules.shifted(w.rng, moment, "hour") if shifted else moment
        text = clock(real, style)
        when = rules.clock_when(text, real)
        w.note.put(f"{text} {w.rng.choice(('VS: ', 'Pt roomed. VS ', 'Vitals obtained: ', ''))}")
        vitals(w, {k: v for k, v in obs.items() if k in keys or (k in ('8480-6', '8462-4') and 'bp' in keys)},
               when, shifted)
        w.note.line(".")
    immunizations = [e for e in w.record.events if e.encounter == w.enc.id and e.kind == "immunization" and nameable(e)]
    for ev in immunizations[:2]:
        moment = start + timedelta(minutes=w.rng.randrange(5, 14))
        w.event(ev, w.default, spec=("clock", moment, style), tail=" given IM L deltoid", time_first=True)
        w.note.line(", tolerated well.")
    if w.rng.random() < 0.5:
        w.note.put(f"{clock(start + timedelta(minutes=14), style)} ")
        w.absent_event("procedure", lead="", tail=" done per order")
        w.note.line(".")
    if w.rng.random() < 0.5:
        w.note.put(f"{clock(start + timedelta(minutes=16), style)} ")
        distract.home_reading(w)
        w.note.line("")
    w.note.line(f"{clock(max(w.enc.end, start + timedelta(minutes=17)), style)} Pt d/c'd home, ambulatory.")


def followup(w: Writer, obs: dict[str, Obs]) -> None:
    """Results note written the day after the visit ("yesterday"); window: note day ±1."""
    header(w, ("PROGRESS NOTE - results", "Telephone Encounter", "Lab Results Note"), w.note_time)
    visit = date_text(w.enc.start, w.rng.choice(DATE_STYLES))
    w.note.line(f"Called pt to review labs from visit on {visit}.")
    picks = [c for c in ("6298-4", "38483-4", "4548-4", "18262-6", "2339-0", "718-7", "33914-3", "2085-9") if c in obs]
    w.rng.shuffle(picks)
    for code in picks[:5]:
        mode = w.rng.random()
        if mode < 0.35:
            w.obs(code, obs[code], w.default, spec=("yesterday",))
        elif mode < 0.6:
            w.obs(code, obs[code], w.default, spec=("date", w.enc.start, w.rng.choice(DATE_STYLES)))
        else:
            w.obs(code, obs[code], w.default, prose=w.rng.random() < 0.5)
        w.note.line(w.rng.choice((", WNL.", " - stable.", ", reviewed with pt.", ".")))
    if w.rng.random() < 0.5:
        w.absent_obs()
        w.note.line(" - normal.")
    if w.rng.random() < 0.5:
        distract.some(w, 1)
        w.note.line("")
    distract.plan(w, ["lipids", "BMP", "A1c"], w.rng.choice(("atorvastatin", "metformin")))


def acute_parts(record: Record, enc: Encounter) -> tuple[list[Event], list[Event], list[Med]]:
    """Conditions, procedures and nameable meds of an acute encounter."""
    rows = record.in_encounter(enc)
    conds = [e for e in rows["condition"] if nameable(e)]
    procs = [e for e in rows["procedure"] if nameable(e)]
    meds = [m for m in rows["med"] if drug_words(m.name)[0]]
    return conds, procs, meds


def recent_labs(w: Writer, visit: Encounter | None, obs: dict[str, Obs]) -> None:
    """Labs from an earlier clinic visit, with an explicit date or "N months ago"."""
    if visit is None or not obs:
        return
    days = (w.note_time - visit.start).total_seconds() / 86400
    months = round(days / 30.4)
    if 1 <= months <= 11 and abs(days - months * 30.4) < 15 and w.rng.random() < 0.6:
        text = w.rng.choice(PHRASES["months_ago"]).format(n=months) if months > 1 else "1 month ago"
        when = rules.narrative_when(text, "months", w.enc, w.note_time, months)
    else:
        text = f"on {date_text(visit.start, w.rng.choice(DATE_STYLES[:4]))}"
        when = rules.date_when(text, visit.start)
    w.note.put(f"Labs at PCP visit {text}: ")
    codes = [c for c in ("4548-4", "38483-4", "6298-4", "2947-0", "18262-6", "718-7") if c in obs][:4]
    listing(w, [lambda c=c: w.obs(c, obs[c], when) for c in codes], ", ")
    w.note.line(".")
