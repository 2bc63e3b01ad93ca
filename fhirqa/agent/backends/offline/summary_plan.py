"""Offline plans for questions about the patient as a whole, and two readings the intent plans lack.

- A summary ("brief summary of this patient", "one-liner", "sign-out summary", "who is this patient"): an
  extractive snapshot built from the views (age and sex, active problems, current medications, allergies, the
  latest vital signs, the last encounter and the last admission), every row it names cited. The words are data
  (``lexicon/question_phrases.json`` ``patient_snapshot``): a question is a summary when nothing is left once the
  summary words and the filler are taken out, so "discharge summary" and "summary of his labs" are not.
- The primary care clinician ("who is his PCP?"): the practitioner named on the most ambulatory encounters, said to
  come from the encounters (the views hold no Patient.generalPractitioner and no CareTeam).
- Whether any record of a kind exists ("any allergies?"): "No allergies are recorded.", or the record's own
  no-known-allergy statement.
- A group of results named by a word the parser keeps out of the item ("vitals", "last set of vitals", "were vitals
  stable", "VS"): the group of ``lexicon/item_groups.json`` becomes the item (``named_group``).
- A visit named by its kind ("last physical", "annual exam", "wellness visit"): when no encounter name holds the
  words, the encounter types of ``lexicon/encounters.json`` find the visits by their type codes (``coded_visits``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from dataclasses import replace
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.project import lexicon_file

Call = tuple[str, dict[str, Any]]
Plan = Generator[Call, dict[str, Any], None]

# How many items of a list a summary names before it says how many more there are: a snapshot, not the chart.
SUMMARY_LIST_ITEMS = 8


@lru_cache(maxsize=1)
def _words() -> dict[str, Any]:
    return dict(lexicon_file("question_phrases.json").get("patient_snapshot") or {})


@lru_cache(maxsize=1)
def _group_words() -> dict[str, Any]:
    return dict(lexicon_file("question_phrases.json").get("named_group") or {})


def _plain(text: str) -> str:
    """Lower case, curly quotes straightened, punctuation other than word-joining marks turned into spaces."""
    text = text.lower().replace("’", "'").replace("‘", "'")
    text = re.sub(r"[^\w'/&#+-]+", " ", text)
    return re.sub(r"\s+", " ", text).strip(" '")


def _phrase_pattern(phrases: list[str]) -> str:
    ordered = sorted(phrases, key=len, reverse=True)
    return r"(?<![\w'/-])(?:" + "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in ordered) + r")(?![\w/-])"


def snapshot_kind(pq: ParsedQuestion) -> str | None:
    """"summary" or "care_team" when the question asks for one and names nothing else, else None."""
    words = _words()
    if not words:
        return None
    text = _plain(pq.text)
    for kind, questions in (words.get("questions") or {}).items():
        if text in questions:
            return str(kind)
    filler = set(words.get("filler") or [])
    for kind in ("summary", "care_team"):
        phrases = words.get(kind) or []
        if not phrases or not re.search(_phrase_pattern(phrases), text):
            continue
        rest = re.sub(_phrase_pattern(phrases), " ", text).replace("'s", " ")
        if all(w in filler for w in rest.split()):
            return kind
    return None


def plan_snapshot(pq: ParsedQuestion, kind: str) -> Plan:
    """The plan for a ``snapshot_kind`` question."""
    if kind == "care_team":
        yield from plan_care_team(pq)
    else:
        yield from plan_summary(pq)


def _run(sub: Plan, seen: dict[str, dict[str, Any]] | None = None) -> Generator[Call, dict[str, Any], dict[str, Any] | None]:
    """Drive another plan's tool calls and return the arguments of its final answer instead of ending the question.

    ``seen`` collects each result by its handle: a set's ``items`` (its distinct names, kept whole when the results
    are replayed; a preview of rows is not) name what a list holds.
    """
    try:
        call = next(sub)
        while True:
            if call[0] == "final_answer":
                return dict(call[1])
            result = yield call
            if seen is not None and result.get("handle"):
                seen[str(result["handle"])] = result
            call = sub.send(result)
    except StopIteration:
        return None


def _sub(pq: ParsedQuestion, **fields: Any) -> ParsedQuestion:
    """A question of the summary's own: the same instant, the given fields."""
    return ParsedQuestion(text=pq.text, now=pq.now, **fields)


def _items(result: dict[str, Any]) -> tuple[list[str], int]:
    """The distinct item names a record-set result names, and how many there are in all."""
    names = [str(n) for n in result.get("items") or [] if n is not None]
    return names, len(names) + int(result.get("items_omitted") or 0)


def _joined(names: list[str], total: int) -> str:
    shown = names[:SUMMARY_LIST_ITEMS]
    more = total - len(shown)
    return "; ".join(shown) + (f" (and {more} more)" if more > 0 else "")


def plan_summary(pq: ParsedQuestion) -> Plan:
    """An extractive snapshot of the record as of ``now``: each line from the views, each row it names cited."""
    from fhirqa.agent.backends.offline import plans

    lines: list[str] = []
    evidence: list[str] = []
    person = yield ("get_resources", {"view": "patient", "fields": ["name", "gender", "birth_date", "deceased_time"]})
    if person.get("count"):
        row = plans._row((yield ("get_by_index", {"records": person["handle"], "index": 0, "order_by": "birth_date"})))
        who = [str(row["name"])] if row.get("name") else []
        # a death recorded after the question's instant has not happened yet for the asker
        death = plans._instant(row.get("deceased_time"))
        died = death is not None and (pq.now is None or death <= pq.now)
        if row.get("birth_date"):
            args: dict[str, Any] = {"start": row["birth_date"], "unit": "years"}
            if died:
                args["end"] = row["deceased_time"]
            age = yield ("calculate_time_offset", args)
            if age.get("value") is not None:
                who.append(f"{plans._fmt(age['value'])}-year-old {row.get('gender') or ''}".strip())
            who.append(f"born {plans._day(str(row['birth_date']))}")
        elif row.get("gender"):
            who.append(str(row["gender"]))
        if died:
            who.append(f"died {plans._day(str(row['deceased_time']))}")
        if who:
            lines.append(", ".join(who))
    for label, kind in (("Active problems", "condition"), ("Current medications", "medication"), ("Allergies", "allergy")):
        seen: dict[str, dict[str, Any]] = {}
        got = yield from _run(plans.plan_active_list(_sub(pq, intent="active_list", list_kind=kind, views=[kind])), seen)
        handle = (got or {}).get("list_from")
        if handle and handle in seen:
            names, total = _items(seen[handle])
            evidence.append(handle)
            lines.append(f"{label}: {_joined(names, total)}")
        else:
            lines.append(f"{label}: none recorded")
    vitals = yield from _run(plans.plan_value(_sub(pq, intent="value", entity=_vitals_word(), views=["observation"],
                                                   hinted=["observation"])))
    if vitals and vitals.get("status", "answered") == "answered" and vitals.get("answer"):
        lines.append(_one_day(re.sub(r"^The most recent\s+", "", str(vitals["text"])).rstrip("."), "Latest vitals"))
    encounters = yield ("get_resources", {"view": "encounter"})
    if encounters.get("count"):
        last = plans._row((yield ("get_by_index", {"records": encounters["handle"], "index": -1})))
        stays = yield ("filter_by_value", {"records": encounters["handle"], "op": "==", "value": "IMP",
                                           "field": "class_code"})
        stay = plans._row((yield ("get_by_index", {"records": stays["handle"], "index": -1}))) if stays.get("count") else None
        if stay is not None and stay.get("ref") == last.get("ref"):
            word = "Current admission" if _ongoing(stay, pq) else "Last admission"
            lines.append(f"{word} (the last encounter): {_visit(stay, pq)}")
        else:
            lines.append(f"Last encounter: {_visit(last, pq)}")
            lines.append(f"Last admission: {_visit(stay, pq)}" if stay is not None else "Last admission: none recorded")
    if not lines:
        yield plans.final([], "The record holds nothing to summarize for this patient.", status="no-data")
        return
    as_of = f" (as of {plans._day(plans._iso(pq.now))})" if pq.now else ""
    text = f"Summary{as_of}: " + ". ".join(lines) + "."
    yield ("final_answer", {"answer": lines, "text": text, "status": "answered", "evidence": evidence})


def _one_day(parts: str, title: str) -> str:
    """"Latest vitals (2026-04-09): HR: 72 /min; …" when every "<item>: <value> on <day>" part is of one day."""
    days = set(re.findall(r" on (\d{4}-\d{2}-\d{2})(?:;|$)", parts))
    if len(days) == 1:
        return f"{title} ({days.pop()}): " + re.sub(r" on \d{4}-\d{2}-\d{2}(?=;|$)", "", parts)
    return f"{title}: {parts}"


def _vitals_word() -> str:
    """The item a summary's vital-sign line asks for (``patient_snapshot.vitals_item``: a group of item_groups.json)."""
    return str(_words().get("vitals_item") or "vitals")


def _ongoing(row: dict[str, Any], pq: ParsedQuestion) -> bool:
    """Whether the encounter had not ended by the question's instant (no end, or an end after it)."""
    from fhirqa.agent.backends.offline import plans

    end = plans._instant(row.get("end_time"))
    return end is None or (pq.now is not None and end > pq.now)


def _visit(row: dict[str, Any], pq: ParsedQuestion) -> str:
    """"Encounter for check up (ambulatory), 2021-02-15, reason: …, Dr. …": one encounter as a summary line; a stay
    not over by the question's instant is "since <day> (in progress)"."""
    from fhirqa.agent.backends.offline import plans

    name = row.get("type_name") or row.get("class_name") or "encounter"
    kind = f" ({row['class_name']})" if row.get("class_name") and row.get("type_name") else ""
    start, end = plans._day(row.get("start_time")), row.get("end_time")
    if _ongoing(row, pq) and row.get("class_code") == "IMP":
        span = f" since {start} (in progress)"
    else:
        span = f" {start}" + (f" to {plans._day(end)}" if end and plans._day(end) != start else "")
    reason = f", reason: {row['reason_name']}" if row.get("reason_name") else ""
    who = f", {row['practitioner']}" if row.get("practitioner") else ""
    return f"{name}{kind},{span}{reason}{who}"


# What the answer says it could not read: the canonical views carry neither (a lead-owned mapping would add them).
_NOT_IN_VIEWS = "Patient.generalPractitioner and CareTeam are not in the record's views (not read)"

# Encounter classes a primary care clinician is seen in (v3 ActCode): office, clinic and virtual visits.
PRIMARY_CARE_CLASSES = ("AMB", "VR")


def plan_care_team(pq: ParsedQuestion) -> Plan:
    """The clinician named on the most ambulatory encounters (the latest one on a tie), said to come from them.

    The views hold no Patient.generalPractitioner and no CareTeam, so the encounters' participants are the one
    source; a record whose encounters name no practitioner is answered no-data, saying so.
    """
    from fhirqa.agent.backends.offline import plans

    found = yield ("get_resources", {"view": "encounter", "fields": ["class_code", "type_name", "start_time",
                                                                     "practitioner"]})
    if not found.get("count"):
        yield plans.final([], "The record holds no encounters, so no primary care clinician can be named.",
                          status="no-data")
        return
    named = yield ("filter_by_value", {"records": found["handle"], "op": "exists", "field": "practitioner"})
    if not named.get("count"):
        yield plans.final([], f"No primary care clinician can be named: none of the {found['count']} encounters names a "
                          f"practitioner, and {_NOT_IN_VIEWS}.", status="no-data")
        return
    pool, where = named, "encounters"
    for code in PRIMARY_CARE_CLASSES:
        ambulatory = yield ("filter_by_value", {"records": named["handle"], "op": "==", "value": code,
                                                "field": "class_code"})
        if ambulatory.get("count"):
            pool, where = ambulatory, "ambulatory encounters" if code == "AMB" else "virtual encounters"
            break
    counted = yield ("count_values", {"records": pool["handle"], "field": "practitioner", "distinct": True})
    tally = _tally(counted)
    if not tally:
        yield plans.final([], "The record names no practitioner on its encounters.", status="no-data")
        return
    top = max(tally.values())
    leaders = [name for name, n in tally.items() if n == top]
    # on a tie, the one seen last
    last = None
    for name in leaders:
        seen = yield ("filter_by_value", {"records": pool["handle"], "op": "==", "value": name, "field": "practitioner"})
        row = plans._row((yield ("get_by_index", {"records": seen["handle"], "index": -1})))
        if last is None or str(row.get("start_time") or "") > str(last[1].get("start_time") or ""):
            last = (name, row, seen["handle"])
    assert last is not None
    name, row, handle = last
    total = sum(tally.values())
    text = (f"{name}: the clinician on {tally[name]} of the {total} {where} that name one (most recently "
            f"{plans._day(row.get('start_time'))}, {row.get('type_name') or 'visit'}). Source: the practitioners named on "
            f"the encounters; {_NOT_IN_VIEWS}.")
    yield ("final_answer", {"answer": [name], "text": text, "status": "answered", "evidence": [handle]})


def _tally(counted: dict[str, Any]) -> dict[str, int]:
    """``{value: rows}`` from a distinct count_values result."""
    return {str(v["value"]): int(v.get("rows") or 0) for v in counted.get("values") or []
            if isinstance(v, dict) and v.get("value") is not None}


# --- "any allergies?": whether a kind of record exists, said as a clinician says it --------------------------


def plan_any_records(pq: ParsedQuestion, view: str) -> Plan:
    """Yes/no for a question that names only a kind of record ("any allergies?", "any immunizations?").

    None recorded is "No allergies are recorded."; a record whose only entries state that there are none
    ("No known drug allergies") is "No: NKDA …", citing that entry.
    """
    from fhirqa.agent.backends.offline import plans

    found = yield ("get_resources", {"view": view})
    kind = plans._plural(view)
    filtered = (yield from plans.windowed(pq, found["handle"])) if found.get("count") and pq.window else found
    when = f" {pq.window.label}" if pq.window is not None else ""
    if not filtered.get("count"):
        yield plans.final([False], f"No {kind} are recorded{when}.")
        return
    handle = filtered.get("handle") or found["handle"]
    names, total = _items(filtered if filtered.get("handle") else found)
    pattern = _phrase_pattern(list(_words().get("no_known") or []) or ["no known"])
    stated_none = [n for n in names if re.search(pattern, _plain(n))]
    if stated_none and len(stated_none) == len(names):
        yield ("final_answer", {"answer": [False], "text": f"No: the record states {'; '.join(stated_none)}{when}.",
                                "status": "answered", "evidence": [handle]})
        return
    real = [n for n in names if n not in stated_none]
    records = int(filtered.get("count") or len(real))
    yield ("final_answer", {"answer": [True], "text": f"Yes: {records} {kind if records != 1 else view} "
                            f"recorded{when}: {_joined(real, total - len(stated_none))}.", "status": "answered",
                            "evidence": [handle]})


def any_records_view(pq: ParsedQuestion) -> str | None:
    """The view an "any <kind>?" question asks about: a yes/no with no item, no window event and one view named."""
    if pq.intent != "exists" or pq.entity or not pq.hinted or pq.encounter_class:
        return None
    if pq.window is not None and pq.window.event is not None:
        return None
    view = pq.hinted[0]
    return view if view in ("allergy", "condition", "immunization", "procedure") else None


# --- "vitals", "last set of vitals": a group of results as the item ---------------------------------------


@lru_cache(maxsize=1)
def _groups() -> dict[str, Any]:
    return dict(lexicon_file("item_groups.json").get("groups") or {})


def named_group(pq: ParsedQuestion) -> str | None:
    """The group word to read as the item when the question names a group of results (``item_groups.json``) that the
    parsed item lacks, and the item holds only words that may stand beside a group ("set", "stable"); else None."""
    if pq.intent not in ("value", "trend", "change", "aggregate", "count", "time_of", "exists"):
        return None
    entity = _plain(pq.entity)
    text = _plain(pq.text)
    extra = _group_words()
    filler = set(extra.get("filler") or [])
    alone_only = set(extra.get("alone_only") or [])
    for spec in _groups().values():
        words = spec.get("words") or []
        hit = re.search(_phrase_pattern(words), text)
        if hit is None or re.search(_phrase_pattern(words), entity):
            continue
        said = hit.group(0)
        if said in alone_only and entity:
            return None
        stand_by = filler | set(spec.get("filler") or [])
        if all(w in stand_by for w in entity.split()):
            return said
    return None


# --- "last physical": visits by their type codes -----------------------------------------------------------


def _visit_key(text: str) -> frozenset[str]:
    """The words of a visit phrase that say which visit: ``visit_nouns`` ("visit", "appointment"…) only say it is one
    (the parser keeps "sick" of "sick visit", the lexicon writes "sick visit")."""
    generic = set(lexicon_file("encounters.json").get("visit_nouns") or [])
    return frozenset(w for w in _plain(text).split() if w not in generic)


@lru_cache(maxsize=64)
def visit_type_codes(phrase: str) -> tuple[str, ...]:
    """The encounter type codes (``lexicon/encounters.json`` ``types``) a visit phrase names, or ()."""
    asked = _visit_key(phrase)
    if not asked:
        return ()
    codes: list[str] = []
    for kind in lexicon_file("encounters.json").get("types") or []:
        if any(_visit_key(n) == asked for n in [kind.get("term", ""), *kind.get("aliases", [])] if n):
            codes.extend(str(c) for c in kind.get("type_codes") or [])
    return tuple(dict.fromkeys(codes))


@lru_cache(maxsize=64)
def visit_class(phrase: str) -> str | None:
    """The encounter class (``lexicon/encounters.json`` ``classes``) a visit phrase names: as written ("appointment"),
    else by the words that say which visit ("PCP": a PCP visit, AMB)."""
    for same in (lambda n: _plain(n) == _plain(phrase), lambda n: bool(_visit_key(phrase)) and _visit_key(n) == _visit_key(phrase)):
        for group in lexicon_file("encounters.json").get("classes") or []:
            if any(same(n) for n in [group.get("name", ""), *group.get("aliases", [])] if n):
                return str(group["code"])
    return None


@lru_cache(maxsize=1)
def _class_codes() -> frozenset[str]:
    data = lexicon_file("encounters.json")
    codes = {str(c["code"]) for c in data.get("classes") or []}
    codes |= {str(r) for c in data.get("classes") or [] for r in c.get("related_codes") or []}
    return frozenset(codes)


def coded_visits(plan: Plan) -> Plan:
    """``plan`` with visits also found by their type codes: an encounter lookup by words that finds nothing
    ("physical": no encounter is named so) is retried with the codes of the encounter type those words name
    ("Encounter for check up", SNOMED 185349003), and a class filter for a class no encounter carries ("wellness",
    which Synthea writes as ambulatory) with the codes of the type of that name."""
    try:
        call = next(plan)
        while True:
            result = yield call
            name, args = call
            if name == "get_resources" and args.get("view") == "encounter" and args.get("item") \
                    and not args.get("codes") and not result.get("count") and not result.get("ambiguous"):
                result = yield from _by_type(args, str(args["item"]), result, by_class=True)
            elif name == "filter_by_value" and args.get("field") == "class_code" and args.get("op") == "==" \
                    and not result.get("count") and str(args.get("value")) not in _class_codes():
                result = yield from _by_type({"view": "encounter"}, str(args.get("value")), result)
            call = plan.send(result)
    except StopIteration:
        return


def _by_type(args: dict[str, Any], phrase: str, result: dict[str, Any],
             by_class: bool = False) -> Generator[Call, dict[str, Any], dict[str, Any]]:
    """The encounters of the type a phrase names (by type code), else (``by_class``) of the class it names."""
    codes = visit_type_codes(phrase)
    klass = visit_class(phrase) if by_class and not codes else None
    if klass is not None:  # "when did she last see her PCP?": her last ambulatory visit
        every = yield ("get_resources", {"view": "encounter"})
        if not every.get("count"):
            return result
        kept = yield ("filter_by_value", {"records": every["handle"], "op": "==", "value": klass, "field": "class_code"})
        return {**kept, "resolved_by": "lexicon:encounter class"} if kept.get("count") else result
    if not codes:
        return result
    coded = yield ("get_resources", {**{k: v for k, v in args.items() if k != "item"}, "codes": list(codes)})
    if not coded.get("count"):
        return result
    return {**coded, "resolved_by": "lexicon-code:encounter type"}


def with_visit_codes(planner: Callable[[ParsedQuestion], Plan]) -> Callable[[ParsedQuestion], Plan]:
    """``planner`` whose plans find visits by their type codes too (``coded_visits``)."""
    def wrapped(pq: ParsedQuestion) -> Plan:
        return coded_visits(planner(pq))
    return wrapped


def as_written(term: str, question: str) -> str:
    """``term`` spelled as the question wrote it ("I/O", "BMP"), for answers that name it; as parsed otherwise."""
    if not term:
        return term
    pattern = r"\s+".join(re.escape(w) for w in term.split())
    found = re.search(rf"(?<!\w){pattern}(?!\w)", question, re.IGNORECASE)
    return found.group(0) if found else term


# --- "were vitals stable", "lipid panel trend": one answer per analyte of a group ------------------------

# Intents that compute over one analyte's series: over a group of results each analyte is its own series (a heart
# rate and a weight are never one trend).
PER_ANALYTE_INTENTS = frozenset({"trend", "change", "aggregate"})
# Analytes one answer computes (each costs a handful of tool calls, and a question has a bounded number of rounds).
MAX_ANALYTES = 8


def names_a_group(entity: str) -> bool:
    """Whether ``entity`` names a group of results: an item_groups.json group, or a lexicon group of tests ("CBC")."""
    text = _plain(entity)
    if not text:
        return False
    if any(re.search(_phrase_pattern(spec.get("words") or []), text) for spec in _groups().values()):
        return True
    from fhirqa.agent.lexicon import Lexicon

    try:
        return any(e.source == "lab_class" for e in Lexicon.load().expand(entity))
    except (OSError, ValueError):
        return False


def plan_each_analyte(pq: ParsedQuestion) -> Generator[Call, dict[str, Any], bool]:
    """A trend, change or extreme of a group ("were vitals stable", "lipid panel trend"): the intent's own plan for
    each analyte of the group, one line each (never one series across analytes); False (nothing answered) when the
    entity names one analyte. The window is placed once (a stay, an event) and shared by every analyte."""
    from fhirqa.agent.backends.offline import plans

    if pq.intent not in PER_ANALYTE_INTENTS or not names_a_group(pq.entity):
        return False
    found = yield ("get_resources", {"view": "observation", "item": pq.entity, "numeric": True})
    if not found.get("count"):
        return False
    placed = yield from plans.windowed(pq, found["handle"])
    if placed.get("no_stay") or placed.get("no_anchor"):
        return False  # the intent's plan says which event is missing
    held = placed if placed.get("count") else found
    analytes = plans.item_groups(list(held.get("items") or []))
    if len(analytes) < 2:
        return False
    planner = plans._PLANS[pq.intent]
    answered: list[str] = []
    unanswered: list[str] = []
    answers: list[Any] = []
    for names in analytes[:MAX_ANALYTES]:
        got = yield from _run(planner(replace(pq, entity=names[0], notes=[])))
        if got is None:
            continue
        line = str(got.get("text", "")).rstrip(".")
        if got.get("status", "answered") == "answered":
            answers.extend(got.get("answer") or [])
            answered.append(line)
        else:
            unanswered.append(line)
    left = len(analytes) - MAX_ANALYTES
    more = f" ({left} more analytes not shown: ask for one by name)" if left > 0 else ""
    if answered:
        text = "; ".join(answered) + (f". Not computable: {'; '.join(unanswered)}" if unanswered else "")
        yield ("final_answer", {"answer": answers, "text": text + more + ".", "status": "answered"})
    else:
        yield ("final_answer", {"answer": [], "text": "; ".join(unanswered) + more + ".", "status": "no-data"})
    return True
