"""Split a note into topical sections (HPI, history, medications, vitals, labs, assessment/plan, plan…).

A heading is a line (or the start of a line) that names a known section: ``# History of Present Illness``,
``PMH:``, ``Meds: simvastatin…``, ``A/P:``, ``DISCHARGE DIAGNOSES``. Lines that look like headings but name
no known section (``# Prediabetes:`` inside an assessment) stay in the section they are in. Text before the
first heading is section ``other``.
"""

from __future__ import annotations

import re

from fhirqa.consistency.model import Section

# heading words → section kind; matched against the lower-cased heading without punctuation at its ends
_KINDS: tuple[tuple[str, str], ...] = (
    (r"discharge (?:diagnos[ie]s|dx)|final diagnos[ie]s|diagnos[ie]s", "discharge_diagnoses"),
    (r"admi(?:tting|ssion) diagnos[ie]s|admission dx", "admission_diagnosis"),
    (r"discharge (?:meds|medications)|medications on discharge", "discharge_meds"),
    (r"(?:home|outpatient|current|admission) (?:meds|medications)|meds|medications|medication list|"
     r"current medications|rx", "meds"),
    (r"hpi|history of present(?:ing)? illness|interval history|s|subjective", "hpi"),
    (r"cc|chief complaint|reason for (?:visit|admission)", "chief_complaint"),
    (r"pmh|past medical history|medical history|pmhx|problem list|past history|psh|past surgical history", "pmh"),
    (r"allerg(?:y|ies)|nkda", "allergies"),
    (r"fhx|fh|family history|family hx", "family_history"),
    (r"shx|sh|social history|social hx", "social_history"),
    (r"(?:vitals?|vs|vital signs)(?: [a-z0-9 /().,#-]*)?", "vitals"),
    (r"o|objective|exam|physical exam(?:ination)?|pe", "exam"),
    (r"(?:labs?|laboratory|results|pertinent results|data|studies|bmp|cbc|lipids?|lipid panel|lfts|chem(?: ?7)?|"
     r"chem-7|lytes|heme|flp|hepatic panel|basic metabolic panel|cmp|other)(?: [a-z0-9 /().,#-]*)?", "labs"),
    (r"a ?/ ?p|assessment ?(?:/|and|&) ?plan|impression ?(?:/|and|&) ?plan|assessment|impression", "assessment_plan"),
    (r"plan|recommendations|follow[- ]?up|disposition|discharge instructions|instructions|to do", "plan"),
    (r"hospital course|ed course|in the ed|course|brief hospital course|clinical course", "hospital_course"),
    (r"procedures?(?: performed)?|operations?", "procedures"),
    (r"immunizations?|vaccines?", "immunizations"),
)
_COMPILED = [(re.compile(rf"(?:{pattern})"), kind) for pattern, kind in _KINDS]
_MARKDOWN = re.compile(r"^[ \t]*#{1,6}[ \t]+(?P<title>[^\n]+?)[ \t]*:?[ \t]*$", re.M)
_COLON = re.compile(r"^[ \t]*(?P<title>[A-Za-z][A-Za-z0-9 /&().,-]{0,40}?)[ \t]*:(?!\d)[ \t]*", re.M)
_CAPS = re.compile(r"^[ \t]*(?P<title>[A-Z][A-Z /&-]{2,40})[ \t]*$", re.M)

# sections whose statements are not checked (kept so that callers can say why)
EXCLUDED = {"family_history": "family history", "allergies": "allergy", "plan": "plan", "social_history": "social history"}


def section_kind(title: str) -> str | None:
    """The section kind a heading names, or None when it names none."""
    key = re.sub(r"[\s:#*_]+$|^[\s#*_]+", "", title.lower()).strip()
    key = re.sub(r"\s+", " ", key)
    for pattern, kind in _COMPILED:
        if pattern.fullmatch(key):
            return kind
    return None


def _headings(text: str) -> list[tuple[int, int, str, str]]:
    """(heading start, body start, title, kind) of every recognised heading, in order."""
    found: dict[int, tuple[int, int, str, str]] = {}
    for regex in (_MARKDOWN, _CAPS, _COLON):
        for m in regex.finditer(text):
            kind = section_kind(m.group("title"))
            line_start = m.start()
            if kind and line_start not in found:
                found[line_start] = (line_start, m.end(), m.group("title").strip(), kind)
    return [found[k] for k in sorted(found)]


def segment(text: str) -> list[Section]:
    """The note's sections, covering the whole text in order."""
    heads = _headings(text)
    sections: list[Section] = []
    start, kind, title = 0, "other", ""
    for head_start, body_start, head_title, head_kind in heads:
        if head_start > start or sections or kind != "other":
            sections.append(Section(kind, title, start, head_start))
        start, kind, title = body_start, head_kind, head_title
    sections.append(Section(kind, title, start, len(text)))
    return [s for s in sections if s.end > s.start or s.kind != "other"]


def section_at(sections: list[Section], offset: int) -> Section:
    """The section holding ``offset``."""
    for section in sections:
        if section.start <= offset < section.end:
            return section
    # an offset inside a heading belongs to the section that heading opens
    after = [s for s in sections if s.start > offset]
    return after[0] if after else sections[-1]
