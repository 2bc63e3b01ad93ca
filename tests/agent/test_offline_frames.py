"""The question frames the offline plan tries first (fhirqa/agent/backends/offline/frames.py): one row each, in an
order where a more specific reading comes before a more general one that would also take the question."""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.agent.backends.offline.frames import FRAMES
from fhirqa.agent.backends.offline.parser import parse

NOW = datetime(2025, 6, 20, 8, 0, tzinfo=UTC)
ORDER = [frame.name for frame in FRAMES]


def test_every_frame_is_named_once() -> None:
    assert len(ORDER) == len(set(ORDER))


def test_the_consistency_check_reads_a_note_against_the_tables_before_anything_else() -> None:
    assert ORDER[0] == "consistency"


def test_specific_readings_come_before_general_ones() -> None:
    before = [("purpose", "drug class"), ("repletion", "drug class"), ("dose tally", "drug class"),
              ("then and now", "series"), ("clinical state", "several items"), ("series", "record parts")]
    for first, then in before:
        assert ORDER.index(first) < ORDER.index(then), (first, then)


def test_the_first_frame_that_reads_a_question_is_the_one_that_answers_it() -> None:
    def first(question: str) -> str:
        pq = parse(question, NOW)
        return next(f.name for f in FRAMES if f.detect(pq) is not None and f.name not in ("each analyte", "named group"))

    assert first("how many times was K replaced overnight?") == "repletion"
    assert first("vanco doses so far this stay?") == "dose tally"
    assert first("is she febrile?") == "clinical state"
    assert first("A1c now vs a year ago") == "then and now"
