"""Throughput of the compiled ViewDefinition runner on Synthea Observations.

Run: ``/tmp/venv/bin/python tests/viewdef/bench_viewdef.py [--fhirpathpy]``

Loads every Observation from ``../shared/data/synthea-r4`` (13,020 of them), then times
``CompiledView.rows`` over all of them with a 15-column view (best of 5, process CPU time,
so other processes on the machine do not distort it). Parsing JSON is not timed.
With ``--fhirpathpy`` it also times the same columns evaluated by fhirpathpy for scale.
Not a test (no ``test_`` prefix): timings do not belong in assertions.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import orjson

from fhirqa.viewdef import compile_view

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "synthea-r4"

OBSERVATION_VIEW = {
    "resourceType": "ViewDefinition",
    "name": "observation_flat",
    "resource": "Observation",
    "status": "active",
    "select": [
        {
            "column": [
                {"name": "id", "path": "getResourceKey()", "type": "id"},
                {"name": "patient_id", "path": "subject.getReferenceKey(Patient)", "type": "string"},
                {"name": "encounter_id", "path": "encounter.getReferenceKey(Encounter)", "type": "string"},
                {"name": "status", "path": "status", "type": "code"},
                {"name": "category", "path": "category.coding.where(system = 'http://terminology.hl7.org/CodeSystem/observation-category').code.first()", "type": "code"},
                {"name": "code_system", "path": "code.coding.first().system", "type": "uri"},
                {"name": "code", "path": "code.coding.first().code", "type": "code"},
                {"name": "code_display", "path": "code.coding.first().display", "type": "string"},
                {"name": "code_text", "path": "code.text", "type": "string"},
                {"name": "effective", "path": "effective.ofType(dateTime)", "type": "dateTime"},
                {"name": "issued", "path": "issued", "type": "instant"},
                {"name": "value", "path": "value.ofType(Quantity).value", "type": "decimal"},
                {"name": "unit", "path": "value.ofType(Quantity).code", "type": "code"},
                {"name": "value_code", "path": "value.ofType(CodeableConcept).coding.first().code", "type": "code"},
                {"name": "has_components", "path": "component.exists()", "type": "boolean"},
            ]
        }
    ],
}


def load_observations() -> list[dict]:
    """Every Observation in the Synthea bundles, as parsed by orjson."""
    out = []
    for path in sorted(DATA.glob("*.json")):
        bundle = orjson.loads(path.read_bytes())
        for entry in bundle.get("entry", []):
            res = entry["resource"]
            if res.get("resourceType") == "Observation":
                out.append(res)
    return out


def time_it(label: str, fn, n: int, repeat: int = 5) -> float:
    """Best of ``repeat`` runs, in CPU time of this process (robust on a shared machine)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    print(f"{label:<44} {best * 1000:8.1f} ms  {n / best:>10,.0f} resources/s")
    return best


def main() -> None:
    if not DATA.is_dir():
        sys.exit(f"no data at {DATA}")
    observations = load_observations()
    view = compile_view(OBSERVATION_VIEW)
    rows_of = view.rows
    print(f"{len(observations)} Observations, {len(view.columns)} columns")

    def run() -> None:
        for r in observations:
            rows_of(r)

    time_it("fhirqa.viewdef compiled view", run, len(observations))
    t0 = time.perf_counter()
    compile_view(OBSERVATION_VIEW)
    print(f"{'compile_view':<44} {(time.perf_counter() - t0) * 1000:8.2f} ms")

    if "--fhirpathpy" in sys.argv:
        import fhirpathpy  # only for comparison

        # fhirpathpy knows neither getResourceKey() nor getReferenceKey(): use plain paths there.
        plain = {"id": "id", "patient_id": "subject.reference", "encounter_id": "encounter.reference"}
        paths = [fhirpathpy.compile(plain.get(c.name, c.path)) for c in view.columns]
        sample = observations[:1000]

        def run_fp() -> None:
            for r in sample:
                [p(r) for p in paths]

        time_it("fhirpathpy, same paths (1,000 resources)", run_fp, len(sample), repeat=1)


if __name__ == "__main__":
    main()
