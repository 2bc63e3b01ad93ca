"""Clinical states asked as words, not numbers: "is she febrile?", "was he tachycardic yesterday?", "any
hypotension in the last 24h?", "afebrile overnight?".

Each state is a threshold on a measured item (``lexicon/clinical_states.json``: febrile = a temperature of 38.0 °C
or more, hypotensive = a systolic pressure below 90 mmHg, …). The question is answered as "any <item> <op>
<value> in the window?" by the ordinary threshold plan, so the extreme found is cited; with no window asked, the
last ``default_hours`` hours before now are read and the answer says so. A noun ("hypotension", "fevers") is a
state only with a window: without one it may be a diagnosis ("history of hypoglycemia?") and is left to the
other plans, as are questions about what a note documents; the state's ``bare_nouns`` ("any fever?") name only a
measurement and are read as the state without one. Words around the state that name no item ("at all", "episodes",
"since admission") do not make it context: only a record item left once the state and the window are taken out
does ("febrile pt - last WBC?"). A number asked with the state ("spiked above 38.5 this admission?") is the
threshold instead of the state's own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from dataclasses import replace
from datetime import timedelta
from functools import lru_cache
from typing import Any

from fhirqa.agent.backends.offline.parser import ParsedQuestion

Call = tuple[str, dict[str, Any]]
_WORDS = {">": "above", ">=": "of at least", "<": "below", "<=": "of at most"}


@lru_cache(maxsize=1)
def _spec() -> dict[str, Any]:
    from fhirqa.project import lexicon_file

    return lexicon_file("clinical_states.json")


def _said(words: list[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


def state_asked(pq: ParsedQuestion) -> dict[str, Any] | None:
    """The state a question asks about (its lexicon entry), or None."""
    spec = _spec()
    text = " ".join(pq.text.lower().split())
    threshold = pq.intent == "threshold" and pq.comparison is not None
    if (pq.intent not in ("exists", "value") and not threshold) or any(re.search(p, text) for p in spec["not_when"]):
        return None  # "how high did her fever get?" asks for a value of the item, not whether the state was there
    # the words the parser left as the item (the window and frame words are out of it); the question itself when
    # it left none
    rest_of = pq.entity or pq.text
    for state in spec["states"]:
        bare = state.get("bare_nouns", [])
        for words, needs_window in ((state["adjectives"], False), (bare, False), (state["nouns"], True)):
            said = rf"\b(?:{_said(words)})\b" if words else None
            if said is None or (needs_window and pq.window is None) or not re.search(said, text):
                continue
            rest = re.sub(said, " ", rest_of, flags=re.IGNORECASE)
            if pq.window is not None and pq.window.label:  # "febrile this admission?": the window's words name no item
                rest = re.sub(r"\s+".join(map(re.escape, pq.window.label.split())), " ", rest, flags=re.IGNORECASE)
            if _names_another_item(rest):
                return None  # "febrile pt on cross-cover - last WBC?": the state is context, the WBC is asked
            return state
    return None


def states_asked(pq: ParsedQuestion) -> list[dict[str, Any]] | None:
    """Every state a question asks about, in the order it names them ("febrile or hypoxic overnight?": two), or None
    when it asks about none (see :func:`state_asked`, which decides whether the question is a state question)."""
    if state_asked(pq) is None:
        return None
    text = " ".join(pq.text.lower().split())
    found: list[tuple[int, dict[str, Any]]] = []
    for state in _spec()["states"]:
        for words, needs_window in ((state["adjectives"], False), (state.get("bare_nouns", []), False),
                                    (state["nouns"], True)):
            said = rf"\b(?:{_said(words)})\b" if words else None
            match = re.search(said, text) if said and not (needs_window and pq.window is None) else None
            if match is not None:
                found.append((match.start(), state))
                break
    ordered = [state for _, state in sorted(found, key=lambda pair: pair[0])]
    # "febrile" and "afebrile" both match "afebrile": the longer word is the one said
    return [s for s in ordered if not any(o is not s and _contains(o, s, text) for o in ordered)] or ordered


def _contains(longer: dict[str, Any], shorter: dict[str, Any], text: str) -> bool:
    """True when every word of ``shorter`` found in ``text`` sits inside a longer word of ``longer`` ("afebrile")."""
    long_words = [w for w in longer["adjectives"] + longer["nouns"] if re.search(rf"\b{re.escape(w)}\b", text)]
    short_words = [w for w in shorter["adjectives"] + shorter["nouns"] if re.search(rf"\b{re.escape(w)}\b", text)]
    return bool(short_words) and all(any(s in lw and s != lw for lw in long_words) for s in short_words)


def plan_clinical_states(pq: ParsedQuestion, states: list[dict[str, Any]]) -> Generator[Call, dict[str, Any], None]:
    """One state as :func:`plan_clinical_state`; several ("febrile or hypoxic overnight?") each checked over the same
    window and the answers joined (yes/no: any for "or"/"either", all otherwise), each state's text kept."""
    from fhirqa.agent.backends.offline.conjunction_plan import Parts, joined_answer
    from fhirqa.agent.backends.offline.plans import final, plan

    if len(states) == 1:
        yield from plan_clinical_state(pq, states[0])
        return
    finals = []
    for state in states:
        asked, said = asked_threshold(pq, with_asked_number(pq, state))
        steps = plan(asked)
        call = next(steps)
        while call[0] != "final_answer":
            call = steps.send((yield call))
        finals.append(state_final(state, call[1], said))
    names = tuple(state["adjectives"][0] if state["adjectives"] else state["nouns"][0] for state in states)
    any_of = re.search(r"\b(?:or|either)\b", pq.text.lower()) is not None
    joined = joined_answer(Parts(questions=(), items=names, any_of=any_of), finals)
    yield final(joined["answer"], joined["text"], status=joined["status"], unit=joined.get("unit"))


def _names_another_item(rest: str) -> bool:
    """True when the words left once the state is taken out name a record item ("last WBC")."""
    from fhirqa.agent.lexicon import Lexicon

    lexicon = Lexicon.load()
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9+\-]*", rest)
    for width in range(min(4, len(words)), 0, -1):
        for start in range(len(words) - width + 1):
            if lexicon.lookup(" ".join(words[start:start + width])):
                return True
    return False


def asked_threshold(pq: ParsedQuestion, state: dict[str, Any],
                    parse: Callable[[str], ParsedQuestion] | None = None) -> tuple[ParsedQuestion, str]:
    """The state as the question "any <item> <op> <value>?" in the question's window (default: the last
    ``default_hours`` before now), and the words that say a default window was read ("" when one was asked).
    ``parse``: the parser to read it with (the relational path's reading; default the offline parser)."""
    from fhirqa.agent.backends.offline.timephrases import Window

    assert pq.now is not None
    if parse is None:
        from fhirqa.agent.backends.offline.parser import parse as offline_parse

        now = pq.now
        parse = lambda text: offline_parse(text, now)  # noqa: E731
    asked = parse(f"any {state['item']} {_WORDS[state['op']]} {state['value']:g}{state.get('asked_unit', '')}?")
    window, said = pq.window, ""
    if window is None:
        hours = int(_spec()["default_hours"])
        window = Window(pq.now - timedelta(hours=hours), pq.now, f"in the last {hours} hours")
        said = f" (no time was asked: the last {hours} hours)"
    return replace(asked, window=window), said


def with_asked_number(pq: ParsedQuestion, state: dict[str, Any]) -> dict[str, Any]:
    """``state`` with the threshold the question says instead of its own ("spiked above 38.5 this admission?"); a
    number outside the item's usual range is read in its other unit and converted ("above 101" = 38.3 °C)."""
    cmp = pq.comparison if pq.intent == "threshold" else None
    if cmp is None:
        return state
    unit = ""
    value, said = cmp.value, f"{cmp.value:g}{' ' + cmp.unit if cmp.unit else ''}"
    low, high = state.get("threshold_range") or (None, None)
    units = state.get("threshold_units") or []
    if low is not None and high is not None and not low <= value <= high and len(units) == 2 and not cmp.unit:
        # "spiked above 101": a number outside the item's usual range is in its other unit (°F), converted
        from fhirqa.agent.units import convert as _convert

        converted = _convert(value, units[1], units[0])
        if converted is not None:
            value, said = round(converted, 2), f"{cmp.value:g} {units[1]} = {converted:.1f} {units[0]}"
    else:
        unit = f" {cmp.unit}" if cmp.unit else ""
    return {**state, "op": cmp.op, "value": value, "invert": False, "asked_unit": unit, "number_asked": True,
            "said": f"a {state['item']} {_WORDS.get(cmp.op, cmp.op)} {said}"}


def state_final(state: dict[str, Any], args: dict[str, Any], said: str) -> dict[str, Any]:
    """The threshold's final answer read as the state: inverted for an absence ("afebrile"), the threshold used and
    the default window said."""
    args = dict(args)
    answer = args.get("answer") or []
    meaning = f"threshold asked: {state['said']}" if state.get("number_asked") else \
        f"{state['adjectives'][0] if state['adjectives'] else state['nouns'][0]} = {state['said']}"
    if state.get("invert") and len(answer) == 1 and isinstance(answer[0], bool):
        args["answer"] = [not answer[0]]
        args["text"] = f"{'Yes' if not answer[0] else 'No'}: {args.get('text', '')}"
    args["text"] = f"{args.get('text', '')} ({meaning}){said}".strip()
    return args


def plan_clinical_state(pq: ParsedQuestion, state: dict[str, Any]) -> Generator[Call, dict[str, Any], None]:
    """Whether any value of the state's item crossed its threshold in the window (default: the last day)."""
    from fhirqa.agent.backends.offline.plans import final, plan

    state = with_asked_number(pq, state)
    asked, said = asked_threshold(pq, state)
    steps = plan(asked)
    call = next(steps)
    while call[0] != "final_answer":
        call = steps.send((yield call))
    args = state_final(state, call[1], said)
    yield final(args.get("answer") or [], args["text"], status=args.get("status", "answered"), unit=args.get("unit"))
