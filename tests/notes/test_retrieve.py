"""Structure-guided retrieval: the query carries the evidence, windows and sections narrow the search."""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.agent.answer import Evidence
from fhirqa.notes import NoteIndex, ask_notes, build_query, retrieve
from fhirqa.notes.retrieve import evidence_window, expand, question_section, question_window

from .conftest import HashEmbedder
from .test_index import NOTES, _store


def test_the_query_carries_aliases_and_structured_evidence():
    assert expand("What was her potassium?") == "What was her potassium? (K, K+)"
    assert "furosemide" in expand("Is she on Lasix?")
    evidence = [Evidence("Observation/1", "observation.value", 5.4, "2025-07-18T22:00:00+00:00", "Potassium", "mmol/L"),
                {"label": "Creatinine", "value": 2.69, "unit": "mg/dL", "time": "2025-07-18T22:00:00Z"}]
    query = build_query("Why was she admitted?", evidence)
    assert query == "Why was she admitted? | Potassium 5.4 mmol/L; Creatinine 2.69 mg/dL"
    since, until = evidence_window(evidence)
    assert (since.date().isoformat(), until.date().isoformat()) == ("2025-07-15", "2025-07-21")
    spread = [{"time": "2020-01-01"}, {"time": "2025-01-01"}]
    assert evidence_window(spread) == (None, None)


def test_windows_and_sections_from_the_question():
    since, until = question_window("What was her K on 7/18/2025?")
    assert since < datetime(2025, 7, 18, tzinfo=UTC) < datetime(2025, 7, 19, tzinfo=UTC) < until
    assert question_window("any notes in 2024?")[0] == datetime(2024, 1, 1, tzinfo=UTC)
    assert question_window("notes from March 2025")[1].month == 3
    assert question_window("What was her last potassium?") == (None, None)
    assert question_section("What is listed under discharge medications?") == "discharge medications"
    assert question_section("What was the potassium?") is None


def test_retrieval_guided_by_evidence_prefers_its_window_and_fills_up(tmp_path):
    index = NoteIndex(_store(tmp_path, NOTES), embedder=HashEmbedder())
    evidence = [{"label": "Vancomycin", "value": "1,000 mg", "time": "2025-07-20T15:00:00Z"}]
    found = retrieve(index, "p1", "What happened with the antibiotic?", evidence, k=3)
    assert found.guided and found.hits[0].ref == "DocumentReference/b"
    assert len(found.hits) == 3  # chunks outside the evidence window fill up to k
    plain = retrieve(index, "p1", "metformin", k=3, now=datetime(2025, 7, 31, tzinfo=UTC))
    assert not plain.guided and all(h.date <= "2025-07-31" for h in plain.hits)  # nothing after now
    finding, how = ask_notes(index, "p1", "What was the potassium on admission?")
    assert finding.value == 5.4 and finding.ref == "DocumentReference/a" and "K" in how.query


def test_note_only_questions_on_the_sample(model_index, mei):
    cases = {
        "What was the vanc trough?": 20.8,
        "What was her lactate on admission?": 3.6,
        "Did she have dysuria on admission?": True,
        "Did she report chest pain at the visit on 6/6/2024?": False,
        "What dose of cephalexin was she discharged on?": "500 mg",
        "Did she report hallucinations?": None,
    }
    for question, expected in cases.items():
        finding, _ = ask_notes(model_index, mei, question)
        got = None if finding is None else (not finding.negated if finding.kind == "finding" else finding.value)
        assert got == expected, (question, finding)
