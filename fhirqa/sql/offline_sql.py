"""The offline SQL writer: the FHIR path's parsed question compiled to SQL for the detected schema.

The question is parsed once by the offline parser (:func:`fhirqa.agent.backends.offline.parser.parse`);
its entity is resolved against the patient's own item names with the FHIR path's resolver and lexicon
(codes, abbreviations, brands, drug classes), and every intent becomes the same steps as the FHIR plan
(:mod:`fhirqa.agent.backends.offline.plans`), each one a SQL statement over the schema's domain query:
latest/first value → ``ORDER BY time DESC LIMIT 1``, highest → ``ORDER BY value DESC``, counts →
``count(*)``, windows → ``time BETWEEN``, encounter classes → visit concepts, active lists → end dates
and stop reasons. Calendar arithmetic (ages, "how long since") is done in Python on the rows SQL returned.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.agent.backends.offline.plans import NUMERIC_INTENTS, item_groups
from fhirqa.agent.backends.offline.timephrases import Window
from fhirqa.agent.units import convert, display_unit, unit_key
from fhirqa.sql.reading import ICU_CLASS
from fhirqa.sql.records import Spec, SqlPatient, iso

Final = dict[str, Any]


def final(answer: list[Any], text: str, status: str = "answered", unit: str | None = None) -> Final:
    """The answer of one question: values, text, status and unit."""
    return {"answer": answer, "text": text, "status": status, "unit": unit}


def fmt(value: Any, unit: str | None = None) -> str:
    """A value (and unit) for answer texts."""
    text = f"{value:.4g}" if isinstance(value, float) else str(iso(value))
    return f"{text} {unit}" if unit else text


def day(value: Any) -> str:
    """The date part of a time, for texts."""
    return str(iso(value) or "?")[:10]


@dataclass
class Found:
    """The rows a question's entity resolved to in one view (or why it did not)."""

    spec: Spec
    count: int = 0
    items: list[str] = field(default_factory=list)
    how: str = ""
    ambiguous: bool = False
    candidates: list[str] = field(default_factory=list)

    @property
    def fuzzy(self) -> bool:
        """Matched by spelling only."""
        return self.how.startswith("fuzzy")


class Compiler:
    """Answers one parsed question with SQL over one patient's rows (see the module docstring)."""

    def __init__(self, pq: ParsedQuestion, data: SqlPatient) -> None:
        self.pq, self.data = pq, data
        self.notes: list[str] = []

    # -- locating records (plans.find_records / scoped) --------------------------------------------------
    def lookup(self, view: str, entity: str | None, kind: str | None = None, numeric: bool | None = None,
               category: str | None = None, among_kind: bool = False) -> Found:
        """``get_resources(view, item=entity, kind=…, numeric=…, category=…)`` as SQL (each filter where it applies);
        ``among_kind``: the entity is resolved among the names of that kind only (administrations, not orders)."""
        spec = Spec(view, kind=kind if view == "medication" else None, numeric=bool(numeric) and view == "observation",
                    category=category if view == "observation" else None)
        if not entity:
            return Found(spec, self.data.count(spec))
        resolution = self.data.resolve(view, entity, kind=spec.kind if among_kind else None)
        if resolution.ambiguous:
            return Found(spec, 0, how=resolution.how, ambiguous=True,
                         candidates=(resolution.candidates or resolution.matched)[:20])
        spec = spec.narrowed(names=tuple(resolution.matched))
        count = self.data.count(spec) if resolution.matched else 0
        return Found(spec, count, list(resolution.matched), resolution.how, candidates=list(resolution.candidates))

    def find(self, views: list[str] | None = None, entity: str | None = None, kind: str | None = None,
             numeric: bool | None = None, category: str | None = None, among_kind: bool = False) -> Found | None:
        """The first view in which the entity resolves to rows (spelling-level matches only as a fallback)."""
        entity = self.pq.entity if entity is None else entity
        fallback: Found | None = None
        candidates: list[str] = []
        for view in views or self.pq.views:
            found = self.lookup(view, entity, kind, numeric, category, among_kind)
            if found.ambiguous and not found.fuzzy:
                return found
            if found.count and not found.fuzzy:
                return found
            hinted = view in self.pq.hinted or not self.pq.hinted
            if found.fuzzy and fallback is None and hinted and (found.count or found.ambiguous):
                fallback = found
            candidates.extend(c for c in found.candidates if c not in candidates)
        if fallback is not None:
            return fallback
        self.notes.append("; ".join(candidates[:5]))
        return None

    def window(self, spec: Spec) -> Spec:
        """The question's window on ``spec`` (none for an anchored window)."""
        w = self.pq.window
        if w is None or w.anchor:
            return spec
        return spec.narrowed(start=w.start, end=w.end)

    def encounters(self) -> Found | None:
        """Encounters of the question's class, or None when it names none."""
        if not self.pq.encounter_class:
            return None
        if self.pq.encounter_class == ICU_CLASS:  # ICU stays are their own rows (MIMIC ICUSTAYS, OMOP visit_detail)
            icu = Spec("icu_stay")
            return Found(icu, self.data.count(icu))
        if self.pq.entity:
            typed = self.find(["encounter"])
            if typed is not None:
                return typed
            self.pq.entity = ""
        spec = Spec("encounter", cls=self.pq.encounter_class)
        return Found(spec, self.data.count(spec))

    def pointed_views(self) -> list[str]:
        """Views the question's words, the lexicon or a medication verb ("given", "prescribed") point at."""
        pq = self.pq
        pointed = [v for v in pq.views if v in pq.hinted or v in pq.lexicon_views]
        return pointed + (["medication"] if pq.med_kind and "medication" not in pointed else [])

    def reading_views(self) -> list[str] | None:
        """Where a value question (latest, highest, average, trend, threshold…) looks: results (the measurement
        domain: ``observation``) first; a drug only when the question or the lexicon says it is one ("last metformin
        dose"), never because a drug's name contains the word ("magnesium" ≠ "Magnesium Sulfate 50 mL Bag"); other
        kinds (a procedure's date) when the question points at them or the vocabulary (CONCEPT) files the name there.
        None for the other intents (every view, in the parser's order)."""
        pq = self.pq
        if pq.intent not in NUMERIC_INTENTS:
            return None
        pointed = self.pointed_views()
        placed = self.data.concept_views(pq.entity) if pq.entity else ()
        return [v for v in pq.views if v == "observation" or v in pointed
                or (v in placed and v != "medication")] or ["observation"]

    def scoped(self, what: str) -> Spec | Final:
        """Rows for the entity within the window, or the final answer saying why there are none."""
        numeric = self.pq.intent in NUMERIC_INTENTS
        found = self.encounters() or self.find(self.reading_views(), numeric=numeric or None,
                                               category=self.pq.category if not self.pq.entity else None)
        if found is None:
            return self.no_match(what)
        if found.ambiguous:
            return self.ambiguous(found)
        if not found.count:
            return final([], f"The record has no {self.class_label()} encounters.", status="no-data")
        spec = found.spec
        windowed = self.window(spec)
        if windowed != spec and not self.data.count(windowed):
            label = self.pq.window.label if self.pq.window else ""
            return final([], f"No {what} {label}.", status="no-data")
        self.found = found
        return windowed

    def no_match(self, what: str) -> Final:
        """No item matches: say so, with the nearest names the record holds."""
        near = next((n for n in reversed(self.notes) if n), "")
        hint = f" The closest items in the record are: {near}." if near else ""
        return final([], f"The record holds no {what}.{hint}", status="no-data")

    def ambiguous(self, found: Found) -> Final:
        """The phrase could mean several items."""
        return final(found.candidates, f"'{self.pq.entity}' could mean several items: {'; '.join(found.candidates)}. "
                     "Please say which one.", status="ambiguous")

    def class_label(self) -> str:
        """Readable encounter class."""
        return {"ICU": "ICU", "IMP": "inpatient", "EMER": "emergency", "AMB": "ambulatory", "VR": "virtual", "HH": "home health",
                "WELLNESS": "wellness"}.get(self.pq.encounter_class or "", "matching")

    def entity_label(self) -> str:
        """The entity as written, for texts."""
        return self.pq.entity or "matching records"

    def value_of(self, row: dict[str, Any]) -> tuple[Any, str | None]:
        """The value a row answers with (the number, else its text; a prescription's dose, else its name)."""
        if row.get("value") is not None:
            self.data.cite(row)
            return row["value"], row.get("unit")
        if row.get("dose") is not None:
            self.data.cite(row)
            return row["dose"], row.get("dose_unit")
        if row.get("value_text") is not None:
            self.data.cite(row)
            return row["value_text"], None
        self.data.cite(row, "name")
        return row.get("name"), None

    # -- numeric intents ---------------------------------------------------------------------------------
    def value(self) -> Final:
        """Latest / first value; several analytes (systolic, diastolic) each answered."""
        got = self.scoped(f"{self.entity_label()} results")
        if not isinstance(got, Spec):
            return got
        how = self.found.how
        one_concept = how.startswith("lexicon") and "components" not in how
        groups = [self.found.items] if one_concept or not self.found.items else item_groups(self.found.items)
        if one_concept and len(self.found.items) > 1:
            groups = self.component_groups(self.found.items) or groups
        if not self.pq.entity and got.view == "observation":
            # "labs before the MI", "latest labs": a kind of result, no item named: each test's value in the window,
            # as the FHIR plan answers it (every analyte, names of one analyte together)
            groups = item_groups([name for name, _ in self.data.distinct_names(got)]) or groups
        index = 0 if self.pq.position == "first" else -1
        answers, parts, unit = [], [], None
        for group in groups:
            spec = got if len(groups) == 1 else self.window(Spec(got.view, names=tuple(group), kind=got.kind))
            row = self.data.at(spec, index)
            if row is None:
                continue
            value, unit = self.value_of(row)
            answers.append(value)
            parts.append(f"{row.get('name') or self.pq.entity}: {fmt(value, unit)} on {day(row.get('time'))}")
        word = "first" if index == 0 else "most recent"
        return final(answers, f"The {word} {'; '.join(parts)}.", unit=unit if len(answers) == 1 else None)

    def component_groups(self, items: list[str]) -> list[list[str]] | None:
        """Items a panel's concept reached by its component codes, one group per component ("BP" in MIMIC: the
        systolic and the diastolic chart items, each answered), or None when the concept has no components or some
        item carries none of their codes."""
        from fhirqa.agent.backends.offline.parser import _lexicon

        lexicon = _lexicon()
        if lexicon is None or not self.pq.entity:
            return None
        codes_of = self.data.items(self.found.spec.view)[1]
        for expansion in lexicon.expand(self.pq.entity):
            components = expansion.detail.get("components") or []
            groups = []
            for component in components:
                wanted = {code for e in lexicon.expand(component) for code in e.codes}
                group = [n for n in items if codes_of.get(n, set()) & wanted]
                if group:
                    groups.append(group)
            if len(groups) > 1 and sorted(n for g in groups for n in g) == sorted(items):
                return groups
        return None

    def aggregate(self) -> Final:
        """Mean / median / sum, or max / min with the row it came from."""
        got = self.scoped(f"{self.entity_label()} results")
        if not isinstance(got, Spec):
            return got
        w = self.pq.window
        if self.pq.aggregate == "sum" and got.view == "medication" and w is not None and w.start and w.end \
                and (w.end - w.start).total_seconds() <= 86_400:
            # "heparin total on 11/1?": a drug's total over one day is the day's administrations (else its order)
            from fhirqa.sql.offline_intents import daily_dose

            return daily_dose(self)
        # a panel's components are different quantities: one statistic each, never one over the mixture
        return self.per_part(got, lambda spec, group: self._aggregate(spec, group))

    def per_part(self, got: Spec, answer: Callable[[Spec, list[str]], Final]) -> Final:
        """``answer`` for each part of a panel the item reached (systolic and diastolic for "BP": MIMIC's NBP and
        arterial chart items, OMOP's SBP and DBP measurements), joined as the FHIR plans join them
        (``plans.analyte_handles``: one result per analyte, in the panel's order); for one analyte, its answer."""
        groups = self.component_groups(self.found.items) if len(self.found.items) > 1 else None
        if not groups:
            return answer(got, self.found.items)
        parts = [answer(got.narrowed(names=tuple(group)), group) for group in groups]
        answered = [p for p in parts if p["status"] == "answered"]
        if not answered:
            return parts[0]
        units = {p.get("unit") for p in answered}
        return final([a for p in answered for a in p["answer"]], " ".join(p["text"] for p in answered),
                     unit=units.pop() if len(units) == 1 else None)

    def _aggregate(self, got: Spec, items: list[str]) -> Final:
        window = f" {self.pq.window.label}" if self.pq.window else ""
        if self.pq.aggregate in ("max", "min"):
            row = self.data.extreme(got, self.pq.aggregate)
            if row is None:
                return final([], f"No {self.pq.entity} values{window}.", status="no-data")
            value, unit = self.value_of(row)
            word = "highest" if self.pq.aggregate == "max" else "lowest"
            return final([value], f"The {word} {row.get('name')}{window} was {fmt(value, unit)} on {day(row.get('time'))}.",
                         unit=unit)
        if self.pq.aggregate == "range":
            return self._range(got, window)
        rows = self.data.select(got, extra="r.value IS NOT NULL", order="r.time ASC, r.row_id ASC")
        if not rows:
            return final([], f"No {self.pq.entity} values{window}.", status="no-data")
        for row in rows:
            self.data.cite(row)
        values = [float(r["value"]) for r in rows]
        op = self.pq.aggregate or "mean"
        result = statistics.median(values) if op == "median" else sum(values) if op == "sum" else statistics.fmean(values)
        units = list(dict.fromkeys(r["unit"] for r in rows if r.get("unit") is not None))
        unit = units[0] if len(units) == 1 else None
        word = {"mean": "average", "median": "median", "sum": "total"}.get(op, op)
        return final([result], f"The {word} {', '.join(items or [self.pq.entity])}{window} was "
                     f"{fmt(result, unit)} over {len(values)} values.", unit=unit)

    def _range(self, got: Spec, window: str) -> Final:
        """The lowest and the highest value, each with its day ("BP range this year"), as the FHIR plan says it."""
        low, high = self.data.extreme(got, "min"), self.data.extreme(got, "max")
        if low is None or high is None:
            return final([], f"No numeric {self.entity_label()} values{window}.", status="no-data")
        (lo, unit), (hi, _) = self.value_of(low), self.value_of(high)
        name = high.get("name") or self.pq.entity
        if (low.get("tbl"), low.get("row_id")) == (high.get("tbl"), high.get("row_id")):
            return final([lo], f"Only one {name} value{window}: {fmt(hi, unit)} on {day(high.get('time'))}.", unit=unit)
        n = self.data.count(got, extra="r.value IS NOT NULL")
        return final([lo, hi], f"{name}{window} ranged from {fmt(lo, unit)} on {day(low.get('time'))} to "
                     f"{fmt(hi, unit)} on {day(high.get('time'))} ({n} values).", unit=unit)

    def threshold(self) -> Final:
        """Ever above / below a value (within the window)?"""
        cmp = self.pq.comparison
        assert cmp is not None
        got = self.scoped(f"{self.entity_label()} results")
        if not isinstance(got, Spec):
            return got
        op = cmp.op if cmp.op != "==" else "="
        limit, said = float(cmp.value), fmt(cmp.value)
        latest = self.data.at(got, -1) if cmp.unit else None
        record_unit = latest.get("unit") if latest else None
        if cmp.unit and record_unit and unit_key(cmp.unit) != unit_key(record_unit):
            # "creatinine > 100 umol/L" of values in mg/dL: the limit in the record's unit, or no comparison at all
            converted = next((c for name in (self.pq.entity, str((latest or {}).get("name") or "")) if
                              (c := convert(limit, cmp.unit, record_unit, name or "")) is not None), None)
            if converted is None:
                return final([], f"The record gives {self.entity_label()} in {record_unit}, which "
                             f"{display_unit(cmp.unit)} does not convert to.", status="no-data")
            limit, said = converted, f"{fmt(cmp.value)} {display_unit(cmp.unit)} = {fmt(converted, record_unit)}"
        hits = self.data.count(got, extra=f"r.value IS NOT NULL AND r.value {op} :limit", params={"limit": limit})
        mode = "max" if cmp.op.startswith(">") else "min"
        row = self.data.extreme(got, mode)
        window = f" {self.pq.window.label}" if self.pq.window else ""
        if row is None:
            return final([False], f"No: no {self.pq.entity} values{window}.")
        value, unit = self.value_of(row)
        if hits:
            return final([True], f"Yes: {hits} value(s) {cmp.op} {said}{window}; the extreme was "
                         f"{fmt(value, unit)} on {day(row.get('time'))}.")
        return final([False], f"No: none {cmp.op} {said}{window}; the {'highest' if mode == 'max' else 'lowest'} "
                     f"was {fmt(value, unit)} on {day(row.get('time'))}.")

    def first_last(self, got: Spec) -> tuple[dict[str, Any], dict[str, Any]] | Final:
        """The first and last row of ``got`` (two different ones), or the final answer saying why not."""
        first, last = self.data.at(got, 0), self.data.at(got, -1)
        if first is None or last is None:
            return final([], f"No dated {self.pq.entity} values.", status="no-data")
        if first.get("row_id") == last.get("row_id") and first.get("tbl") == last.get("tbl"):
            value, unit = self.value_of(first)
            return final([], f"Only one {self.pq.entity} value ({fmt(value, unit)} on {day(first.get('time'))}); "
                         "a change needs two.", status="no-data")
        return first, last

    def change(self) -> Final:
        """Last minus first value within the window, per analyte (systolic and diastolic each)."""
        got = self.scoped(f"{self.entity_label()} results")
        if not isinstance(got, Spec):
            return got
        return self.per_part(got, lambda spec, _: self._change(spec))

    def _change(self, spec: Spec) -> Final:
        got = self.first_last(spec)
        if isinstance(got, dict):
            return got
        first, last = got
        (a, unit), (b, _) = self.value_of(last), self.value_of(first)
        difference: float | int = round(float(a) - float(b), 10)
        if float(difference).is_integer() and abs(difference) < 1e15:
            difference = int(difference)
        return final([difference], f"{last.get('name')} went from {fmt(b, unit)} on {day(first.get('time'))} to "
                     f"{fmt(a, unit)} on {day(last.get('time'))}: a change of {fmt(difference, unit)}.", unit=unit)

    def trend(self) -> Final:
        """Increasing / decreasing / stable by the relative change from first to last value, per analyte ("BP
        trend": the systolic and the diastolic trend, never the first systolic against the last diastolic)."""
        got = self.scoped(f"{self.entity_label()} results")
        if not isinstance(got, Spec):
            return got
        return self.per_part(got, lambda spec, _: self._trend(spec))

    def _trend(self, spec: Spec) -> Final:
        from fhirqa.agent.backends.offline.plans import TREND_THRESHOLD

        got = self.first_last(spec)
        if isinstance(got, dict):
            return got
        first, last = got
        (a, unit), (b, _) = self.value_of(last), self.value_of(first)
        relative = (float(a) - float(b)) / abs(float(b)) if b else 0.0
        trend = "increasing" if relative > TREND_THRESHOLD else "decreasing" if relative < -TREND_THRESHOLD else "stable"
        return final([trend], f"{trend.capitalize()}: {last.get('name')} went from {fmt(b, unit)} on {day(first.get('time'))} "
                     f"to {fmt(a, unit)} on {day(last.get('time'))} ({relative:+.0%}).")


def parse_question(question: str, now: datetime, names: tuple[str, ...] = ()) -> ParsedQuestion:
    """The offline parser's reading of ``question``, adjusted for relational EHRs by :mod:`fhirqa.sql.reading` (ICU
    stays, "last HR", "X given?"). Years of any century are read where the words say they are years ("visits during
    2157" in a date-shifted MIMIC database), by the parser's own time phrases."""
    from fhirqa.sql.reading import read_question

    return read_question(question, now, names=names)


def resolve_stay(data: SqlPatient, window: Window) -> Window | None:
    """An anchored window ("this admission", "on admission", "during the ICU stay") as the dates of the stay it means:
    the patient's latest hospital stay (an inpatient or emergency encounter: MIMIC ``ADMITTIME``–``DISCHTIME``, from
    ``EDREGTIME`` when the stay came through the ED first) or
    latest ICU stay (MIMIC ``ICUSTAYS`` ``INTIME``–``OUTTIME``; OMOP ICU ``visit_detail``) begun by ``now``; one still
    open at ``now`` comes first and ends at ``now``, as on the FHIR path. None when the record has no such stay."""
    from fhirqa.agent.backends.offline.plans import STAY_CLASSES
    from fhirqa.sql.reading import ICU_ANCHOR

    if window.anchor == ICU_ANCHOR:
        spec, extra, params = Spec("icu_stay"), "r.time IS NOT NULL", {}
    else:
        keys = {f"c{i}": c for i, c in enumerate(STAY_CLASSES)}
        listed = ", ".join(":" + k for k in keys)
        spec, extra, params = Spec("encounter"), f"r.time IS NOT NULL AND (r.class_code IN ({listed}) OR r.alt_class IN ({listed}))", keys
    rows = data.select(spec, order="r.time DESC, r.row_id DESC", extra=extra, params=params)
    if not rows:
        return None
    ongoing = [r for r in rows if r.get("end_time") is None or r["end_time"] >= data.now]
    row = (ongoing or rows)[0]
    data.cite(row, "time")
    start, end = row.get("arrival") or row["time"], row.get("end_time")
    end = data.now if end is None or end >= data.now else end
    return Window(start, end, f"{window.label} ({start.date()})")


def _encounter_class_named(pq: ParsedQuestion) -> str | None:
    """The encounter class an item phrase names when it is an encounter word of the lexicon, or begins the
    words of encounter words of one class only ("admit" begins "admitted": inpatient), as drug names cut
    short are read. Punctuation left in the phrase ("admit -") is not a word."""
    from fhirqa.agent.backends.offline.parser import _lexicon

    words = [w for w in pq.entity.split() if re.search(r"[a-z0-9]", w, re.I)]
    lexicon = _lexicon()
    if lexicon is None or not words:
        return None
    phrase = " ".join(words)
    named = lexicon.encounter_class(phrase)
    if named or len(words) > 1 or len(phrase) < 4 or not phrase.isalpha():
        return named
    classes = {lexicon.encounter_class(term) for term in lexicon.terms()
               if any(w.startswith(phrase) for w in term.split()) and lexicon.encounter_class(term)}
    return classes.pop() if len(classes) == 1 else None


def compile_and_answer(pq: ParsedQuestion, data: SqlPatient, person: Any = None) -> Final:
    """Answer ``pq`` over ``data`` (``person``: the patient's demographics, for age and demographic questions)."""
    from fhirqa.agent.backends.offline.clinical_state_plan import state_asked
    from fhirqa.agent.backends.offline.summary_plan import named_group
    from fhirqa.sql import frames
    from fhirqa.sql.offline_intents import encounter_diagnoses
    from fhirqa.sql.reading import STAY_ANCHORS, diagnosis_question

    state = state_asked(pq)  # "is she febrile?" is one state, before "febrile and tachycardic" is two items
    group = named_group(pq) if state is None else None
    if group is not None:  # "vitals before the MI", "latest vitals": the group of results is the item, as on the FHIR path
        pq.entity = group
    if state is None:
        listed = frames.checklist(pq, data, lambda part: compile_and_answer(part, data, person))
        if listed is not None:  # "pre-op check: any anticoagulants, last K and Cr?": each question asked alone
            return listed
        several = frames.several_items(pq, data, lambda part: compile_and_answer(part, data, person))
        if several is not None:  # "last K and Mg?": each item asked, the answers joined
            return several
    compiler = Compiler(pq, data)
    compiler.person = person  # type: ignore[attr-defined]
    _encounter_word_as_window(compiler)
    asked = diagnosis_question(pq)
    if asked is not None:
        return encounter_diagnoses(compiler, *asked)
    field = frames.stay_field_frame(pq, data, person)  # "reason for admission": the stay's own row, not a window
    if field is not None:
        return field
    if pq.stay_event and not pq.entity:  # "LOS of the last admission?", "last d/c date?": the stay's own dates
        from fhirqa.sql.stays import stay_event

        return stay_event(compiler)
    if pq.window is not None and pq.window.anchor in STAY_ANCHORS and pq.intent not in ("age", "demographic"):
        stay = resolve_stay(data, pq.window)
        if stay is None:
            kind = "ICU stay" if pq.window.anchor == "icu_stay" else "inpatient or emergency encounter"
            return final([], f"The record has no {kind} to anchor '{pq.window.label}' to.", status="no-data")
        pq.window = stay
    missing, placed = frames.place_event(pq, data, person)  # "aspirin after the stroke": the stroke's onset starts it
    if missing is not None:
        return {**missing, "tables_only": True}  # no note read over all time either
    result = _answer_placed(compiler, state, data, person)
    if state is not None:  # a state is read from measurements in its window: a note's "fever" of last year is none
        result["tables_only"] = True
    if placed and result.get("text"):  # the answer says which event (and date) its window hangs on
        result["text"] = f"{result['text']}{placed}"
    return result


def _answer_placed(compiler: Compiler, state: dict[str, Any] | None, data: SqlPatient, person: Any) -> Final:
    """The question once its window is placed: a clinical state, a medication frame or the parsed intent."""
    from fhirqa.sql import frames
    from fhirqa.sql.offline_intents import INTENTS

    pq = compiler.pq
    if state is not None:
        return frames.clinical_state(pq, data, state, lambda asked: _compiler(asked, data, person))
    happened = frames.events_frame(pq, data, person)  # "o/n events", "any PRNs overnight?": the window's events
    if happened is not None:
        return happened
    values = frames.result_frame(pq, data, person)  # "is his K normal?", "list his potassiums": a result's values
    if values is not None:
        return values
    over_time = frames.medication_frame(pq, data, person)  # med changes, days of therapy: the orders over time
    if over_time is not None:
        return over_time
    asked = frames.clinician_frame(pq, data, person)  # a drug's amount or regimen, a result's direction now
    if asked is not None:
        return asked
    if not pq.encounter_class and pq.entity and pq.intent not in ("after_drug", "daily_dose", "active_list", "active_check"):
        named = _encounter_class_named(pq)
        items = [v for v in pq.views if v != "encounter"]
        if named and not any((f := compiler.lookup(v, pq.entity)).count and not f.fuzzy for v in items):
            pq.encounter_class, pq.entity = named, ""
            pq.views = ["encounter"] + [v for v in pq.views if v != "encounter"]
    from fhirqa.sql import medication_fields

    drug = medication_fields.route_asked(compiler)
    if drug is not None:  # "route of the pantoprazole?": the latest order's route
        return medication_fields.drug_route(compiler, drug)
    members = medication_fields.class_in_window(compiler)  # "abx this admission?": the members ordered in the stay
    if members is not None:
        return members
    from fhirqa.sql.allergies import allergy_question

    if allergy_question(pq):  # "NKDA?", "allergic to PCN?": the allergy list, whichever words ask for it
        from fhirqa.sql.allergies import answer

        return answer(compiler)
    handler = INTENTS.get(pq.intent, INTENTS["value"])
    return handler(compiler)


def _compiler(pq: ParsedQuestion, data: SqlPatient, person: Any) -> Compiler:
    """A compiler for ``pq`` with the patient's demographics."""
    compiler = Compiler(pq, data)
    compiler.person = person  # type: ignore[attr-defined]
    return compiler


def _encounter_word_as_window(c: Compiler) -> None:
    """"admission creatinine this admit?": a value question whose item is one of the patient's results, with an
    encounter word beside it, asks for the result in that stay, not for the admission: the encounter class is
    dropped (the parser's stay window, if any, stays)."""
    from fhirqa.agent.backends.offline.plans import STAY_CLASSES

    pq = c.pq
    if pq.encounter_class not in STAY_CLASSES or not pq.entity or pq.intent not in NUMERIC_INTENTS \
            or "observation" not in c.data.views:
        return
    result = c.lookup("observation", pq.entity)
    if not result.count or result.fuzzy or result.ambiguous:
        return
    if c.lookup("encounter", pq.entity).count:
        return
    pq.encounter_class = None
    pq.views = [v for v in pq.views if v != "encounter"] + ["encounter"]
    _admission_word_window(pq)


def _admission_word_window(pq: ParsedQuestion) -> None:
    """The stay an admission word beside a result means ("K on admit?", "admission WBC"), when the parser read no
    window: the last hospital stay, its first value when the word comes before the item or follows on/at/upon."""
    if pq.window is not None:
        return
    from fhirqa.sql.reading import tokens

    text = " ".join(tokens(pq.text))
    word = re.search(r"\b(?:(on|at|upon)\s+)?admi(?:t|ts|tted|ssion|ssions)\b", text)
    if word is None:
        return
    pq.window = Window(None, None, "this admission", anchor="admission")
    entity = tokens(pq.entity)
    where = text.find(entity[0]) if entity else -1
    if word.group(1) or (where >= 0 and word.start() < where):
        pq.position = "first"
