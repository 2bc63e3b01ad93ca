"""The labelled evaluation set: reproducible from the raw bundles, independent of fhirqa, and scored.

Needs ``../shared/data``; skips with the reason when it is absent.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evals.consistency import score
from fhirqa.sources import FileSource
from fhirqa.store import Store, ingest

EVALS = Path(__file__).resolve().parents[2] / "evals" / "consistency"
GENERATOR = ("record", "vocab", "writer", "inject", "entities", "styles", "acute", "distract", "variant", "generate")


def test_the_generator_imports_nothing_from_fhirqa():
    for name in GENERATOR:
        text = (EVALS / f"{name}.py").read_text()
        assert not re.search(r"^\s*(?:from|import)\s+fhirqa", text, re.M), name


def test_every_brand_the_wording_tables_write_is_known_to_the_label_rules():
    # a brand the rules do not know is "not in the record" even for a patient on its generic (Norvasc, amlodipine)
    from evals.consistency import fresh, inject, variant, vocab

    for table in (vocab, variant, fresh):
        written = [d[0] for d in table.OTHER_DRUGS] + [s for subs in table.ALTERNATIVES.values() for s in subs]
        brands = [w for w in written if w[:1].isupper()]
        assert brands and all(b.lower() in inject.BRANDS for b in brands), (
            table.__name__, [b for b in brands if b.lower() not in inject.BRANDS])


@pytest.mark.parametrize(("name", "args"), [
    ("notes.jsonl", []),
    ("notes-heldout.jsonl", ["--variant", "heldout", "--skip", "60", "--patients", "40", "--seed", "7"]),
    ("notes-fresh.jsonl", ["--variant", "fresh", "--skip", "60", "--patients", "40", "--seed", "8"]),
])
def test_committed_sets_are_what_the_generator_writes(shared_synthea, tmp_path, name, args):
    # a process of its own: the variants patch the generator's tables in place
    subprocess.run([sys.executable, "-m", "evals.consistency.generate", "--data", str(shared_synthea),
                    "--out", str(tmp_path / name), *args], cwd=EVALS.parents[1], check=True, capture_output=True)
    assert (tmp_path / name).read_bytes() == (EVALS / name).read_bytes(), (
        f"evals/consistency/{name} is stale: run `python -m evals.consistency.generate {' '.join(args)}`")


def test_the_set_is_big_enough_and_spans_every_kind():
    notes = [json.loads(line) for line in (EVALS / "notes.jsonl").read_text().splitlines()]
    labelled = [e for n in notes for e in n["entities"] if e["label"] != "unverifiable"]
    assert len(labelled) >= 1500 and len({n["patient_id"] for n in notes}) >= 40
    assert {n["style"] for n in notes} == {"progress", "nursing", "followup", "admission", "discharge"}
    kinds = {e["mismatch"] for e in labelled if e["mismatch"]}
    assert kinds == {"value", "unit", "time", "existence", "wrong_drug"}
    for note in notes[:20]:
        for e in note["entities"]:
            s, t = e["name_span"]
            assert note["text"][s:t] == e["name"]


@pytest.fixture(scope="module")
def small_store(tmp_path_factory) -> tuple[Store, list[dict]]:
    data = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "synthea-r4"
    if not data.is_dir():
        pytest.skip(f"{data} is absent (the shared data set is in CI and developer checkouts, not in a fresh clone)")
    notes = [json.loads(line) for line in (EVALS / "notes.jsonl").read_text().splitlines()]
    patients = list(dict.fromkeys(n["patient_id"] for n in notes))[:6]
    files = [p for p in sorted(data.glob("*.json"))  # the Patient comes first in a Synthea bundle
             if any(pid in p.read_text(encoding="utf-8")[:6000] for pid in patients)]
    assert len(files) == len(patients)
    root = tmp_path_factory.mktemp("cc-eval")
    ingest([FileSource(files)], root / "db")
    return Store(root / "db"), [n for n in notes if n["patient_id"] in patients]


def test_scorer_on_six_patients(small_store):
    store, notes = small_store
    results, spurious, seconds, checked = score.run(notes, str(store.db))
    t = score.tables(results, spurious)
    tp, fp, fn, n = t["overall"]["all"]
    precision, recall, _ = score.prf(tp, fp, fn)
    assert n >= 30 and precision >= 0.9 and recall >= 0.9, t["overall"]
    text = score.render(t, seconds, checked, len(notes), 6)
    assert "mismatch kind" in text and "wrong_drug" in text
