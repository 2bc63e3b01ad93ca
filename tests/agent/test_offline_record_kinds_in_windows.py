"""A kind of record named beside a window is what is asked, the window is where: "vitals this admission" is each vital
sign's latest value in the current stay (not the admission's date), "labs before the MI" / "vitals before the MI" each
test's last value before the MI's onset (``record_kinds`` of ``lexicon/question_phrases.json``, the vitals group of
``lexicon/item_groups.json``). Expected values are read from the resources the test wrote."""

from __future__ import annotations

import pytest

from fhirqa.agent.engine import ask
from fhirqa.sources import FileSource
from fhirqa.store import ingest
from tests.builders import condition, observation, patient, transaction, write_json

NOW = "2024-03-06T12:00:00Z"
VITALS = {"8867-4": "Heart rate", "29463-7": "Body Weight"}
# (id, code, display, value, unit, time)
RESULTS = [("hr0", "8867-4", "Heart rate", 70.0, "/min", "2024-02-01T08:00:00Z"),
           ("wt0", "29463-7", "Body Weight", 80.0, "kg", "2024-02-01T08:00:00Z"),
           ("k0", "2823-3", "Potassium", 4.0, "mmol/L", "2024-02-01T08:00:00Z"),
           ("hr1", "8867-4", "Heart rate", 112.0, "/min", "2024-03-04T09:00:00Z"),
           ("hr2", "8867-4", "Heart rate", 96.0, "/min", "2024-03-05T09:00:00Z"),
           ("k1", "2823-3", "Potassium", 5.1, "mmol/L", "2024-03-05T09:00:00Z")]
ADMITTED, MI_ONSET = "2024-03-04T06:00:00Z", "2024-03-04T07:00:00Z"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kinds")
    stay = {"resourceType": "Encounter", "id": "stay", "status": "in-progress",
            "class": {"system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": "IMP"},
            "type": [{"text": "Hospital admission"}], "subject": {"reference": "Patient/p1"},
            "period": {"start": ADMITTED}}
    mi = condition("mi", display="Myocardial infarction", onsetDateTime=MI_ONSET,
                   code={"coding": [{"system": "http://snomed.info/sct", "code": "22298006",
                                     "display": "Myocardial infarction"}]})
    vital = {"category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category",
                                       "code": "vital-signs"}]}]}
    results = [observation(i, code=c, display=d, value=v, unit=u, when=t, **(vital if c in VITALS else {}))
               for i, c, d, v, u, t in RESULTS]
    write_json(folder / "in" / "p1.json", transaction(patient("p1"), stay, mi, *results))
    ingest([FileSource([folder / "in"])], folder / "db")
    return folder / "db"


def latest(codes: set[str], before: str | None = None, since: str | None = None) -> dict[str, float]:
    out: dict[str, float] = {}
    for _, code, _, value, _, when in sorted(RESULTS, key=lambda r: r[5]):
        if code in codes and (before is None or when < before) and (since is None or when >= since):
            out[code] = value
    return out


def test_vitals_this_admission_are_the_vitals_of_the_stay(store):
    answer = ask("vitals this admission", patient_id="p1", now=NOW, db=store)
    assert answer.answer == list(latest(set(VITALS), since=ADMITTED).values())  # the heart rate; no weight in the stay
    assert "Observation/hr2" in {e.ref for e in answer.evidence}


def test_vitals_before_the_mi(store):
    answer = ask("vitals before the MI", patient_id="p1", now=NOW, db=store)
    assert sorted(answer.answer) == sorted(latest(set(VITALS), before=MI_ONSET).values())  # 70 /min, 80 kg: no potassium


def test_labs_before_the_mi(store):
    answer = ask("labs before the MI", patient_id="p1", now=NOW, db=store)
    assert answer.answer == list(latest({"2823-3"}, before=MI_ONSET).values())
    assert "2024-03-04" in answer.text  # the MI's day, which the window hangs on
