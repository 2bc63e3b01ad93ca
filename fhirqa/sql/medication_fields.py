"""What a drug's orders say beyond its name and dates, over a relational record: its route, and the members of a drug
class given in a window.

- **Route** ("route of the pantoprazole?", "fentanyl route?", "how is the magnesium given (route)?"): the item phrase
  holds a drug and a route word (``drug_route`` of ``data/sql_reading.json``); the answer is the route of the drug's
  latest order in the question's window (OMOP ``drug_exposure.route_source_value``, else the route concept's name;
  MIMIC-III ``prescriptions.route``), the order cited. An order that records no route is no answer (``no-data``).
- **A class in a window** ("abx this admission?", "antibiotics since admit?"): a value question whose item is a drug
  class of the lexicon (``lexicon/drugs.json`` classes: "abx", "antibiotics", "pressors") and that asks for no single
  order ("last", "latest", "first") lists the members ordered in the window, oldest first, each cited; no member in the
  window is an empty list with the window said.
"""

from __future__ import annotations

import re

from fhirqa.agent.answer import Evidence
from fhirqa.sql.offline_sql import Compiler, Final, day, final
from fhirqa.sql.reading import tokens, words
from fhirqa.sql.records import iso


def route_asked(c: Compiler) -> str | None:
    """The drug phrase of a route question (the item phrase without its route words), else None."""
    pq = c.pq
    if pq.intent not in ("value", "list_items", "exists") or not pq.entity:
        return None
    said = set(words()["drug_route"]["words"])
    kept = [w for w in pq.entity.split() if w.lower() not in said]
    if len(kept) == len(pq.entity.split()) or not kept:
        return None
    return " ".join(kept)


def drug_route(c: Compiler, drug: str) -> Final:
    """The route of the drug's latest order in the window (see the module docstring)."""
    data = c.data
    found = c.find(["medication"], entity=drug)
    if found is None:  # "the IV acetaminophn": a route word inside the drug phrase is no part of its name
        from fhirqa.project import lexicon_file

        routes = {w for said in lexicon_file("drug_class_questions.json")["routes"].values() for w in said}
        bare = " ".join(w for w in drug.split() if w.lower() not in routes)
        found = c.find(["medication"], entity=bare) if bare and bare != drug else None
    if found is None:
        return c.no_match(f"medication matching '{drug}'")
    if found.ambiguous:
        return c.ambiguous(found)
    row = data.at(c.window(found.spec), -1)
    window = f" {c.pq.window.label}" if c.pq.window else ""
    if row is None:
        return final([], f"No {drug} orders{window}.", status="no-data")
    data.cite(row, "name")
    if not row.get("route"):
        return final([], f"The latest {row.get('name')} order ({day(row.get('time'))}) records no route.", status="no-data")
    table = str(row.get("tbl") or "?")
    ref, column = f"{table}/{row.get('row_id')}", str(row.get("route_col") or f"{table}.route")
    data.evidence[(ref, column)] = Evidence(ref=ref, field=column, value=row["route"], time=iso(row.get("time")),
                                            label=row.get("name"), unit=None)
    return final([row["route"]], f"{row['route']}: the latest {row.get('name')} order ({day(row.get('time'))}{window}) "
                 f"is given {row['route']}.")


def class_in_window(c: Compiler) -> Final | None:
    """The members of a drug class ordered in the window, when the value question asks for no single order; None
    for other questions."""
    pq, data = c.pq, c.data
    if pq.intent != "value" or not pq.entity or pq.window is None:
        return None
    text = " ".join(tokens(pq.text))
    single = words()["last_words"] + words()["first_words"]
    if re.search(rf"\b(?:{'|'.join(re.escape(w) for w in single)})\b", text):
        return None
    resolution = data.resolve("medication", pq.entity)
    if resolution.how != "lexicon:class" or not resolution.matched:
        return None
    found = c.lookup("medication", pq.entity)
    rows = data.select(c.window(found.spec), order="r.time ASC, r.row_id ASC", extra="r.time IS NOT NULL")
    names: list[str] = []
    for row in rows:
        if row.get("name") not in names:
            names.append(row["name"])
            data.cite(row, "name")
    label = pq.window.label
    if not names:
        return final([], f"No {pq.entity} ordered {label}.")
    return final(names, f"{pq.entity} ordered {label}: {'; '.join(names)}.")
