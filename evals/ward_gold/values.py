"""Value questions (Observations): only the Synthea R4 bundles carry them."""

from __future__ import annotations

from datetime import timedelta

from .core import Window, add_months, q, random_window, rnd, rng, robust, w_last
from .lex import CUTS, DRUGS, ITEMS


def item_name(code: str, r) -> tuple[str, str]:
    regs = ITEMS[code]
    pool = [k for k in ("abbr", "abbr", "full", "lay", "typo") if k in regs]
    if "typo" in regs and r.random() > 0.12:
        pool = [k for k in pool if k != "typo"] or pool
    reg = r.choice(pool)
    return r.choice(regs[reg]), reg


def who(p, r) -> str:
    she, her = p.pron()
    return r.choice(["", "", f"{her} ", "pt's ", f"{p.given}'s ", "the patient's "])


def no_tie(vals, latest: bool) -> bool:
    if not vals:
        return False
    t = vals[-1].t if latest else vals[0].t
    return len({o.v for o in vals if o.t == t}) == 1


def pick_items(p, r, codes=None, min_n=1):
    cs = [c for c in sorted(p.obs) if c in ITEMS and len(p.obs[c]) >= min_n and (codes is None or c in codes)]
    r.shuffle(cs)
    return cs


def _first(v):
    return rnd(v[0].v) if v and no_tie(v, False) else None


def _last(v):
    return rnd(v[-1].v) if v and no_tie(v, True) else None


def _val(x):
    return None if x is None else x


def gen_values(P, n_per: dict[str, int]) -> list[dict]:
    pats = [p for p in P.values() if p.src == "r4" and p.obs]
    pats.sort(key=lambda p: p.id)
    out: list[dict] = []
    for cat, n in n_per.items():
        got: list[dict] = []
        used: dict[str, int] = {}
        r0 = rng(cat, "order")
        order = pats[:]
        r0.shuffle(order)
        tries = 0
        while len(got) < n and tries < 4000:
            p = order[tries % len(order)]
            tries += 1
            if used.get(p.id, 0) >= 2:
                continue
            r = rng(cat, p.id, str(tries))
            item = GEN[cat](p, r, len(got))
            if item:
                got.append(item)
                used[p.id] = used.get(p.id, 0) + 1
        out += got
    return out


def g_latest(p, r, k):
    for c in pick_items(p, r):
        v = p.obs[c]
        if not no_tie(v, True):
            continue
        nm, reg = item_name(c, r)
        w = who(p, r)
        forms = [f"last {nm}?", f"latest {w}{nm}", f"most recent {nm} for {p.given}?", f"what's {w}{nm} at last check",
                 f"{nm} - latest value pls", f"tell me the most recent {nm}", f"newest {nm} result?"]
        i = r.randrange(len(forms))
        return q("latest_value", p, forms[i], "number", [rnd(v[-1].v)], [v[-1].ref], f"latest_value/all/{i}.{reg}")


def g_first(p, r, k):
    for c in pick_items(p, r):
        v = p.obs[c]
        if not no_tie(v, False):
            continue
        nm, reg = item_name(c, r)
        w = who(p, r)
        forms = [f"first {nm} on file?", f"{w}earliest {nm}", f"initial {nm} recorded for {p.given}",
                 f"what was {w}very first {nm}?", f"baseline {nm} (first ever)?", f"1st {nm} in the chart"]
        i = r.randrange(len(forms))
        return q("first_value", p, forms[i], "number", [rnd(v[0].v)], [v[0].ref], f"first_value/all/{i}.{reg}")


def _window_q(p, r, kinds, fn, min_n=1, late=False):
    for c in pick_items(p, r):
        v = p.obs[c]
        if late:
            now = add_months(p.now, 12 * r.choice([2, 3, 4]))
            n = r.choice([3, 6, 12])
            w = w_last(now, n, "mo", r)
            if any(w.has(o.t) for o in v):
                continue
            return c, w, None, [], now
        w = random_window(p, v, r, kinds)
        ok, ans = robust(w, fn, v)
        if not ok or ans is None:
            continue
        sub = [o for o in v if w.has(o.t)]
        if len(sub) < min_n:
            continue
        return c, w, ans, sub, None
    return None


def g_window(p, r, k):
    late = k % 7 == 6
    first = r.random() < 0.35
    fn = _first if first else _last
    got = _window_q(p, r, ("last", "year", "since", "between"), fn, late=late)
    if not got:
        return None
    c, w, ans, sub, now = got
    nm, reg = item_name(c, r)
    side = "first" if first else "latest"
    if first:
        forms = [f"first {nm}{w.text}?", f"earliest {nm} reading{w.text}", f"what was the 1st {nm}{w.text}"]
    else:
        forms = [f"last {nm}{w.text}?", f"most recent {nm}{w.text}", f"latest {nm} value{w.text} pls",
                 f"{nm}{w.text} - most recent?"]
    i = r.randrange(len(forms))
    if late:
        return q("value_in_window", p, forms[i], "number", [], [], f"value_in_window/empty-{side}/{i}.{reg}",
                 status="no-data", now=now)
    ref = sub[0].ref if first else sub[-1].ref
    return q("value_in_window", p, forms[i], "number", [ans], [ref], f"value_in_window/{w.kind}-{side}/{i}.{reg}")


def g_minmax(p, r, k):
    hi = r.random() < 0.55
    fn = (lambda v: rnd(max(o.v for o in v)) if v else None) if hi else (lambda v: rnd(min(o.v for o in v)) if v else None)
    got = _window_q(p, r, ("all", "all", "last", "year", "since", "between"), fn)
    if not got:
        return None
    c, w, ans, sub, _ = got
    nm, reg = item_name(c, r)
    if hi:
        forms = [f"highest {nm}{w.text}?", f"max {nm}{w.text}", f"peak {nm}{w.text}", f"tell me the highest {nm}{w.text}",
                 f"what's the worst (highest) {nm}{w.text}"]
    else:
        forms = [f"lowest {nm}{w.text}?", f"min {nm}{w.text}", f"nadir {nm}{w.text}", f"lowest recorded {nm}{w.text} pls"]
    i = r.randrange(len(forms))
    refs = [o.ref for o in sub if rnd(o.v) == ans]
    return q("min_max", p, forms[i], "number", [ans], refs, f"min_max/{w.kind}-{'max' if hi else 'min'}/{i}.{reg}")


def g_avg(p, r, k):
    fn = lambda v: rnd(sum(o.v for o in v) / len(v)) if len(v) >= 2 else None  # noqa: E731
    got = _window_q(p, r, ("all", "last", "year", "since", "between"), fn, min_n=2)
    if not got:
        return None
    c, w, ans, sub, _ = got
    nm, reg = item_name(c, r)
    forms = [f"avg {nm}{w.text}", f"mean {nm}{w.text}?", f"average {nm}{w.text}", f"what's {who(p, r)}average {nm}{w.text}",
             f"{nm} average{w.text}?"]
    i = r.randrange(len(forms))
    return q("average", p, forms[i], "number", [ans], [o.ref for o in sub], f"average/{w.kind}/{i}.{reg}")


def g_count(p, r, k):
    fn = lambda v: len(v)  # noqa: E731
    got = _window_q(p, r, ("all", "last", "year", "since", "between"), fn)
    if not got:
        return None
    c, w, ans, sub, _ = got
    nm, reg = item_name(c, r)
    forms = [f"how many {nm} results{w.text}?", f"# of {nm} checks{w.text}", f"how many times was {nm} measured{w.text}",
             f"number of {nm} values{w.text}", f"count {nm} readings{w.text}"]
    i = r.randrange(len(forms))
    return q("count_measurements", p, forms[i], "count", [ans], [o.ref for o in sub], f"count_measurements/{w.kind}/{i}.{reg}")


def _change(v):
    if len(v) < 2 or not no_tie(v, True) or not no_tie(v, False):
        return None
    return rnd(v[-1].v - v[0].v)


def g_change(p, r, k):
    got = _window_q(p, r, ("all", "last", "year", "since", "between"), _change, min_n=2)
    if not got:
        return None
    c, w, ans, sub, _ = got
    if abs(ans) < 1e-6:
        return None
    nm, reg = item_name(c, r)
    forms = [f"{nm} change{w.text}?", f"how much has {who(p, r)}{nm} changed{w.text} (last minus first)",
             f"net change in {nm}{w.text}", f"{nm} delta{w.text}, first to last?"]
    i = r.randrange(len(forms))
    return q("change", p, forms[i], "number", [ans], [sub[0].ref, sub[-1].ref], f"change/{w.kind}/{i}.{reg}")


def _trend(v):
    if len(v) < 2 or not no_tie(v, True) or not no_tie(v, False) or v[0].v == 0:
        return None
    x = (v[-1].v - v[0].v) / abs(v[0].v)
    if abs(abs(x) - 0.05) < 0.005:
        return "edge"
    return "increasing" if x > 0.05 else "decreasing" if x < -0.05 else "stable"


def g_trend(p, r, k):
    got = _window_q(p, r, ("all", "last", "year", "since", "between"), _trend, min_n=2)
    if not got or got[2] == "edge":
        return None
    c, w, ans, sub, _ = got
    nm, reg = item_name(c, r)
    she, her = p.pron()
    forms = [f"{nm} trend{w.text}?", f"is {her} {nm} going up or down{w.text}?", f"{nm} trending{w.text}?",
             f"how's the {nm} trending{w.text}", f"{nm}{w.text}: up, down or flat?"]
    i = r.randrange(len(forms))
    return q("trend", p, forms[i], "string", [ans], [sub[0].ref, sub[-1].ref], f"trend/{w.kind}-{ans}/{i}.{reg}")


def g_threshold(p, r, k):
    above = r.random() < 0.6
    late = k % 9 == 8
    for c in pick_items(p, r, codes=set(CUTS)):
        v = p.obs[c]
        if late:
            now = add_months(p.now, 12 * r.choice([2, 3]))
            w = w_last(now, r.choice([6, 12]), "mo", r)
            cut = r.choice(CUTS[c])
            nm, reg = item_name(c, r)
            txt = f"any {nm} > {cut}{w.text}?" if above else f"any {nm} < {cut}{w.text}?"
            return q("threshold", p, txt, "boolean", [], [], f"threshold/empty-{'above' if above else 'below'}/0.{reg}",
                     status="no-data", now=now)
        cut = r.choice(CUTS[c])
        w: Window = random_window(p, v, r, ("all", "all", "last", "year", "since"))

        def fn(sub, cut=cut):
            if not sub:
                return None
            ext = max(o.v for o in sub) if above else min(o.v for o in sub)
            if abs(ext - cut) <= 0.006 * abs(cut):
                return "edge"
            return ext > cut if above else ext < cut
        ok, ans = robust(w, fn, v)
        if not ok or ans is None or ans == "edge":
            continue
        if k % 2 == 0 and not ans or k % 2 == 1 and ans:
            continue  # alternate true / false
        nm, reg = item_name(c, r)
        she, her = p.pron()
        if above:
            forms = [f"any {nm} > {cut}{w.text}?", f"ever {nm} over {cut}{w.text}?", f"was {her} {nm} above {cut}{w.text}",
                     f"{nm} >{cut}{w.text}? y/n"]
        else:
            forms = [f"any {nm} < {cut}{w.text}?", f"{nm} ever below {cut}{w.text}?", f"did {her} {nm} drop under {cut}{w.text}",
                     f"{nm} <{cut}{w.text}? y/n"]
        i = r.randrange(len(forms))
        sub = [o for o in v if w.has(o.t)]
        refs = [o.ref for o in sub if (o.v > cut if above else o.v < cut)]
        return q("threshold", p, forms[i], "boolean", [ans], refs,
                 f"threshold/{w.kind}-{'above' if above else 'below'}/{i}.{reg}")


def match(name: str, keys) -> bool:
    n = name.lower()
    return any(k in n for k in keys)


def g_after(p, r, k):
    drugs = sorted(d for d, (m, _, _) in DRUGS.items() if any(match(x.name, m) for x in p.meds))
    r.shuffle(drugs)
    for d in drugs:
        m, loose, names = DRUGS[d]
        start = min(x.t for x in p.meds if match(x.name, m))
        for c in pick_items(p, r):
            v = p.obs[c]
            if any(abs((o.t - start).total_seconds()) <= 86400 for o in v):
                continue
            sub = [o for o in v if o.t > start]
            if not sub:
                continue
            first = r.random() < 0.5
            if not no_tie(sub, not first):
                continue
            o = sub[0] if first else sub[-1]
            nm, reg = item_name(c, r)
            dn = r.choice(names)
            she, her = p.pron()
            if first:
                forms = [f"first {nm} after starting {dn}?", f"1st {nm} since {she} was put on {dn}",
                         f"{nm} right after {dn} was started (first value)?"]
            else:
                forms = [f"latest {nm} since {dn} was started?", f"last {nm} after {her} {dn} start",
                         f"most recent {nm} after starting {dn}"]
            i = r.randrange(len(forms))
            return q("after_drug", p, forms[i], "number", [rnd(o.v)], [o.ref],
                     f"after_drug/{'first' if first else 'last'}-{d}/{i}.{reg}")


GEN = {"latest_value": g_latest, "first_value": g_first, "value_in_window": g_window, "min_max": g_minmax,
       "average": g_avg, "count_measurements": g_count, "change": g_change, "trend": g_trend,
       "threshold": g_threshold, "after_drug": g_after}
_ = timedelta
