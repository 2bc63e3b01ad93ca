"""Offline entity extraction: rules over the gazetteer's hits.

Type 1: a lab or vital name followed (within a few filler words) by a number and maybe a unit
("K 4.2", "potassium came back at 4.2 mmol/L", "BP 120/80" as two values, "pain 3/10", "Ht 5'4\"",
"BMP 137/4.7/103/29/17/1.0/71" position by position); a drug with a dose ("Lasix 40 mg IV",
"metformin 500 mg PO BID"). Type 2: a drug without a dose, a diagnosis, a procedure, a vaccine.

Statements are kept but marked ``skip`` (not checked) when negated ("denies", "no", "negative for"), in a
family-history, allergy, social-history or plan section (a plan's past-tense lines, "were conducted", "was
prescribed", are checked), future or conditional ("will check", "consider", "goal A1c <7"), patient-reported
from home, uncertain ("r/o", "possible"), or a range ("3.5-5.0").
"""

from __future__ import annotations

import re
from typing import Any

from fhirqa.consistency.model import Entity, Section
from fhirqa.consistency.segment import EXCLUDED, section_at, segment
from fhirqa.consistency.units import known
from fhirqa.consistency.vocab import DOSE_FORMS, SALT_SYMBOLS, SALTS, Gazetteer, Hit

_NUMBER = r"(?:\d+(?:\.\d+)?|\.\d+)"
_FILLER = (r"(?:[ \t]*(?:[:=~]|\.(?=[ \t:=-])|\([A-Za-z][A-Za-z -]{0,10}\)|-(?!\d)|\bwas\b|\bis\b|\bof\b|\bat\b|\bcame back(?: at)?\b|\bstable at\b|\bnoted to be\b|"
           r"\b(?:noted|resulted|reported|returned|recorded|documented|found|read|measured)(?: (?:at|as|to be|of))?\b|\bthis time\b|"
           r"\bon (?:recheck|repeat|re-?check)\b|"
           r"\bnow\b|\bremains\b|\bmeasured\b|\blevel\b|\breadings?\b|\bresult\b|\bvalue\b|\btoday\b|\bcount\b|"
           r"\bscore\b|\bon admission\b|\bhas been\b|\bup to\b|\bdown to\b|\bincreased to\b|\bdecreased to\b)[ \t]*){0,3}")
_VALUE = re.compile(rf"^{_FILLER}[ \t]*(?P<cmp><=|>=|<|>|≤|≥)?[ \t]*(?P<num>{_NUMBER})(?:(?P<sep>\s*/\s*|[ \t]+over[ \t]+)(?P<num2>{_NUMBER}))?"
                    rf"(?P<plus>\+)?(?P<range>[ \t]*(?:-|–|to)[ \t]*{_NUMBER})?", re.I)
# an earlier result quoted in a parenthesis right after a value: "Cr 0.79 (prior 0.77 on 9/12/2025)",
# "K 4.1 (previous: 3.6 3 months ago)"; the quoted value is a statement of its own, dated by what follows it
_PRIOR = re.compile(rf"[ \t]*\([ \t]*(?P<word>prior|previous|prev\.?|previously|last|earlier|was)[ \t]*[:=]?[ \t]*"
                    rf"(?P<num>{_NUMBER})(?![\d/])", re.I)
_FEET = re.compile(rf"^{_FILLER}\s*(?P<ft>\d)\s*'\s*(?P<inch>\d{{1,2}})\s*(?:\"|''|in\b)?", re.I)
_UNIT = re.compile(r"^[ \t]?(?P<unit>(?:x\s?)?10[\^*]\d+/[a-zA-Zµ]+|%|°\s?[CF]\b|/[A-Za-zµ]+|[A-Za-zµ#\"][A-Za-zµ0-9\[\]{}_.^*]*"
                   r"(?:/[0-9.]*\s?[A-Za-zµ0-9\[\]{}_.^*]+)*)")
_DOSE_UNIT = r"(?:mg/ml|mcg/ml|unt/ml|units?/ml|mg/actuat|mcg/actuat|mg|mcg|g|units?|unt|iu|ml|meq)"
# words that may stand between a drug's name and its dose: the salts of the shorthand table with their
# abbreviations (succ, tart, HCl, sod) and its dose forms (ER, XL, tab, patch…); salt symbols (K, Na) only as
# written and without a comma ("losartan K 50 mg", not "Lasix, K 4.0")
_GAP_WORDS = sorted({*SALTS, *DOSE_FORMS}, key=len, reverse=True)
_GAP = (r"(?:,?[ \t]+(?i:" + "|".join(re.escape(w).replace(r"\ ", r"[ \t]+") for w in _GAP_WORDS) + r")\.?(?!\w)"
        + "".join(rf"|[ \t]+{re.escape(w)}\b" for w in sorted(SALT_SYMBOLS, key=len, reverse=True)) + ")")
_DOSE = re.compile(rf"^(?P<gap>{_GAP}{{0,3}})?[ \t]*(?P<num>\d+(?:\.\d+)?(?:/\d+(?:\.\d+)?)?)\s*"
                   rf"(?P<unit>(?i:{_DOSE_UNIT}))\b")
_ROUTE_WORDS = r"PO|IV|IM|SC|SQ|subq|SL|PR|INH|inhaled|topical|IVPB|oral|injection"
_FREQ_WORDS = (r"daily|qd|once daily|twice daily|BID|TID|QID|q\s?\d+\s?h(?:rs?|ours?)?|qhs|qam|qpm|nightly|"
               r"weekly|PRN|as needed|q\d+\s?d(?:ays?)?|once a day|twice a day|(?:three|four) times a day|"
               r"at bedtime|every (?:morning|evening|night|day)")
_ROUTE = re.compile(rf"\b({_ROUTE_WORDS})\b", re.I)
_FREQ = re.compile(rf"\b({_FREQ_WORDS})\b", re.I)
# a dose written without a unit: a bare number between the drug's name and a frequency or route ("HCTZ 10 qhs",
# "Demerol 80 q4h", "simvastatin 5 once a day"); its unit is the product strength's (verify compares it there)
_BARE_DOSE = re.compile(rf"^(?P<gap>{_GAP}{{0,3}})?[ \t]+(?P<num>\d+(?:\.\d+)?)(?=[ \t]+(?i:{_FREQ_WORDS}|{_ROUTE_WORDS})\b)")
_SLASH_PANEL = re.compile(r"\b(?P<title>BMP|Chem ?7|Chem-7|Chem|Lytes|lytes|SMA-?7|[Bb]asic [Mm]etabolic (?:[Pp]anel|[Pp]rofile)|"
                          r"[Cc]hem(?:istry)? (?:7|panel)|[Ee]lectrolytes|[Rr]enal (?:[Pp]anel|[Ff]unction [Pp]anel))\b[^\n\d]{0,25}?"
                          rf"(?P<seq>{_NUMBER}(?:\s*/\s*{_NUMBER}){{3,7}})")
SLASH_ORDER = ("sodium", "potassium", "chloride", "carbon dioxide", "urea nitrogen", "creatinine", "glucose", "calcium")

_NEGATION = re.compile(r"\b(?:no|not|denies|denied|denying|negative for|without|w/o|free of|never|absence of|"
                       r"ruled out|no h/o|no hx of|no history of|no known|non|declined|declines|refused|refuses|"
                       r"not interested in|deferred|held|holding|discontinued|stopped)\b", re.I)
_NEG_STOP = re.compile(r"\b(?:but|however|although|except|aside from|apart from)\b", re.I)
_FUTURE = re.compile(r"\bwill\b|\bplan(?:s|ned)? to\b|\bconsider\b|(?<!on )\brecheck\b|(?<!at )\bgoal\b|\btarget\b|"
                     r"\bnext (?:visit|season|year|month|week|time|appointment)\b|\brecommend(?:s|ed|ing)?\b|\badvised? to\b|\bif\b|\bpending\b|\bto be (?:done|drawn|obtained|checked)\b|\bschedul|"
                     r"\brepeat\b[^.;\n]*\bin \d|\bshould\b|\bwould\b|\baim for\b|\bkeep\b[^.;\n]*\b(?:under|below|"
                     r"above)\b|\bunless\b|\bdue for\b|\boverdue\b|\bneeds?\b", re.I)
_THRESHOLD = re.compile(r"\b(?:for|if|when|hold|call|notify|page|keep|maintain|titrate|sliding scale|correctional|"
                        r"under|below|above|until|parameters?)\b", re.I)
_FAMILY = re.compile(r"\b(?:mother|father|mom|dad|sister|brother|sibling|grand(?:mother|father|ma|pa|son|daughter)|"
                     r"aunt|uncle|cousin|niece|nephew|daughter|son|child|children|wife|husband|spouse|partner|"
                     r"maternal|paternal|family history|fhx|relatives?)\b", re.I)
_COUNSEL = re.compile(r"\b(?:discussed|counsel(?:ed|ing)?|educated|education|reviewed (?:risks|signs)|signs of|"
                      r"risks (?:and|&) benefits|ask(?:s|ed|ing)? about|inquir\w*|interested in|avoid|risk (?:of|for))\b|"
                      r"\bgiven\b[^.;\n]*\brisk\b", re.I)
_HOME = re.compile(r"\bhome\b(?! (?:meds|medications))|\bper (?:pt|patient)(?: log)?\b|\bper family\b|"
                   r"\boutside\b|\bOSH\b|\bself[- ]reported\b|\brecords? from\b|\bpaperwork\b|\burgent care\b|"
                   r"\bprevious (?:pcp|provider|doctor|hospital)\b|\bprior records\b|\bother (?:hospital|facility)\b",
                   re.I)
_ALLERGY = re.compile(r"\ballerg|\bintoleran|\breaction to\b", re.I)
_UNCERTAIN = re.compile(r"\br/o\b|\brule out\b|\bpossible\b|\bprobable\b|\bconcern for\b|\bsuspect|\bquestionable\b|"
                        r"\bdoubt\w*|\bunlikely\b|\blow suspicion\b|\bevaluate for\b|\bworkup for\b|"
                        r"\?\s*$|\bvs\.?\s*$|\bdifferential\b", re.I)
_PERFORMED = re.compile(r"\bwere (?:conducted|performed|done)\b|\bwas (?:prescribed|performed|given|started|done)\b|"
                        r"\b(?:given|administered|performed|completed|obtained|prescribed)\b", re.I)
_GIVEN = re.compile(r"\b(?:start(?:ed)?(?: on)?|initiated|given|received|administered|prescribed|bolus|loaded|"
                    r"was treated with|treated with|dose of)\s*$", re.I)
_VACCINE_WORD = re.compile(r"(?:[ \t]+\([^)\n]{1,20}\))?[ \t]+(?:vaccine|vaccination|immunization|shot|booster)\b", re.I)
_CLAUSE = re.compile(r"[.;](?=\s|$)|\n")
_GIVEN_SECTIONS = {"hospital_course", "procedures"}
_LISTED_SECTIONS = {"meds", "discharge_meds"}


def _clause_start(text: str, offset: int, floor: int) -> int:
    start = floor
    for m in _CLAUSE.finditer(text, floor, offset):
        start = m.end()
    return start


def _clause_end(text: str, offset: int) -> int:
    m = _CLAUSE.search(text, offset)
    return m.start() if m else len(text)


def _decimals(num: str) -> int:
    return len(num.split(".")[1]) if "." in num else 0


def _unit_after(text: str, offset: int) -> tuple[str, int]:
    """A known unit right after ``offset`` (written, end offset), else ("", offset)."""
    m = _UNIT.match(text[offset:offset + 24])
    if m:
        unit = m.group("unit").rstrip(".")
        if known(unit):
            return unit, offset + m.start("unit") + len(unit)
    return "", offset


def _masked(text: str, start: int, end: int, names: list[tuple[int, int]]) -> str:
    """``text[start:end]`` with the names of items blanked ("Not in labor force" negates nothing)."""
    chars = list(text[start:end])
    for s, e in names:
        if s < end and e > start:
            for i in range(max(s, start), min(e, end)):
                chars[i - start] = " "
    return "".join(chars)


def _skip_reason(text: str, hit_start: int, section: Section, cls: str, category: str,
                 names: list[tuple[int, int]] | None = None) -> str:
    """Why a statement is not checked ("" when it is). Cue words inside item names do not count."""
    if section.kind in EXCLUDED:
        if section.kind != "plan" or not _PERFORMED.search(_lead(text, hit_start, section)):
            return EXCLUDED[section.kind]
    names = names or []
    start = _clause_start(text, hit_start, section.start)
    before = _masked(text, start, hit_start, names)
    clause = before + _masked(text, hit_start, _clause_end(text, hit_start), names)
    if _FUTURE.search(clause):
        return "plan"
    if _HOME.search(clause):
        return "home or outside reading"
    if _FAMILY.search(before):
        return "family history"
    if _COUNSEL.search(before):
        return "counselling"
    if category == "medication" and _ALLERGY.search(clause):
        return "allergy"
    if cls == "T2":
        neg = list(_NEGATION.finditer(before))
        if neg:
            between = before[neg[-1].end():]
            narrow = neg[-1].group(0).lower() in ("without", "w/o", "non")  # "concussion without LOC, anemia"
            if not _NEG_STOP.search(between) and not (narrow and "," in between):
                return "negated"
        if _UNCERTAIN.search(before) or re.match(r"\s*\?", text[hit_start - 1:hit_start] or " "):
            return "uncertain"
    return ""


def _lead(text: str, offset: int, section: Section) -> str:
    """The line of ``offset`` and, for a list item, the non-list line that introduces the list."""
    line_start = text.rfind("\n", 0, offset) + 1
    line = text[line_start:text.find("\n", offset) if "\n" in text[offset:] else len(text)]
    if not line.lstrip().startswith(("-", "*", "•")) and not re.match(r"\s*\d+[.)]", line):
        return line
    cursor = line_start - 1
    while cursor > section.start:
        prev_start = text.rfind("\n", 0, cursor) + 1
        prev = text[prev_start:cursor]
        if prev.strip() and not prev.lstrip().startswith(("-", "*", "•")):
            return prev + " " + line
        cursor = prev_start - 1
    return line


def _observation(text: str, hit: Hit, section: Section) -> list[Entity]:
    tail = text[hit.end:hit.end + 80]
    base: dict[str, Any] = {"category": hit.category, "name": hit.written, "name_span": (hit.start, hit.end),
                            "section": section.kind}
    feet = _FEET.match(tail)
    if feet and (normalize_name(hit) in ("ht", "height", "body height", "length") or "height" in hit.search):
        inches = int(feet.group("ft")) * 12 + int(feet.group("inch"))
        end = hit.end + feet.end()
        return [Entity("T1", **base, span=(hit.start, end), value=float(inches), value_text=feet.group(0).strip(),
                       value_span=(hit.end + feet.start("ft"), end), unit="in")]
    m = _VALUE.match(tail)
    if not m:
        return []
    num, num2 = m.group("num"), m.group("num2")
    vstart, vend = hit.end + m.start("num"), hit.end + m.end("num")
    comparator = {"≤": "<=", "≥": ">="}.get(m.group("cmp") or "", m.group("cmp") or "")
    if m.group("plus"):
        comparator = ">="
    end = hit.end + m.end()
    is_bp = normalize_name(hit) in ("bp", "b p", "blood pressure", "blood pressures", "bp reading")
    if num2 and "over" in m.group("sep") and not is_bp:  # "147 over 104" is a blood pressure only
        num2, end = None, hit.end + m.end("num")
    if is_bp and num2:
        unit, end = _unit_after(text, end)
        n2s, n2e = hit.end + m.start("num2"), hit.end + m.end("num2")
        return [Entity("T1", **base, span=(hit.start, end), value=float(num), value_text=num, value_span=(vstart, vend),
                       unit=unit, component="systolic"),
                Entity("T1", **base, span=(hit.start, end), value=float(num2), value_text=num2, value_span=(n2s, n2e),
                       unit=unit, component="diastolic")]
    if num2 and num2 not in ("10",):
        return []  # a ratio or a date, not a value
    skip = "range" if m.group("range") else ""
    if comparator and _THRESHOLD.search(text[_clause_start(text, hit.start, section.start):hit.start]):
        skip = "parameter"
    unit = "/10" if num2 == "10" else ""
    if not unit:
        unit, end = _unit_after(text, end)
    if num2 == "10" and normalize_name(hit).startswith("pain"):
        unit = "/10"
    found = [Entity("T1", **base, span=(hit.start, end), value=float(num), value_text=num, value_span=(vstart, vend),
                    decimals=_decimals(num), comparator=comparator, unit=unit, skip=skip)]
    prior = _PRIOR.match(text, end) if not skip else None
    if prior is not None:
        p_num = prior.group("num")
        p_end = prior.end("num")
        p_unit, p_end = _unit_after(text, p_end)
        found.append(Entity("T1", **base, span=(prior.start("word"), p_end), value=float(p_num), value_text=p_num,
                            value_span=(prior.start("num"), prior.end("num")), decimals=_decimals(p_num),
                            unit=p_unit or unit, prior=True))
    return found


def normalize_name(hit: Hit) -> str:
    """The hit's words, lower case, single-spaced."""
    return " ".join(re.findall(r"[a-z0-9]+", hit.written.lower()))


def _medication(text: str, hit: Hit, section: Section) -> Entity:
    tail = text[hit.end:hit.end + 60]
    m = _DOSE.match(tail) or _BARE_DOSE.match(tail)
    base: dict[str, Any] = {"category": "medication", "name": hit.written, "name_span": (hit.start, hit.end), "section": section.kind}
    before = text[_clause_start(text, hit.start, section.start):hit.start]
    if _GIVEN.search(before) or (section.kind in _GIVEN_SECTIONS and not re.search(r"\b(?:on|continue)\s*$", before)):
        context = "given"
    elif section.kind == "plan" and _PERFORMED.search(_lead(text, hit.start, section)):
        context = "given"
    else:
        context = "listed"
    if m is None or "/" in m.group("num"):
        return Entity("T2", **base, span=(hit.start, hit.end), context=context)
    end = hit.end + m.end()
    rest = text[end:_clause_end(text, end)][:40]
    route = _ROUTE.search(rest)
    freq = _FREQ.search(rest)
    return Entity("T1", **base, span=(hit.start, end), value=float(m.group("num")), value_text=m.group("num"),
                  value_span=(hit.end + m.start("num"), hit.end + m.end("num")), decimals=_decimals(m.group("num")),
                  unit=m.groupdict().get("unit") or "", route=route.group(1) if route else "", frequency=freq.group(1) if freq else "",
                  context=context)


def _slash_panels(text: str, sections: list[Section]) -> tuple[list[Entity], list[tuple[int, int]]]:
    """"BMP 137/4.7/103/29/17/1.0/71": one entity per position (Na, K, Cl, CO2, BUN, Cr, glucose, Ca)."""
    out, taken = [], []
    for m in _SLASH_PANEL.finditer(text):
        section = section_at(sections, m.start())
        offset = m.start("seq")
        for i, num in enumerate(re.finditer(_NUMBER, m.group("seq"))):
            if i >= len(SLASH_ORDER):
                break
            span = (offset + num.start(), offset + num.end())
            out.append(Entity("T1", "lab", f"{m.group('title')} {SLASH_ORDER[i]}", (span[0], span[1]),
                              (m.start("title"), m.end("title")), section=section.kind, value=float(num.group(0)),
                              value_text=num.group(0), value_span=span, decimals=_decimals(num.group(0)),
                              search=SLASH_ORDER[i]))
        taken.append((m.start(), m.end()))
    return out, taken


def extract(text: str, gazetteer: Gazetteer, sections: list[Section] | None = None) -> list[Entity]:
    """Every entity of the note, in order (skipped ones carry ``skip``)."""
    sections = sections or segment(text)
    entities, taken = _slash_panels(text, sections)
    previous: Hit | None = None
    hits = _merge(text, gazetteer.scan(text))
    names = [(h.start, h.end) for h in hits if h.category != "ignore"]
    for hit in hits:
        if hit.category == "ignore" or any(s <= hit.start < e for s, e in taken):
            continue
        if any(e.value_span and e.name_span[1] <= hit.start < e.span[1] for e in entities):
            continue  # inside the previous mention ("K/uL", "eGFR (CKD-EPI) 60")
        after_diagnosis = (previous is not None and previous.category == "condition"
                           and re.fullmatch(r"\s*\(\s*", text[previous.end:hit.start]) is not None)
        previous = hit
        vaccine = _VACCINE_WORD.match(text, hit.end)  # "influenza immunization", "sars-cov-2 (covid-19) vaccine"
        if vaccine and hit.category != "immunization":  # "influenza immunization", "hep B shot"
            hit = Hit(hit.start, vaccine.end(), text[hit.start:vaccine.end()], "immunization", "", hit.source)
        section = section_at(sections, hit.start)
        if hit.category in ("lab", "vital"):
            found = _observation(text, hit, section)
            other = next((t for t in hit.others if t.category not in ("lab", "vital")), None)
            if not found and other is not None:  # "DEXA scan": the procedure, not the T-score
                hit = Hit(hit.start, hit.end, hit.written, other.category, other.search, other.source)
        if hit.category in ("lab", "vital"):
            pass
        elif hit.category == "medication":
            found = [_medication(text, hit, section)]
        else:
            found = [Entity("T2", hit.category, hit.written, (hit.start, hit.end), (hit.start, hit.end),
                            section=section.kind, context=_event_context(section))]
        for ent in found:
            if after_diagnosis and ent.category in ("lab", "vital"):
                ent.skip = "part of a diagnosis"  # "obesity (BMI 30+)"
            ent.skip = ent.skip or _skip_reason(text, hit.start, section, ent.cls, ent.category, names)
            ent.search = hit.search
            entities.append(ent)
    entities.sort(key=lambda e: (e.span[0], e.value_span or (0, 0)))
    return entities


def _merge(text: str, hits: list[Hit]) -> list[Hit]:
    """Adjacent diagnosis or procedure words are one name ("strep pharyngitis", "osteoporotic fracture")."""
    out: list[Hit] = []
    for hit in hits:
        last = out[-1] if out else None
        if (last is not None and last.category == hit.category and hit.category in ("condition", "procedure")
                and last.source != "record" and hit.source != "record"
                and re.fullmatch(r"[ \t]+", text[last.end:hit.start])):
            out[-1] = Hit(last.start, hit.end, text[last.start:hit.end], hit.category, "", "merged")
            continue
        out.append(hit)
    return out


def _event_context(section: Section) -> str:
    if section.kind in ("discharge_diagnoses", "admission_diagnosis"):
        return "diagnosis"
    if section.kind in ("pmh",):
        return "history"
    return "mentioned"

