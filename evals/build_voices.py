"""Build `evals/heldout-voices.jsonl`: a blind set in two voices, a pharmacist and a patient (or family).

Gold answers are computed from the raw Synthea R4 bundles of `../shared/data/synthea-r4` by
`voices_gold/` (orjson, `urn:uuid:` references resolved by hand); nothing here imports fhirqa.
Every random choice comes from `random.Random(<string>)`: same data in, same bytes out.

    python evals/build_voices.py            # rewrite evals/heldout-voices.jsonl
    python evals/build_voices.py --check    # exit 1 when the committed file is stale
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from voices_gold.chart import (  # noqa: E402
    ONE_DAY,
    UTC,
    Chart,
    add_months,
    completed_months,
    completed_years,
    day_end,
    day_start,
    load,
    near_birthday,
    udate,
    year_window,
)
from voices_gold.vocab import (  # noqa: E402
    ABSENT_ITEMS,
    CLASSES,
    CONDITIONS,
    DRUGS,
    ITEMS,
    NEVER_ITEMS,
    VACCINES,
)

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "synthea-r4"
OUT = HERE / "heldout-voices.jsonl"
PER_VOICE = 5  # questions per category and voice (existence_negative: 6)
WEEK = timedelta(days=7)


def R(*parts: str) -> random.Random:
    return random.Random("voices|" + "|".join(parts))  # noqa: S311 (seeded, not crypto)


# ---------------------------------------------------------------- wording helpers
def fmt_date(rng: random.Random, d: date) -> str:
    k = rng.randrange(4)
    if k == 0:
        return d.isoformat()
    if k == 1:
        return f"{d.strftime('%B')} {d.day}, {d.year}"
    if k == 2:
        return f"{d.strftime('%b')} {d.day}, {d.year}"
    return f"{d.month}/{d.day}/{d.year}"


def pron(ch: Chart) -> tuple[str, str]:
    return ("her", "she") if ch.gender == "female" else ("his", "he")


def fam(ch: Chart) -> str:
    return "my mom" if ch.gender == "female" else "my dad"


def poss_ph(ch: Chart, rng: random.Random) -> str:
    return rng.choice(["the patient's", "pt's", pron(ch)[0]])


def has_ing(name: str, keys: list[str]) -> bool:
    n = name.lower()
    return any(k in n for k in keys)


def rx_of(ch: Chart, keys: list[str]):
    return [e for e in ch.rx if has_ing(e.name, keys)]


def cls_keys(c: str) -> list[str]:
    return CLASSES[c][0]


def in_win(events, lo, hi):
    return [e for e in events if (lo is None or e.t >= lo) and (hi is None or e.t <= hi)]


def refs_of(xs) -> list[str]:
    return sorted({x.ref for x in xs})


# ---------------------------------------------------------------- windows
def make_window(rng, times: list[datetime], now: datetime, voice: str, kinds=("year", "last", "since", "all")):
    """(lo, hi, phrase, kind) such that the set of times inside is robust, or None."""
    kind = rng.choice(list(kinds))
    if kind == "all":
        return None, None, "", "all"
    if kind == "year":
        years = sorted({t.astimezone(UTC).year for t in times})
        if not years:
            return None
        y = rng.choice(years)
        lo, hi = year_window(y)
        if any(abs(t - lo) <= ONE_DAY or abs(t - hi) <= ONE_DAY for t in times):
            return None
        ph = rng.choice([f"in {y}", f"during {y}", f"CY{y}"] if voice == "ph" else [f"in {y}", f"during {y}", f"back in {y}"])
        return lo, hi, ph, "year"
    if kind == "last":
        n, unit = rng.choice([(1, "year"), (2, "years"), (3, "years"), (5, "years"), (6, "months"), (18, "months")])
        lo = add_months(now, -n * (12 if unit.startswith("year") else 1))
        inside = {t for t in times if t >= lo}
        if inside != {t for t in times if t >= lo - WEEK} or inside != {t for t in times if t >= lo + WEEK}:
            return None
        if n == 1:
            ph = rng.choice(["in the past year", "over the past year"])
        elif voice == "ph":
            ph = rng.choice([f"over the past {n} {unit}", f"in the last {n} {unit}"])
        else:
            ph = rng.choice([f"in the past {n} {unit}", f"over the last {n} {unit}"])
        return lo, now, ph, "last"
    if kind == "since":
        if len(times) < 2:
            return None
        t = rng.choice(sorted(times)[1:])
        d = udate(t) - timedelta(days=rng.randint(15, 200))
        lo = day_start(d)
        if any(abs(x - lo) <= ONE_DAY * 2 for x in times):
            return None
        return lo, now, f"since {fmt_date(rng, d)}", "since"
    return None


def robust_rel(now, n_months, times):
    lo = add_months(now, -n_months)
    a = {t for t in times if t >= lo}
    return a == {t for t in times if t >= lo - WEEK} and a == {t for t in times if t >= lo + WEEK}


# ---------------------------------------------------------------- value helpers
def decide(vals, first: bool):
    """The first/latest value, or None on a tie of different values at the deciding time."""
    if not vals:
        return None
    t = vals[0].t if first else vals[-1].t
    at = [v for v in vals if v.t == t]
    if len({v.v for v in at}) > 1:
        return None
    return at[0]


def item_name(code: str, voice: str, rng) -> str:
    ph, pt = ITEMS[code][:2]
    return rng.choice(ph if voice == "ph" else pt)


def pick_item(ch: Chart, rng, min_n=1, codes=None):
    codes = [c for c in (codes or ITEMS) if len(ch.items.get(c, [])) >= min_n]
    return rng.choice(codes) if codes else None


# ---------------------------------------------------------------- question record
def Q(cat, ch, text, now, atype, expected, refs, template, status="answered"):
    tol = 0.01 if atype == "number" else 0
    if cat == "change":
        tol = 0.02
    return {
        "id": None, "patient_id": ch.pid if ch else None, "question": text,
        "now": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "category": cat, "answer_type": atype,
        "expected": expected, "expected_status": status, "tolerance": tol,
        "gold_refs": refs, "template": template,
    }


def rnd(x: float) -> float:
    return round(x, 6)


# ---------------------------------------------------------------- generators
# each: gen(ch, rng, voice, k, now, late) -> question dict or None; k cycles over patterns.

def gen_latest_value(ch, rng, voice, k, now, late):
    code = pick_item(ch, rng)
    if not code:
        return None
    v = decide(ch.values(code), first=False)
    if not v:
        return None
    nm = item_name(code, voice, rng)
    if voice == "ph":
        forms = [f"Most recent {nm}?", f"What's the latest {nm} on file?", f"Last {nm} value for {poss_ph(ch, rng).replace('pt', 'this pt')} chart?" if False else f"Latest {nm} in the chart?"]
    else:
        forms = [f"What was my {nm} last time?", f"What was my most recent {nm}?", f"What did {fam(ch)}'s last {nm} show?"]
    i = k % len(forms)
    return Q("latest_value", ch, forms[i], now, "number", [rnd(v.v)], [v.ref], f"latest_value/all/{i}.{voice}")


def gen_first_value(ch, rng, voice, k, now, late):
    code = pick_item(ch, rng, min_n=2)
    if not code:
        return None
    v = decide(ch.values(code), first=True)
    if not v:
        return None
    nm = item_name(code, voice, rng)
    if voice == "ph":
        forms = [f"First recorded {nm}?", f"Earliest {nm} in the chart?", f"What was the initial {nm} on record?"]
    else:
        forms = [f"What was my very first {nm} reading?", f"What was the first {nm} ever recorded for me?",
                 f"What was {fam(ch)}'s earliest {nm} on file?"]
    i = k % len(forms)
    return Q("first_value", ch, forms[i], now, "number", [rnd(v.v)], [v.ref], f"first_value/all/{i}.{voice}")


def gen_value_in_window(ch, rng, voice, k, now, late):
    code = pick_item(ch, rng, min_n=2)
    if not code:
        return None
    vals = ch.values(code)
    nm = item_name(code, voice, rng)
    if k % 5 == 4:  # empty relative window: late now
        n = rng.choice([6, 12])
        lo = add_months(late, -n)
        if ch.values(code, lo - WEEK * 2, None):
            return None
        win = f"in the last {n} months" if n == 6 else "in the past year"
        text = f"Latest {nm} {win}?" if voice == "ph" else f"What was my {nm} {win}?"
        return Q("value_in_window", ch, text, late, "number", [], [], f"value_in_window/empty-last/0.{voice}", "no-data")
    w = make_window(rng, [v.t for v in vals], now, voice, kinds=("year", "last", "since"))
    if not w:
        return None
    lo, hi, phrase, kind = w
    inside = ch.values(code, lo, hi)
    first = k % 2 == 1
    v = decide(inside, first)
    if not v:
        return None
    side = "first" if first else "latest"
    if voice == "ph":
        forms = [f"{'First' if first else 'Last'} {nm} {phrase}?", f"{'Earliest' if first else 'Most recent'} {nm} {phrase}, please."]
    else:
        forms = [f"What was my {'first' if first else 'last'} {nm} {phrase}?",
                 f"{phrase[0].upper() + phrase[1:]}, what was my {'earliest' if first else 'latest'} {nm}?"]
    i = rng.randrange(len(forms))
    return Q("value_in_window", ch, forms[i], now, "number", [rnd(v.v)], [v.ref], f"value_in_window/{side}-{kind}/{i}.{voice}")


def gen_min_max(ch, rng, voice, k, now, late):
    code = pick_item(ch, rng, min_n=2)
    if not code:
        return None
    vals = ch.values(code)
    w = make_window(rng, [v.t for v in vals], now, voice, kinds=("all", "year", "last"))
    if not w:
        return None
    lo, hi, phrase, kind = w
    inside = ch.values(code, lo, hi)
    if not inside:
        return None
    hi_side = k % 2 == 0
    best = max(inside, key=lambda v: v.v) if hi_side else min(inside, key=lambda v: v.v)
    nm = item_name(code, voice, rng)
    ph = (" " + phrase) if phrase else (" on record" if voice == "ph" else " ever")
    if voice == "ph":
        forms = [f"{'Peak' if hi_side else 'Lowest'} {nm}{ph}?", f"{'Max' if hi_side else 'Min'} {nm}{ph}?"]
    else:
        if not phrase:
            forms = [f"What's the {'highest' if hi_side else 'lowest'} my {nm} has ever been?",
                     f"What was {fam(ch)}'s {'highest' if hi_side else 'lowest'} {nm} ever?"]
        else:
            forms = [f"What was my {'highest' if hi_side else 'lowest'} {nm} {phrase}?",
                     f"How {'high' if hi_side else 'low'} did my {nm} get {phrase}?"]
    i = rng.randrange(len(forms))
    same = [v.ref for v in inside if v.v == best.v]
    return Q("min_max", ch, forms[i], now, "number", [rnd(best.v)], sorted(set(same)),
             f"min_max/{'max' if hi_side else 'min'}-{kind}/{i}.{voice}")


def gen_average(ch, rng, voice, k, now, late):
    code = pick_item(ch, rng, min_n=2)
    if not code:
        return None
    vals = ch.values(code)
    w = make_window(rng, [v.t for v in vals], now, voice, kinds=("all", "year", "last"))
    if not w:
        return None
    lo, hi, phrase, kind = w
    inside = ch.values(code, lo, hi)
    if len(inside) < 2:
        return None
    mean = sum(v.v for v in inside) / len(inside)
    nm = item_name(code, voice, rng)
    if voice == "ph":
        forms = [f"Mean {nm} {phrase or 'across all results'}?", f"Average {nm} {phrase or 'on record'}?"]
    else:
        forms = [f"What's my average {nm} {phrase or 'over all my results'}?",
                 f"On average, what has my {nm} been {phrase or 'overall'}?"]
    i = rng.randrange(len(forms))
    return Q("average", ch, forms[i], now, "number", [rnd(mean)], refs_of(inside), f"average/{kind}/{i}.{voice}")


def gen_count_measurements(ch, rng, voice, k, now, late):
    code = pick_item(ch, rng, min_n=2)
    if not code:
        return None
    vals = ch.values(code)
    w = make_window(rng, [v.t for v in vals], now, voice, kinds=("all", "year", "last"))
    if not w:
        return None
    lo, hi, phrase, kind = w
    inside = ch.values(code, lo, hi)
    nm = item_name(code, voice, rng)
    if voice == "ph":
        forms = [f"How many {nm} results {phrase or 'are on file'}?", f"# of {nm} values {phrase or 'on record'}?"]
    else:
        forms = [f"How many times has my {nm} been checked{(' ' + phrase) if phrase else ''}?",
                 f"How many {nm} readings {('did I have ' + phrase) if phrase else 'do I have on file'}?"]
    i = rng.randrange(len(forms))
    return Q("count_measurements", ch, forms[i], now, "count", [len(inside)], refs_of(inside),
             f"count_measurements/{kind}/{i}.{voice}")


ENC_WORDS = {
    "EMER": (["ED visits", "ER visits", "emergency department visits"], ["times did I go to the ER", "emergency room visits have I had"]),
    "IMP": (["inpatient admissions", "hospitalizations"], ["times was I admitted to the hospital", "hospital stays have I had"]),
    "AMB": (["outpatient encounters", "ambulatory visits"], ["clinic visits have I had", "outpatient visits have I had"]),
    "ALL": (["encounters", "visits"], ["visits have I had", "visits are on my record"]),
}


def gen_count_encounters(ch, rng, voice, k, now, late):
    cls = ["EMER", "IMP", "AMB", "ALL", "EMER"][k % 5]
    evs = [e for e in ch.encounters if cls == "ALL" or e.extra["cls"] == cls]
    w = make_window(rng, [e.t for e in ch.encounters], now, voice, kinds=("all", "year", "last", "since"))
    if not w:
        return None
    lo, hi, phrase, kind = w
    inside = in_win(evs, lo, hi)
    if cls in ("AMB", "ALL") and kind == "all" and len(inside) > 40:
        return None
    words = ENC_WORDS[cls][0 if voice == "ph" else 1]
    wd = rng.choice(words)
    if voice == "ph":
        forms = [f"# {wd} {phrase or 'on record'}?", f"Number of {wd} {phrase or 'ever'}?"]
    else:
        forms = [f"How many {wd}{(' ' + phrase) if phrase else ''}?"]
        if wd.startswith("times did"):
            forms = [f"How many {wd}{(' ' + phrase) if phrase else ' in total'}?"]
    i = rng.randrange(len(forms))
    return Q("count_encounters", ch, forms[i], now, "count", [len(inside)], refs_of(inside),
             f"count_encounters/{cls}-{kind}/{i}.{voice}")


def _drug_choices(ch, min_n=1):
    out = []
    for key, (keys, _, _) in DRUGS.items():
        rs = rx_of(ch, keys)
        if len(rs) >= min_n:
            # avoid loose matches through combination products
            if any("/" in r.name for r in rs) and key in ("acetaminophen",):
                continue
            out.append(key)
    return out


def _class_ok(ch, c):
    members, near = CLASSES[c][0], CLASSES[c][1]
    return bool(rx_of(ch, members)) and not rx_of(ch, near)


def gen_count_other(ch, rng, voice, k, now, late):
    pat = ["rx-drug", "rx-class", "imm", "rx-all", "imm"][k % 5]
    if pat == "rx-drug":
        ds = _drug_choices(ch)
        if not ds:
            return None
        key = rng.choice(ds)
        evs = rx_of(ch, DRUGS[key][0])
        nm = rng.choice(DRUGS[key][1 if voice == "ph" else 2])
        w = make_window(rng, [e.t for e in ch.rx], now, voice, kinds=("all", "year"))
        if not w:
            return None
        lo, hi, phrase, kind = w
        inside = in_win(evs, lo, hi)
        forms = ([f"How many times was {nm} prescribed{(' ' + phrase) if phrase else ''}?", f"# of {nm} Rx {phrase or 'on file'}?"]
                 if voice == "ph" else
                 [f"How many times was I prescribed {nm}{(' ' + phrase) if phrase else ''}?",
                  f"How many {nm} prescriptions have I had{(' ' + phrase) if phrase else ''}?"])
    elif pat == "rx-class":
        cs = [c for c in CLASSES if not rx_of(ch, CLASSES[c][1])]
        if not cs:
            return None
        c = rng.choice(cs)
        evs = rx_of(ch, cls_keys(c))
        if not evs and rng.random() < 0.6:
            return None
        nm = rng.choice(CLASSES[c][2 if voice == "ph" else 3])
        w = make_window(rng, [e.t for e in ch.rx] or [now], now, voice, kinds=("all", "year"))
        if not w:
            return None
        lo, hi, phrase, kind = w
        inside = in_win(evs, lo, hi)
        forms = ([f"# of {nm} Rx {phrase or 'on record'}?", f"How many {nm} prescriptions {phrase or 'in total'}?"]
                 if voice == "ph" else
                 [f"How many prescriptions for a {nm} have I had{(' ' + phrase) if phrase else ''}?"])
        pat = f"rx-{c}"
    elif pat == "rx-all":
        w = make_window(rng, [e.t for e in ch.rx] or [now], now, voice, kinds=("year", "last"))
        if not w or not ch.rx:
            return None
        lo, hi, phrase, kind = w
        inside = in_win(ch.rx, lo, hi)
        forms = ([f"Total Rx {phrase}?", f"How many prescriptions were written {phrase}?"] if voice == "ph" else
                 [f"How many prescriptions did I get {phrase}?"])
    else:
        key = rng.choice(["flu", "tetanus", "flu", "pneumo", "hpv"])
        keys = VACCINES[key][0]
        evs = [e for e in ch.immunizations if has_ing(e.name, keys)]
        if not evs and key != "flu":
            return None
        nm = rng.choice(VACCINES[key][1 if voice == "ph" else 2])
        w = make_window(rng, [e.t for e in ch.immunizations] or [now], now, voice, kinds=("all", "year", "last"))
        if not w:
            return None
        lo, hi, phrase, kind = w
        inside = in_win(evs, lo, hi)
        forms = ([f"Number of {nm} doses given {phrase or 'on record'}?", f"How many {nm} administrations {phrase or 'ever'}?"]
                 if voice == "ph" else
                 [f"How many {nm}s have I had{(' ' + phrase) if phrase else ''}?",
                  f"How many {nm}s has {fam(ch)} gotten{(' ' + phrase) if phrase else ''}?"])
        pat = f"imm-{key}"
    i = rng.randrange(len(forms))
    return Q("count_other", ch, forms[i], now, "count", [len(inside)], refs_of(inside), f"count_other/{pat}-{kind}/{i}.{voice}")


def gen_existence_positive(ch, rng, voice, k, now, late):
    pat = ["drug", "class", "vaccine", "condition", "lab"][k % 5]
    if pat == "drug":
        ds = _drug_choices(ch)
        if not ds:
            return None
        key = rng.choice(ds)
        refs = refs_of(rx_of(ch, DRUGS[key][0]))
        nm = rng.choice(DRUGS[key][1 if voice == "ph" else 2])
        forms = ([f"Has the patient ever been on {nm}?", f"Any {nm} in the med history?"] if voice == "ph" else
                 [f"Have I ever taken {nm}?", f"Was I ever prescribed {nm}?"])
    elif pat == "class":
        cs = [c for c in CLASSES if _class_ok(ch, c)]
        if not cs:
            return None
        c = rng.choice(cs)
        refs = refs_of(rx_of(ch, cls_keys(c)))
        nm = rng.choice(CLASSES[c][2 if voice == "ph" else 3])
        art = "an" if nm[0].lower() in "aeiou" else "a"
        forms = ([f"Ever prescribed {art} {nm}?", f"Any {nm} on the med history?"] if voice == "ph" else
                 [f"Have I ever been on {art} {nm}?", f"Was I ever given {art} {nm}?"])
        pat = f"class-{c}"
    elif pat == "vaccine":
        vs = [v for v in VACCINES if any(has_ing(e.name, VACCINES[v][0]) for e in ch.immunizations)]
        if not vs:
            return None
        v = rng.choice(vs)
        refs = refs_of([e for e in ch.immunizations if has_ing(e.name, VACCINES[v][0])])
        nm = rng.choice(VACCINES[v][1 if voice == "ph" else 2])
        art = "an" if nm[0].lower() in "aeiou" else "a"
        forms = ([f"Has the patient ever received {art} {nm}?"] if voice == "ph" else
                 [f"Have I ever had {art} {nm}?", f"Did I ever get {art} {nm}?"])
        pat = f"vaccine-{v}"
    elif pat == "condition":
        cs = [c for c in CONDITIONS if any(has_ing(e.name, CONDITIONS[c][0]) for e in ch.conditions)]
        if not cs:
            return None
        c = rng.choice(cs)
        refs = refs_of([e for e in ch.conditions if has_ing(e.name, CONDITIONS[c][0])])
        nm = rng.choice(CONDITIONS[c][2 if voice == "ph" else 3])
        forms = ([f"{nm} on {pron(ch)[0]} history?", f"Has the patient ever been diagnosed with {nm}?"] if voice == "ph" else
                 [f"Was I ever diagnosed with {nm}?", f"Have I ever had {nm}?"])
        pat = f"condition-{c}"
    else:
        code = pick_item(ch, rng, codes=["4548-4", "38483-4", "2093-3", "718-7", "18262-6", "6298-4"])
        if not code:
            return None
        refs = refs_of(ch.values(code))
        nm = item_name(code, voice, rng)
        forms = ([f"Has {nm} ever been checked?", f"Any {nm} on file?"] if voice == "ph" else
                 [f"Have I ever had my {nm} checked?", f"Has my {nm} ever been tested?"])
    i = rng.randrange(len(forms))
    return Q("existence_positive", ch, forms[i], now, "boolean", [True], refs, f"existence_positive/{pat}/{i}.{voice}")


def gen_existence_negative(ch, rng, voice, k, now, late):
    pat = ["class", "drug", "vaccine", "condition", "never-lab", "absent-lab"][k % 6]
    if pat == "class":
        cs = [c for c in CLASSES if not rx_of(ch, CLASSES[c][0] + CLASSES[c][1])]
        c = rng.choice(cs)
        nm = rng.choice(CLASSES[c][2 if voice == "ph" else 3])
        art = "an" if nm[0].lower() in "aeiou" else "a"
        forms = ([f"Ever prescribed {art} {nm}?", f"Any {nm} on the med history?"] if voice == "ph" else
                 [f"Have I ever been on {art} {nm}?", f"Was I ever given {art} {nm}?"])
        pat = f"class-{c}"
    elif pat == "drug":
        ds = [d for d in DRUGS if not rx_of(ch, DRUGS[d][0])]
        key = rng.choice(ds)
        nm = rng.choice(DRUGS[key][1 if voice == "ph" else 2])
        forms = ([f"Has the patient ever been on {nm}?", f"Any {nm} in the med history?"] if voice == "ph" else
                 [f"Have I ever taken {nm}?", f"Was I ever prescribed {nm}?"])
        pat = f"drug-{key}"
    elif pat == "vaccine":
        vs = [v for v in VACCINES if v != "flu" and not any(has_ing(e.name, VACCINES[v][0]) for e in ch.immunizations)]
        if not vs:
            return None
        v = rng.choice(vs)
        nm = rng.choice(VACCINES[v][1 if voice == "ph" else 2])
        art = "an" if nm[0].lower() in "aeiou" else "a"
        forms = ([f"Has the patient ever received {art} {nm}?"] if voice == "ph" else
                 [f"Have I ever had {art} {nm}?", f"Did I ever get {art} {nm}?"])
        pat = f"vaccine-{v}"
    elif pat == "condition":
        cs = [c for c in CONDITIONS if not any(has_ing(e.name, CONDITIONS[c][1]) for e in ch.conditions)]
        c = rng.choice(cs)
        nm = rng.choice(CONDITIONS[c][2 if voice == "ph" else 3])
        forms = ([f"{nm} on {pron(ch)[0]} history?", f"Has the patient ever been diagnosed with {nm}?"] if voice == "ph" else
                 [f"Was I ever diagnosed with {nm}?", f"Have I ever had {nm}?"])
        pat = f"condition-{c}"
    else:
        if pat == "never-lab":
            codes = [c for c in NEVER_ITEMS if not ch.items.get(c)]
            if not codes:
                return None
            names = NEVER_ITEMS[rng.choice(codes)]
        else:
            names = rng.choice(ABSENT_ITEMS)
        nm = rng.choice(names[0 if voice == "ph" else 1])
        forms = ([f"Last {nm}?", f"Most recent {nm} value?"] if voice == "ph" else
                 [f"What was my last {nm}?", f"What's my most recent {nm} result?"])
        i = rng.randrange(len(forms))
        return Q("existence_negative", ch, forms[i], now, "number", [], [], f"existence_negative/{pat}/{i}.{voice}", "no-data")
    i = rng.randrange(len(forms))
    return Q("existence_negative", ch, forms[i], now, "boolean", [False], [], f"existence_negative/{pat}/{i}.{voice}")


def gen_first_last_time(ch, rng, voice, k, now, late):
    pat = ["rx", "vaccine", "enc", "condition", "lab"][k % 5]
    last = rng.random() < 0.6
    fl = "last" if last else "first"
    if pat == "rx":
        if voice == "ph" and rng.random() < 0.5:
            cs = [c for c in CLASSES if _class_ok(ch, c)]
            if not cs:
                return None
            c = rng.choice(cs)
            evs = rx_of(ch, cls_keys(c))
            nm = rng.choice(CLASSES[c][2])
            forms = [f"Date of the {'most recent' if last else 'first'} {nm} Rx?"]
            pat = f"rx-{c}"
        else:
            ds = _drug_choices(ch)
            if not ds:
                return None
            key = rng.choice(ds)
            evs = rx_of(ch, DRUGS[key][0])
            nm = rng.choice(DRUGS[key][1 if voice == "ph" else 2])
            forms = ([f"When was {nm} {'last' if last else 'first'} prescribed?", f"{'Last' if last else 'First'} {nm} Rx date?"]
                     if voice == "ph" else [f"When was I {'last' if last else 'first'} prescribed {nm}?"])
            pat = "rx-drug"
    elif pat == "vaccine":
        vs = [v for v in VACCINES if any(has_ing(e.name, VACCINES[v][0]) for e in ch.immunizations)]
        if not vs:
            return None
        v = rng.choice(vs)
        evs = [e for e in ch.immunizations if has_ing(e.name, VACCINES[v][0])]
        nm = rng.choice(VACCINES[v][1 if voice == "ph" else 2])
        forms = ([f"Date of {'last' if last else 'first'} {nm}?"] if voice == "ph" else
                 [f"When was my {'last' if last else 'first'} {nm}?", f"When did I {'last get' if last else 'first get'} a {nm}?"])
        pat = f"vaccine-{v}"
    elif pat == "enc":
        cls = rng.choice(["EMER", "IMP"])
        evs = [e for e in ch.encounters if e.extra["cls"] == cls]
        if not evs:
            return None
        if cls == "EMER":
            forms = ([f"Date of {'last' if last else 'first'} ED visit?"] if voice == "ph" else
                     [f"When did I {'last' if last else 'first'} go to the ER?", f"When was my {'most recent' if last else 'first'} emergency room visit?"])
        else:
            forms = ([f"{'Most recent' if last else 'First'} inpatient admission date?"] if voice == "ph" else
                     [f"When was I {'last' if last else 'first'} in the hospital as an inpatient?"])
        pat = f"enc-{cls}"
    elif pat == "condition":
        cs = [c for c in CONDITIONS if any(has_ing(e.name, CONDITIONS[c][0]) for e in ch.conditions)]
        if not cs:
            return None
        c = rng.choice(cs)
        evs = [e for e in ch.conditions if has_ing(e.name, CONDITIONS[c][0])]
        nm = rng.choice(CONDITIONS[c][2 if voice == "ph" else 3])
        last = False
        fl = "first"
        forms = ([f"When was {nm} first diagnosed?"] if voice == "ph" else
                 [f"When was I first diagnosed with {nm}?", f"When did I first get {nm}?"])
        pat = f"condition-{c}"
    else:
        code = pick_item(ch, rng, codes=["4548-4", "38483-4", "2093-3", "6298-4", "18262-6", "2339-0"])
        if not code:
            return None
        evs = ch.values(code)
        nm = item_name(code, voice, rng)
        forms = ([f"When was the {'last' if last else 'first'} {nm} drawn?"] if voice == "ph" else
                 [f"When was my {'last' if last else 'first'} {nm} test?"])
    ev = max(evs, key=lambda e: e.t) if last else min(evs, key=lambda e: e.t)
    d = udate(ev.t)
    refs = sorted({e.ref for e in evs if udate(e.t) == d})
    i = rng.randrange(len(forms))
    return Q("first_last_time", ch, forms[i], now, "date", [d.isoformat()], refs, f"first_last_time/{pat}-{fl}/{i}.{voice}")


def gen_time_since(ch, rng, voice, k, now, late):
    pat = ["days", "months", "years", "onset", "months"][k % 5]
    if pat == "onset":
        cs = []
        for c in CONDITIONS:
            m = [e for e in ch.conditions if has_ing(e.name, CONDITIONS[c][0])]
            if m and all(e.extra["abated"] is None for e in m):
                cs.append(c)
        if not cs:
            return None
        c = rng.choice(cs)
        ev = min((e for e in ch.conditions if has_ing(e.name, CONDITIONS[c][0])), key=lambda e: e.t)
        nm = rng.choice(CONDITIONS[c][2 if voice == "ph" else 3])
        n = completed_years(udate(ev.t), udate(now))
        if n != completed_years(udate(ev.t - 3 * ONE_DAY), udate(now)) or n != completed_years(udate(ev.t + 3 * ONE_DAY), udate(now)):
            return None
        forms = ([f"How many years has {pron(ch)[1]} had {nm}?"] if voice == "ph" else
                 [f"How many years have I had {nm}?", f"How long have I had {nm}, in years?"])
        i = rng.randrange(len(forms))
        return Q("time_since", ch, forms[i], now, "number", [n], [ev.ref], f"time_since/onset-years/{i}.{voice}")
    src = rng.choice(["rx", "flu", "er", "lab"] if voice == "ph" else ["flu", "er", "lab", "rx"])
    if src == "rx":
        ds = _drug_choices(ch)
        if not ds:
            return None
        key = rng.choice(ds)
        ev = max(rx_of(ch, DRUGS[key][0]), key=lambda e: e.t)
        nm = rng.choice(DRUGS[key][1 if voice == "ph" else 2])
        what_ph, what_pt = f"the last {nm} Rx", f"I was last prescribed {nm}"
    elif src == "flu":
        evs = [e for e in ch.immunizations if has_ing(e.name, ["influenza"])]
        if not evs:
            return None
        ev = max(evs, key=lambda e: e.t)
        what_ph, what_pt = "the last influenza vaccine", "my last flu shot"
    elif src == "er":
        evs = [e for e in ch.encounters if e.extra["cls"] == "EMER"]
        if not evs:
            return None
        ev = max(evs, key=lambda e: e.t)
        what_ph, what_pt = "the last ED visit", "my last ER visit"
    else:
        code = pick_item(ch, rng, codes=["4548-4", "38483-4", "2093-3", "6298-4", "29463-7"])
        if not code:
            return None
        ev = ch.values(code)[-1]
        nm = item_name(code, voice, rng)
        what_ph, what_pt = f"the last {nm}", f"my last {nm} check"
    if pat == "days":
        n = (now - ev.t) // ONE_DAY
        if n != (udate(now) - udate(ev.t)).days:
            return None
    elif pat == "months":
        n = completed_months(ev.t, now)
        if {completed_months(ev.t + s * ONE_DAY, now) for s in (-3, 3)} != {n}:
            return None
    else:
        n = completed_years(udate(ev.t), udate(now))
        if {completed_years(udate(ev.t + s * ONE_DAY), udate(now)) for s in (-3, 3)} != {n}:
            return None
    if voice == "ph":
        forms = [f"{pat.capitalize()} since {what_ph}?", f"How many {pat} since {what_ph}?"]
    else:
        w = what_pt if src != "rx" else f"{what_pt}"
        forms = [f"How many {pat} has it been since {w}?", f"How many {pat} ago was {w}?" if src != "rx" else f"How many {pat} since {w}?"]
    i = rng.randrange(len(forms))
    return Q("time_since", ch, forms[i], now, "number", [n], [ev.ref], f"time_since/{src}-{pat}/{i}.{voice}")


def gen_change(ch, rng, voice, k, now, late):
    code = pick_item(ch, rng, min_n=3)
    if not code:
        return None
    vals = ch.values(code)
    nm = item_name(code, voice, rng)
    if k % 3 == 2:  # between two measurement dates
        days = {}
        for v in vals:
            days.setdefault(udate(v.t), []).append(v)
        single = sorted(d for d, vs in days.items() if len(vs) == 1)
        if len(single) < 2:
            return None
        d1, d2 = sorted(rng.sample(single, 2))
        v1, v2 = days[d1][0], days[d2][0]
        phrase = rng.choice([f"from {fmt_date(rng, d1)} to {fmt_date(rng, d2)}", f"between {fmt_date(rng, d1)} and {fmt_date(rng, d2)}"])
        kind, refs = "between", [v1.ref, v2.ref]
        delta = v2.v - v1.v
    else:
        w = make_window(rng, [v.t for v in vals], now, voice, kinds=("year", "last", "since"))
        if not w:
            return None
        lo, hi, phrase, kind = w
        inside = ch.values(code, lo, hi)
        if len(inside) < 2:
            return None
        a, b = decide(inside, True), decide(inside, False)
        if not a or not b:
            return None
        delta, refs = b.v - a.v, sorted({a.ref, b.ref})
    if voice == "ph":
        forms = [f"Change in {nm} {phrase}?", f"Net change in {nm} {phrase}?"]
    else:
        forms = [f"How much has my {nm} changed {phrase}?", f"By how much did my {nm} go up or down {phrase}?"]
    i = rng.randrange(len(forms))
    return Q("change", ch, forms[i], now, "number", [rnd(delta)], refs, f"change/{kind}/{i}.{voice}")


def gen_trend(ch, rng, voice, k, now, late):
    code = pick_item(ch, rng, min_n=3)
    if not code:
        return None
    vals = ch.values(code)
    w = make_window(rng, [v.t for v in vals], now, voice, kinds=("year", "last", "since", "all"))
    if not w:
        return None
    lo, hi, phrase, kind = w
    inside = ch.values(code, lo, hi)
    if len(inside) < 2:
        return None
    a, b = decide(inside, True), decide(inside, False)
    if not a or not b or a.v == 0:
        return None
    r = (b.v - a.v) / abs(a.v)
    if abs(abs(r) - 0.05) < 0.005:
        return None
    ans = "increasing" if r > 0.05 else "decreasing" if r < -0.05 else "stable"
    want = ["increasing", "decreasing", "stable"][k % 3]
    if ans != want and rng.random() < 0.7:
        return None
    nm = item_name(code, voice, rng)
    ph = phrase or ("overall" if voice == "ph" else "over time")
    if voice == "ph":
        forms = [f"{nm} trend {ph}?", f"Is {nm} trending up or down {ph}?"]
    else:
        forms = [f"Is my {nm} going up, going down, or staying the same {ph}?", f"How has my {nm} been trending {ph}?"]
    i = rng.randrange(len(forms))
    return Q("trend", ch, forms[i], now, "string", [ans], sorted({a.ref, b.ref}), f"trend/{kind}/{i}.{voice}")


def gen_threshold(ch, rng, voice, k, now, late):
    codes = [c for c in ITEMS if ITEMS[c][2] and ch.items.get(c)]
    if not codes:
        return None
    code = rng.choice(codes)
    vals = ch.values(code)
    w = make_window(rng, [v.t for v in vals], now, voice, kinds=("all", "year", "last", "since"))
    if not w:
        return None
    lo, hi, phrase, kind = w
    inside = ch.values(code, lo, hi)
    if not inside:
        return None
    above = rng.random() < 0.65
    ext = max(v.v for v in inside) if above else min(v.v for v in inside)
    want = k % 2 == 0
    cuts = [c for c in ITEMS[code][2] if abs(ext - c) > 0.006 * abs(ext)]
    good = [c for c in cuts if ((ext > c) if above else (ext < c)) == want]
    if not good:
        return None
    c = rng.choice(good)
    ans = (ext > c) if above else (ext < c)
    refs = sorted({v.ref for v in inside if ((v.v > c) if above else (v.v < c))}) if ans else []
    nm = item_name(code, voice, rng)
    cs = f"{c:g}" if c != 5.0 else "5.0"
    ph = (" " + phrase) if phrase else ""
    if voice == "ph":
        forms = [f"Any {nm} {'>' if above else '<'} {cs}{ph}?", f"Was {nm} ever {'above' if above else 'below'} {cs}{ph}?"]
    else:
        forms = [f"Has my {nm} ever been {'over' if above else 'under'} {cs}{ph}?",
                 f"Did my {nm} ever go {'above' if above else 'below'} {cs}{ph}?"]
    i = rng.randrange(len(forms))
    return Q("threshold", ch, forms[i], now, "boolean", [ans], refs, f"threshold/{'above' if above else 'below'}-{kind}/{i}.{voice}")


def gen_daily_dose(ch, rng, voice, k, now, late):
    ds = []
    for key, (keys, _, _) in DRUGS.items():
        rs = rx_of(ch, keys)
        if not rs:
            continue
        lt = max(r.t for r in rs)
        latest = [r for r in rs if r.t == lt]
        dpd = {r.extra["dpd"] for r in latest}
        if len(dpd) == 1 and None not in dpd and next(iter(dpd)) >= 0.25:
            ds.append((key, latest[0]))
    if not ds:
        return None
    key, r = rng.choice(ds)
    nm = rng.choice(DRUGS[key][1 if voice == "ph" else 2])
    if voice == "ph":
        forms = [f"Daily dose of {nm} (doses per day)?", f"How many doses per day is {nm} ordered at?", f"{nm} frequency, in doses/day?"]
    else:
        forms = [f"How many times a day am I supposed to take my {nm}?", f"How many doses of {nm} a day was I prescribed?"]
    i = rng.randrange(len(forms))
    return Q("daily_dose", ch, forms[i], now, "number", [rnd(r.extra["dpd"])], [r.ref], f"daily_dose/{key}/{i}.{voice}")


AFTER_LABS = ["38483-4", "6298-4", "2093-3", "18262-6", "4548-4", "2339-0", "29463-7", "33914-3", "8480-6"]


def gen_after_drug(ch, rng, voice, k, now, late):
    opts = []
    for key, (keys, _, _) in DRUGS.items():
        if rx_of(ch, keys):
            opts.append(("drug", key, keys))
    if voice == "pt":
        for c in ("statin", "diuretic"):
            if rx_of(ch, cls_keys(c)):
                opts.append(("class", c, cls_keys(c)))
    if not opts:
        return None
    kind, key, keys = rng.choice(opts)
    t0 = min(r.t for r in rx_of(ch, keys))
    code = pick_item(ch, rng, codes=AFTER_LABS)
    if not code:
        return None
    vals = ch.values(code)
    if any(abs(v.t - t0) <= ONE_DAY for v in vals):
        return None
    after = [v for v in vals if v.t > t0]
    first = k % 2 == 0
    v = decide(after, first)
    if not v:
        return None
    if kind == "drug":
        nm = rng.choice(DRUGS[key][1 if voice == "ph" else 2])
    else:
        nm = "the " + rng.choice(CLASSES[key][3])
    lab = item_name(code, voice, rng)
    if voice == "ph":
        forms = ([f"First {lab} after {nm} was started?", f"{lab} right after {nm} start?"] if first else
                 [f"Most recent {lab} after starting {nm}?", f"Latest {lab} since {nm} was started?"])
    else:
        forms = ([f"What was my first {lab} after I started {nm}?", f"What was my {lab} right after I started taking {nm}?"] if first else
                 [f"What was my latest {lab} after I started {nm}?"])
    i = rng.randrange(len(forms))
    return Q("after_drug", ch, forms[i], now, "number", [rnd(v.v)], [v.ref],
             f"after_drug/{'first' if first else 'last'}-{kind}/{i}.{voice}")


def active_conds(ch, at: datetime, now_rule: bool):
    out = []
    for e in ch.conditions:
        if e.t > at:
            continue
        if e.extra["abated"] is not None and e.extra["abated"] <= at:
            continue
        if now_rule and e.extra["clinical"] in ("inactive", "resolved", "remission"):
            continue
        out.append(e)
    return out


def gen_active_conditions(ch, rng, voice, k, now, late):
    pat = ["now", "still", "date", "still", "now"][k % 5]
    if pat == "now":
        act = active_conds(ch, now, True)
        names = sorted({e.name for e in act})
        if not names and rng.random() < 0.7:
            return None
        forms = (["Active problem list?", f"What conditions does {pron(ch)[1]} currently have?"] if voice == "ph" else
                 ["What health problems do I currently have?", "What conditions am I being treated for right now?"
                  if False else "Which of my conditions are still active?"])
        i = rng.randrange(len(forms))
        return Q("active_conditions", ch, forms[i], now, "list", names, refs_of(act), f"active_conditions/now/{i}.{voice}")
    if pat == "date":
        if not ch.conditions:
            return None
        edges = [e.t for e in ch.conditions] + [e.extra["abated"] for e in ch.conditions if e.extra["abated"]]
        lo_d, hi_d = udate(min(edges)), udate(now) - timedelta(days=30)
        if hi_d <= lo_d:
            return None
        d = lo_d + timedelta(days=rng.randrange((hi_d - lo_d).days))
        at = day_end(d)
        if any(abs(x - at) <= 2 * ONE_DAY for x in edges):
            return None
        act = active_conds(ch, at, False)
        names = sorted({e.name for e in act})
        if not names:
            return None
        ds = fmt_date(rng, d)
        forms = ([f"Which conditions were active on {ds}?", f"Problem list as of {ds}?"] if voice == "ph" else
                 [f"What health conditions did I have on {ds}?"])
        i = rng.randrange(len(forms))
        return Q("active_conditions", ch, forms[i], now, "list", names, refs_of(act), f"active_conditions/date/{i}.{voice}")
    cs = [c for c in CONDITIONS if any(has_ing(e.name, CONDITIONS[c][0]) for e in ch.conditions)]
    if not cs:
        return None
    c = rng.choice(cs)
    act = [e for e in active_conds(ch, now, True) if has_ing(e.name, CONDITIONS[c][0])]
    ans = bool(act)
    if ans != (k % 4 == 1) and rng.random() < 0.7:
        return None
    nm = rng.choice(CONDITIONS[c][2 if voice == "ph" else 3])
    forms = ([f"Is {nm} still on {pron(ch)[0]} active problem list?", f"Does {pron(ch)[1]} still have {nm}?"] if voice == "ph" else
             [f"Do I still have {nm}?", f"Is my {nm} still active?"])
    i = rng.randrange(len(forms))
    return Q("active_conditions", ch, forms[i], now, "boolean", [ans], refs_of(act), f"active_conditions/still-{c}/{i}.{voice}")


def gen_active_medications(ch, rng, voice, k, now, late):
    pat = ["list", "still-drug", "still-class", "still-drug", "list"][k % 5]
    act = [r for r in ch.rx if r.extra["status"] == "active"]
    if pat == "list":
        names = sorted({r.name for r in act})
        if not names and rng.random() < 0.8:
            return None
        forms = (["Current med list?", "What active prescriptions does the patient have?", "Active meds?"] if voice == "ph" else
                 ["What medicines am I on right now?", "What medications am I currently taking?", f"What meds is {fam(ch)} on now?"])
        i = rng.randrange(len(forms))
        return Q("active_medications", ch, forms[i], now, "list", names, refs_of(act), f"active_medications/list/{i}.{voice}")
    if pat == "still-drug":
        ds = _drug_choices(ch)
        if not ds:
            return None
        key = rng.choice(ds)
        keys = DRUGS[key][0]
        nm = rng.choice(DRUGS[key][1 if voice == "ph" else 2])
        sub = f"drug-{key}"
    else:
        cs = [c for c in CLASSES if _class_ok(ch, c)]
        if not cs:
            return None
        c = rng.choice(cs)
        keys = cls_keys(c)
        nm = "the " + rng.choice(CLASSES[c][2 if voice == "ph" else 3])
        sub = f"class-{c}"
    hit = [r for r in act if has_ing(r.name, keys)]
    ans = bool(hit)
    if voice == "ph":
        forms = [f"Still on {nm}?", f"Is the patient still taking {nm}?"]
    else:
        forms = [f"Am I still taking {nm}?", f"Am I still supposed to be on {nm}?", f"Is {fam(ch)} still on {nm}?"]
    i = rng.randrange(len(forms))
    return Q("active_medications", ch, forms[i], now, "boolean", [ans], refs_of(hit), f"active_medications/still-{sub}/{i}.{voice}")


def gen_age(ch, rng, voice, k, now, late):
    end = udate(now)
    if ch.deceased and ch.deceased <= now:
        end = udate(ch.deceased)
    if near_birthday(ch.birth, end):
        return None
    n = completed_years(ch.birth, end)
    dead = end != udate(now)
    if dead:
        forms = (["Age at death?", f"How old was {pron(ch)[1]} when {pron(ch)[1]} died?"] if voice == "ph" else
                 [f"How old was {fam(ch)} when {pron(ch)[1]} passed away?"])
        pat = "death"
    else:
        forms = (["Pt age?", "How old is the patient?"] if voice == "ph" else
                 ["How old am I?", "What age am I according to my record?", f"How old is {fam(ch)}?"])
        pat = "now"
    i = rng.randrange(len(forms))
    return Q("age", ch, forms[i], now, "number", [n], [f"Patient/{ch.pid}"], f"age/{pat}/{i}.{voice}")


def gen_demographics(ch, rng, voice, k, now, late):
    pat = ["dob", "gender", "deceased", "dob", "death-date"][k % 5]
    dead = ch.deceased is not None and ch.deceased <= now
    if pat == "death-date":
        if not dead:
            pat = "deceased"
        else:
            forms = (["Date of death?", "When did the patient die?"] if voice == "ph" else
                     [f"What date did {fam(ch)} pass away?"])
            i = rng.randrange(len(forms))
            return Q("demographics", ch, forms[i], now, "date", [udate(ch.deceased).isoformat()], [f"Patient/{ch.pid}"],
                     f"demographics/death-date/{i}.{voice}")
    if pat == "dob":
        forms = (["DOB?", "Patient's date of birth?"] if voice == "ph" else
                 ["What birth date do you have on file for me?", "What's my date of birth on my record?"])
        ans, atype = [ch.birth.isoformat()], "date"
    elif pat == "gender":
        forms = (["Sex on file?", "What gender is recorded for the patient?"] if voice == "ph" else
                 ["What gender is listed on my record?"])
        ans, atype = [ch.gender], "string"
    else:
        if voice == "ph":
            forms, ans = ["Is the patient deceased?", "Deceased?"], [dead]
        else:
            forms, ans = [f"Is {fam(ch)} still alive according to the record?"], [not dead]
        atype = "boolean"
    i = rng.randrange(len(forms))
    return Q("demographics", ch, forms[i], now, atype, ans, [f"Patient/{ch.pid}"], f"demographics/{pat}/{i}.{voice}")


def gen_patient_lookup(ch, rng, voice, k, now, late):
    ds = fmt_date(rng, ch.birth)
    full = f"{ch.given} {ch.family}"
    forms = ([f"Pull up the chart for {full}, DOB {ds}.", f"Patient ID for {full} born {ds}?"] if voice == "ph" else
             [f"I'm {full}, born {ds}. What's my patient ID?", f"My {'mother' if ch.gender == 'female' else 'father'} is {full}, date of birth {ds}. What is {pron(ch)[0]} patient ID?"])
    i = rng.randrange(len(forms))
    q = Q("patient_lookup", None, forms[i], now, "string", [ch.pid], [f"Patient/{ch.pid}"], f"patient_lookup/name-dob/{i}.{voice}")
    return q


CATEGORIES = [
    ("latest_value", gen_latest_value), ("first_value", gen_first_value), ("value_in_window", gen_value_in_window),
    ("min_max", gen_min_max), ("average", gen_average), ("count_measurements", gen_count_measurements),
    ("count_encounters", gen_count_encounters), ("count_other", gen_count_other),
    ("existence_positive", gen_existence_positive), ("existence_negative", gen_existence_negative),
    ("first_last_time", gen_first_last_time), ("time_since", gen_time_since), ("change", gen_change),
    ("trend", gen_trend), ("threshold", gen_threshold), ("daily_dose", gen_daily_dose), ("after_drug", gen_after_drug),
    ("active_conditions", gen_active_conditions), ("active_medications", gen_active_medications), ("age", gen_age),
    ("demographics", gen_demographics), ("patient_lookup", gen_patient_lookup),
]


def now_for(ch: Chart) -> tuple[datetime, datetime]:
    rng = R(ch.pid, "now")
    d = udate(ch.last_fact) + timedelta(days=rng.randint(3, 21))
    while d.day > 28:
        d += timedelta(days=1)
    now = datetime(d.year, d.month, d.day, 12, tzinfo=UTC)
    late = now.replace(year=now.year + rng.randint(2, 4))
    return now, late


def build(data: Path) -> list[dict]:
    charts = [load(p) for p in sorted(data.glob("*.json"))]
    charts.sort(key=lambda c: c.pid)
    keyset = {}
    for c in charts:
        keyset.setdefault((c.given, c.family, c.birth), []).append(c.pid)
    out = []
    for cat, gen in CATEGORIES:
        n_cat = 0
        for voice in ("ph", "pt"):
            order = charts[:]
            R(cat, voice, "order").shuffle(order)
            want = PER_VOICE + (1 if cat == "existence_negative" else 0)
            used: dict[str, int] = {}
            got = 0
            for k in range(want):
                for ch in order:
                    if used.get(ch.pid, 0) >= 1 or (cat == "age" and voice == "pt" and False):
                        continue
                    if cat == "patient_lookup" and len(keyset[(ch.given, ch.family, ch.birth)]) > 1:
                        continue
                    now, late = now_for(ch)
                    q = gen(ch, R(cat, voice, str(k), ch.pid), voice, k, now, late)
                    if q is None:
                        continue
                    used[ch.pid] = used.get(ch.pid, 0) + 1
                    n_cat += 1
                    q["id"] = f"{cat}-{n_cat:03d}"
                    out.append(q)
                    got += 1
                    break
            if got < want:
                print(f"warning: {cat}/{voice}: {got} of {want}", file=sys.stderr)
    return out


def dumps(qs: list[dict]) -> str:
    return "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    text = dumps(build(a.data))
    if a.check:
        ok = a.out.exists() and a.out.read_text(encoding="utf-8") == text
        print("up to date" if ok else "stale")
        return 0 if ok else 1
    a.out.write_text(text, encoding="utf-8")
    print(f"wrote {len(text.splitlines())} questions to {a.out.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
