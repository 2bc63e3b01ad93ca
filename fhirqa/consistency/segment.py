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
     r"current medications|rx|(?:currently )?taking|(?:active )?(?:med(?:ication)?s? )?list|active meds", "meds"),
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
# a heading after the end of a sentence on the same line ("S: 68M seen for f/u. PMH: …", "FHx: father MI. Meds: …"):
# only titles of these kinds, spelled with at least three letters
_INLINE = re.compile(r"(?<=[.;])[ \t]+(?P<title>[A-Za-z][A-Za-z /&-]{1,30}?)[ \t]*:(?!\d)[ \t]*")
_INLINE_KINDS = {"pmh", "meds", "discharge_meds", "allergies", "family_history", "social_history"}
# sections a heading opens on its own line and that its line holds ("FHx: father MI at 58"): a later line that
# starts with a heading of no known kind ("Taking: …", "Current: …") ends them
_ONE_LINE = {"family_history", "social_history", "allergies"}
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
    """(heading start, body start, title, kind) of every recognised heading, in order. A heading ends the
    section before it whether it opens a line or follows a sentence on the same line (:data:`_INLINE`); a section
    of :data:`_ONE_LINE` whose heading holds its text on the same line also ends at a later line that opens with
    a heading of no known kind (kind ``other``)."""
    found: dict[int, tuple[int, int, str, str]] = {}
    for regex in (_MARKDOWN, _CAPS, _COLON):
        for m in regex.finditer(text):
            kind = section_kind(m.group("title"))
            line_start = m.start()
            if kind and line_start not in found:
                found[line_start] = (line_start, m.end(), m.group("title").strip(), kind)
    for m in _INLINE.finditer(text):
        kind = section_kind(m.group("title"))
        if kind in _INLINE_KINDS and sum(c.isalpha() for c in m.group("title")) >= 3:
            found.setdefault(m.start("title"), (m.start("title"), m.end(), m.group("title").strip(), kind))
    heads = [found[k] for k in sorted(found)]
    out: list[tuple[int, int, str, str]] = []
    for i, head in enumerate(heads):
        out.append(head)
        start, body, _, kind = head
        line_end = text.find("\n", body)
        if kind not in _ONE_LINE or line_end < 0 or not text[body:line_end].strip():
            continue
        stop = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        for m in _COLON.finditer(text, line_end + 1, stop):
            out.append((m.start(), m.start(), m.group("title").strip(), "other"))
            break
    return out


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
