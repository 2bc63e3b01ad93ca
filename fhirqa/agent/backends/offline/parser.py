"""A question parser for the offline backend: intent, entity, window, comparison, aggregation.

General by construction: it recognises the *kinds* of phrase clinicians use (cue words for intents,
time phrases, comparisons, perspectives) and leaves whatever remains as the entity, which the
concept resolver then matches against the patient's own item names. Nothing here knows any
particular lab, drug or test question.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.event_window_plan import condition_event
from fhirqa.agent.backends.offline.timephrases import (
    DATE,
    Anchor,
    Window,
    anchor_words,
    find_window,
    parse_date,
)


def _load_view_cues() -> list[tuple[str, str]]:
    """``lexicon/view_cues.json``: the words that point a question at each view, in the order they are tried."""
    from fhirqa.project import data_dir

    data = json.loads((data_dir("lexicon") / "view_cues.json").read_text("utf-8"))
    return [(str(cue["view"]), str(cue["pattern"])) for cue in data["cues"]]


_VIEW_CUES: list[tuple[str, str]] = _load_view_cues()
_VIEW_CUES_BY_NAME = dict(_VIEW_CUES)
DEFAULT_VIEW_ORDER = ["observation", "medication", "condition", "procedure", "immunization", "encounter", "allergy"]

_OPS = [
    (r"(?:greater than or equal to|at least|no less than|>=|≥|or more|or higher|or above)", ">="),
    (r"(?:less than or equal to|at most|no more than|<=|≤|or less|or lower|or below)", "<="),
    (r"(?:above|over|greater than|more than|higher than|exceed(?:ed|s|ing)?|>|in excess of|elevated above|go(?:ne)? above|went above|rose above)", ">"),
    (r"(?:below|under|less than|lower than|<|f[ae]ll below|drop(?:ped)? below|go(?:ne)? below|went below|dip(?:ped)? below)", "<"),
    (r"(?:equal to|exactly|=)", "=="),
]
_NUMBER = r"(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)"  # 15,000 is fifteen thousand
# temperature units too ("temp > 101.5 °F" against values charted in °C: the threshold plan converts)
# A lab unit is read whole ("100 umol/l", "5.5 meq/l"), never as its first letters: a limit whose unit is dropped
# would be compared with values in another unit.
_LAB_UNIT = r"(?:mc|[mnpµuk])?(?:mol|g|eq|iu|u)/[dmµu]?l\b"  # a concentration; "2 g/day" stays a dose a day
_UNIT_AFTER = (rf"\s*({_LAB_UNIT}|%|mg|g|mcg|kg|lbs?|cm|mmhg|mm\[hg\]|bpm|/min|meq|units?|"
               r"°f|°c|degrees? f(?:ahrenheit)?\b|degrees? c(?:elsius)?\b|deg ?f\b|deg ?c\b|fahrenheit|celsius|f\b|c\b)?")

# Kinds of record a count counts ("total Rx", "total flu vaccines", "total ER visits"): "total" before one of
# these asks how many, not for a sum of values.
_RECORD_NOUNS = (r"(?:prescriptions|rxs?|rxes|scripts|meds|medications|orders|vaccines|vaccinations|immunizations|shots|"
                 r"boosters|visits|encounters|admissions|hospitali[sz]ations|stays|appointments|procedures|surgeries|"
                 r"operations|measurements|readings|results|values|labs|tests|times|records|entries|refills|fills|"
                 r"diagnoses|conditions|problems|allergies|doses)")
_COUNT_FRAME = re.compile(rf"\btotal\b(?:\s+(?:number|no\.?|count|#)\s+of)?(?:\s+[\w\-/.]+){{0,4}}?\s+{_RECORD_NOUNS}(?!\w)")

# "… on her history", "… in his hx", "… on the chart": where the question looks, not what it names.
_ON_FILE = re.compile(r"\b(?:on|in)\s+(?:(?:her|his|their|my|the|this|your)\s+)?(?:(?:patient|pt)'?s?\s+)?"
                      r"(?:(?:past\s+)?(?:medical\s+)?history|hx|pmh|chart|record|file)\s*$")

# Words that ask for a value, a date or a list rather than yes/no ("earliest DBP on file").
_VALUE_CUES = (r"\b(?:what|which|when|how|value|values|result|results|reading|level|list|date|dose|number|count|total|"
               r"first|initial|earliest|baseline|oldest|last|latest|most recent|newest|recent|current|highest|lowest|"
               r"max\w*|min\w*|peak|average|mean|avg)\b")

_PERSPECTIVE = (r"(?<![\w/-])(?:my|mine|i|me|her|his|him|their|them|she|he|they|the patient'?s?|this patient'?s?|patient'?s?|pt'?s?|"
                r"the pt)(?![\w/-])")  # "ACE-I" keeps its I, "I/O" too

# Words that carry intent or grammar, never the clinical entity.
_STOP = set(
    """
    we our what whats what's which who whom whose when where why how how's hows is was were are be been being am do does did done has have had
    having ever any anything some the a an of for in on at to from by with within during over since until till through
    and or than then that this these those there it its value values level levels result results reading readings number
    numbers count counts times time many much often frequently total sum average mean avg median highest lowest maximum
    minimum max min peak nadir largest smallest first last latest most recent current currently initial earliest
    baseline newest oldest previous prior date dates day days week weeks month months year years ago long since
    tell show give list me please patient patients pt recorded record records measured measurement measurements
    test tests tested checked check taken take taking took get got gets getting gotten prescribed prescription prescriptions given
    received diagnosed diagnosis diagnoses condition conditions problem problems history hx documented chart
    charted noted medication medications meds med drug drugs medicine medicines active ongoing status value
    change changed changes difference differ delta trend trending increase increased increasing decrease decreased
    decreasing go went gone up down rise rose fall fell improve improved improving worse worsen worsening better
    ever anytime point all there lab labs vital vitals compared between across overall still now so far yet
    visit visits encounter encounters admission admissions procedure procedures vaccine vaccines immunization
    immunizations shot shots performed underwent undergone started start starting began begin initiated put
    daily dose doses dosage per each a day/ done had having been new kind type types was
    pls plz please thx thanks thank kindly asap quickly quick briefly checks draws drawn
    healthcare health-care medical orders order ordered written file on-file documented any kind sort
    still anymore presently present also again ago last-known known age averaged calendar readings
    reporting report reported complain complained complaining complaints feel feeling felt symptom symptoms
    mention mentioned notes note documented document documents documenting
    reading checked labs can could you pull show tell get find give see look need want know
    allergy allergies allergic intolerance intolerances reaction reactions
    mr mrs ms miss dr full whole passed elapsed very carry carries carried done have has holding steady flat
    single one largest peak given administered received doses dose versus vs reads read shows says showed
    admin admins administration administrations sig sigs
    heaviest busiest receive receives move moved moves shift shifted
    trip trips went go going visit visits seen drop dropped dip dipped rise rose fall fell climb climbed
    rx rxs rxes yr yrs mos wk wks net
    """.split()
)


@dataclass
class Comparison:
    """A threshold in the question: ``op`` (>, >=, <, <=, ==) and the number, with its unit if written."""

    op: str
    value: float
    unit: str | None = None


@dataclass
class ParsedQuestion:
    """What the offline backend understood; every field is visible in the answer's trace."""

    text: str
    now: datetime | None = None
    intent: str = "value"
    position: str = "last"  # first | last (value, time_of, after_drug)
    aggregate: str | None = None  # mean | max | min | median | sum | range (min and max)
    entity: str = ""
    views: list[str] = field(default_factory=list)  # views to try, in order
    hinted: list[str] = field(default_factory=list)  # views the question's own words point at
    lexicon_views: list[str] = field(default_factory=list)  # views the lexicon places the entity in
    window: Window | None = None
    comparison: Comparison | None = None
    encounter_class: str | None = None
    drug: str | None = None  # after_drug: the drug whose start anchors the window
    at_time: datetime | None = None  # active_list at a date
    time_unit: str = "days"
    demographic: str | None = None  # birth_date | gender | name | deceased, or a field of lexicon/demographics.json
    lookup_name: str | None = None
    lookup_birth: str | None = None
    list_kind: str | None = None  # conditions | medications | allergies | immunizations …
    category: str | None = None  # "bloodwork", "labs": any laboratory result
    yes_no: bool = False  # asked as a yes/no question ("is she…", "could you check whether…")
    med_kind: str | None = None  # "administration" (given, doses received) or "request" (prescribed, ordered)
    unit: str | None = None  # the unit the answer is asked in ("in grams")
    unit_asked: bool = False  # the unit itself is the answer ("K units?", "in what units is Hgb reported")
    kind_cued: bool = True  # active_check: the words named the kind (problem, taking, allergic); else views decide
    stay_event: str | None = None  # "discharge" (a stay's end), "length" (its length of stay), "hospital_day" (its day number)
    around_drug: bool = False  # change: last value before the drug's first start → first value after it
    asks_resolved: bool = False  # active_check asked the other way round: "is her prediabetes resolved?"
    list_category: str | None = None  # active_list "absent": the category asked to be absent (NKDA: medication)
    notes: list[str] = field(default_factory=list)

    def to_trace(self) -> dict:
        """A JSON-ready summary for the answer's trace."""
        return {
            "intent": self.intent, "position": self.position, "aggregate": self.aggregate, "entity": self.entity,
            "views": self.views, "window": self.window.label if self.window else None,
            "comparison": (self.comparison.op, self.comparison.value, self.comparison.unit) if self.comparison else None,
            "encounter_class": self.encounter_class, "drug": self.drug,
            "at_time": self.at_time.isoformat() if self.at_time else None, "time_unit": self.time_unit,
            "demographic": self.demographic, "list_kind": self.list_kind, "med_kind": self.med_kind,
            "category": self.category, "yes_no": self.yes_no, "unit": self.unit, "unit_asked": self.unit_asked,
            "stay_event": self.stay_event,
            "around_drug": self.around_drug, "list_category": self.list_category,
        }


_CHECKABLE = ("condition", "medication", "allergy")  # what "still active?" can ask about

_ENCOUNTER_CLASSES = [
    ("IMP", r"\binpatient\b|\bip\b|\badmissions?\b|\badmit(?:s|ted)?\b|\bhospitali[sz]\w*|\bhospital stays?\b|\bstays?\b"),
    # urgent care is an ambulatory visit (lexicon/encounters.json), "urgent" alone an emergency
    ("EMER", r"\bemergency\b|\b(?:er|ed)\b|\bcasualty\b|\burgent\b(?!\s+care)"),
    ("AMB", r"\bambulatory\b|\bamb\b|\boutpatient\b|\boutpt\b|\boffice\b|\bclinic\b|\bprimary care\b|\burgent care\b"),
    ("VR", r"\bvirtual\b|\btele(?:health|medicine|visit)\w*\b|\bvideo\b"),
    ("HH", r"\bhome health\b|\bhome visits?\b"),
    ("WELLNESS", r"\bwellness\b|\bcheck-?ups?\b|\bphysicals?\b|\bannual exam\b"),
]


_WORD_VARIANTS = {r"\bvax\b": "vaccine", r"\bvaxx?ed\b": "vaccinated", r"\bimmunisations?\b": "immunization",
                  r"\bx-?rays?\b": "x-ray", r"\bhaemoglobin\b": "hemoglobin", r"\banaemia\b": "anemia"}


# A second clause that says why the question is asked ("… ? need to know if he needs KCl tonight", "… - checking
# before LP"): the reason names other things (a drug, a procedure, a time) that are not asked about.
_ASIDE = re.compile(r"(?:[?!;]|\s[-–—]+)\s*(?:(?:i|we)\s+)?(?:need(?:s|ed)? (?:to|it)|checking|to check|want(?:ed)? to|wondering|"
                    r"planning|deciding|thinking about|considering|because|b/c|so (?:i|we) can|to see if|going to|about to)\b.*$")


def _normalize(text: str) -> str:
    # "BPs", "BMIs", "ABGs": an acronym written in capitals with a small "s" is its plural (the lower-cased
    # word would not lose its "s": "bmis" ends like "diagnosis")
    text = re.sub(r"\b([A-Z][A-Z0-9]*[A-Z])s\b", r"\1", text)
    text = text.lower().replace("’", "'").replace("‘", "'")
    text = _ASIDE.sub(" ", text)
    for pattern, word in _WORD_VARIANTS.items():
        text = re.sub(pattern, word, text)
    text = re.sub(r"[?!]+", " ", text)
    text = re.sub(r"\s+", " ", text)
    return text.strip()


def parse(question: str, now: datetime, names: tuple[str, ...] = ()) -> ParsedQuestion:
    """Parse ``question`` (asked at ``now``) into a :class:`ParsedQuestion`.

    ``names`` are the patient's own names: a question may call the patient by name ("Trey's A1c"),
    and those words are not part of the clinical entity.
    """
    from fhirqa.agent.backends.offline.plans import first_half

    text = _normalize(first_half(question))
    for name in names:
        if len(name) > 1:
            text = re.sub(rf"\b{re.escape(name.lower())}(?:'s|s')?(?=\W|$)", " the patient ", text)
    text = _PAREN_GLOSS.sub(_narrow_gloss, text)
    if (family := _family_subject()) is not None:
        text = family.sub(" the patient ", text)  # "my son's last well child visit": the patient, not an item word
    text = re.sub(r"\s+", " ", text).strip()
    for phrase, means in _aggregate_terms():
        text = re.sub(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", means, text)  # "Tmax" = max temperature
    for phrase, means in _lay_items():
        text = re.sub(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", means, text)  # "how heavy was she" = her weight
    pq = ParsedQuestion(text=question, now=now)
    text, pq.yes_no = _strip_frames(text)
    text = _respell(text, _proper_names(question))
    text, pq.unit_asked, unit_last = _unit_question(text)
    text, pq.unit = _asked_unit(text)
    text, counted = _amount_in_unit(text)
    pq.unit = pq.unit or counted
    text = _protect_terms(text)
    rest = text

    if _parse_lookup(pq, text, names):
        return pq

    # "LDL before vs after starting the statin", "from the last one before simva to the first one after": the
    # change across a drug's start (first value after it minus the last one before it)
    around = _around_drug(rest)
    if around is not None:
        pq.drug, span = around
        pq.around_drug = True
        rest = rest[: span[0]] + " " + rest[span[1] :]
        rest = re.sub(r"\(?\b(?:after|post)\s*(?:minus|-|vs\.?|versus)\s*(?:before|pre)\b\)?", " ", rest)
    # after-drug anchors come first: "first A1c after starting metformin" holds a second entity
    drug_end = r"(?=\s*(?:[,.;?]|$)|\s+(?:was|were|is|in|on|during|over|within|what|the|latest|last|first|value|values)\b)"
    subject = r"(?:she|he|they|i|the patient|this patient|patient|the pt|pt)"
    drug_match = re.search(
        rf"\b(?:after|since|following|post|once)\s+(?:{subject}\s+(?:was\s+|were\s+|got\s+)?(?:started|began|begun|initiated|put|went)\s+(?:on\s+|taking\s+)?|"
        r"(?:starting|beginning|initiating|initiation of|the start of|start of|being (?:started|put) on|going on|taking)\s+)"
        rf"(?:(?:a|an|the|my|his|her|their)\s+)?(?P<drug>[a-z0-9][a-z0-9 /_\-]*?)(?:\s+(?:therapy|treatment|prescription|order|use))?{drug_end}",
        rest,
    ) or re.search(
        r"\b(?:after|since|following|once)\s+(?:(?:a|an|the|my|his|her|their)\s+|(?:the\s+)?(?:patient|pt)(?:'s)?\s+(?=first\b))?(?:first\s+)?(?!(?:the\s+)?(?:patient|pt)\b)"
        r"(?P<drug>[a-z0-9][a-z0-9 /_\-]*?)\s+(?:(?:therapy|treatment|use)\s+)?(?:(?:was|were)\s+(?:started|prescribed|initiated|begun|ordered)|prescription|order|start)\b",
        rest,
    ) or re.search(r"\bpost[- ](?P<drug>[a-z0-9][a-z0-9 /_\-]*?)\s+(?:start|initiation|initiated|started)\b", rest) or re.search(
        r"\b(?:after|since|once)\s+(?:(?:a|an|the|my|his|her|their)\s+)?(?!(?:the\s+)?(?:patient|pt)\b)(?P<drug>[a-z0-9][a-z0-9 /_\-]*?)\s+"
        r"(?:was\s+|were\s+)?(?:first\s+)?(?:began|begun|started|initiated|ordered|prescribed)\b", rest)
    if pq.around_drug:
        drug_match = None  # the drug is already read, as the pivot of a change
    if drug_match and re.search(r"\bhow (?:many \w+|long)\b.{0,12}\b(?:since|ago)\b|\b(?:time|days|weeks|months|years|mos|yrs|wks|d) since\b", rest):
        drug_match = None  # "how many years since Plavix was last prescribed": the drug is the event itself
    soon_after = False
    day_of_drug = None
    if drug_match:
        pq.intent = "after_drug"
        pq.drug = drug_match.group("drug").strip()
        # "K the day after starting vancomycin": the one calendar day after the drug's first order, a window
        day_of_drug = re.search(rf"\b(?:on\s+)?(?:the\s+)?(?:{'|'.join(anchor_words()['day_nouns'])})\s*$", rest[: drug_match.start()])
        # "right / immediately / just / first after X was started": the first value after the start
        soon = re.search(r"\b(?:right|immediately|just|directly|shortly|soon|straight|first)\s*,?\s*$", rest[: drug_match.start()])
        soon_after = soon is not None
        rest = rest[: soon.start() if soon else drug_match.start()] + " " + rest[drug_match.end() :]
        if day_of_drug and not soon:
            after = drug_match.group(0).split()[0]
            offset = int(anchor_words()["offset_words"].get(after, 1))
            pq.window = Window(None, None, f"the day {after} {pq.drug} was started", anchor="event",
                               event=Anchor("drug", "day", name=pq.drug, amount=offset))
            pq.intent, pq.drug = "value", None
            rest = rest[: day_of_drug.start()] + " " + rest[day_of_drug.end():]

    if not drug_match and pq.window is None and not pq.around_drug and (before := _before_drug(rest)) is not None:
        # "last Cr before she went on naproxen", "pre-naproxen creatinine", "K prior to starting hep": the values
        # up to the drug's first order or dose (the latest of them unless the question asks the first)
        drug, span = before
        pq.window = Window(None, None, f"before {drug} was started", anchor="event", event=Anchor("drug", "before", name=drug))
        rest = rest[: span[0]] + " " + rest[span[1] :]
        if not re.search(r"\b(?:first|initial|earliest|baseline|1st)\b", rest):
            rest = re.sub(r"\b(?:just|right|immediately|directly)\s*$", " ", rest.rstrip())
            pq.position = "last"
    ordered = re.search(r"\b(?:prescri\w*|ordered|orders?|rx|takes?|taking)\b", rest)
    if re.search(rf"\b(?:{_given_words('verbs')})\b", rest) or (
            not ordered and re.search(r"\b(?:doses? (?:on|given)|doses)\b", rest)):
        pq.med_kind = "administration"  # "doses of heparin on 1/17" (not "the daily dose on the latest order")
    elif ordered:
        pq.med_kind = "request"
    # "admission vs now", "(latest minus admission)": the change over the current stay
    rest = re.sub(r"\(?\b(?:latest|last|current|now|today)\s+(?:minus|vs\.?|versus|-|compared (?:to|with))\s+(?:on\s+)?(?:admission|admit)\b\)?"
                  r"|\(?\b(?:on\s+)?(?:admission|admit)\s+(?:vs\.?|versus|to|compared (?:to|with))\s+(?:now|today|latest|current)\b\)?",
                  lambda m: " change " if re.search(r"\b(?:admission|admit)\b", rest[: m.start()] + rest[m.end() :])
                  else " change since admission ", rest)
    at_stay_start = False
    if pq.window is None and (start := _stay_start(rest)) is not None:
        rest, at_stay_start = start, True  # "K on admit": the first value of the stay (the window is read below)
    event = condition_event(rest) if pq.window is None and pq.intent != "after_drug" else None
    if event is not None and (_has_item(outside := rest[: event[1]] + " " + rest[event[2] :]) or _says_started(outside)
                              or _names_record_kind(outside)):
        # "aspirin after the stroke", "meds started since the MI": a window dated by the condition's onset
        pq.window, rest = event[0], rest[: event[1]] + " " + rest[event[2] :]
    time_match = find_window(rest, now) if pq.window is None else None
    if time_match and (named := _unit_naming_item(rest, time_match, now)) is not None:
        rest, term = named  # "last HR": the last heart rate, not the last hour
        pq.notes.append(f"'{term}' read as the item, not as a time unit")
        time_match = find_window(rest, now)
    if time_match and (time_match.window.anchor == "admission" or time_match.kind == "admission") \
            and not _has_item(rest[: time_match.start] + " " + rest[time_match.end :]) \
            and not (time_match.window.anchor == "admission" and (_says_started(rest[: time_match.start])
                                                                  or _names_record_kind(rest[: time_match.start]))):
        time_match = None  # "date of this admission?", "last admission?": the stay itself is the question
    stay = time_match.window.event if time_match and time_match.window.event else None
    if time_match and (time_match.kind == "admission" or (stay and stay.event == "stay" and stay.relation == "during")) \
            and _stay_event(rest) is not None:
        time_match = None  # "when did her last hospitalization end?": the stay's end is asked, not a time in it
    if time_match:
        pq.window = time_match.window
        rest = rest[: time_match.start] + " " + rest[time_match.end :]
    elif at_stay_start:
        pq.window = Window(None, None, "on admission", anchor="admission")  # the current (or latest) stay

    comparison = _find_comparison(rest)
    if comparison:
        pq.comparison, span = comparison
        rest = rest[: span[0]] + " " + rest[span[1] :]
        rest = _criterion_item(rest, pq.comparison.op)

    rest = _value_with_date(rest)
    rest, pq.asks_resolved = _resolved_asked(rest)
    _classify(pq, rest, now)
    if pq.asks_resolved:
        pq.intent, pq.list_kind = "active_check", pq.list_kind if pq.list_kind == "allergy" else "condition"
    if pq.intent == "aggregate" and pq.aggregate in ("max", "min") and pq.comparison is None:
        rest = _criterion_extreme(rest, ">" if pq.aggregate == "max" else "<")  # "how high did her fever get"
    if pq.around_drug:
        pq.intent = "change"
    _stay_frame(pq, rest)
    if pq.intent == "value" and _counts_visits(rest):
        pq.intent = "count"  # "ED visits in the past two years?": records of a class named and nothing measured
    if ((time_match and time_match.kind == "on_admission") or at_stay_start) and pq.intent in ("value", "time_of"):
        pq.position = "first"  # "K on admission": the first value of the stay (or of the stay or day named)
    if pq.intent == "after_drug" and soon_after:
        pq.position = "first"
    if pq.encounter_class is None and re.search(_VIEW_CUES_BY_NAME["encounter"], rest):
        pq.encounter_class = _encounter_class(rest)
    pq.views = _view_order(rest, pq)
    pq.hinted = [view for view, pattern in _VIEW_CUES if re.search(pattern, rest)]
    asked_in = re.search(rf"\bin\s+({_UNIT_WORDS})(?=\s|$)", rest)
    if asked_in:
        pq.unit = {"grams": "g", "gram": "g", "milligrams": "mg", "milligram": "mg", "micrograms": "mcg",
                   "microgram": "mcg"}.get(asked_in.group(1), asked_in.group(1))
    pq.entity = "" if pq.stay_event else _written_case(_entity(rest, pq), question)
    pq.entity = _class_with_example(pq.entity)
    _worst_best(pq)
    if pq.views == ["allergy"] and pq.intent == "value" and pq.entity and not re.search(
            r"\b(?:reactions?|severity|severe|critical\w*|when|date|onset|since|type|kind|category|status|what)\b", rest):
        # "codeine allergy?", "latex allergy?": whether the list holds it (a yes/no), not the entry's value
        pq.intent = "exists"
    if pq.intent == "active_list" and pq.window is None and _current_list(rest) is not None:
        # "home meds?", "active outpatient meds": the words place the list; they name no item or visit class
        pq.entity, pq.encounter_class = "", None
        pq.views = [pq.list_kind or "medication", *(v for v in pq.views if v != pq.list_kind and v != "encounter")]
    pq.lexicon_views = _lexicon_views(pq.entity)
    if _PRESENT_FRAME in pq.notes and pq.lexicon_views[:1] and pq.lexicon_views[0] != "medication":
        pq.intent, pq.list_kind = "exists", None  # "is she on dialysis?": not a drug, whether it is recorded
    if pq.intent == "value" and pq.lexicon_views[:1] == ["medication"] and _present_cue_only(rest):
        pq.intent, pq.list_kind = "active_check", "medication"  # "statin currently?", "NSAID now?": on one now
    if pq.intent == "value" and pq.window is not None and pq.lexicon_views[:1] == ["immunization"] and not re.search(
            r"\b(?:what|which|when|how|last|latest|recent|first|date|dates|dose|name)\b", rest):
        pq.intent = "exists"  # "Td/Tdap within the last 10 yrs?": a vaccine has no value, only whether it was given
    _history_check(pq, rest.strip())
    _disease_not_vaccine(pq)
    _started_in_window(pq, rest)
    _event_date(pq, rest)
    stay = pq.window.event if pq.window is not None and pq.window.event is not None else None
    if pq.intent == "age" and stay is not None and stay.event == "stay" and stay.relation == "during" and stay.which in (0, -1):
        # "how old was she at her last admission": the age at that stay's start, not a window over ages
        pq.encounter_class, pq.window = "IMP", None
        rest += " first" if stay.which == 0 else ""
    if pq.intent == "age" and pq.encounter_class:
        # "how old was he when admitted": the age at the start of the latest stay ("first admission": the first)
        pq.position = "first" if re.search(r"\b(?:first|initial|earliest|1st)\b", rest) else "last"
    if pq.med_kind is None and not ordered and "medication" in pq.lexicon_views and re.search(rf"\b(?:{_given_words('get_verbs')})\b", rest):
        pq.med_kind = "administration"  # "did she get Zosyn?": its doses (for a drug only: "did she get an MRI" is none)
    if unit_last and "medication" in pq.lexicon_views:
        pq.unit_asked = False  # "total insulin units": a dose unit after a drug, not a question about it
    if pq.unit_asked and pq.intent == "exists":
        pq.intent = "value"  # "in what units is K reported": the value's unit, not whether there is one
    if pq.intent == "value" and pq.med_kind == "administration" and not pq.unit_asked and _asks_given(rest, pq.entity):
        pq.intent = "exists"  # "heparin given?": whether it was, not the last dose
    if pq.intent == "count" and _one_day_total(rest, pq):
        pq.intent, pq.aggregate, pq.med_kind = "daily_dose", "sum", "administration"  # "heparin total on 11/1?": a sum
    if pq.intent == "active_check" and not pq.kind_cued:
        # "Allegra still active?" names a drug: look in the lexicon's view first, then the other kinds
        kinds = [v for v in pq.lexicon_views if v in _CHECKABLE] + ["condition", "medication", "allergy"]
        pq.views = list(dict.fromkeys(kinds))
        pq.list_kind = pq.views[0]
    if not pq.hinted:
        # "high cholesterol" is a diagnosis, "statin" a drug: the lexicon knows which view to try first.
        known = [v for v in pq.lexicon_views if v in pq.views]
        pq.views = known + [v for v in pq.views if v not in known]
    return pq


# Requests wrapped around the question ("could you tell me whether …", "remind me …", "looking at the chart, …").
_FRAMES = [
    r"^(?:hey,? )?(?:(?:could|can|would|will) you(?: please)?|please|pls|kindly)\s+",
    r"^(?:tell me|let me know|check|confirm|see|find out|show me|give me|pull up|remind me(?: of)?|i need(?: to know)?|"
    r"i'd like(?: to know)?|i want(?: to know)?|do you know)\b\s*",
    r"^(?:looking at|in|from|per|according to|going back to the start of|checking)\s+(?:this|the|her|his|my)\s+"
    r"(?:patient'?s\s+|pt'?s\s+)?(?:chart|record|file|history)s?,?\s*",
    r"^(?:on file|on record|in the chart|for the record),\s*",
    r"^per the (?=(?:latest|last|most recent|current) (?:prescription|order|rx)\b)",
]
_IF_WHETHER = re.compile(r"^(?:if|whether)\s+")


def _strip_frames(text: str) -> tuple[str, bool]:
    """The question without polite framing; True when the frame made it a yes/no question."""
    changed = True
    yes_no = False
    while changed:
        changed = False
        for frame in _FRAMES:
            stripped = re.sub(frame, "", text)
            if stripped != text:
                text, changed = stripped, True
        if _IF_WHETHER.match(text):
            text, yes_no, changed = _IF_WHETHER.sub("", text), True, True
    return text, yes_no


def _protect_terms(text: str) -> str:
    """Join lexicon terms that contain grammar words ("total cholesterol", "white count") so cue words
    inside them ("total", "count") are not read as intents; `_entity` restores the spaces."""
    for term in _protected_terms():
        if term in text:
            text = re.sub(rf"\b{re.escape(term)}s?\b", lambda m: m.group(0).replace(" ", "_"), text)
        elif term.split()[0] in text:
            # a word inside made plural ("platelets count", "shingles shots"): the term as the lexicon spells it
            pattern = r"s?\s+".join(map(re.escape, term.split()))
            text = re.sub(rf"\b{pattern}s?\b", term.replace(" ", "_"), text)
    return text


def _find_comparison(text: str) -> tuple[Comparison, tuple[int, int]] | None:
    for pattern, op in _OPS:
        m = re.search(rf"(?:{pattern})\s*(?:a |the )?(?:value of |level of )?{_NUMBER}{_UNIT_AFTER}", text)
        if m:
            return Comparison(op, float(m.group(1).replace(",", "")), m.group(2)), m.span()
    m = re.search(rf"{_NUMBER}{_UNIT_AFTER}\s*(?:or (?:more|higher|above|greater)|\+)", text)
    if m:
        return Comparison(">=", float(m.group(1).replace(",", "")), m.group(2)), m.span()
    return None


def _classify(pq: ParsedQuestion, text: str, now: datetime) -> None:
    """Intent, position, aggregate and their parameters from cue words."""
    first = re.search(r"\b(?:first|initial|earliest|baseline|original|oldest|1st|start|started|begin|began|initiated|commenced)\b|"
                      r"\b(?:go|went|gone|was put|were put|got put|get put|was placed)\s+on\b", text)
    # "date of asthma dx" asks when it was diagnosed: the first time, unless the question says otherwise
    diagnosed = re.search(r"\bdx\b|\bdiagnos\w*|\bonset\b", text) and not re.search(r"\b(?:last|latest|most recent|recent)\b", text)
    pq.position = "first" if first or diagnosed else "last"
    if pq.intent == "after_drug":
        if (extreme := _aggregate(text)) in ("max", "min"):
            pq.aggregate = extreme  # "the lowest TG since I started the statin": an extreme after the start
        return

    if re.search(r"\b(?:blood ?work|blood tests?|labs?|lab work|lab tests?|lab results?)\b", text) and not re.search(
        r"\b(?:a1c|glucose|potassium|sodium|creatinine|cholesterol|hemoglobin)\b", text):
        pq.category = "laboratory"
    if re.search(r"\b(?:report(?:ed|s)?|complain\w*|c/o|feel\w*|felt|symptoms?|mention\w*|in (?:the|her|his|my) notes?|"
                 r"notes? (?:say|said|mention)|present(?:ed|ing)? with|chief complaint|document\w* (?:in|as))\b", text) \
            and not re.search(r"\bhow many\b|\bcount\b", text):
        pq.intent = "note_finding"
        return
    if re.search(r"\bhow old\b|\bage\b|\byears old\b", text):
        # "how old was she when diagnosed with X", "age at X diagnosis": the age at an event
        at_event = re.search(r"\b(?:when|at (?:the time of|her|his|their|the)?|at)\b.*\b(?:diagnos\w*|dx\S*|had|got|started|began|underw\w*|received|was given)\b|"
                             r"\bage (?:at|of)\b(?! death)|\bat what age\b", text)
        death = _death_words()
        if death is not None and death.search(text):
            at_event = None  # "at what age did she die": the age question answers it (to the death)
        pq.intent = "age_at" if at_event else "age"
        pq.position = "first"
        return
    # a window ("meds prescribed past 10 yrs", "in '68") asks about the records of a period, not the current list
    one_day = pq.window is not None and pq.window.start is not None and pq.window.end is not None \
        and pq.window.end - pq.window.start <= timedelta(days=2)
    current = _current_list(text) if pq.window is None or one_day else None
    # "home meds?", "allergy list?", "# active meds?", "NKDA?": the current list itself ("home meds on 8/11/2018?":
    # the list that day)
    if current is not None and not (one_day and current[1]):
        kind, mode, category = current
        _active_list(pq, kind)
        pq.aggregate, pq.list_category = mode, category
        return
    demographic = _demographic(text)
    if demographic:
        pq.intent, pq.demographic = "demographic", demographic
        if demographic == "deceased" and (pq.yes_no or re.match(r"^(?:is|was|has|did|does)\b|.*\b(?:deceased|expired)$", text)):
            pq.demographic = "is_deceased"
        return
    if re.search(r"\b(?:heaviest|busiest|highest|largest|peak|biggest) (?:1-|one[- ]|single[- ])?day\b|"
                 r"\b(?:highest|largest|peak|biggest|max\w*|most)\b.*\b(?:1-day|one-day|single day|in a (?:single )?day|in one day|daily total)\b", text):
        pq.intent, pq.aggregate = "daily_dose", "max"
        return
    if _COUNT_FRAME.search(text) and not re.search(r"\bdaily\b|\bper day\b|\ba day\b|\bhow much\b", text):
        pq.intent = "count"  # "total Rx since 2017", "total flu vaccines given in 2019": how many records
        pq.encounter_class = _encounter_class(text)
        return
    if re.search(r"\b(?:total )?daily (?:dose|dosage|amount)\b|\bdose per day\b|\bper day\b|\ba day\b|\beach day\b|/day\b|\bdaily total\b|"
                 r"\btotal daily\b|\bin (?:a|one|a single) day\b|\bin 24 ?h(?:ours?|rs?)?\b|\bdaily\b", text) or (
            re.search(r"\btotal\b", text) and re.search(r"\b(?:given|administered|received)\b", text) and pq.window is not None) or (
            re.search(r"\bhow much\b", text) and re.search(r"\b(?:given|administered|received|receive|infused|got|get)\b", text)) or (
            re.search(r"\bhow much\b", text) and pq.window is not None and pq.window.said and _names_drug(text)):
        # "how much X was given on <day>": that day's administered doses, summed; "how much insulin this shift?",
        # "how much morphine overnight": a drug over a part of the day is what was given in it
        pq.intent, pq.aggregate = "daily_dose", _aggregate(text) or ("sum" if re.search(r"\bhow much\b", text) else None)
        return
    if re.search(r"\bby how much\b|\bhow much did\b|\bnet change\b|\bchange in\b", text):
        pq.intent = "change"
        return
    if re.search(r"\bheading\b|\bwhich way\b|\bup, down\b|\bup or down\b|\bflat\b|\btrend\w*\b|\bimprov\w*\b|\bworsen\w*\b|\bgetting (?:better|worse)\b|\bgoing (?:up|down)\b|\btrajectory\b|"
                 r"\b(?:rising|falling)\b|\bincreasing or decreasing\b|\bup or down\b|\bstable\b", text):
        pq.intent = "trend"
        return
    if re.search(r"\bchang\w*\b|\bdifference\b|\bdiffer\b|\bdelta\b|\bhow much (?:did|has|have|had)\b.*\b(?:go|gone|went|rise|rose|risen|fall|fell|fallen|drop|dropped|increase|increased|decrease|decreased|improve|improved)\b", text):
        pq.intent = "change"
        return
    units = r"(days?|d|weeks?|wks?|months?|mos?|years?|yrs?)"
    duration = re.search(rf"\bduration\b|\bhow long\b.{{0,20}}\b(?:has|have|had|did)\b|\bhow long,? in {units},? .{{0,30}}\b(?:has|have)\b|\bhow many {units} (?:has|have|had|did)\b.*\b(?:had|been|suffered|lived|taken|taking|on)\b|"
                         rf"\bfor how (?:long|many {units})\b", text)
    if duration and not re.search(r"\b(?:has|have) it been\b", text):
        # "how many yrs has she had HLD": the time since its first onset ("how many months has it been since
        # her last flu shot" names its own event: the since-rule below reads it)
        pq.intent, pq.position = "time_since", "first"
        pq.time_unit = _unit_word(duration.group(1) or duration.group(2) or "") or _unit_word(text) or "years"
        return
    since = re.search(r"\bhow long (?:ago|since|has it been)\b|\bhow many (?:full |whole |complete )?(\w+)\b.{0,40}\b(?:since|ago|passed|elapsed)\b|"
                      r"\b(?:time|days|weeks|months|years|mos|yrs|wks|d|mo|yr) since\b|\bhow (?:many (\w+) )?ago\b", text)
    if since and not re.match(r"^(?:how many|number of|#)\s+(?:\w+\s+){0,3}(?:visits|encounters|results|times|measurements|prescriptions|shots|doses)\b"
                              r"(?!.{0,20}\b(?:since|ago) (?:the|her|his|my|their|pt'?s|patient'?s) (?:last|first|most recent)\b)", text):
        pq.intent = "time_since"
        pq.time_unit = _unit_word(text) or "days"
        return
    # "when her K was last drawn, what did it come back as?": a clause that opens with "when" and is followed by
    # the question places it in time; the question asks the value
    asked = re.sub(r"^when\b[^,?]*,\s*(?=(?:what|what's|whats|which|how)\b)", "", text)
    if re.search(r"^(?:when|on what (?:date|day)|what (?:date|day)|which (?:date|day))\b|\bwhen\b|\bon what (?:date|day)\b|\bwhat time\b|"
                 r"(?<!to )\bdates?\b(?! (?:of birth|range))", asked):
        pq.intent = "time_of"
        return
    if re.search(r"^(?:(?:the|her|his|my|their|(?:the )?(?:patient|pt)'?s)\s+)?(?:home\s+|current\s+|active\s+)?(?:meds|medications|med list|rx)\s+"
                 r"(?:currently\s+|still\s+|now\s+)?(?:active|current)\W*$|"
                 r"^(?:what|which)\s+(?:meds?\s+|medications?\s+|medicines?\s+|drugs\s+|pills\s+|prescriptions\s+)?(?:is|are|am|do|does)\s+"
                 r"(?:the patient|she|he|they|pt|the pt|i|we)\s+(?:on|take|taking)\s*(?:right now|now|currently|at present|today|at the moment)?\W*$",
                 text):
        _active_list(pq, "medication")  # "home meds currently active?", "what is Barbara on right now?": the list
        return
    present = _present_medication(text)
    if present:  # "is he taking an NSAID now?", "is she on anticoagulation at home?"
        pq.intent, pq.list_kind = "active_check", "medication"
        if present == "frame":
            pq.notes.append(_PRESENT_FRAME)
        if pq.window and pq.window.start is not None and pq.window.end is not None:
            pq.at_time, pq.window = pq.window.end, None
        return
    yes_no = pq.yes_no or re.match(r"^(?:is|are|was|were|does|do|did|has|have|am)\b", text)
    terse_check = re.search(r"(?:^|\s|-)(?:still )?active$|^(?:currently |still )?on\b(?! (?:the|average|file|record|\d))|\bstill\b", text)
    # "which of my conditions are still active?" asks for the list, not whether
    asks_which = re.match(r"^(?:which|what|list|name|show)\b", text) and not pq.yes_no
    if (yes_no or terse_check) and not asks_which and re.search(r"\bstill\b|\bcurrently\b|\bcurrent\b|\bactive\b|\bright now\b|\banymore\b|\bat present\b|\bpresently\b|^(?:currently )?on\b(?! (?:the|average|file|record|\d))", text):
        pq.intent = "active_check"
        condition = re.search(r"\bproblems?\b|\bdiagnos\w*|\bconditions?\b|\bsuffer\w*", text)
        med = re.search(r"\btaking\b|\bon\b|\bmedications?\b|\bmeds?\b|\bprescri\w*|\bdrugs?\b|\brx\b", text)
        allergy = re.search(r"\ballerg", text)
        pq.list_kind = "allergy" if allergy else "condition" if condition else "medication" if med else None
        if pq.list_kind is None:
            # "does she still have X", "X still active?": X's own kind decides (see parse), a condition by default
            pq.kind_cued, pq.list_kind = False, "condition"
        if pq.window and pq.window.start is not None and pq.window.end is not None:
            pq.at_time, pq.window = pq.window.end, None
        return
    on_list = re.search(r"\b(?:on|in)\s+(?:(?:the|her|his|their|my|this|your)\s+)?(?:(?:patient|pt)'?s?\s+)?(?:active\s+)?"
                        r"(?:problems?|dx|diagnos[ie]s) list\b", text)
    if on_list and _has_item(text[: on_list.start()]):
        # "HTN on her problem list (ever)?": whether X is recorded, a yes/no about the record
        pq.intent = "exists"
        return
    if re.search(r"\bproblem list\b|\bproblems? list\b|\b(?:dx|diagnosis|diagnoses) list\b|\bactive (?:probs?|problems|dx|diagnoses)\b|\b(?:give|show|tell|list)\b.*\bconditions?\b.*\b(?:now|currently|active)\b|"
                 r"^(?:the |her |his |my )?(?:conditions|problems|diagnoses)\b.*\b(?:right now|currently|now|at present)\b", text):
        _active_list(pq, "condition")
        return
    if re.search(r"\brx list\b|\bactive rx\b|\bprescription list\b|\bmed(?:ication)?s? list\b|\bprescribed (?:right )?now\b|\b(?:on|prescribed) currently\b|\bcurrently (?:prescribed|taking)\W*$|\btaking (?:right )?now\b|\b(?:what|which)\b.*\b(?:is|am|are)\b.*\btaking\b|\bcurrent (?:meds|medications)\b|"
                 r"^(?:\S+\s+)?(?:meds|medications|rx)\s+(?:right\s+)?(?:now|currently|today|at present)$", text):
        _active_list(pq, "medication")
        return
    # "active medical conditions", "which of her prescriptions are still active?"
    active = re.search(r"\b(?:active|current|ongoing|present)\s+(?:(?:medical|health|chronic|clinical)\s+)?(conditions?|problems?|diagnos[ie]s|medications?|meds|prescriptions?|allergies|drugs)\b|"
                       r"\b(?:what|which|list)\b.*\b(conditions?|problems?|diagnos[ie]s|medications?|meds|prescriptions|drugs|allergies)\b.*\b(?:active|currently|taking|on|have|has|had|treated for)\b", text)
    if active and not re.search(r"\bhow many\b", text):
        kind = (active.group(1) or active.group(2) or "").rstrip("s")
        _active_list(pq, "medication" if kind.startswith(("medic", "med", "prescri", "drug")) else
                     ("allergy" if kind.startswith("allerg") else "condition"))
        return
    asks_whether = re.match(r"^(?:has|have|had|did|does|do|is|are|was|were)\b", text) and re.search(r"\bever\b|\bdone\b", text) and \
        not re.search(r"\bhow (?:many|often|frequently)\b|\bnumber of\b|(?:^|\s)#", text)
    if not asks_whether and re.search(r"\bhow (?:many|often|frequently)\b|\bnumber of\b|\bcount\b|\bhow many times\b|\btotal number\b|(?:^|\s)#|"
                 r"\butili[sz]ation\b|"
                 r"\bdoses (?:given|received|administered)\b", text) and not re.search(r"\bhow much\b", text):
        pq.intent = "count"
        pq.encounter_class = _encounter_class(text)
        return
    agg = _aggregate(text)
    if pq.comparison and (agg is None or re.search(r"\bever\b|\bany\b|\bat any\b|^(?:did|was|were|has|have|had|is|are)\b", text)):
        pq.intent = "threshold"
        return
    if agg:
        pq.intent, pq.aggregate = "aggregate", agg
        return
    if pq.yes_no or re.search(r"^(?:has|have|had|did|does|do|is|are|was|were|ever|any|hx of|history of)\b|\bany (?:record|history|evidence)\b|\bis there\b|\bwas there\b|\banything$", text) or (
            re.search(r"\bever\b|\bat any (?:point|time)\b|\banytime\b", text)
            and not re.search(r"\b(?:value|what|which|first|last|latest|result|reading)\b", text)) or (
            (_ON_FILE.search(text) or re.search(r"^(?!.*\b(?:of|for)\b)\S+(?:\s+\S+){0,3}\s+(?:hx|history)$", text))
            and not re.search(_VALUE_CUES, text)) or re.search(
            # "c-scope done?", "DEXA performed?": a terse yes/no about whether it was ever done
            r"^(?!.*\b(?:what|when|which|who|how|where|why|last|latest)\b)\S+(?:\s+\S+){0,4}\s+(?:done|performed)$", text):
        # "obesity on her history?", "CKD in his hx?": a terse yes/no about the record
        pq.intent = "exists"
        return
    if re.search(r"\b(?:what|which|list)\b.*\b(?:vaccines|immunizations|procedures|allergies|conditions|medications|diagnoses)\b", text):
        pq.intent = "list_items"
        return
    pq.intent = "value"


def _written_case(entity: str, question: str) -> str:
    """The entity with the acronyms the question wrote in capitals ("knee OA", "hx of MI") spelled so again:
    inside a longer phrase the lexicon reads short case-sensitive aliases (OA, K, PT) only as written."""
    if " " not in entity:
        return entity  # a whole phrase is looked up in any case
    capitals = {w.lower(): w for w in re.findall(r"\b[A-Z][A-Z0-9+]{1,5}\b", question)}
    return " ".join(capitals.get(w, w) for w in entity.split()) if capitals else entity


def _one_day_total(text: str, pq: ParsedQuestion) -> bool:
    """"<drug> total on <day>": the day's administered amount, not a number of records."""
    w = pq.window
    return bool(re.search(r"\btotal\b", text) and not re.search(r"\bhow many\b|\bnumber\b|\bcount\b|(?:^|\s)#|\bdoses\b|\btimes\b", text)
                and w is not None and w.start is not None and w.end is not None and w.end - w.start <= timedelta(days=2)
                and pq.lexicon_views[:1] == ["medication"])


@lru_cache(maxsize=8)  # a missing file too is looked for once
def _optional_lexicon(name: str) -> dict[str, Any]:
    """``lexicon/<name>``, or nothing when it is missing or broken: the parser works without it, only less well."""
    from fhirqa.project import lexicon_file

    try:
        return lexicon_file(name)
    except (OSError, ValueError):
        return {}


def _phrases() -> dict[str, Any]:
    """``lexicon/question_phrases.json``: phrasings read as a kind of question (see its description)."""
    return _optional_lexicon("question_phrases.json")


def _alternation(phrases: list[str]) -> str:
    return "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in sorted(phrases, key=len, reverse=True))


@lru_cache(maxsize=1)
def _stay_start_patterns() -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """(phrase, modifier) patterns of the value at the start of a stay, from ``question_phrases.json`` ``stay_start``."""
    words = _phrases().get("stay_start")
    if not words:
        return None
    phrase = re.compile(
        rf"\b(?:(?:{_alternation(words['prepositions'])})\s+(?:(?:{_alternation(words['determiners'])})\s+)?"
        rf"(?:{_alternation(words['nouns'])})|when\s+(?:(?:{_alternation(words['subjects'])})\s+)?(?:{_alternation(words['verbs'])}))"
        rf"(?:\s+(?:{_alternation(words['tails'])}))?\b")
    modifier = re.compile(rf"\b(?:{_alternation(words['modifiers'])})\s+(?P<next>[^\s,.;:?]+)")
    return phrase, modifier


def _stay_start(text: str) -> str | None:
    """The question without its stay-start phrase ("K on admit", "Cr at presentation", "admission K", "HR when she
    came in"), or None when it has none or names no item besides it (the stay itself is then asked about, and "how
    old was he when admitted" is an age at an event)."""
    patterns = _stay_start_patterns()
    if patterns is None or re.search(r"\bhow old\b|\bage\b|\byears old\b", text):
        return None
    phrase, modifier = patterns
    rest = None
    if m := phrase.search(text):
        rest = text[: m.start()] + " " + text[m.end() :]
    else:
        words = _phrases()["stay_start"]
        for m in modifier.finditer(text):
            # the word before it, past a determiner: "during the admission" names the stay, "her admission K" its start
            before = text[: m.start()].split()
            while before and before[-1] in words["determiners"] and before[-1] not in words["modifier_not_before"]:
                before.pop()
            nxt = m.group("next")
            if (before and before[-1] in words["modifier_not_before"]) or nxt in words["modifier_not_items"] or nxt in _STOP:
                continue
            rest = text[: m.start()] + " " + text[m.start("next") :]
            break
    if rest is None or not _has_item(rest):
        return None
    return re.sub(r"\s+", " ", rest).strip()


def _given_words(group: str) -> str:
    """An alternation of ``question_phrases.json`` ``given_check`` words (``verbs``, ``get_verbs``, ``frame``)."""
    return _alternation(_phrases().get("given_check", {}).get(group, [])) or r"(?!x)x"


def _asks_given(text: str, entity: str) -> bool:
    """"heparin given?", "hep given this admission?": besides the drug, only a verb of administration and yes/no
    frame words; a word asking for a value ("last", "dose", "how much", "when") keeps the question a value question."""
    given = _phrases().get("given_check", {})
    verbs, frame = set(given.get("verbs", [])), set(given.get("frame", []))
    named = set(re.findall(r"[a-z0-9]+", entity.lower()))
    rest = [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in named]
    return bool(entity) and any(w in verbs for w in rest) and all(w in verbs or w in frame for w in rest)


def _unit_naming_item(text: str, match: Any, now: datetime) -> tuple[str, str] | None:
    """"last HR", "latest hr yesterday": "last" and a unit word with no number, where the unit is also an item's
    abbreviation in the lexicon (HR = heart rate), names that item when nothing else in the question does; then the
    text with the unit written as the lexicon's term, and that term. None when the phrase is a window ("HR in the
    last hr", "K last hr", "past hr", "last 2 hr")."""
    phrase = text[match.start : match.end]
    if match.kind != "relative" or not re.match(r"(?:last|latest|most recent)\s", phrase) or re.search(r"\d", phrase):
        return None
    unit = phrase.split()[-1]
    rest = text[: match.start] + " " + text[match.end :]
    if other := find_window(rest, now):  # "last HR yesterday": the other time phrase is the window
        rest = rest[: other.start] + " " + rest[other.end :]
    if _has_item(rest):
        return None
    lexicon = _lexicon()
    items = [e for e in (lexicon.expand(unit) if lexicon else []) if getattr(e, "view", "") == "observation"]
    if not items:
        return None
    term = str(items[0].term).lower()
    return text[: match.end - len(unit)] + term + text[match.end :], term


def _names_record_kind(text: str) -> bool:
    """Whether ``text`` names a kind of record without an item ("labs before the MI", "med changes this admission":
    ``record_kinds`` of ``question_phrases.json``)."""
    kinds: list[str] = (_phrases().get("record_kinds") or {}).get("words") or []
    return bool(kinds) and re.search(rf"\b(?:{_alternation(kinds)})\b", text) is not None


def _names_drug(text: str) -> bool:
    """Whether ``text`` names a drug or a drug class the lexicon knows ("insulin", "morphine", "opioids")."""
    lexicon = _lexicon()
    return lexicon is not None and lexicon.drug_phrase(re.findall(r"[a-z0-9][a-z0-9-]*", text.lower())) is not None


def _has_item(text: str) -> bool:
    """Whether ``text`` names something besides grammar and perspective words ("HTN ever" does, "her" does not)."""
    words = [w.strip(".,;:'\"()#?") for w in re.sub(_PERSPECTIVE, " ", text).split()]
    return any(w and w not in _STOP and re.search(r"[a-z]", w) for w in words)


@lru_cache(maxsize=1)
def _current_list_patterns() -> tuple[Any, ...]:
    """Compiled ``current_lists`` of ``question_phrases.json``: (count, fillers, [(kind, names, qualifiers, required,
    [(absent phrase, category)], not-with words)], count fillers)."""
    data = _phrases().get("current_lists") or {}

    def words(items: list[str]) -> re.Pattern[str]:
        return re.compile(rf"(?<![\w#])(?:{_alternation(items)})(?![\w])" if items else r"$^")

    lists = tuple((spec["kind"], words(spec["names"]), words(spec.get("qualifiers", [])),
                   bool(spec.get("qualifier_required")),
                   tuple((words([a["phrase"]]), a.get("category")) for a in spec.get("absent", [])),
                   words(spec.get("not_with", [])))
                  for spec in data.get("lists", []))
    count = re.compile(rf"(?:^|\s)#|\b(?:{_alternation([w for w in data.get('count_words', []) if w != '#'])})\b") \
        if data.get("count_words") else re.compile(r"$^")
    return count, words(data.get("fillers", [])), lists, words(data.get("count_fillers", []))


def _current_list(text: str) -> tuple[str, str | None, str | None] | None:
    """(kind, mode, category) when the question is only a current list's name ("home meds?", "allergy list?"):
    mode None lists it, "count" counts it, "absent" asks whether no item of ``category`` is on it ("NKDA?")."""
    patterns = _current_list_patterns()
    if not patterns[2]:
        return None
    count, fillers, lists, count_fillers = patterns

    def empty(rest: str) -> bool:
        return not re.sub(r"[\s,.;:!?\-/()]+", " ", fillers.sub(" ", rest)).strip()

    counted = count.search(text) is not None
    rest = count.sub(" ", text)
    for kind, names, qualifiers, required, absents, not_with in lists:
        if not_with.search(rest):
            continue  # "prescriptions on record": every order, not the current list
        for phrase, category in absents:
            if phrase.search(rest) and empty(phrase.sub(" ", rest)) and not counted:
                return kind, "absent", category
        stripped = rest
        for phrase, _ in absents:  # "NKDA or does she have allergies listed?": the list is the answer
            stripped = phrase.sub(" ", stripped) if re.search(r"\bor\b", rest) else stripped
        if not names.search(stripped):
            continue
        qualified = qualifiers.search(stripped) is not None
        stripped = qualifiers.sub(" ", names.sub(" ", stripped))
        if counted:  # "how many active meds does she have?": the count's frame words
            stripped = count_fillers.sub(" ", stripped)
        stripped = re.sub(r"\b(?:does|do|have|has)\b", " ", stripped) if re.search(r"\bor\b", rest) else stripped
        if (qualified or not required) and empty(stripped):
            return kind, "count" if counted else None, None
    return None


@lru_cache(maxsize=1)
def _present_medication_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]] | None:
    words = _question_words().get("present_medication") or {}
    if not words.get("frames") or not words.get("cues"):
        return None
    return (re.compile(rf"^(?:{_alternation(words['frames'])})\b"), re.compile(rf"\b(?:{_alternation(words['cues'])})$"),
            re.compile(rf"\b(?:{_alternation(words.get('setting_words') or ['at home'])})\b"))


_PRESENT_FRAME = "present tense: the current orders"


def _present_medication(text: str) -> str | None:
    """"frame" or "cue" when the question is a present-tense yes/no about taking something ("is she on X?",
    "taking X now?", ``present_medication``), else None."""
    patterns = _present_medication_patterns()
    if patterns is None or re.search(r"\b(?:ever|history|hx|h/o|previously|prior|before|past|used to|been|"
                                     r"how|what|which|when|why|who|dose|dosage|much|many)\b", text):
        return None
    frame, cue, _ = patterns
    taking = re.match(r"^(?:is|are|am|does|do)\b.*\b(?:on|taking|take|takes|prescribed)\b|^(?:on|taking)\b", text)
    if taking and cue.search(text.strip(" ?.!")):
        return "cue"
    return "frame" if frame.search(text) else None


def _present_cue_only(text: str) -> bool:
    """A terse "<drug> now?" / "<drug> currently?": a present cue closes the question and nothing asks a value."""
    patterns = _present_medication_patterns()
    if patterns is None or re.search(r"\b(?:dose|dosage|strength|sig|how|what|which|when|last|latest|first|mg)\b", text):
        return False
    return bool(patterns[1].search(text.strip(" ?.!")) or re.search(r"\b(?:currently|presently|at present)\W*$", text))


def setting_words() -> re.Pattern[str] | None:
    """Words that name where a drug is taken ("at home"): never part of the item."""
    patterns = _present_medication_patterns()
    return patterns[2] if patterns else None


def _value_with_date(text: str) -> str:
    """The question without a trailing "+ date" ("last creat + date": the value, whose date the answer states)."""
    words = _question_words().get("value_with_date") or {}
    if not words.get("joins") or not words.get("words"):
        return text
    joins = "|".join(re.escape(j) for j in sorted(words["joins"], key=len, reverse=True))
    pattern = rf"\s*(?:{joins})\s*(?:{_alternation(words['words'])})\s*$"
    stripped = re.sub(pattern, "", text)
    return stripped if stripped != text and _has_item(stripped) else text


def _active_list(pq: ParsedQuestion, kind: str) -> None:
    if kind == "medication" and pq.med_kind == "administration" and pq.window is not None:
        # "which drugs has she received today": the doses given in that window, not the orders active at its end
        pq.intent, pq.list_kind = "list_items", kind
        return
    pq.intent, pq.list_kind = "active_list", kind
    if pq.window and pq.window.end is not None and pq.window.start is not None:
        pq.at_time = pq.window.end
    pq.window = None


@lru_cache(maxsize=1)
def _range_words() -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """(asks for the spread of values, names another range) from ``lexicon/value_series.json``."""
    from fhirqa.project import lexicon_file

    try:
        spec = lexicon_file("value_series.json")
    except OSError:
        return None
    return (re.compile("|".join(f"(?:{p})" for p in spec["range"])),
            re.compile("|".join(f"(?:{p})" for p in spec["range_not"])))


def asks_range(text: str) -> bool:
    """True when ``text`` asks for the lowest and highest values ("BP range this year", "how variable is her sugar")."""
    words = _range_words()
    return words is not None and bool(words[0].search(text)) and not words[1].search(text)


def _worst_best(pq: ParsedQuestion) -> None:
    """"Worst eGFR" is the lowest, "worst creatinine" the highest; "best" the other way round
    (``question_phrases.json`` ``worst_best``)."""
    text = pq.text.lower()
    worst, best = re.search(r"\bworst\b", text), re.search(r"\bbest\b", text)
    if not (worst or best) or not pq.entity or pq.intent not in ("aggregate", "value", "time_of", "exists"):
        return
    pq.entity = re.sub(r"\s+", " ", re.sub(r"\b(?:worst|best)\b", " ", pq.entity)).strip() or pq.entity
    if _aggregate(re.sub(r"\b(?:worst|best)\b", " ", text)) in ("max", "min"):
        return  # "the worst (highest) HDL": the question says which extreme
    words = (_phrases().get("worst_best") or {}).get("low_is_bad") or []
    low_bad = bool(words) and re.search(rf"\b(?:{_alternation(words)})\b", pq.entity.lower()) is not None
    if pq.intent in ("value", "exists"):
        pq.intent = "aggregate"  # "best A1c ever": a value, not whether one exists
    pq.aggregate = ("min" if low_bad else "max") if worst else ("max" if low_bad else "min")


def _aggregate(text: str) -> str | None:
    if asks_range(re.sub(r"\([^)]*\)", " ", text)):  # "(CKD range)" is an aside, not a range asked
        return "range"  # before max/min: "highest and lowest" asks for both
    for op, pattern in (
        ("mean", r"\baverag\w*|\bmean\b|\bavg\b|\btypical\b"),
        ("median", r"\bmedian\b"),
        ("max", r"\bhighest\b|\bmaximum\b|\bmax\b|\bpeak\b|\blargest\b|\bgreatest\b|\btop\b|\bworst\b|"
                r"^how (?:high|big|far up)\b(?=.*\b(?:get|got|go|gone|went|reach\w*|climb\w*|rise|rose|risen|spike\w*|peak\w*|been|ever)\b)"),
        ("min", r"\blowest\b|\bminimum\b|\bmin\b|\bnadir\b|\bsmallest\b|\bleast\b|"
                r"^how (?:low|small|far down)\b(?=.*\b(?:get|got|go|gone|went|reach\w*|drop\w*|fall|fell|fallen|dip\w*|sink|sank|been|ever)\b)"),
        ("sum", r"\btotal\b|\bsum\b|\bcumulative\b"),
    ):
        if re.search(pattern, text):
            return op
    return None


def _unit_word(text: str) -> str | None:
    """The time unit a question counts in ("mos since", "in yrs", "how many days")."""
    m = re.search(r"\b(days?|d|weeks?|wks?|months?|mos?|years?|yrs?)\b", text)
    if not m:
        return None
    unit = m.group(1).rstrip("s")
    return {"d": "days", "day": "days", "week": "weeks", "wk": "weeks", "month": "months", "mo": "months",
            "year": "years", "yr": "years"}[unit]


@lru_cache(maxsize=1)
def _demographic_fields() -> tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]:
    from fhirqa.project import lexicon_file

    fields = lexicon_file("demographics.json")["fields"]
    return tuple((name, tuple(re.compile(p) for p in spec["asks"])) for name, spec in fields.items())


def _demographic(text: str) -> str | None:
    # the patient view's other facts (lexicon/demographics.json): "marital status?", "language?", "sex at birth?"
    for name, patterns in _demographic_fields():
        if any(p.search(text) for p in patterns):
            return name
    if re.search(r"\b(?:still )?alive\b|\bliving\b(?! (?:situation|arrangements?|with|alone|will|at|in)\b)", text):
        return "is_alive"
    if re.search(r"\bdate of birth\b|\bdob\b|\bbirth ?date\b|\bbirthday\b|\bwhen was .* born\b|\bborn\b", text):
        return "birth_date"
    if re.search(r"\bgender\b|\bsex\b|\bmale or female\b", text):
        return "gender"
    if re.search(r"\b(?:date of death|dod|when did .* die|deceased|dead|died|pass(?:ed)? away)\b|^(?:(?:has|is|did)\s+(?:\S+\s+)?)?expired$|"
                 r"^did (?:he|she|they|(?:the )?(?:patient|pt)) (?:ever )?die\b", text):
        return "deceased"
    if re.search(r"\bwhat(?:'s| is)\b.*\bname\b|\bfull name\b|\bwho is (?:the|this) patient\b", text):
        return "name"
    return None


def _encounter_class(text: str) -> str | None:
    for code, pattern in _ENCOUNTER_CLASSES:
        if re.search(pattern, text):
            return code
    return None


def _view_order(text: str, pq: ParsedQuestion) -> list[str]:
    hinted = [view for view, pattern in _VIEW_CUES if re.search(pattern, text)]
    if pq.intent == "count" and pq.encounter_class:
        hinted.insert(0, "encounter")
    if pq.intent in ("trend", "change", "aggregate", "threshold", "value") and not hinted:
        hinted = ["observation"]
    if pq.intent == "daily_dose":
        hinted.insert(0, "medication")
    if hinted and hinted[0] == "allergy" and pq.intent in ("exists", "value", "time_of") \
            and re.search(r"\ballergic\b|\ballerg(?:y|ies)\b", text) \
            and not re.search(r"\b(?:ige|panel|tests?|testing|levels?|results?|screen\w*|drawn|sensitization)\b", text):
        # "is she allergic to penicillin?" asks the allergy list only: a penicillin she was given (Zosyn) is no allergy
        return ["allergy"]
    order = list(dict.fromkeys(hinted + DEFAULT_VIEW_ORDER))
    if "on" in text.split() and hinted and hinted[0] == "medication" and len(hinted) > 1:
        # "on" alone is a weak medication cue ("on admission", "on 2019-01-02")
        order.remove("medication")
        order.insert(1, "medication")
    return order


@lru_cache(maxsize=1)
def _protected_terms() -> tuple[str, ...]:
    """Lexicon terms that contain a grammar word ("white count", "heart rate", "high blood pressure")."""
    lexicon = _lexicon()
    if lexicon is None:
        return ()
    # Encounter-class phrases ("clinic visit", "ER visit") stay loose: the class regexes read their words.
    terms = [t for t in lexicon.terms() if " " in t and any(w in _STOP for w in t.split()) and not lexicon.encounter_class(t)]
    return tuple(sorted(terms, key=len, reverse=True))


@lru_cache(maxsize=1)
def _aggregate_terms() -> tuple[tuple[str, str], ...]:
    """Shorthand naming an item and an aggregate ("Tmax"), from the lexicon, longest first."""
    lexicon = _lexicon()
    entries = lexicon.data["abbreviations"].get("aggregate_terms", {}).get("entries", []) if lexicon else []
    pairs = [(e["phrase"].lower(), e["means"].lower()) for e in entries]
    return tuple(sorted(pairs, key=lambda p: len(p[0]), reverse=True))


@lru_cache(maxsize=1)
def _criteria() -> tuple[tuple[str, str, str], ...]:
    """(phrase, item, direction) of findings defined by an item's value ("hypoglycemia" = glucose below), longest first."""
    lexicon = _lexicon()
    entries = lexicon.data["abbreviations"].get("criteria", {}).get("entries", []) if lexicon else []
    rows = [(alias.lower(), e["item"], e["op"]) for e in entries for alias in [e["term"], *e.get("aliases", [])]]
    return tuple(sorted(rows, key=lambda r: len(r[0]), reverse=True))


def _criterion_item(text: str, op: str) -> str:
    """"any hypoglycemia (<70)?": with a number written, the finding is a threshold on its item (glucose < 70)."""
    for phrase, item, direction in _criteria():
        if op.startswith(direction) and (m := re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text)):
            return text[: m.start()] + item + text[m.end() :]
    return text


def _criterion_extreme(text: str, op: str) -> str:
    """"how high did her fever get", "highest fever": the extreme of a finding named alone is the extreme of its item
    (the highest temperature), when the finding lies that way and the question names nothing else ("max HR during
    the fever" keeps the heart rate)."""
    for phrase, _, direction in _criteria():
        if op.startswith(direction) and (m := re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", text)):
            others = re.sub(r"^how (?:low|high|small|big|far (?:up|down))\b", " ", text[: m.start()] + " " + text[m.end() :])
            if _has_item(others):
                return text
            return _criterion_item(text, op)
    return text


def _lexicon() -> Any:
    try:
        from fhirqa.agent.lexicon import Lexicon

        return Lexicon.load()
    except Exception:  # noqa: BLE001 - the parser works without a lexicon, only less well
        return None


def _lexicon_views(entity: str) -> list[str]:
    """Views the lexicon associates with the entity (conditions → condition, drugs → medication …)."""
    lexicon = _lexicon()
    if lexicon is None or not entity:
        return []
    # only readings of the whole phrase: "depression screening" is not a diagnosis because "depression" is
    whole = " ".join(entity.lower().split())
    from fhirqa.agent.lexicon import normalize

    spelled = {whole, whole.rstrip("s"), normalize(whole)}  # "ace-i" is the lexicon's "ace i"
    views = list(dict.fromkeys(str(getattr(e, "view", "")) for e in lexicon.expand(entity)
                               if getattr(e, "view", None) and getattr(e, "matched", whole) in spelled))
    used = re.sub(r"(?:\s+(?:use|usage|user|exposure|therapy|treatment))+$", "", whole)
    if not views and used != whole:
        return _lexicon_views(used)  # "ACE-I use", "statin therapy": the drug or class
    parts = whole.split("/")
    if not views and len(parts) > 1 and " " not in whole and all(len(p) > 1 for p in parts):
        # "Td/Tdap": alternatives of one kind are in the views every one of them is in
        each = [_lexicon_views(p) for p in parts]
        views = [v for v in each[0] if all(v in other for other in each[1:])]
    return views


_UNIT_WORDS = r"(?:mg|mcg|micrograms?|milligrams?|g|grams?|kg|units?|ml|mls|iu|meq|mmol)"


def _entity(text: str, pq: ParsedQuestion) -> str:
    text = re.sub(_PERSPECTIVE, " ", text)
    if (result_words := _result_phrases()) is not None:
        text = result_words.sub(" ", text)  # "what did it come back as": the frame, not the item
    if pq.category:
        text = re.sub(r"\b(?:blood ?work|blood tests?|labs?|lab work|lab tests?|lab results?)\b", " ", text)
    for term in _protected_terms():
        if term in text:
            text = re.sub(rf"\b{re.escape(term)}s?\b", lambda m: m.group(0).replace(" ", "_"), text)
    text = re.sub(r"\bright now\b|\bat (?:the )?moment\b|\bon file\b|\bof any kind\b|\bin total\b", " ", text)
    if (setting := setting_words()) is not None:
        text = setting.sub(" ", text)  # "anticoagulation at home": the drug class, taken at home
    if pq.aggregate == "range" and (statistic := _range_words()) is not None:
        text = statistic[0].sub(" ", text)  # "BP range", "how variable": the statistic, not the item
    if pq.aggregate in ("max", "min"):  # "how low did her K get": the frame, not the item
        text = re.sub(r"^how (?:low|high|small|big|far (?:up|down))\b", " ", text)
    text = re.sub(r"\bback\b(?=\s+(?:in|during|around|when|then)\b|\s*[?.!]*\s*$)", " ", text)  # "back in 1976"
    text = re.sub(r"\b\d+(?:\.\d+)?\s*(?:mg|mcg|g|units?)\b", " ", text) if pq.intent != "value" else text
    # A unit with no number before it is a unit only where a unit is spoken of ("mg of heparin", "in grams",
    # "mg per day"); elsewhere it is an analyte's symbol ("Mg result?": magnesium).
    text = re.sub(rf"\bin\s+{_UNIT_WORDS}\b|\b{_UNIT_WORDS}(?=\s+(?:of|per|each|daily)\b|\s*/)", " ", text)
    words = [w.strip(".,;:'\"()#") for w in text.split()]
    kept = [w.replace("_", " ") for w in words
            if w and w not in _STOP and w not in ("s", "'s") and not re.fullmatch(r"[\d.]+", w)
            and re.search(r"[a-z0-9]", w)]  # stray punctuation ("last admit - when?") is not a word
    if pq.encounter_class:
        # class words ("clinic visit", "ER") name the class, not an encounter type: drop them word by word
        words = [w for item in kept for w in item.split()]
        kept = [w for w in words if w not in _STOP and not re.fullmatch(
            r"inpatient|ip|emergency|er|ed|ambulatory|amb|outpatient|outpt|office|clinic|department|hospitali[sz]\w*|hospital|"
            r"admit(?:s|ted)?|admissions?|stays?|wellness|virtual|room|visits?|encounters?", w)]
    if not kept and (found := _frame_findings()) is not None and re.search(found[1], text):
        kept = [w for w in words if w in found[0]]  # "any fall documented in the notes?": the fall is the item
    half = len(kept) // 2
    if kept and len(kept) % 2 == 0 and kept[:half] == kept[half:]:
        kept = kept[:half]  # "sugar control at the last A1c" read as "a1c … a1c": one item named twice
    return " ".join(kept)


@lru_cache(maxsize=1)
def _frame_findings() -> tuple[frozenset[str], str] | None:
    """Frame words that are also findings, and the words that make a question about the notes
    (``lexicon/note_findings.json``)."""
    from fhirqa.project import data_dir

    path = data_dir("lexicon") / "note_findings.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text("utf-8"))
    return frozenset(data.get("frame_words_as_findings", [])), data.get("notes_asked", r"(?!)")


def _parse_lookup(pq: ParsedQuestion, text: str, own: tuple[str, ...] = ()) -> bool:
    """Patient lookup by name and birth date ("patient id for Ana Díaz, born 1970-03-02"); the name of the patient
    asked about is no lookup ("any flu vaccine on record for Evelyn?")."""
    named = re.search(r"\brecord (?:for|of) ([A-ZÀ-ÖØ-Þ][\w'\-]*)", pq.text)
    m = re.search(
        r"\b(?:patient (?:id|identifier)|id of|which patient|find (?:the )?patient|look ?up|identify (?:the )?patient|"
        r"patient named|(?:mrn|id) (?:for|of))\b|^find\b(?=.*\b(?:born|dob|id|mrn|patient)\b)|"
        r"\b(?:pull|bring|look|call) up (?:the |a )?(?:chart|record|file)s? (?:for|of)\b(?=.*\b(?:born|dob|d\.o\.b)\b)|"
        r"\b(?:chart|record|file) (?:for|of)\b(?=.*\b(?:born|dob|d\.o\.b)\b)",
        text,
    ) or (named and named.group(1).lower().removesuffix("'s") not in {n.lower() for n in own}) or (
        re.search(r"\b(?:id|identifier|mrn)\b", text) and re.search(DATE, text) and re.search(r"[A-ZÀ-ÖØ-Þ][a-zà-ÿ]+", pq.text))
    if not m:
        return False
    pq.intent = "lookup"
    born = re.search(rf"(?:\b(?:born(?: on)?|dob|date of birth|birth ?date|d\.o\.b\.|b\.)|\()\s*(?:is |of |:)?\s*(?P<date>{DATE})", text)
    if born:
        span = parse_date(born.group("date"), now=pq.now)
        pq.lookup_birth = span.start.date().isoformat() if span else None
    # The name is what the question capitalises (names keep their case), minus sentence-initial words.
    original = pq.text
    candidates = re.findall(r"(?:(?<=\s)|(?<=^)|(?<=\())([A-ZÀ-ÖØ-Þ][\w'\-]+(?:\s+(?:del|de|la|los|van|von|der|da|di|[A-ZÀ-ÖØ-Þ][\w'\-]+))*)", original)
    skip = {"What", "Which", "Who", "Find", "Look", "Patient", "Please", "Is", "The", "Id", "ID", "DOB", "MRN", "Record", "Get",
            "Show", "Give", "Could", "Can", "Tell", "Need", "I", "I'm", "I’m", "Im", "Pull", "Bring", "Open", "Chart",
            "Hi", "Hello", "Hey", "This", "My", "Me", "Mine"}
    months = {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec"}
    names = []
    for candidate in candidates:
        words = [w for w in candidate.split() if w not in skip and w not in months]
        if words:
            names.append(" ".join(words))
    if names:
        pq.lookup_name = max(names, key=len)
    return True


# --- frames over the whole question: a drug's start as a pivot, a stay's end or length, visits counted -------------

_PIVOT_DRUG = r"(?P<drug>[a-z][a-z0-9/_\-]*(?:\s+(?!(?:to|and|vs|versus|after|before|how|what|in|on|was|were|did|is)\b)[a-z0-9][a-z0-9/_\-]*){0,3}?)"
_STARTING = r"(?:(?:starting|beginning|initiating|initiation of|the start of|start of|going on|being (?:started|put) on)\s+)?"
_ARTICLE = r"(?:(?:a|an|the|his|her|their|my)\s+)?"
_AROUND_DRUG = [
    # "X before vs after (starting) the statin", "X pre/post metformin", "X after vs before lisinopril"
    re.compile(rf"\b(?:before|pre)\s*(?:vs\.?|versus|and|or|/|to|->|→|-)\s*(?:after|post)\s+{_STARTING}{_ARTICLE}{_PIVOT_DRUG}"
               r"(?=\s*(?:[,.;:?)(]|\s-|$)|\s+(?:was|were|is|in|on|how|what|did|has|have|therapy|treatment|start\w*)\b)"),
    re.compile(rf"\b(?:after|post)\s*(?:vs\.?|versus|and|/)\s*(?:before|pre)\s+{_STARTING}{_ARTICLE}{_PIVOT_DRUG}"
               r"(?=\s*(?:[,.;:?)(]|\s-|$)|\s+(?:was|were|is|in|on|how|what|did|has|have|therapy|treatment|start\w*)\b)"),
    # "from the last one before simva to the first one after", "from before the statin to after"
    re.compile(rf"\b(?:from\s+)?(?:the\s+)?(?:last\s+(?:one|value|result|reading|level|measurement)?\s*)?(?:before|pre|prior to)\s+"
               rf"{_STARTING}{_ARTICLE}{_PIVOT_DRUG}\s+(?:to|vs\.?|versus|and)\s+(?:the\s+)?(?:first\s+)?"
               r"(?:(?:one|value|result|reading|level|measurement)\s+)?(?:after|post|since)(?:\s+(?:it|that|starting|start(?:ed)?))?\b"),
]


_SUBJECT = r"(?:she|he|they|i|the patient|this patient|patient|the pt|pt)"
_BEFORE_DRUG = [
    # "before she went on naproxen", "before he started hep", "prior to starting hep", "just before Zosyn began",
    # "before pip/tazo was started": a start said in words, so the name is a drug or a therapy
    re.compile(rf"\b(?:just\s+|right\s+|immediately\s+)?(?:before|prior to|preceding|ahead of)\s+(?:{_SUBJECT}\s+"
               r"(?:was\s+|were\s+|got\s+)?(?:started|began|begun|initiated|put|went)\s+(?:on\s+|taking\s+)?|"
               r"(?:starting|beginning|initiating|initiation of|the start of|start of|going on|being (?:started|put) on)\s+)"
               rf"{_ARTICLE}(?P<drug>[a-z0-9][a-z0-9 /_\-]*?)(?:\s+(?:therapy|treatment|use))?"
               r"(?=\s*(?:[,.;:?]|$)|\s+(?:was|were|is|what|the|value|level)\b)"),
    re.compile(rf"\b(?:just\s+|right\s+|immediately\s+)?(?:before|prior to|preceding)\s+{_ARTICLE}(?P<drug>[a-z0-9][a-z0-9 /_\-]*?)\s+"
               r"(?:(?:therapy|treatment)\s+)?(?:was\s+|were\s+)?(?:first\s+)?(?:started|began|begun|initiated|ordered|prescribed)\b"),
    # "pre-naproxen creatinine", "Cr prior to naproxen", "renal fxn before vanco": a drug the lexicon knows
    re.compile(rf"\b(?:(?:just\s+|right\s+)?(?:before|prior to|preceding)\s+{_ARTICLE}|pre-)(?P<drug>[a-z][a-z0-9/_\-]*(?:\s+[a-z0-9][a-z0-9/_\-]*)?)"
               r"(?=\s*(?:[,.;:?]|$)|\s+(?:was|were|is|what|the|value|level|creat\w*|k|gfr|egfr|potassium|labs?)\b|(?=\s))"),
]


_SPAN_BEFORE = re.compile(r"\b(?:day|days|morning|night|evening|afternoon|hours?|hrs?|h|weeks?|wks?|months?|mos?)\s*$")


def _resolved_asked(text: str) -> tuple[str, bool]:
    """The question without its "resolved?" words, and whether it asked so ("obesity resolved?", "is the sinusitis
    cleared up?"): a yes/no or terse question whose last words say a problem is over
    (``question_phrases.json`` ``resolved_check``)."""
    words = _phrases().get("resolved_check")
    m = re.search(words["pattern"], text) if words else None
    if m is None or not (re.match(r"^(?:is|are|was|were|has|have|had|did|does|do)\b", text) or len(text[: m.start()].split()) <= 4):
        return text, False
    return text[: m.start()].rstrip(), True


def _before_drug(text: str) -> tuple[str, tuple[int, int]] | None:
    """The drug whose start a window ends at ("Cr before she went on naproxen") and the span of the phrase; a bare
    name ("prior to naproxen", "pre-naproxen") counts only when the lexicon knows it as a drug or a drug class, so
    "before surgery" or "pre-op" never reads as one."""
    for index, pattern in enumerate(_BEFORE_DRUG):
        for m in pattern.finditer(text):
            if _SPAN_BEFORE.search(text[: m.start()]):
                continue  # "the day before starting heparin", "6 h prior to vanc": a span the time anchors read
            drug = m.group("drug").strip()
            if index < 2 or _names_drug_or_slip(drug):
                return drug, m.span()
            if " " in drug and _names_drug_or_slip(first := drug.split()[0]):
                return first, (m.start(), m.start("drug") + len(first))
    return None


def _names_drug_or_slip(name: str) -> bool:
    """Whether ``name`` as a whole is a drug or a drug class the lexicon knows, spelled right or one slip away
    ("ceftriaxon"; "naproxen creatinine" is not: a drug and a test)."""
    from fhirqa.agent.resolver import closest_term

    lexicon = _lexicon()
    if lexicon is None or not name:
        return False

    def known(phrase: str) -> bool:
        return bool(lexicon.class_members(phrase)) or any(e.source in ("drugs", "drug_class") for e in lexicon.lookup(phrase))

    near = closest_term(lexicon, name.lower()) if len(name) >= 5 else None
    return known(name) or (near is not None and known(near))


def _around_drug(text: str) -> tuple[str, tuple[int, int]] | None:
    """The drug a change pivots on ("LDL before vs after starting the statin") and the span of the phrase."""
    for pattern in _AROUND_DRUG:
        if m := pattern.search(text):
            return m.group("drug").strip(), m.span()
    return None


# Words of stay talk that name no item ("discharged from the hospital most recently", "how long was he in for").
_STAY_WORDS = re.compile(r"\b(?:hospital|ward|home|recently|length|stay(?:ed|s)?|nights?|inpatient|for|there|kept|out|"
                         r"released|leave|left|sent|send|came|come|got|get|goes|going)\b")
_CLASS_WORDS = (r"inpatient|ip|emergency|er|ed|ambulatory|amb|outpatient|outpt|office|clinic|department|hospitali[sz]\w*|hospital|"
                r"admit(?:s|ted)?|admissions?|stays?|wellness|virtual|urgent|care|room|visits?|encounters?")


@lru_cache(maxsize=1)
def _stay_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(event, pattern) for the words that ask about a stay's end or length (lexicon/encounters.json stay_events)."""
    lexicon = _lexicon()
    events = lexicon.data["encounters"].get("stay_events", {}) if lexicon else {}
    return tuple((event, re.compile(pattern)) for event in ("hospital_day", "length", "discharge")
                 for pattern in events.get(event, []))


def _stay_frame(pq: ParsedQuestion, text: str) -> None:
    """"last discharge date?", "LOS?", "how long was he in for": a question about a stay itself, not a value in it.

    Counts only when the words name nothing else: "K at discharge" is a potassium value, "the discharge summary"
    a note. Length questions become ``stay_length``; discharge questions keep a date / time-since / count / yes-no
    intent (a date by default) and are answered from the stay's end.
    """
    event = _stay_event(text)
    if event is None:
        return
    pq.stay_event, pq.entity = event, ""
    if event in ("length", "hospital_day"):
        pq.intent, pq.time_unit = "stay_length", "days" if event == "hospital_day" else _unit_word(text) or "days"
    elif pq.intent not in ("time_of", "time_since", "count", "exists"):
        pq.intent = "time_of"


def _stay_event(text: str) -> str | None:
    """"discharge", "length" or "hospital_day" when the words ask about a stay's end, length or day number and name
    nothing else, else None."""
    hits = [event for event, pattern in _stay_patterns() if pattern.search(text)]
    if not hits:
        return None
    left = text
    for _, pattern in _stay_patterns():
        left = pattern.sub(" ", left)
    left = re.sub(rf"\b(?:{_CLASS_WORDS})\b", " ", _STAY_WORDS.sub(" ", left))
    return None if _has_item(left) else hits[0]


def _counts_visits(text: str) -> bool:
    """Visits of a class asked with no value word ("ED visits in the past two years?"): how many."""
    return bool(re.search(r"\b(?:visits|encounters|admissions|admits|hospitali[sz]ations|stays|trips)\b", text)
                and (_encounter_class(text) or re.fullmatch(r"\W*(?:visits|encounters)\W*", text))
                and not re.search(_VALUE_CUES, text)
                and not _has_item(re.sub(rf"\b(?:{_CLASS_WORDS}|trips?)\b", " ", text)))


# --- units an answer is asked in ("in lbs", "(mmol/L)") ----------------------------------------------------------


@lru_cache(maxsize=1)
def _unit_aliases() -> dict[str, str]:
    """Spelling → unit name, from lexicon/abbreviations.json ``units`` (the dimension tables' own names included)."""
    lexicon = _lexicon()
    table = lexicon.data["abbreviations"].get("units", {}) if lexicon else {}
    names = {unit: unit for dimension in table.get("dimensions", {}).values() for unit in dimension}
    return names | {k.lower(): v for k, v in table.get("aliases", {}).items()}


@lru_cache(maxsize=1)
def _unit_question_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]] | None:
    """(the unit asked about, "(units)" beside a value, the verbs around a unit question) from
    ``question_phrases.json`` ``unit_question``."""
    words = _phrases().get("unit_question")
    if not words:
        return None
    unit, which, verbs = (_alternation(words[k]) for k in ("unit_words", "question_words", "verbs"))
    # "what units", "the units of" (not "how many units of insulin"), "K units?" (not "5000 units", "in units")
    asks = re.compile(rf"(?:\bin\s+)?\b(?:{which})\s+(?:{unit})\b|(?:^|\b(?:the|in)\s+)(?:{unit})\s+(?:of|for)\b|"
                      rf"(?<![\d,.]\s)(?<![\d,.])(?<!\bin\s)\b(?:{unit})\s*$")
    return asks, re.compile(rf"\(\s*(?:{unit})\s*\)"), re.compile(rf"\b(?:{verbs})(?:\s+in)?\b")


def _unit_question(text: str) -> tuple[str, bool, bool]:
    """The question without the words asking about its unit; whether the unit itself is asked ("K units?", "in what
    units is Hgb reported", "units of the last glucose"); whether that was a "units" ending the question (after a
    drug it is a dose unit instead: "total insulin units"). "(units)" beside a value question ("total hep given on
    6/29 (units)?") asks for the value with its unit and is only dropped, never read as a conversion into
    international units."""
    patterns = _unit_question_patterns()
    if patterns is None:
        return text, False, False
    asks, beside, verbs = patterns
    asked = last = False
    if m := asks.search(text):
        last = m.end() == len(text.rstrip())
        text = text[: m.start()] + " " + text[m.end() :]
        text, asked = verbs.sub(" ", text), True  # "… reported", "… measured in": the asking words, not the item
    return re.sub(r"\s+", " ", beside.sub(" ", text)).strip(), asked, last


def _asked_unit(text: str) -> tuple[str, str | None]:
    """The question without the unit its answer is asked in, and that unit ("weight in lbs" → ("weight", "lb")).

    "in <unit>" counts for any unit the table knows except one-letter and look-alike words ("in in"); a unit in
    parentheses ("K+ (mmol/L)?") is asked too. A lab unit with a slash is kept as written.
    """
    m = _asked_unit_pattern().search(text)
    if not m:
        return text, None
    unit = m.group("u") or m.group("l")
    return text[: m.start()] + " " + text[m.end() :], _unit_aliases().get(unit, unit)


_AMOUNT_IN_UNIT = re.compile(rf"\b(?P<how>how many|total)\s+(?P<u>(?!kg\b){_UNIT_WORDS})(?:\s+of)?\b")


def _amount_in_unit(text: str) -> tuple[str, str | None]:
    """"how many units of heparin were given", "total grams of vanc on 3/16": a dose unit counted is an amount asked
    in that unit ("how much heparin", in units), not a number of records; the question reworded so, and the unit."""
    m = _AMOUNT_IN_UNIT.search(text)
    if not m:
        return text, None
    unit = m.group("u")
    words = "how much" if m.group("how") == "how many" else "total"
    return text[: m.start()] + words + text[m.end() :], _unit_aliases().get(unit, unit)


@lru_cache(maxsize=1)
def _asked_unit_pattern() -> re.Pattern[str]:
    words = sorted((w for w in _unit_aliases() if len(w) > 1 and w not in ("in", "ft", "u")), key=len, reverse=True)
    lab = r"(?:[mnpµuk]?(?:mol|g|eq|iu|u)|cells|%)/(?:[dmµ]?l|kg|min|hr?|day|d)"
    alternatives = "|".join([lab, *(re.escape(w).replace(r"\ ", r"\s+") for w in words)])
    # one letter is a unit only where nothing else can be meant: "(F)", "in F" ending the question (not "in C clinic")
    letters = "|".join(w for w in _unit_aliases() if len(w) == 1 and w.isalpha() and w != "u") or "(?!x)x"
    return re.compile(rf"(?:\bin\s+|\(\s*)(?:(?P<u>{alternatives})(?![\w/])|(?P<l>{letters})(?=\s*(?:\)|[,.;:]|$)))\s*\)?")


# --- spelling: a word the lexicon nearly knows ("wieght", "platlets") ----------------------------------------------


@lru_cache(maxsize=1)
def _spelling_index() -> tuple[frozenset[str], dict[str, tuple[str, ...]]]:
    """(known words, deletion variant → words): one-edit neighbours of the words naming labs, vitals, conditions,
    procedures, vaccines and stays (5+ letters). Drug names are left out: brands sit one letter from English words
    (Aleve, alive), and a misspelt drug is matched by the resolver's own spelling tolerance."""
    lexicon = _lexicon()
    known_words = {w for term in (lexicon.terms() if lexicon else []) for w in re.findall(r"[a-z]+", term)}
    words = set(_lexicon_spelling_words())
    frame = _frame_words()
    known = frozenset(known_words | words | _STOP | frame.targets | frame.real)
    index: dict[str, set[str]] = {}
    for word in words | {w for w in frame.targets if len(w) >= 5}:
        if len(word) >= 5:
            for variant in {word} | {word[:i] + word[i + 1 :] for i in range(len(word))}:
                index.setdefault(variant, set()).add(word)
    return known, {k: tuple(sorted(v)) for k, v in index.items()}


@lru_cache(maxsize=1)
def _lexicon_spelling_words() -> frozenset[str]:
    """The words naming labs, vitals, conditions, procedures, vaccines and stays, and their singular stems."""
    lexicon = _lexicon()
    phrases = [alias for name in ("abbreviations", "conditions", "procedures", "immunizations") if lexicon
               for entry in lexicon.data[name]["entries"] for alias in [entry["term"], *entry.get("aliases", [])]]
    phrases += lexicon.data["encounters"].get("stay_events", {}).get("words", []) if lexicon else []
    words = {w for phrase in phrases for w in re.findall(r"[a-z]+", phrase.lower())}
    words |= {w[:-1] for w in words if w.endswith("s") and not w.endswith("ss")}  # matched against singular stems
    return frozenset(words)


_SOFT_LETTERS = frozenset("aeiouyhw")  # letters a fast typist drops or swaps for another without noticing


def _typing_slip(typed: str, word: str, short: bool) -> bool:
    """Whether ``typed`` is ``word`` with a slip that rarely makes another English word: two neighbours swapped
    ("durign"), a doubled letter single or a letter doubled ("curent", "durring"), a vowel for a vowel ("stey"), a
    vowel, h or w left out ("vists", "hw", "wat"); in a word of 5+ letters any letter left out ("takin"). A consonant
    for a consonant ("skill" / still, "timed" / times) or a consonant left out of a short word ("say" / stay,
    "log" / long) makes a word of its own: never a slip here."""
    if len(typed) == len(word):
        diff = [i for i in range(len(word)) if typed[i] != word[i]]
        if len(diff) == 2:
            return True  # _one_edit already checked it is a swap of neighbours
        return len(diff) == 1 and typed[diff[0]] in "aeiouy" and word[diff[0]] in "aeiouy"
    if len(typed) + 1 == len(word):
        i = next((k for k in range(len(typed)) if typed[k] != word[k]), len(typed))
        dropped = word[i]
        doubled = (i > 0 and word[i - 1] == dropped) or (i + 1 < len(word) and word[i + 1] == dropped)
        return dropped in _SOFT_LETTERS or doubled or not short
    if len(typed) == len(word) + 1:
        i = next((k for k in range(len(word)) if typed[k] != word[k]), len(word))
        return (i > 0 and typed[i - 1] == typed[i]) or (i + 1 < len(typed) and typed[i + 1] == typed[i])  # "durring"
    return False


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one insertion, deletion, substitution or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _proper_names(question: str) -> frozenset[str]:
    """Words capitalised inside a sentence ("find Trey Berge", "is Mary on a statin"): names, never respelt."""
    return frozenset(w.lower() for w in re.findall(r"(?<=[a-z0-9,] )[A-Z][a-z]+\b", question))


def _respell(text: str, proper: frozenset[str] = frozenset()) -> str:
    """Words of 5+ letters the lexicon does not know, respelt as the one lexicon or frame word one typing slip away.

    Only when exactly one word is that close and it begins with the same letter ("wieght" → weight, "platlets" →
    platelets, "durign" → during); any other word is left alone (a drug name the lexicon lacks stays as written).
    Shorter words are respelt as frame words only (:func:`_respell_short`).
    """
    known, index = _spelling_index()
    frame_only = _frame_words().targets - _lexicon_spelling_words()

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        if word in known or word.rstrip("s") in known or len(word) < 2 or word in proper:
            return word
        if len(word) < 5:
            return _respell_short(word)
        # the lexicon's words are singular: "platlets" is looked up as "platlet", and keeps its "s"
        stem, plural = (word[:-1], "s") if word.endswith("s") and not word.endswith("ss") else (word, "")
        near = {c for variant in {stem} | {stem[:i] + stem[i + 1 :] for i in range(len(stem))}
                for c in index.get(variant, ()) if c[0] == stem[0] and _one_edit(stem, c)
                and (c not in frame_only or _typing_slip(stem, c, short=False))}
        return near.pop() + plural if len(near) == 1 else word

    return re.sub(r"(?<![\w/-])[a-z]+(?![\w/-])", fix, text)


@dataclass(frozen=True)
class _FrameWords:
    targets: frozenset[str]  # words of a question's frame a slip may be respelt as
    real: frozenset[str]  # English words a slip away from a frame word that mean something else


def _question_words() -> dict[str, Any]:
    """``lexicon/question_words.json``: words and phrasings of a question's frame (see its description)."""
    return _optional_lexicon("question_words.json")


@lru_cache(maxsize=1)
def _frame_words() -> _FrameWords:
    """The frame words a typing slip is respelt as, and the real words never respelt."""
    data = _question_words()
    return _FrameWords(frozenset(data.get("frame_words", [])), frozenset(data.get("real_words", [])))


def _words_pattern(key: str, field: str) -> re.Pattern[str] | None:
    """Whole words or phrases of ``question_words.json`` ``key``/``field`` as one pattern (None when absent)."""
    words = (_question_words().get(key) or {}).get(field)
    return re.compile(rf"(?<![\w/])(?:{_alternation(words)})(?![\w/])") if words else None


@lru_cache(maxsize=1)
def _class_with_example(entity: str) -> str:
    """"ARB like losartan", "a statin such as atorvastatin": a drug class named with an example is the class (its
    members include the example); any other "X like Y" is left as written."""
    from fhirqa.agent.lexicon import Lexicon

    found = re.fullmatch(r"(?P<cls>.+?)\s+(?:like|such as|e\.?g\.?|eg|for example|say)\s+(?P<example>.+)", entity, re.I)
    if found is None:
        return entity
    lexicon = Lexicon.load()
    members = lexicon.class_members(found.group("cls"))
    example = lexicon.drug_generic(found.group("example")) or found.group("example").lower()
    return found.group("cls") if members and example in members else entity


def _lay_items() -> tuple[tuple[str, str], ...]:
    """(phrase, means) of ``question_words.json`` ``lay_items``, longest phrase first."""
    entries = (_question_words().get("lay_items") or {}).get("entries", [])
    return tuple(sorted(((e["phrase"].lower(), e["means"]) for e in entries), key=lambda pm: len(pm[0]), reverse=True))


_PAREN_GLOSS = re.compile(r"(?<=\w)\s*\(([^()]{1,40})\)")


def _narrow_gloss(m: re.Match[str]) -> str:
    """"hemoglobin (blood count)", "top number (BP)": a gloss naming a group or panel the item belongs to is dropped,
    so the item written before it stays the one asked; a gloss naming one item ("sugar test (the A1c)") is kept."""
    from fhirqa.agent.lexicon import Lexicon

    inner = re.sub(r"^(?:the|a|an|my|her|his)\s+", "", m.group(1).strip())
    readings = Lexicon.load().expand(inner) if inner else []
    broad = any(e.source == "lab_class" or e.detail.get("components") or e.detail.get("group") for e in readings)
    return " " if broad else m.group(0)


@lru_cache(maxsize=1)
def _family_subject() -> re.Pattern[str] | None:
    """"my daughter", "my son's": a parent naming the patient (``patient_voice.json`` ``family_subjects``)."""
    from fhirqa.project import lexicon_file

    words = (lexicon_file("patient_voice.json").get("family_subjects") or {}).get("words") or []
    return re.compile(rf"\b(?:my|our)\s+(?:{_alternation(words)})(?:'s|s')?(?=\W|$)") if words else None


@lru_cache(maxsize=1)
def _death_words() -> re.Pattern[str] | None:
    return _words_pattern("death_words", "words")


@lru_cache(maxsize=1)
def _result_phrases() -> re.Pattern[str] | None:
    return _words_pattern("result_phrases", "phrases")


def _history_check(pq: ParsedQuestion, text: str) -> None:
    """"hx COPD?", "h/o CAD?", "prior colonoscopy?": whether the history holds a diagnosis, procedure, vaccine or
    allergy (``question_words.json`` ``history_leads``); "prior A1c?" still asks for a value."""
    words = _question_words().get("history_leads") or {}
    leads = words.get("leads")
    if pq.intent not in ("value", "exists") or not leads or pq.unit_asked:
        return
    joins = _alternation(["of", *words.get("joins", [])])
    lead = re.match(rf"^(?:{_alternation(leads)})(?![\w/])\s*(?:(?:{joins})\s+)?", text)
    if lead is None:
        return
    # the entity keeps the question's capitals ("PMH stroke"): the leads and joins are matched in any case
    entity = re.sub(rf"^(?:(?:{_alternation(leads)})(?![\w/])\s*(?:(?:{joins})\s+)?)+", "", pq.entity,
                    flags=re.I).strip()
    views = _lexicon_views(entity)
    if views[:1] and views[0] in words.get("views", []):
        pq.intent, pq.entity, pq.lexicon_views = "exists", entity, views


def _disease_not_vaccine(pq: ParsedQuestion) -> None:
    """"hx of covid?", "ever had covid?", "prior covid infection on record?": an item that is both a disease and the
    target of a vaccine means the disease unless a vaccine word points at the vaccines ("covid vaccine?"): the
    immunizations are not searched, since a vaccine is not the disease (``question_words.json``
    ``disease_over_vaccine``)."""
    rule = _question_words().get("disease_over_vaccine") or {}
    disease, vaccine = rule.get("disease"), rule.get("vaccine")
    lexicon = _lexicon()
    if not disease or not vaccine or vaccine in pq.hinted or not pq.entity or lexicon is None:
        return
    read = {str(getattr(e, "view", "")) for e in lexicon.expand(pq.entity)}
    if {disease, vaccine} <= read:
        pq.views = [v for v in pq.views if v != vaccine]
        pq.lexicon_views = [v for v in pq.lexicon_views if v != vaccine]


def _says_started(text: str) -> bool:
    """A start word of ``started_in_window`` before a stay phrase ("new meds since admit", "what was started this
    admission"): the stay is the window of the starts, not the question."""
    verbs: list[str] = (_phrases().get("started_in_window") or {}).get("verbs") or []
    return bool(verbs) and re.search(rf"\b(?:{_alternation(verbs)})\b", text) is not None


def _started_in_window(pq: ParsedQuestion, text: str) -> None:
    """"what was started in the last 90 days?": the items first recorded in the window (``question_phrases.json``
    ``started_in_window``), medications unless the words point at another view."""
    words = _phrases().get("started_in_window") or {}
    verbs = words.get("verbs")
    # a window from a date, the current stay ("new meds since admission") or an event ("meds started after the CABG"):
    # the stay's or the event's dates are resolved by the plan
    placed = pq.window is not None and (pq.window.start is not None or pq.window.anchor in ("admission", "event"))
    # "any new meds this admission?": a yes/no whose answer names what was started (pq.yes_no says so to the plan)
    asks_any = pq.intent == "exists" and re.match(r"^(?:any|were there any|was anything|has anything)\b", text.strip()) is not None
    if (pq.intent not in ("value", "list_items") and not asks_any) or not verbs or not placed or (pq.yes_no and not asks_any):
        return
    pattern = rf"\b(?:{_alternation(verbs)})\b"
    if not re.search(pattern, text):
        return
    view_words = re.compile(r"\b(?:meds?|medications?|medicines?|drugs?|rx|prescriptions?|diagnos[ie]s|dx|conditions?|"
                            r"problems?|procedures?|vaccines?|immuni[sz]ations?|anything|things?|what)\b")
    if re.sub(pattern, " ", view_words.sub(" ", pq.entity.lower())).strip():
        return  # "when was metformin started": an item is named
    kinds = ("medication", "condition", "procedure", "immunization")
    view = next((v for v in pq.hinted if v in kinds), words.get("default_view", "medication"))
    pq.intent, pq.aggregate, pq.entity = "list_items", "started", ""
    pq.yes_no = pq.yes_no or asks_any
    pq.views = [view, *(v for v in pq.views if v != view)]


def _event_date(pq: ParsedQuestion, text: str) -> None:
    """"last flu shot?", "last Td/Tdap?": the first or last record of a kind that carries no value asks for its date
    (``question_words.json`` ``event_date``), unless a word asks for its name ("what was her last vaccine")."""
    words = _question_words().get("event_date") or {}
    # "last ED visit?", "last clinic visit?": a visit of a class, with nothing else named, is an event too
    visit = bool(pq.encounter_class) and not pq.entity and set(pq.hinted) <= {"encounter"}
    nouns = (words.get("event_nouns") or {}).get(pq.lexicon_views[0] if pq.lexicon_views else "", [])
    named = bool(nouns) and re.search(rf"\b(?:{_alternation(nouns)})\b", text) is not None  # "last Rx for naproxen?"
    # "last tetanus (Td) shot?": an item the lexicon does not know, of a kind the question's words hint at
    kind = pq.lexicon_views[:1] or (pq.hinted[:1] if pq.entity else [])
    if pq.intent != "value" or pq.unit_asked or pq.yes_no or pq.window is not None or not (visit or named or (
            kind and kind[0] in words.get("views", []))):
        return
    if not re.search(r"\b(?:last|latest|most recent|recent|first|earliest|initial|1st)\b", text):
        return
    names = words.get("name_words")
    if names and re.search(rf"\b(?:{_alternation(names)})\b", text):
        return
    pq.intent = "time_of"


def _respell_short(word: str) -> str:
    """A word of 2-4 letters nothing knows, as the one frame word it is a slip of ("stey" → stay, "hav" → have,
    "hw" → how), else as written. Four letters: one edit from a frame word of 4+ letters; two or three: a frame
    word with one letter (never the first) dropped, since a short word one substitution away from another is as
    likely a word of its own; either way only a slip :func:`_typing_slip` accepts. Only the frame is respelt here: a
    short clinical word ("hgb", "inr") is left to the resolver, which knows the patient's own items."""
    targets = _frame_words().targets
    if len(word) == 4:
        near = {t for t in targets if len(t) >= 4 and t[0] == word[0] and _one_edit(word, t) and _typing_slip(word, t, short=True)}
    else:
        near = {t for t in targets if len(t) == len(word) + 1 and t[0] == word[0]
                and any(t[:i] + t[i + 1 :] == word for i in range(1, len(t))) and _typing_slip(word, t, short=True)}
    return near.pop() if len(near) == 1 else word
