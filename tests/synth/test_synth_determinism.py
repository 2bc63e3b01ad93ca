"""Same seed -> byte-identical output; different seed -> different output."""

from __future__ import annotations

from pathlib import Path

import orjson

from fhirqa.synth import generate_patients, write_sample


def _tree(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_same_seed_byte_identical_bundles(tmp_path: Path) -> None:
    write_sample(tmp_path / "a", 3, seed=5)
    write_sample(tmp_path / "b", 3, seed=5)
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert len(a) == 3
    assert a == b


def test_same_seed_byte_identical_ndjson(tmp_path: Path) -> None:
    write_sample(tmp_path / "a", 3, seed=5, fmt="ndjson")
    write_sample(tmp_path / "b", 3, seed=5, fmt="ndjson")
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")


def test_different_seed_differs() -> None:
    a = orjson.dumps(list(generate_patients(2, seed=1)))
    b = orjson.dumps(list(generate_patients(2, seed=2)))
    assert a != b


def test_prefix_stable_across_n() -> None:
    """Patient k is the same whether 2 or 5 patients are generated."""
    assert orjson.dumps(list(generate_patients(2, seed=3))) == orjson.dumps(
        list(generate_patients(5, seed=3))[:2]
    )


def test_now_moves_the_window() -> None:
    early = next(generate_patients(1, seed=3, now="2024-01-01T00:00:00Z"))
    dates = [
        e["resource"]["period"]["end"] for e in early["entry"] if e["resource"]["resourceType"] == "Encounter"
    ]
    assert dates and max(dates) < "2024-01-02"
