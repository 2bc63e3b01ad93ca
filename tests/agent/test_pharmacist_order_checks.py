"""A pharmacist verifying orders (session 18, from probe_voices2): duplicate therapy and years on a drug, over
hand-made rows; each gold is computed from the rows.

1. "same med on the active list twice?", "any active med duplicated?": the active orders grouped by ingredient, a
   combination counting for each of its ingredients (Percocet beside Tylenol is acetaminophen twice); stopped orders
   are no duplicates;
2. "yrs on Pulmicort?", "vitamin B12: how long on it, in yrs?": the course's length in completed years.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .test_tools_helpers import med, offline_answer

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)


def order(oid: str, name: str, when: str, status: str = "active") -> dict[str, Any]:
    return med(oid, name, "request", when, dose=1, unit="tablet", status=status)


SINGLES = [order("lis", "Lisinopril 10 MG Oral Tablet", "2024-01-02T09:00:00"),
           order("apap", "Acetaminophen 325 MG Oral Tablet", "2025-06-18T09:00:00"),
           order("old-apap", "Acetaminophen 500 MG Oral Tablet", "2023-01-02T09:00:00", status="stopped")]
PERCOCET = order("perc", "Acetaminophen 325 MG / oxyCODONE Hydrochloride 5 MG Oral Tablet", "2025-06-19T09:00:00")


def ask(question: str, orders: list[dict[str, Any]]) -> dict[str, Any]:
    return offline_answer(question, {"medication": orders}, NOW)


def active_by_ingredient(orders: list[dict[str, Any]], word: str) -> set[str]:
    return {o["ref"] for o in orders if o["status"] == "active" and word in o["medication_name"].lower()}


def test_no_ingredient_on_two_active_orders_is_no() -> None:
    assert len(active_by_ingredient(SINGLES, "acetaminophen")) == 1  # the second one is stopped
    assert ask("same med on the active list twice?", SINGLES)["answer"] == [False]


def test_a_combination_shares_its_ingredient_with_a_single_drug() -> None:
    orders = [*SINGLES, PERCOCET]
    expected = active_by_ingredient(orders, "acetaminophen")
    assert len(expected) == 2
    got = ask("any active med duplicated (same ingredient, 2 orders)?", orders)
    assert got["answer"] == [True] and "acetaminophen on 2 active orders" in got["text"]
    assert expected <= got["cited"]


def test_years_on_a_drug_are_completed_years_of_its_course() -> None:
    courses = [order(f"b{i}", "budesonide 0.25 MG/ML Inhalation Suspension", f"{year}-03-01T09:00:00")
               for i, year in enumerate(range(2010, 2026))]
    start, end = courses[0]["time"], courses[-1]["time"]
    expected = int((end - start).days // 365.25)
    got = ask("yrs on Pulmicort?", courses)
    assert got["answer"] == [expected] and got.get("unit") == "years"
    assert ask("budesonide: how long on it, in yrs?", courses)["answer"] == [expected]
