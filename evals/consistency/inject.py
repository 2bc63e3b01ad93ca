"""What a note's words mean against the record (the labelling semantics), and safe injections.

Every entity is labelled with these rules, implemented here on the raw record (docs/consistency.md states
them for readers):

- a **time expression** denotes a window: a clock time ±15 min; a date that calendar day; "yesterday" /
  "today" that day; "HD #n" the n-th calendar day of the stay; "on admission" the admission time −12 h … +24 h;
  "at discharge" the discharge time −24 h … +12 h; "N days/weeks/months ago" that day ±1 day / ±4 days /
  ±20 days; none → the note's window (discharge summary: the stay ±12 h; admission note: admission −24 h …
  note +12 h; progress, nursing and follow-up notes: the note's day ±1 day).
- a **value** is consistent when a row of the item in the window, expressed in the note's unit, equals it at
  the note's precision (half a unit of the last written digit); ``>60`` means above 60.
- a **unit** written in the note must be the record's unit or convertible to it (lb, in, °F, mEq/L).
- a **medication** in a medication list needs a request authored before the window ends; a medication
  started or given needs one inside the window; a dose must equal the product's strength.
- a **condition** in a history or diagnosis list needs a condition with onset before the window ends.
- a **procedure** or **immunization** needs one inside the window.

An injected change is kept only when the changed statement is inconsistent under these rules (for example
a changed value that some other row in the window happens to hold is not used).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from evals.consistency.record import Encounter, Med, Obs, Record
from evals.consistency.vocab import (
    ABSENT_CONDITION_WORDS,
    ABSENT_OBS_CODES,
    ABSENT_PROCEDURE_WORDS,
    clean,
    drug_words,
)
from evals.consistency.writer import to_note_unit

DAY = timedelta(days=1)
# Every brand a wording table (vocab.py, variant.py, fresh.py) writes, to its generic. A brand missing here made
# ``drug_in_record`` miss the patient's own drug: "Norvasc" was written as a drug "not in the record" for a patient
# on amlodipine. tests/consistency/test_eval_shared.py checks that every brand written is listed.
BRANDS = {"lipitor": "atorvastatin", "crestor": "rosuvastatin", "motrin": "ibuprofen", "aleve": "naproxen",
          "brilinta": "ticagrelor", "effient": "prasugrel", "tylenol": "acetaminophen", "zocor": "simvastatin",
          "lasix": "furosemide", "norvasc": "amlodipine", "lopressor": "metoprolol", "zestril": "lisinopril",
          "glucophage": "metformin", "prilosec": "omeprazole", "pepcid": "famotidine", "singulair": "montelukast",
          "flexeril": "cyclobenzaprine", "ultram": "tramadol", "xanax": "alprazolam", "ativan": "lorazepam",
          "seroquel": "quetiapine", "lamictal": "lamotrigine", "cymbalta": "duloxetine", "levaquin": "levofloxacin",
          "pravachol": "pravastatin", "livalo": "pitavastatin", "norco": "hydrocodone", "toradol": "ketorolac",
          "mobic": "meloxicam", "celebrex": "celecoxib", "omnicef": "cefdinir", "eliquis": "apixaban",
          "xarelto": "rivaroxaban", "januvia": "sitagliptin", "farxiga": "dapagliflozin", "zoloft": "sertraline",
          "lexapro": "escitalopram", "wellbutrin": "bupropion", "neurontin": "gabapentin", "flomax": "tamsulosin",
          "protonix": "pantoprazole", "coreg": "carvedilol", "imdur": "isosorbide", "bactrim ds": "sulfamethoxazole",
          "keflex": "cephalexin", "valtrex": "valacyclovir", "lovenox": "enoxaparin", "dilaudid": "hydromorphone",
          "zofran": "ondansetron", "trulicity": "dulaglutide", "mounjaro": "tirzepatide", "repatha": "evolocumab",
          "aldactone": "spironolactone", "z-pak": "azithromycin", "percocet": "oxycodone", "plavix": "clopidogrel",
          "demerol": "meperidine", "naprosyn": "naproxen", "amoxil": "amoxicillin", "pen-vk": "penicillin",
          "augmentin": "amoxicillin", "toprol xl": "metoprolol", "advil": "ibuprofen", "asa": "aspirin",
          "hctz": "hydrochlorothiazide", "apap": "acetaminophen"}


@dataclass(frozen=True)
class When:
    """A time expression as written and the window it denotes."""

    text: str
    kind: str  # explicit, narrative, default
    start: datetime
    end: datetime

    def contains(self, moment: datetime) -> bool:
        """True when ``moment`` falls in the window."""
        return self.start <= moment <= self.end


def day_of(moment: datetime) -> tuple[datetime, datetime]:
    """Start and end of the calendar day of ``moment``."""
    start = datetime.combine(moment.date(), time.min, tzinfo=moment.tzinfo)
    return start, start + DAY - timedelta(microseconds=1)


def default_when(style: str, note_time: datetime, enc: Encounter) -> When:
    """The note's window when an entity carries no time expression."""
    if style == "discharge":
        return When("", "default", enc.start - timedelta(hours=12), enc.end + timedelta(hours=12))
    if style == "admission":
        return When("", "default", enc.start - DAY, note_time + timedelta(hours=12))
    start, end = day_of(note_time)
    return When("", "default", start - DAY, end + DAY)


def clock_when(text: str, moment: datetime) -> When:
    """A clock time: ±15 minutes."""
    return When(text, "explicit", moment - timedelta(minutes=15), moment + timedelta(minutes=15))


def date_when(text: str, moment: datetime) -> When:
    """A calendar date."""
    return When(text, "explicit", *day_of(moment))


def narrative_when(text: str, kind: str, enc: Encounter, note_time: datetime, n: int = 0) -> When:
    """Narrative expressions: today, yesterday, hd (n), admission, discharge, days/weeks/months ago (n)."""
    if kind == "today":
        return When(text, "narrative", *day_of(note_time))
    if kind == "yesterday":
        return When(text, "narrative", *day_of(note_time - DAY))
    if kind == "hd":
        return When(text, "narrative", *day_of(enc.start + (n - 1) * DAY))
    if kind == "admission":
        return When(text, "narrative", enc.start - timedelta(hours=12), enc.start + DAY)
    if kind == "discharge":
        return When(text, "narrative", enc.end - DAY, enc.end + timedelta(hours=12))
    span = {"days": (1, 1), "weeks": (7, 4), "months": (30.4, 20)}[kind]
    center = note_time - timedelta(days=n * span[0])
    start, end = day_of(center)
    return When(text, "narrative", start - timedelta(days=span[1]), end + timedelta(days=span[1]))


def obs_consistent(record: Record, codes: set[str], value: float, decimals: int, unit: str, when: When,
                   comparator: str = "") -> bool:
    """True when some row of ``codes`` in the window equals ``value`` written in ``unit``."""
    tolerance = 0.5 * 10 ** (-decimals) + 1e-9
    for o in record.obs:
        if o.code not in codes or not when.contains(o.time):
            continue
        converted = to_note_unit(o.value, o.unit, unit)
        if converted is None:
            continue
        if comparator == ">" and converted > value or comparator == "<" and converted < value:
            return True
        if not comparator and abs(converted - value) <= tolerance:
            return True
    return False


def med_key(name: str) -> str:
    """The drug a name stands for, lower case (brands to generics)."""
    low = name.lower()
    return BRANDS.get(low, low)


def drug_in_record(record: Record, name: str) -> bool:
    """True when any request of the record, ever, is for the drug ``name``."""
    key = med_key(name).split()[0].replace("-", " ").split()[0]
    return any(key in m.name.lower() for m in record.meds)


def med_consistent(record: Record, key: str, strength: float | None, unit: str, when: When, listed: bool) -> bool:
    """A request for ``key`` (a DRUG_NAMES key) in the window (listed: authored before it ends)."""
    for m in record.meds:
        k, s, u = drug_words(m.name)
        if k != key:
            continue
        if not (m.time <= when.end if listed else when.contains(m.time)):
            continue
        if strength is None or (s is not None and u == unit and abs(s - strength) < 1e-6):
            return True
    return False


def condition_absent(record: Record, words: tuple[str, ...]) -> bool:
    """True when no condition of the record, ever, has any of ``words`` in its name."""
    return not any(w in clean(e.name) for e in record.events if e.kind == "condition" for w in words)


def procedure_absent(record: Record, words: tuple[str, ...]) -> bool:
    """True when no procedure of the record, ever, has any of ``words`` in its name."""
    return not any(w in e.name.lower() for e in record.events if e.kind == "procedure" for w in words)


def absent_obs_ok(record: Record, key: str) -> bool:
    """True when the record never holds the absent lab ``key``."""
    return not (set(ABSENT_OBS_CODES.get(key, ())) & record.obs_codes())


def absent_condition_ok(record: Record, name: str) -> bool:
    """True when the record never holds the absent condition ``name``."""
    return condition_absent(record, ABSENT_CONDITION_WORDS.get(name, (name.lower(),)))


def absent_procedure_ok(record: Record, name: str) -> bool:
    """True when the record never holds the absent procedure ``name``."""
    return procedure_absent(record, ABSENT_PROCEDURE_WORDS.get(name, (name.lower(),)))


def changed_value(rng: random.Random, record: Record, codes: set[str], truth: float, decimals: int, step: float,
                  unit: str, when: When) -> float | None:
    """A clinically different value that no row in the window holds; None when none is found."""
    for _ in range(8):
        sign = rng.choice((-1, 1))
        new = round(truth + sign * step * rng.uniform(1.0, 2.2), decimals)
        if new <= 0 or abs(new - truth) < 2 * 10 ** (-decimals):
            continue
        if not obs_consistent(record, codes, new, decimals, unit, when):
            return new
    return None


def shifted(rng: random.Random, moment: datetime, by: str) -> datetime:
    """``moment`` moved by an hour or a day, either way."""
    delta = timedelta(hours=1) if by == "hour" else DAY
    return moment + rng.choice((-1, 1)) * delta


def strength_text(value: float) -> str:
    """A strength without a useless ".0"."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def other_strength(rng: random.Random, record: Record, key: str, strength: float) -> float:
    """A strength of the same drug the record never holds."""
    held = {drug_words(m.name)[1] for m in record.meds if drug_words(m.name)[0] == key}
    options = [strength * f for f in (2, 0.5, 4, 1.5, 3) if strength * f not in held]
    return rng.choice(options[:3]) if options else strength * 10


def frequency_text(med: Med) -> str:
    """A request's timing as notes write it (empty when the record has none)."""
    if med.as_needed:
        return "PRN"
    if med.frequency is None or med.period is None:
        return ""
    if med.period_unit == "d" and med.period == 1:
        return {1: "daily", 2: "BID", 3: "TID", 4: "QID"}.get(med.frequency, "")
    if med.period_unit == "h" and med.frequency == 1:
        return f"q{int(med.period)}h"
    return ""


def obs_rows(record: Record, code: str, when: When) -> list[Obs]:
    """Rows of one code inside a window."""
    return [o for o in record.obs if o.code == code and when.contains(o.time)]


def safe_words(text: str) -> str:
    """Collapse whitespace (names go into single-line lists)."""
    return re.sub(r"\s+", " ", text).strip()
