"""Questions about the notes as documents ("summarize her notes", "what do the recent notes say?", "notes since
Monday", "how many notes this admission?", "any nursing notes today?", "who wrote the last note?", "notes by
cardiology", "what did the PT note say?").

A question is one of these when it names notes and nothing else remains once the words of
``lexicon/note_lists.json`` (what is asked: a count, an author, a summary, whether any; the stay, the latest or
first note, the last N), a time phrase, a note kind (``lexicon/note_kinds.json``), a service or an author's name
are taken out: "did any note mention chest pain?" keeps "chest pain" and stays the mention reader's. One note
asked to be read ("summarize the last note") stays with the one-note reader (``find_in_notes(read="note")``); a
count of one kind of note ("# of CXRs this admission") with ``note_kind_plan``. The plan asks ``list_notes`` and
answers from its bounded listing, every note cited.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion
from fhirqa.notes.kinds import first_match as _any

Call = tuple[str, dict[str, Any]]


@dataclass
class NotesAsk:
    """What a question asks of the notes as documents: ``mode`` (count, any, author, summary, list) and the
    ``list_notes`` arguments that choose them."""

    mode: str
    args: dict[str, Any] = field(default_factory=dict)


def _cfg() -> dict[str, Any]:
    from fhirqa.notes.listing import config

    return config()


def _strip(patterns: list[str], text: str) -> tuple[str, bool]:
    hit = False
    for p in patterns:
        if re.search(p, text):
            hit, text = True, re.sub(p, " ", text)
    return text, hit


def notes_asked(pq: ParsedQuestion) -> NotesAsk | None:
    """The notes-as-documents question ``pq`` asks, else None (see the module docstring)."""
    from fhirqa.notes import kinds, listing, reader

    cfg = _cfg()
    asked = " ".join(pq.text.split())
    q = f" {asked.lower()} "
    named = bool(_any(cfg["note_words"], q))
    service = listing.service_asked(asked)
    if not named and kinds.asked_kind(q) is None and (service is None or not service.get("asks")
                                                      or not _any(service["asks"], q)):
        return None
    args: dict[str, Any] = {}
    plural = bool(_any(cfg["plural_words"], q))
    # the kind of note, the service, the author: filters, their words taken out
    kind = kinds.asked_kind(q)
    if kind is not None:
        spec = next(k for k in kinds.config()["kinds"] if k["name"] == kind)
        if not named and spec.get("also_a_record") and not kinds.asks(q, "report_words"):
            return None  # "any imaging studies?": the studies are records; their reports only when named
        plural = plural or any(m.group(0).endswith("s") for p in spec["asks"] for m in re.finditer(p, q))
        q, _ = _strip(spec["asks"], q)
        args["note_kind"] = kind
    if service is not None:
        q, _ = _strip(service.get("asks", []), q)
        for p in service.get("asks_cased", []):  # "PT" as written: its lower-case copy goes from the question
            for m in re.finditer(p, asked):
                q = re.sub(r"\b" + re.escape(m.group(0).lower()) + r"\b", " ", q, count=1)
        args["service"] = service["name"]
    by = _any(cfg["by_words"], q)
    if by is not None and service is None:
        args["author"] = by.group("name")
        q = q[:by.start()] + " " + q[by.end():]
    # what is asked
    mode = None
    for name in ("author", "count", "when", "summary", "any", "list"):
        q2, hit = _strip(cfg["asks"][name], q)
        if hit:
            mode, q = mode or name, q2
    n = _any(cfg.get("last_n", []), q)
    if n is not None:
        word = n.group("n")
        args["last"] = int(word) if word.isdigit() else int(cfg["number_words"][word])
        q = q[:n.start()] + " " + q[n.end():]
        plural = True
    q, stay = _strip(cfg["stay_words"], q)
    q, window = _take_window(q, pq, args)
    if stay:
        placed = pq.window
        if placed is not None and placed.start is not None and placed.end is not None and not placed.anchor:
            args["start"], args["end"] = _iso(placed.start), _iso(placed.end)  # the stay the caller resolved
        else:
            args["stay"] = "latest"
    q, latest = _strip(cfg["latest_words"], q)
    q, first = _strip(cfg["first_words"], q)
    q, _ = _strip(cfg["recent_words"], q)
    q, _ = _strip(cfg["note_words"], q)
    q, _ = _strip(cfg.get("since_words", []), q)
    drop = set(cfg["filler_words"].split()) | set(cfg["anchor_words"].split())
    left = [t for t in re.findall(r"[a-z0-9][a-z0-9'&/\-]*", q) if re.sub(r"'s?$", "", t) not in drop
            and not re.fullmatch(r"[\d/\-:.,']+|\d{1,2}(?:st|nd|rd|th)", t)]
    if left:
        return None  # something else is asked of the notes (a finding, a value, a section)
    if not named and kind is None and mode != "summary":
        return None  # "what did cardiology say?" asks for its notes; "cardiology follow-up?" does not
    mode = mode or "list"
    scoped = any(k in args for k in ("start", "end", "stay", "last"))
    if (latest or first) and not plural and not scoped:
        args["which"] = "first" if first and not latest else "latest"
    one = not plural and "last" not in args
    if mode in ("summary", "list") and one and ("service" not in args or reader.named_kind(asked) is not None) \
            and "author" not in args:
        return None  # "summarize the last note", "pull up the ED note from 3/2/2019": the one-note reader
    if kind is not None and "service" not in args and "author" not in args and (
            mode == "count" or (one and mode != "author")):
        return None  # "# of nursing notes this admit", "date of the last d/c summary": note_kind_plan
    if one and mode in ("summary", "list", "author", "when") and "which" not in args and not scoped:
        args["which"] = "latest"  # "what did the PT note say?", "who wrote the d/c summary?": the latest one
    if mode in ("count", "any") and not scoped and "which" not in args:
        args["which"] = "all"  # "how many notes has she had?": every note on file, not the default scope
    if mode == "summary":
        args["summarize"] = True
    return NotesAsk(mode, args)


def seen_asked(pq: ParsedQuestion) -> NotesAsk | None:
    """"who saw her last?", "seen by whom today?": the author of the latest note in the window, for a record whose
    visits name no clinician (``seen_words``; nothing else may remain), else None."""
    cfg = _cfg()
    q = f" {' '.join(pq.text.lower().split())} "
    q, seen = _strip(cfg.get("seen_words", []), q)
    if not seen:
        return None
    args: dict[str, Any] = {"which": "latest"}
    q, _ = _take_window(q, pq, args)
    for key in ("latest_words", "since_words"):
        q, _ = _strip(cfg.get(key, []), q)
    drop = set(cfg["filler_words"].split()) | set(cfg["anchor_words"].split()) | {"whom", "seen", "saw"}
    if [t for t in re.findall(r"[a-z0-9][a-z0-9'&/\-]*", q) if re.sub(r"'s?$", "", t) not in drop]:
        return None
    return NotesAsk("seen", args)


def _take_window(q: str, pq: ParsedQuestion, args: dict[str, Any]) -> tuple[str, Any]:
    """``q`` without its time phrase, whose bounds go into ``args`` (``start``; ``end`` unless it runs to now)."""
    window = _window(q, pq.now) if pq.now is not None else None
    if window is not None:
        (start, end, since), span = window
        q = q[:span[0]] + " " + q[span[1]:]
        args["start"] = _iso(start)
        if end is not None and not since:
            args["end"] = _iso(end)
    return q, window


def _window(q: str, now: datetime) -> tuple[tuple[datetime | None, datetime | None, bool], tuple[int, int]] | None:
    """The time phrase of ``q`` (its bounds, whether it runs to now, its characters), or None."""
    from fhirqa.agent.backends.offline.timephrases import find_window

    found = find_window(q, now)
    if found is None or found.window.anchor:
        return None
    written = re.search(r"\bfrom\b", q[max(0, found.start - 6):found.end])
    if found.kind == "since" and written:
        # "notes from 1993", "notes from 11/20": the notes written then, not since (the parser's "from X" of a
        # value window); "in"/"on" keep the phrase's characters where they were
        at = max(0, found.start - 6) + written.start()
        for word in ("  in", "  on"):
            again = find_window(q[:at] + word + q[at + 4:], now)
            if again is not None and again.kind != "since" and not again.window.anchor:
                return (again.window.start, again.window.end, False), (at, again.end)
    since = bool(_any(_cfg().get("since_words", []), q[max(0, found.start - 12):found.start + 7]))
    return (found.window.start, found.window.end, since), (found.start, found.end)


def _iso(moment: datetime | None) -> str | None:
    from fhirqa.agent.backends.offline.plans import _iso as iso

    return iso(moment)


def plan_note_list(pq: ParsedQuestion, ask: NotesAsk) -> Generator[Call, dict[str, Any], None]:
    """Ask ``list_notes`` and answer from its listing."""
    result = yield ("list_notes", dict(ask.args))
    yield answer(ask, result)


def answer(ask: NotesAsk, result: dict[str, Any]) -> Call:
    """The final answer for ``ask`` from a ``list_notes`` result."""
    from fhirqa.agent.backends.offline.plans import final
    from fhirqa.notes.listing import line

    if not result.get("ok", True):
        return final([], str(result.get("error") or "The notes could not be read."), status="no-data")
    count = int(result.get("count") or 0)
    items = list(result.get("notes") or [])
    what = str(result.get("what") or "notes")
    if not result.get("notes_on_file"):
        if ask.mode == "count":
            return final([0], "0: no notes on file for this patient.")
        if ask.mode == "any":
            return final([False], "No: no notes on file for this patient.")
        return final([], "No notes on file for this patient.", status="no-data")
    if not result.get("of_that_kind_on_file"):  # "notes by cardiology" when there is none at all
        others = f" ({result.get('notes_on_file')} notes of other kinds or authors)"
        if ask.mode == "count":
            return final([0], f"0: no {what} on file{others}.")
        if ask.mode == "any":
            return final([False], f"No: no {what} on file{others}.")
        return final([], f"No {what} on file{others}.", status="no-data")
    head = _head(result, count, what)
    listing = "\n".join(f"- {line(i)}" for i in items)
    more = f"\n… and {result['left_out']} more not listed." if result.get("left_out") else ""
    if ask.mode == "count":
        return final([count], f"{_cap(head)}." + (f"\n{listing}{more}" if items else _last_on_file(result)))
    if ask.mode == "any":
        if not count:
            return final([False], f"No: {head}.{_last_on_file(result)}")
        return final([True], f"Yes: {head}:\n{listing}{more}")
    if not count:
        return final([], f"{_cap(head)}.{_last_on_file(result)}", status="no-data")
    if ask.mode == "when":
        dates = list(dict.fromkeys(i.get("date") for i in items if i.get("date")))
        if len(items) == 1:
            return final(dates, f"{items[0].get('date')}: {_cap(head)}, {line(items[0])}.")
        return final(dates, f"{_cap(head)}:\n{listing}{more}")
    if ask.mode == "seen":  # the visits name no clinician: the latest note's author, said as such
        who = items[0].get("author")
        if not who:
            return final([], f"The record's visits name no clinician, and the last note names no author: "
                             f"{line(items[0])}.", status="no-data")
        return final([who], f"{who}, the author of the last note ({line(items[0])}); the record's visits name no "
                            "clinician.")
    if ask.mode == "author":
        authors = list(dict.fromkeys(i["author"] for i in items if i.get("author")))
        if not authors:
            return final([], f"No author is named on {line(items[0])}.", status="no-data")
        if len(items) == 1:
            how = " (per the note's own signature line)" if items[0].get("author_from") else ""
            return final(authors, f"{authors[0]}{how} wrote the {items[0].get('note_type') or 'note'} of "
                                  f"{items[0].get('date')} ({items[0]['ref']}).")
        return final(authors, f"Authors of {head}: {', '.join(authors)}.\n{listing}{more}")
    if ask.mode == "summary":
        summarized = int(result.get("summarized") or 0)
        said = "summarized" if summarized == count else f"the newest {summarized} summarized"
        rest = ", the rest listed" if len(items) > summarized else ""
        blocks, values = [], []
        for i in items:
            if i.get("summary"):
                blocks.append(f"{line(i)}:\n" + "\n".join(f"  {s}" for s in i["summary"]))
                values.append(f"{i.get('date')} {i.get('note_type') or 'note'}"
                              f"{', ' + i['author'] if i.get('author') else ''}: " + " | ".join(i["summary"]))
            else:
                blocks.append(f"{line(i)} (not summarized)")
        return final(values, f"{_cap(head)}; {said}{rest}.\n\n" + "\n\n".join(blocks) + more)
    values = [f"{i.get('date')} {i.get('note_type') or 'note'}{', ' + i['author'] if i.get('author') else ''}"
              for i in items]
    return final(values, f"{_cap(head)}:\n{listing}{more}")


def _head(result: dict[str, Any], count: int, what: str) -> str:
    """What the notes in scope are, said the way they were chosen: "the last 5 of 37 notes on file (no window
    was asked)", "3 notes in the latest stay (Encounter/…)", "2 nursing notes on 2024-11-25"."""
    label = str(result.get("scope_label") or "")
    default = " (no window was asked)" if result.get("default_scope") else ""
    how = result.get("scope")
    if how == "last_n":
        return f"{label} of {result.get('of_that_kind_on_file')} {what} on file{default}"
    if how in ("latest", "first"):
        window = label.split(" ", 2)[2] if label.count(" ") >= 2 else ""  # "the last on 2024-11-25"
        return f"{label} of the {what}" if count else f"no {what} {window}".strip()
    if not count:
        return f"no {what} {label}".strip()
    return f"{count} {_noun(what, count)} {label}{default}".strip()


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _noun(what: str, count: int) -> str:
    """"notes" / "note", "nursing notes" / "nursing note", "notes by Patel" / "note by Patel"."""
    if count != 1:
        return what
    head, _, tail = what.partition(" by ")
    head = head[:-1] if head.endswith("s") else head
    return f"{head} by {tail}" if tail else head


def _one(items: list[dict[str, Any]], count: int) -> str:
    return (items[0].get("note_type") or "note") if count == 1 else "notes"


def _last_on_file(result: dict[str, Any]) -> str:
    last = result.get("last_on_file")
    if not last:
        return "" if result.get("of_that_kind_on_file") else " None on file."
    from fhirqa.notes.listing import line

    return f" The last one on file: {line(last)}."
