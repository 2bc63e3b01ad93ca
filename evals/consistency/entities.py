"""Writing one labelled entity at a time: a lab or vital value, a blood pressure, a drug, a diagnosis, a procedure.

Each method writes the mention into the note, decides (seeded) whether to inject an inconsistency, checks the
final statement against the record with the rules in ``inject.py`` and records the gold label.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime

from evals.consistency import inject as rules
from evals.consistency.inject import When
from evals.consistency.record import Encounter, Event, Med, Obs, Record
from evals.consistency.vocab import (
    ABSENT_CONDITIONS,
    ABSENT_OBS,
    ABSENT_PROCEDURES,
    ALTERNATIVES,
    CONDITION_NAMES,
    DRUG_NAMES,
    ITEMS,
    OTHER_DRUGS,
    PHRASES,
    PROCEDURE_NAMES,
    PROSE_LEADS,
    SEPARATORS,
    VACCINE_NAMES,
    clean,
    drug_words,
)
from evals.consistency.writer import Gold, Note, clock, date_text, feet_inches, fmt, to_note_unit

VITAL_NAMES = {"HR", "RR", "SpO2", "heart rate", "O2 sat", "pulse"}


class Writer:
    """Writes entities of one note about one encounter, injecting inconsistencies at ``rate``."""

    def __init__(self, rng: random.Random, record: Record, enc: Encounter, style: str, note_time: datetime,
                 rate: float) -> None:
        self.rng, self.record, self.enc, self.style, self.note_time, self.rate = rng, record, enc, style, note_time, rate
        self.note = Note()
        self.default = rules.default_when(style, note_time, enc)
        self.used: set[str] = set()

    # --- helpers ------------------------------------------------------------------------------------------

    def pick(self, options: Sequence[str]) -> str:
        """A spelling: the first one half the time, else any."""
        return options[0] if self.rng.random() < 0.5 else self.rng.choice(list(options))

    def inject(self, allowed: Sequence[str]) -> str | None:
        """The kind of inconsistency to inject into the next entity, or None."""
        if not allowed or self.rng.random() >= self.rate:
            return None
        return self.rng.choice(list(allowed))

    def spec_when(self, spec: tuple, shift: str | None = None) -> tuple[When, str]:
        """A time expression (clock, date, hd, yesterday) as text and window, optionally shifted."""
        kind = spec[0]
        if kind in ("clock", "date"):
            moment: datetime = spec[1]
            if shift:
                moment = rules.shifted(self.rng, moment, "hour" if kind == "clock" else "day")
            if kind == "clock":
                text = clock(moment, spec[2])
                return rules.clock_when(text, moment), text
            text = date_text(moment, spec[2])
            return rules.date_when(text, moment), text
        if kind == "hd":
            n = spec[1] + (self.rng.choice((1, -1)) if shift and spec[1] > 1 else (1 if shift else 0))
            text = self.rng.choice(PHRASES["hd"]).format(n=n)
            return rules.narrative_when(text, "hd", self.enc, self.note_time, n), text
        if kind == "yesterday":
            which = "today" if shift else "yesterday"
            text = self.rng.choice(PHRASES[which])
            return rules.narrative_when(text, which, self.enc, self.note_time), text
        raise ValueError(kind)

    def time_piece(self, spec: tuple, text: str) -> str:
        """How an entity's own time expression is attached after it."""
        if spec[0] == "clock":
            return self.rng.choice((f" at {text}", f" @ {text}", f" ({text})"))
        if spec[0] == "date":
            return self.rng.choice((f" on {text}", f" ({text})", f" on {text}"))
        return f" on {text}" if spec[0] == "hd" else f" {text}"

    def gold(self, **fields) -> Gold:
        """Record a gold entity."""
        g = Gold(**fields)
        self.note.golds.append(g)
        return g

    # --- observations -------------------------------------------------------------------------------------

    def render(self, code: str, row: Obs) -> tuple[str, float, int, str, str]:
        """(note unit, value in it, decimals, number as written, comparator) for one record value."""
        item = ITEMS[code]
        unit = self.rng.choice(item.units)
        decimals = item.decimals
        if code == "29463-7" and self.rng.random() < 0.4:
            unit, decimals = self.rng.choice(("lb", "lbs")), self.rng.choice((0, 1))
        if code == "8331-1":
            decimals = 1
        value = to_note_unit(row.value, row.unit, unit)
        assert value is not None, (code, row.unit, unit)  # noqa: S101 - vocab bug
        if code == "33914-3" and row.value > 60 and self.rng.random() < 0.5:
            return unit, 60.0, 0, ">60", ">"
        return unit, value, decimals, fmt(value, decimals), ""

    def obs(self, code: str, row: Obs, when: When, spec: tuple | None = None, prose: bool = False,
            shifted_line: bool = False, bare: tuple[int, int] | None = None) -> None:
        """One lab or vital with its value (and, with ``spec``, its own time expression).

        ``bare``: write only the number (a slash-separated panel); the name is the panel title at that span.
        """
        item = ITEMS[code]
        name = self.pick(item.names)
        unit, value, decimals, number, comparator = self.render(code, row)
        if code == "8302-2" and self.rng.random() < 0.3:
            number, inches = feet_inches(row.value)
            unit, value, decimals = "in", inches, 0
        converted = unit not in item.units or unit == "in"
        base = self.spec_when(spec)[0] if spec else when
        allowed = ["value"] if not comparator else []
        if item.wrong_units and not converted and code != "72514-3" and bare is None:
            allowed.append("unit")
        if spec is not None:
            allowed.append("time")
        kind = "time" if shifted_line else self.inject(allowed)
        unit_text = unit
        if kind == "value":
            new = self.wrong_value(code, row, value, decimals, unit, base)
            if new is None:
                kind = None
            else:
                value, number = new, fmt(new, decimals)
        elif kind == "unit":
            unit_text = self.rng.choice(item.wrong_units)
        window, time_text = self.spec_when(spec, "time" if kind == "time" else None) if spec else (when, when.text)
        check_unit = unit_text if kind == "unit" else unit
        convertible = to_note_unit(row.value, row.unit, check_unit) is not None
        ok = convertible and rules.obs_consistent(self.record, {code}, value, decimals,
                                                  "in" if unit == "in" else check_unit, window, comparator)
        pieces = self._obs_pieces(code, name, number, unit_text, prose) if bare is None else [(number, "value")]
        if spec:
            pieces.append((self.time_piece(spec, time_text), None))
        spans = self.note.mention(pieces)
        if bare is not None:
            name, unit_text, spans["name"] = self.note.text[bare[0]:bare[1]], "", bare
        self._record_obs(code, item.kind, name, number, unit_text, spans, window, time_text, ok, kind, row)

    def wrong_value(self, code: str, row: Obs, value: float, decimals: int, unit: str, window: When) -> float | None:
        """A value the record does not hold in the window: a clinically different one, a slip of the last
        digit, or the value of an earlier measurement copied forward."""
        mode = self.rng.random()
        if mode < 0.25:  # copied forward from the previous measurement
            earlier = [o for o in self.record.obs if o.code == code and o.time < window.start]
            if earlier:
                old = to_note_unit(max(earlier, key=lambda o: o.time).value, row.unit, unit)
                if old is not None:
                    new = round(old, decimals)
                    if not rules.obs_consistent(self.record, {code}, new, decimals, unit, window):
                        return new
        if mode < 0.45 and decimals > 0 or mode < 0.35:  # a slip: 1-3 units of the last digit
            unit_step = 10 ** (-decimals)
            new = round(value + self.rng.choice((-3, -2, -1, 1, 2, 3)) * unit_step, decimals)
            if new > 0 and not rules.obs_consistent(self.record, {code}, new, decimals, unit, window):
                return new
        return rules.changed_value(self.rng, self.record, {code}, value, decimals, ITEMS[code].step, unit, window)

    def _obs_pieces(self, code: str, name: str, number: str, unit: str, prose: bool) -> list[tuple[str, str | None]]:
        if code == "72514-3":
            return [(name, "name"), (" ", None), (number, "value"), ("/10", None)]
        if code == "8302-2" and "'" in number:
            return [(name, "name"), (" ", None), (number, "value")]
        space = "" if unit in ("%", "C", "F") or (unit and self.rng.random() < 0.2) else " "
        unit_piece = [(space, None), (unit, "unit")] if unit else []
        if prose:
            lead = self.rng.choice(PROSE_LEADS)
            head, tail = lead.split("{n}")
            return [(head, None), (name, "name"), (tail, None), (number, "value"), *unit_piece]
        return [(name, "name"), (self.rng.choice(SEPARATORS), None), (number, "value"), *unit_piece]

    def _record_obs(self, code: str, kind: str, name: str, number: str, unit: str, spans: dict, window: When,
                    time_text: str, ok: bool, injected: str | None, row: Obs) -> None:
        if not ok and injected is None:
            raise AssertionError(f"uninjected entity is inconsistent: {name} {number} {unit} {row}")
        self.gold(type=kind, cls="T1", name=name, name_span=spans["name"], value=number, value_span=spans["value"],
                  unit=unit, label="consistent" if ok else "inconsistent", mismatch=None if ok else injected,
                  time_text=time_text, time_kind=window.kind, code=code,
                  truth=f"{row.name} = {row.value:.3f} {row.unit} at {row.time:%Y-%m-%d %H:%M}")

    def bp(self, sbp: Obs, dbp: Obs, when: When, spec: tuple | None = None, shifted_line: bool = False) -> None:
        """A blood pressure: two entities, systolic and diastolic."""
        values = [round(sbp.value), round(dbp.value)]
        kind = "time" if shifted_line else self.inject(["value", "time"] if spec else ["value"])
        changed = None
        if kind == "value":
            changed = self.rng.choice((0, 1))
            code = ("8480-6", "8462-4")[changed]
            base = self.spec_when(spec)[0] if spec else when
            new = rules.changed_value(self.rng, self.record, {code}, values[changed], 0, ITEMS[code].step, "", base)
            if new is None:
                kind, changed = None, None
            else:
                values[changed] = int(new)
        window, time_text = self.spec_when(spec, "time" if kind == "time" else None) if spec else (when, when.text)
        name = self.rng.choice(("BP", "BP", "B/P", "blood pressure"))
        unit = self.rng.choice(("", "", " mmHg"))
        pieces = [(name, "name"), (self.rng.choice((" ", ": ", " was ")), None), (str(values[0]), "s"), ("/", None),
                  (str(values[1]), "d"), (unit, None)]
        if spec:
            pieces.append((self.time_piece(spec, time_text), None))
        spans = self.note.mention(pieces)
        for i, (code, row, key) in enumerate((("8480-6", sbp, "s"), ("8462-4", dbp, "d"))):
            ok = rules.obs_consistent(self.record, {code}, values[i], 0, "", window)
            injected = kind if (kind == "time" or changed == i) else None
            self._record_obs(code, "vital", name, str(values[i]), unit.strip(), {"name": spans["name"], "value": spans[key]},
                             window, time_text, ok, injected, row)

    def absent_obs(self, vital: bool = False) -> None:
        """A lab or vital the record never holds (an existence inconsistency)."""
        options = [a for a in ABSENT_OBS if a[0][0] not in self.used and rules.absent_obs_ok(self.record, a[0][0])
                   and (a[0][0] in VITAL_NAMES) == vital]
        if not options:
            return
        names, low, high, decimals, unit = self.rng.choice(options)
        self.used.add(names[0])
        name, number = self.pick(names), fmt(self.rng.uniform(low, high), decimals)
        unit_piece = [(" ", None), (unit, "unit")] if unit and self.rng.random() < 0.5 else []
        spans = self.note.mention([(name, "name"), (self.rng.choice((" ", " ", ": ")), None), (number, "value"),
                                   *unit_piece])
        self.gold(type="vital" if names[0] in VITAL_NAMES else "lab", cls="T1", name=name,
                  name_span=spans["name"], value=number, value_span=spans["value"], unit=unit if unit_piece else "",
                  label="inconsistent", mismatch="existence", time_kind=self.default.kind,
                  truth=f"no {names[0]} in the record")

    # --- medications -------------------------------------------------------------------------------------

    def med(self, med: Med, when: When, listed: bool, spec: tuple | None = None, lead: str = "",
            shifted_line: bool = False) -> bool:
        """A drug, with its strength when the product has one; False when the product has no note name."""
        key, strength, unit = drug_words(med.name)
        if key is None:
            return False
        name = self.pick(DRUG_NAMES[key])
        allowed = ["wrong_drug", "wrong_drug"] + (["value", "unit"] if strength else []) + (["time"] if spec else [])
        kind = "time" if shifted_line else self.inject(allowed)
        dose, dose_unit = strength, unit
        if kind == "wrong_drug":
            subs = [s for s in ALTERNATIVES.get(name, ()) + tuple(d[0] for d in OTHER_DRUGS)
                    if not rules.drug_in_record(self.record, s)]
            if subs:
                name = self.rng.choice(subs[:4])
            else:
                kind = None
        elif kind == "value" and strength:
            dose = rules.other_strength(self.rng, self.record, key, strength)
        elif kind == "unit" and unit:
            dose_unit = {"mg": self.rng.choice(("mcg", "g")), "mcg": "mg", "unt": "mg"}[unit]
        window, time_text = self.spec_when(spec, "time" if kind == "time" else None) if spec else (when, when.text)
        if kind == "wrong_drug":
            ok = False
        else:
            ok = rules.med_consistent(self.record, key, dose, dose_unit or "", window, listed)
        pieces: list[tuple[str, str | None]] = [(lead, None), (name, "name")]
        if dose is not None:
            written_unit = "units" if dose_unit == "unt" else dose_unit
            pieces += [(" ", None), (rules.strength_text(dose), "value"), (" ", None), (written_unit or "", "unit")]
            route = "PO" if "oral" in med.name.lower() else ("IV" if "injection" in med.name.lower() else "")
            freq = rules.frequency_text(med)
            pieces += [(f" {part}", None) for part in (route, freq) if part]
        if spec:
            pieces.append((self.time_piece(spec, time_text), None))
        spans = self.note.mention(pieces)
        if not ok and kind is None:
            raise AssertionError(f"uninjected medication is inconsistent: {name} {med}")
        self.gold(type="medication", cls="T1" if dose is not None else "T2", name=name, name_span=spans["name"],
                  value=rules.strength_text(dose) if dose is not None else "", value_span=spans.get("value"),
                  unit=dose_unit or "", label="consistent" if ok else "inconsistent", mismatch=None if ok else kind,
                  time_text=time_text, time_kind=window.kind, code=med.code,
                  truth=f"{med.name} requested {med.time:%Y-%m-%d %H:%M}")
        return True

    def absent_med(self, lead: str = "") -> None:
        """A drug the record never holds."""
        options = [d for d in OTHER_DRUGS if d[0] not in self.used and not rules.drug_in_record(self.record, d[0])]
        if not options:
            return
        name, dose, unit, route = self.rng.choice(options)
        self.used.add(name)
        pieces: list[tuple[str, str | None]] = [(lead, None), (name, "name")]
        with_dose = self.rng.random() < 0.7
        if with_dose:
            pieces += [(" ", None), (rules.strength_text(dose), "value"), (" ", None), (unit, "unit"), (f" {route}", None)]
        spans = self.note.mention(pieces)
        self.gold(type="medication", cls="T1" if with_dose else "T2", name=name, name_span=spans["name"],
                  value=rules.strength_text(dose) if with_dose else "", value_span=spans.get("value"),
                  unit=unit if with_dose else "", label="inconsistent", mismatch="existence",
                  time_kind=self.default.kind, truth=f"no {name} in the record")

    # --- conditions, procedures, immunizations ------------------------------------------------------------

    def event_name(self, ev: Event) -> str | None:
        """How a note names a condition, procedure or vaccine (None: not something a note would name)."""
        low = clean(ev.name)
        if ev.kind == "condition":
            names = CONDITION_NAMES.get(low)
        elif ev.kind == "procedure":
            names = PROCEDURE_NAMES.get(low)
        else:
            names = next((v for k, v in VACCINE_NAMES.items() if low.startswith(k)), None)
        return self.pick(names) if names else None

    def event(self, ev: Event, when: When, spec: tuple | None = None, lead: str = "", tail: str = "",
              shifted_line: bool = False, time_first: bool = False) -> bool:
        """A condition (listed: onset before the window ends), procedure or immunization (in the window)."""
        name = self.event_name(ev)
        if name is None:
            return False
        kind = self.inject(["time"]) if spec and ev.kind != "condition" else None
        if shifted_line:
            kind = "time"
        window, time_text = self.spec_when(spec, "time" if kind == "time" else None) if spec else (when, when.text)
        same = [e for e in self.record.events if e.kind == ev.kind and clean(e.name) == clean(ev.name)]
        if ev.kind == "condition":
            ok = any(e.time <= window.end for e in same)
        else:
            ok = any(window.contains(e.time) for e in same)
        pieces: list[tuple[str, str | None]] = [(lead, None), (name, "name"), (tail, None)]
        if spec and time_first:
            pieces.insert(0, (f"{time_text} ", None))
        elif spec:
            pieces.append((self.time_piece(spec, time_text), None))
        spans = self.note.mention(pieces)
        if not ok and kind is None:
            raise AssertionError(f"uninjected event is inconsistent: {name} {ev}")
        self.gold(type=ev.kind, cls="T2", name=name, name_span=spans["name"], label="consistent" if ok else "inconsistent",
                  mismatch=None if ok else kind, time_text=time_text, time_kind=window.kind, code=ev.code,
                  truth=f"{ev.name} at {ev.time:%Y-%m-%d %H:%M}")
        return True

    def absent_event(self, kind: str, lead: str = "", tail: str = "") -> None:
        """A condition or procedure the record never holds."""
        pool = ABSENT_CONDITIONS if kind == "condition" else ABSENT_PROCEDURES
        check = rules.absent_condition_ok if kind == "condition" else rules.absent_procedure_ok
        options = [names for names in pool if names[0] not in self.used and check(self.record, names[0])]
        if not options:
            return
        names = self.rng.choice(options)
        self.used.add(names[0])
        name = self.pick(names)
        spans = self.note.mention([(lead, None), (name, "name"), (tail, None)])
        self.gold(type=kind, cls="T2", name=name, name_span=spans["name"], label="inconsistent", mismatch="existence",
                  time_kind=self.default.kind, truth=f"no {names[0]} in the record")

    def unverifiable(self, pieces: list[tuple[str, str | None]], etype: str, why: str) -> None:
        """A statement that names an item (and maybe a value) but cannot be checked against the record."""
        spans = self.note.mention(pieces)
        name = next(text for text, role in pieces if role == "name")
        value = next((text for text, role in pieces if role == "value"), "")
        self.gold(type=etype, cls="T1" if value else "T2", name=name, name_span=spans["name"], value=value,
                  value_span=spans.get("value"), label="unverifiable", why=why)
