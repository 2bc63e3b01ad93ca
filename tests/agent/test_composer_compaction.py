"""What an LLM is sent of a tool result: the summary, every value and ref it may cite, no repetition.

The composer keeps each result as the tool returned it (the offline backend and the trace read those);
``compact`` is the conversation as sent to a model on each turn.
"""

from __future__ import annotations

import orjson

from fhirqa.agent.backends.base import Message
from fhirqa.agent.composer import OLD_ROWS, PREVIEW_ROWS, compact, compact_result

LDL = "Cholesterol in LDL [Mass/volume] in Serum or Plasma by Direct assay"


def ldl_row(n: int) -> dict:
    return {"ref": f"Observation/ldl-{n}", "name": LDL, "value_comparator": None, "value": 90.0 + n,
            "value_string": None, "unit": "mg/dL", "time": f"20{10 + n}-04-12T18:55:00+00:00",
            "category": "laboratory", "interpretation": "H" if n % 2 else "N"}


def lookup(rows: int) -> dict:
    return {"ok": True, "handle": "r1", "view": "observation", "count": rows, "items": [LDL],
            "time_range": {"earliest": ldl_row(0)["time"], "latest": ldl_row(rows - 1)["time"]},
            "preview": [ldl_row(n) for n in range(rows)], "omitted": 0}


def as_seen(result: dict, row: dict) -> dict:
    """A preview row as a model reads it: its own columns and the shared ones."""
    return {**result.get("rows_share", {}), **row}


def test_a_preview_keeps_every_value_and_ref_once():
    original = lookup(5)
    sent = compact_result(original)
    assert sent["handle"] == "r1" and sent["count"] == 5 and sent["time_range"] == original["time_range"]
    # Columns with one value in every row are said once.
    assert sent["rows_share"] == {"name": LDL, "unit": "mg/dL", "category": "laboratory"}
    assert list(sent).index("rows_share") < list(sent).index("preview")
    assert all("name" not in row and "unit" not in row for row in sent["preview"])
    # Empty columns are absent; what a row says (value, time, flag) and its ref are all there.
    for row, full in zip(sent["preview"], original["preview"], strict=True):
        assert as_seen(sent, row) == {k: v for k, v in full.items() if v is not None}


def test_a_long_preview_shows_its_first_and_latest_rows():
    sent = compact_result(lookup(20))
    rows = sent["preview"]
    shown = [r["ref"] for r in rows if isinstance(r, dict)]
    assert len(shown) == PREVIEW_ROWS
    assert shown[0] == "Observation/ldl-0" and shown[-1] == "Observation/ldl-19"
    marker = next(r for r in rows if isinstance(r, str))
    assert marker.startswith(f"… {20 - PREVIEW_ROWS} more")


def test_a_picked_row_drops_empty_columns_but_keeps_its_value_columns():
    row = {**ldl_row(3), "value": None, "value_string": "see comment", "code_system": None, "issued": None}
    result = {"ok": True, "handle": "r2", "index": -1, "of": 5, "row": row,
              "evidence": {"ref": row["ref"], "field": "value_string", "value": "see comment", "time": row["time"],
                           "name": LDL}}
    sent = compact_result(result)
    assert "code_system" not in sent["row"] and "issued" not in sent["row"] and "value_comparator" not in sent["row"]
    # An empty value column says something (no numeric result): it stays.
    assert sent["row"]["value"] is None and sent["row"]["value_string"] == "see comment"
    # The evidence keeps only what the row does not already say: which field the answer reads.
    assert sent["evidence"] == {"field": "value_string"}


def test_value_lists_keep_their_order_and_every_entry_field():
    values = [{"value": f"drug {n}", "ref": f"MedicationRequest/{n}", "rows": 1} for n in range(12)]
    sent = compact_result({"ok": True, "field": "medication_name", "count": 12, "values": values})
    assert [v["value"] for v in sent["values"] if isinstance(v, dict)] == [f"drug {n}" for n in range(8)]
    assert sent["values"][-1] == "… 4 more (not shown; narrow the set with a filter to see them)"


def test_older_results_shrink_and_the_latest_two_keep_their_rows():
    messages = [Message("system", "s"), Message("user", "Question: q")]
    for n in range(3):
        messages.append(Message("assistant", "", tool_calls=[]))
        messages.append(Message("tool", orjson.dumps(lookup(10)).decode(), tool_call_id=f"c{n}", name="get_resources"))
    sent = compact(messages)
    assert [m.content for m in sent[:2]] == ["s", "Question: q"]
    previews = [orjson.loads(m.content)["preview"] for m in sent if m.role == "tool"]
    assert len([r for r in previews[0] if isinstance(r, dict)]) == OLD_ROWS
    assert previews[0][OLD_ROWS // 2 + OLD_ROWS % 2].endswith("(shown earlier)")
    assert all(len([r for r in p if isinstance(r, dict)]) == PREVIEW_ROWS for p in previews[1:])
    # The conversation itself is untouched: the tools and the offline backend read the full results.
    assert len(orjson.loads(messages[3].content)["preview"]) == 10


def test_compaction_sends_fewer_characters():
    full = orjson.dumps(lookup(20)).decode()
    sent = orjson.dumps(compact_result(lookup(20))).decode()
    assert len(sent) < len(full) / 2
