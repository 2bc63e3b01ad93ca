"""Notes about emergency and inpatient encounters: the admission H&P and the discharge summary."""

from __future__ import annotations

from datetime import timedelta

from evals.consistency import distract
from evals.consistency import inject as rules
from evals.consistency.entities import Writer
from evals.consistency.record import Encounter, Event
from evals.consistency.styles import (
    acute_parts,
    age,
    current_meds,
    header,
    history,
    labs,
    listing,
    meds_line,
    pmh_line,
    recent_labs,
    sex,
    visit_obs,
    vitals,
)
from evals.consistency.vocab import CLOCK_STYLES, DATE_STYLES, PHRASES
from evals.consistency.writer import date_text


def _hd(w: Writer, moment) -> int:
    return (moment.date() - w.enc.start.date()).days + 1


def _event_time(w: Writer, ev: Event, allow_hd: bool) -> tuple | None:
    """An event's own time expression: HD #n on long stays, else a date or a clock time, or none."""
    choice = w.rng.random()
    if allow_hd and choice < 0.4:
        return ("hd", _hd(w, ev.time))
    if choice < 0.6:
        return ("date", ev.time, w.rng.choice(DATE_STYLES))
    if choice < 0.75 and not allow_hd:  # a bare clock time only on a same-day stay
        return ("clock", ev.time + timedelta(minutes=w.rng.randrange(0, 10)), w.rng.choice(CLOCK_STYLES))
    return None


def admission(w: Writer, prior: Encounter | None) -> None:
    """ED note / admission H&P written within the first hours; window: admission −24 h … note +12 h."""
    rec, enc = w.record, w.enc
    conds, procs, meds = acute_parts(rec, enc)
    # an admission note knows only what happened before it was written
    conds = [e for e in conds if e.time <= w.note_time]
    procs = [e for e in procs if e.time <= w.note_time]
    meds = [m for m in meds if m.time <= w.note_time]
    header(w, ("ADMISSION H&P", "ED PROVIDER NOTE", "History and Physical", "ED Note"), w.note_time)
    if conds:
        w.note.put("CC: ")
        w.event(conds[0], w.default)
        w.note.line("")
    before = enc.start - timedelta(minutes=1)
    w.note.put(f"HPI: {age(rec, enc.start)} y/o {sex(rec)} with ")
    old = [e for e in history(rec, before, 4) if e.encounter != enc.id]
    if old:
        pmh_line(w, old, w.default, header="PMH of ")
    else:
        w.note.line("no significant PMH.")
    if conds:
        w.note.put("Presents with ")
        w.event(conds[-1], w.default)
        w.note.put(". ")
    w.note.put(w.rng.choice(("Symptoms began earlier today per pt. ", "Onset 2 days ago, worsening. ",
                             "Brought in by family. ", "Pt is a reliable historian. ")))
    if w.rng.random() < 0.5:
        distract.some(w, 1)
    w.note.line("")
    if prior is not None:
        recent_labs(w, prior, visit_obs(rec, prior))
    meds_line(w, current_meds(rec, before, 3), w.default, w.rng.choice(("Home meds: ", "Outpatient meds: ")))
    distract.allergy(w)
    if w.rng.random() < 0.4:
        distract.family_history(w)
    here = {k: o for k, o in visit_obs(rec, enc).items() if o.time <= w.note_time}  # measured before the note
    phrase = w.rng.choice(PHRASES["admission"])
    on_admission = rules.narrative_when(phrase, "admission", enc, w.note_time)
    if any(k in here for k in ("8480-6", "29463-7", "72514-3")):
        w.note.put(w.rng.choice(PHRASES["vitals_admission"]))
        vitals(w, here, on_admission if w.rng.random() < 0.5 else w.default)
        w.note.line("")
    if any(o.code not in ("8480-6", "8462-4", "29463-7", "8302-2", "39156-5", "72514-3") for o in here.values()):
        labs(w, here, on_admission, lead=f" {phrase}")
    if procs or meds:
        w.note.put(w.rng.choice(("ED course: ", "In the ED: ")))
        same_day = (enc.end - enc.start) < timedelta(hours=20)
        thunks = [lambda p=p: w.event(p, w.default, spec=_event_time(w, p, not same_day),
                                      tail=w.rng.choice((" performed", " done", ""))) for p in procs]
        thunks += [lambda m=m: w.med(m, w.default, listed=False, lead=w.rng.choice(("given ", "received ")))
                   for m in meds]
        listing(w, thunks, "; ", lambda: w.absent_event("procedure", tail=" obtained"))
        w.note.line(".")
    w.note.line("A/P:")
    for cond in conds[:2]:
        w.note.put("# ")
        w.event(cond, w.default)
        w.note.line(w.rng.choice((": supportive care.", " - see orders.", ": pain control, reassess.")))
    if w.rng.random() < 0.5:
        distract.negation(w)
        w.note.line("")
    if w.rng.random() < 0.5:
        distract.parameter(w)
    distract.plan(w, ["CBC", "BMP", "troponin"], w.rng.choice(("ceftriaxone", "enoxaparin", "ondansetron")))


def discharge(w: Writer, prior: Encounter | None) -> None:
    """Discharge summary; window: the whole stay (±12 h)."""
    rec, enc = w.record, w.enc
    conds, procs, meds = acute_parts(rec, enc)
    header(w, ("DISCHARGE SUMMARY", "Discharge Summary", "ED Discharge Summary"), w.note_time)
    style = w.rng.choice((0, 1, 2))
    w.note.line(f"Admission date: {date_text(enc.start, style)}    Discharge date: {date_text(enc.end, style)}")
    w.note.line("")
    w.note.line("Discharge diagnoses:")
    dx = conds + [e for e in history(rec, enc.start, 3) if e not in conds][: 1 if conds else 3]
    thunks = [lambda e=e: w.event(e, w.default) for e in dx]
    w.note.put("- ")
    listing(w, thunks, "\n- ", lambda: w.absent_event("condition"))
    w.note.line("")
    w.note.line("")
    long_stay = (enc.end - enc.start) >= timedelta(hours=20)
    w.note.put(f"Hospital course: {age(rec, enc.start)} y/o {sex(rec)} ")
    if conds:
        w.note.put("admitted with ")
        w.event(conds[0], w.default)
        w.note.put(". ")
    else:
        w.note.put("admitted for evaluation. ")
    for proc in procs[:3]:
        w.note.put(w.rng.choice(("Underwent ", "Pt underwent ", "S/p ")))
        w.event(proc, w.default, spec=_event_time(w, proc, long_stay))
        w.note.put(". ")
    for med in meds[:3]:
        spec = ("hd", _hd(w, med.time)) if long_stay and w.rng.random() < 0.5 else None
        w.med(med, w.default, listed=False, spec=spec, lead=w.rng.choice(("Started on ", "Received ", "Given ")))
        w.note.put(". ")
    if w.rng.random() < 0.5:
        w.absent_med(lead="Also received ")
        w.note.put(". ")
    if long_stay:
        w.note.put(f"Improved and was discharged on HD #{_hd(w, enc.end)}. ")
    w.note.line("")
    here = visit_obs(rec, enc)
    if here:
        w.note.line("Pertinent results:")
        labs(w, here, w.default)
    elif prior is not None and w.rng.random() < 0.6:
        recent_labs(w, prior, visit_obs(rec, prior))
    if procs:
        w.note.put("Procedures: ")
        listing(w, [lambda p=p: w.event(p, w.default, spec=("date", p.time, w.rng.choice(DATE_STYLES)))
                    for p in procs], ", ")
        w.note.line("")
    meds_line(w, current_meds(rec, enc.end, 4), w.default, "Discharge meds: ")
    if w.rng.random() < 0.5:
        distract.some(w, 1)
        w.note.line("")
    w.note.line("Follow-up: PCP in 1 week.")
    distract.plan(w, ["BMP", "CBC"], w.rng.choice(("lisinopril", "atorvastatin")))

