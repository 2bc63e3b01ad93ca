"""Which results of a kind were abnormal, no single item named: "any abnormal labs?", "anything abnormal in her last
labs?", "were her last labs normal?", "which labs were flagged this admission?", "abnormal vitals today?".

What counts as such a question, and the words, are data (``lexicon/abnormal_results.json``). The window is the
question's; none asked, it is the latest day that has results of that kind (the patient's last labs), and the answer
says so. The ``abnormal_results`` tool judges each result as the normality plan does (flag, the record's range, the
usual adult range) and cites every abnormal one; results with nothing to judge them by are counted, not guessed.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
_INTENTS = frozenset({"exists", "value", "list_items"})
_KIND_WORDS = {"laboratory": ("lab result", "lab results"), "vital-signs": ("vital sign", "vital signs"),
               "all": ("result", "results")}


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    spec = lexicon_file("abnormal_results.json")
    return {
        "abnormal": re.compile("|".join(spec["abnormal"])),
        "normal": re.compile("|".join(spec["normal"])),
        "scopes": {kind: re.compile("|".join(patterns)) for kind, patterns in spec["scopes"].items()},
        "filler": frozenset(spec["word_filler"]),
        "yes_no": re.compile("|".join(spec["yes_no"])),
        "critical": re.compile(spec["critical"]),
        "max_listed": int(spec["max_listed"]),
    }


def _text(pq: ParsedQuestion) -> str:
    return " ".join(pq.text.lower().replace("’", "'").split()).strip(" ?.!")


def abnormal_asked(pq: ParsedQuestion) -> tuple[str, str] | None:
    """``(asked, category)``: ``abnormal`` or ``normal`` asked of ``laboratory``, ``vital-signs`` or ``all`` results,
    when the question asks it of a kind of results and names no single item; None otherwise."""
    if pq.intent not in _INTENTS or pq.comparison is not None:
        return None
    spec = _spec()
    text = _text(pq)
    critical = spec["critical"].search(text)
    asked = "abnormal" if spec["abnormal"].search(text) or critical else "normal" if spec["normal"].search(text) else None
    if asked is None:
        return None
    category = next((kind for kind, pattern in spec["scopes"].items() if pattern.search(text)), None)
    if category is None and pq.category in ("laboratory", "vital-signs"):
        category = pq.category
    if category is None:
        return None
    # Nothing else may be left of the item the parser read: "is her K normal?" is the normality plan's.
    rest = (pq.entity or "").lower()
    for pattern in (spec["abnormal"], spec["normal"], spec["critical"], *spec["scopes"].values()):
        rest = pattern.sub(" ", rest)
    if any(w not in spec["filler"] for w in re.findall(r"[a-z0-9][a-z0-9'/.\-]*", rest)):
        return None
    return asked, category


def plan_abnormal(pq: ParsedQuestion, found: tuple[str, str]) -> Generator[Call, dict[str, Any], None]:
    """The results of the question's kind judged outside their range, listed (or yes/no), over its window or the
    latest day that has any."""
    from fhirqa.agent.backends.offline.events_plan import _bounds, _window
    from fhirqa.agent.backends.offline.plans import _with_unit, final

    asked, category = found
    spec = _spec()
    one, many = _KIND_WORDS[category]
    critical = bool(spec["critical"].search(_text(pq)))
    args: dict[str, Any] = {"category": category, "limit": spec["max_listed"]}
    if critical:
        args["critical"] = True
    label = ""
    if pq.window is not None or pq.now is None:
        window, said = yield from _window(pq, 24)
        if window is None:
            yield final([], f"No {many} can be placed {pq.window.label if pq.window else ''}: {said}.", status="no-data")
            return
        args.update(_bounds(window))
        label = window.label
    else:
        args["latest_day"] = True
    got = yield ("abnormal_results", args)
    if not got.get("results"):
        yield final([], f"The record holds no {many}{' ' + label if label else ''}.", status="no-data")
        return
    when = f"of {got['latest_day']} (the latest day with {many})" if got.get("latest_day") else label
    judged, read = int(got.get("judged") or 0), int(got.get("results") or 0)
    unjudged = (f"; {read - judged} had no {'critical flag or limit' if critical else 'flag or range'} to judge by"
                if read > judged else "")
    if not judged:
        nothing = ("no critical flag, and fhirqa holds no critical limit for them" if critical else
                   "no flag or reference range, and fhirqa has no usual range for them")
        yield final([], f"The {read} {one if read == 1 else many} {when} carry {nothing}: nothing to judge them by.",
                    status="no-data")
        return
    shown = [f"{r.get('name')} {_with_unit(r.get('value'), r.get('unit')) if r.get('value') is not None else r.get('value_string') or ''}"
             f" {r.get('side')} ({r.get('basis')}) on {str(r.get('time'))[:10]}" for r in got.get("abnormal") or []]
    count = int(got.get("abnormal_count") or 0)
    more = f"; and {count - len(shown)} more" if count > len(shown) else ""
    cited = "; ".join(f"{s} ({r.get('ref')})" for s, r in zip(shown, got.get("abnormal") or [], strict=True))
    yes_no = bool(spec["yes_no"].search(_text(pq)))
    of = f"{count} of the {judged} {many} {when} judged" if judged != 1 else f"The one {one} {when} judged"
    past = "past a critical limit" if critical else "outside the normal range"
    if asked == "abnormal":
        if count:
            text = f"{'Yes: ' if yes_no else ''}{of} {'was' if count == 1 else 'were'} {past}: {cited}{more}{unjudged}."
            names = list(dict.fromkeys(str(r.get("name")) for r in got.get("abnormal") or []))  # the text says the rest
            yield final([True] if yes_no else names, text)
        else:
            none = f"none of the {judged} {many} {when} judged was" if judged != 1 else f"the one {one} {when} judged was not"
            text = f"{'No: ' if yes_no else ''}{none} {past}{unjudged}."
            yield final([False] if yes_no else [], text[0].upper() + text[1:])
        return
    if count:
        yield final([False], f"No: {of} {'was' if count == 1 else 'were'} outside the normal range: {cited}{more}{unjudged}.")
    else:
        yield final([True], f"Yes: all {judged} {many} {when} judged were within the normal range{unjudged}.")
