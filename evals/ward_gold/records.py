"""Record questions (encounters, prescriptions, procedures, vaccines, conditions, demographics)."""

from __future__ import annotations

from datetime import date, timedelta

from .core import add_months, completed_months, completed_years, day0, fmt_date, q, random_window, rng, robust
from .lex import ABSENT, CONDS, DRUGS, ITEMS, PROCS, VACCS
from .values import item_name, match

KINDS = {"cond": ("conds", CONDS), "drug": ("meds", DRUGS), "proc": ("procs", PROCS), "vacc": ("imms", VACCS)}
ENC = {
    "EMER": ["ED visits", "ER visits", "trips to the ER", "emergency dept visits"],
    "IMP": ["admissions", "inpatient stays", "hospitalizations", "times admitted"],
    "AMB": ["clinic visits", "outpatient visits", "ambulatory visits"],
    "all": ["encounters", "visits (any type)", "encounters total"],
}


def recs(p, kind, key):
    attr, table = KINDS[kind]
    return [x for x in getattr(p, attr) if match(x.name, table[key][0])]


def loosely(p, kind, key) -> bool:
    attr, table = KINDS[kind]
    m, loose, _ = table[key]
    return any(match(x.name, m + loose) for x in getattr(p, attr))


def has_key(P, kind, key) -> bool:
    return any(recs(p, kind, key) for p in P.values())


def who(p, r):
    she, her = p.pron()
    return r.choice([she, p.given, "the pt", "pt"])


def take(P, cat, n, fn, src_weight=0.8, per_patient=3):
    """Draw n questions, most from the Bulk patients."""
    bulk = sorted((p for p in P.values() if p.src == "bulk"), key=lambda p: p.id)
    r4 = sorted((p for p in P.values() if p.src == "r4"), key=lambda p: p.id)
    r0 = rng(cat, "order")
    r0.shuffle(bulk)
    r0.shuffle(r4)
    out, used, tries = [], {}, 0
    while len(out) < n and tries < 5000:
        tries += 1
        r = rng(cat, str(tries))
        pool = bulk if r.random() < src_weight else r4
        p = pool[tries % len(pool)]
        if used.get(p.id, 0) >= per_patient:
            continue
        item = fn(p, r, len(out), P)
        key = (item["patient_id"], item["template"].rsplit("/", 1)[0]) if item else None
        if item and key not in {(x["patient_id"], x["template"].rsplit("/", 1)[0]) for x in out}:
            out.append(item)
            used[p.id] = used.get(p.id, 0) + 1
    return out


def g_count_enc(p, r, k, P):
    cls = ["EMER", "IMP", "AMB", "all"][k % 4]
    items = [e for e in p.encs if cls == "all" or e.cls == cls]
    w = random_window(p, items or p.encs, r, ("all", "last", "year", "since", "between"))
    ok, ans = robust(w, len, items)
    if not ok:
        return None
    if cls == "AMB" and ans > 60:
        return None
    label = r.choice(ENC[cls])
    forms = [f"# {label}{w.text}?", f"how many {label}{w.text}", f"count of {label}{w.text} pls",
             f"how many {label} has {who(p, r)} had{w.text}?", f"number of {label}{w.text}"]
    i = r.randrange(len(forms))
    sub = [e.ref for e in items if w.has(e.t)]
    return q("count_encounters", p, forms[i], "count", [ans], sub, f"count_encounters/{w.kind}-{cls}/{i}.any")


def g_count_other(p, r, k, P):
    kind = ["rx-all", "drug", "proc", "vacc"][k % 4]
    if kind == "rx-all":
        items, label, key = p.meds, r.choice(["prescriptions", "Rx", "meds prescribed"]), "all"
    else:
        table = KINDS[kind][1]
        keys = sorted(x for x in table if recs(p, kind, x))
        if not keys:
            return None
        key = r.choice(keys)
        items = recs(p, kind, key)
        nm = r.choice(table[key][2])
        label = {"drug": r.choice([f"{nm} prescriptions", f"{nm} Rx", f"times {nm} was prescribed"]),
                 "proc": r.choice([f"{nm}", f"{nm} procedures"]),
                 "vacc": r.choice([f"{nm} doses", f"{nm}s given"])}[kind]
    w = random_window(p, items, r, ("all", "all", "last", "year", "since", "between"))
    ok, ans = robust(w, len, items)
    if not ok or (kind == "rx-all" and ans > 150):
        return None
    forms = [f"how many {label}{w.text}?", f"# {label}{w.text}", f"total {label}{w.text}?", f"count {label}{w.text}"]
    i = r.randrange(len(forms))
    return q("count_other", p, forms[i], "count", [ans], [x.ref for x in items if w.has(x.t)],
             f"count_other/{w.kind}-{kind}-{key}/{i}.any")


def _exist_forms(kind, nm, p, r):
    she, her = p.pron()
    return {
        "cond": [f"hx of {nm}?", f"any {nm}?", f"ever dx'd with {nm}?", f"does {p.given} have a history of {nm}",
                 f"{nm} on {her} history?"],
        "drug": [f"ever been on {nm}?", f"has {she} ever had {nm} prescribed?", f"any {nm} rx on file?",
                 f"was {p.given} ever given a script for {nm}"],
        "proc": [f"ever had a {nm}?", f"any {nm} done?", f"has {she} had {nm} before?"],
        "vacc": [f"ever got the {nm}?", f"{nm} ever given?", f"has {she} had a {nm}?"],
    }[kind]


def g_exist_pos(p, r, k, P):
    kind = ["cond", "drug", "proc", "vacc", "cond", "item"][k % 6]
    if kind == "item":
        codes = sorted(c for c in p.obs if c in ITEMS)
        if not codes:
            return None
        c = r.choice(codes)
        nm, reg = item_name(c, r)
        forms = [f"{nm} ever checked?", f"has {who(p, r)} ever had a {nm} done?", f"any {nm} on file?"]
        i = r.randrange(len(forms))
        return q("existence_positive", p, forms[i], "boolean", [True], [p.obs[c][-1].ref],
                 f"existence_positive/item/{i}.{reg}")
    table = KINDS[kind][1]
    keys = sorted(x for x in table if recs(p, kind, x))
    if not keys:
        return None
    key = r.choice(keys)
    nm = r.choice(table[key][2])
    forms = _exist_forms(kind, nm, p, r)
    i = r.randrange(len(forms))
    return q("existence_positive", p, forms[i], "boolean", [True], [x.ref for x in recs(p, kind, key)][:5],
             f"existence_positive/{kind}-{key}/{i}.any")


def g_exist_neg(p, r, k, P):
    kind = ["cond", "drug", "proc", "vacc", "absent", "never", "cond", "drug"][k % 8]
    if kind == "absent":
        nm = r.choice(ABSENT)
        forms = [f"last {nm}?", f"latest {nm} value", f"what was {p.pron()[1]} most recent {nm}"]
        i = r.randrange(len(forms))
        return q("existence_negative", p, forms[i], "number", [], [], f"existence_negative/absent-value/{i}.abbr",
                 status="no-data")
    if kind == "never":
        codes = sorted(c for c in ITEMS if c not in p.obs and any(c in x.obs for x in P.values()))
        if not codes:
            return None
        c = r.choice(codes)
        nm, reg = item_name(c, r)
        forms = [f"last {nm}?", f"most recent {nm} result", f"highest {nm} ever?"]
        i = r.randrange(len(forms))
        return q("existence_negative", p, forms[i], "number", [], [], f"existence_negative/never-value/{i}.{reg}",
                 status="no-data")
    table = KINDS[kind][1]
    keys = sorted(x for x in table if not loosely(p, kind, x) and has_key(P, kind, x))
    if kind == "cond" and p.src == "bulk":
        keys = [x for x in keys if any(recs(o, kind, x) for o in P.values() if o.src == "bulk" and o.id != p.id)] or keys
    if not keys:
        return None
    key = r.choice(keys)
    nm = r.choice(table[key][2])
    forms = _exist_forms(kind, nm, p, r)
    i = r.randrange(len(forms))
    return q("existence_negative", p, forms[i], "boolean", [False], [], f"existence_negative/{kind}-{key}/{i}.any")


def _udate(x):
    return x.t.date().isoformat()


def g_first_last(p, r, k, P):
    kind = ["enc", "cond", "drug", "vacc", "proc", "item"][k % 6]
    first = r.random() < 0.45 if kind != "cond" else True
    she, her = p.pron()
    fl = "first" if first else "last"
    if kind == "item":
        codes = sorted(c for c in p.obs if c in ITEMS)
        if not codes:
            return None
        c = r.choice(codes)
        o = p.obs[c][0] if first else p.obs[c][-1]
        nm, reg = item_name(c, r)
        forms = [f"when was {her} {fl} {nm}?", f"date of {fl} {nm}", f"{nm} {fl} checked when?"]
        i = r.randrange(len(forms))
        return q("first_last_time", p, forms[i], "date", [_udate(o)], [o.ref], f"first_last_time/{fl}-item/{i}.{reg}")
    if kind == "enc":
        cls = r.choice(["EMER", "IMP", "AMB"])
        items = [e for e in p.encs if e.cls == cls]
        if not items:
            return None
        label = {"EMER": ["ED visit", "ER visit"], "IMP": ["admission", "hospitalization"],
                 "AMB": ["clinic visit", "outpatient visit"]}[cls]
        nm, key = r.choice(label), cls
    else:
        table = KINDS[kind][1]
        keys = sorted(x for x in table if recs(p, kind, x))
        if not keys:
            return None
        key = r.choice(keys)
        items = recs(p, kind, key)
        nm = r.choice(table[key][2])
    x = items[0] if first else items[-1]
    forms = {
        "enc": [f"when was {her} {fl} {nm}?", f"date of {fl} {nm}?", f"{fl} {nm} - when?"],
        "cond": [f"when was {nm} first diagnosed?", f"date of {nm} dx?", f"when did {she} first get {nm}",
                 f"{nm} onset date?"],
        "drug": [f"when was {nm} {fl} prescribed?", f"date of {fl} {nm} rx", f"{fl} script for {nm} - date?"],
        "vacc": [f"when was {her} {fl} {nm}?", f"date of {fl} {nm}", f"{fl} {nm} given when?"],
        "proc": [f"when was {her} {fl} {nm}?", f"date of {fl} {nm}", f"{fl} {nm} done when?"],
    }[kind]
    i = r.randrange(len(forms))
    return q("first_last_time", p, forms[i], "date", [_udate(x)], [x.ref], f"first_last_time/{fl}-{kind}-{key}/{i}.any")


def _same_local(x) -> bool:
    return x.local[:10] == x.t.date().isoformat()


def g_time_since(p, r, k, P):
    unit = ["days", "months", "years", "onset"][k % 4]
    she, her = p.pron()
    if unit == "onset":
        cands = [c for c in p.conds if c.end is None and c.status == "active"
                 and any(match(c.name, CONDS[key][0]) for key in CONDS)]
        if not cands:
            return None
        c = r.choice(cands)
        key = next(key for key in CONDS if match(c.name, CONDS[key][0]))
        first = min(x.t for x in recs(p, "cond", key))
        vals = {completed_years(first.date() + timedelta(days=d), p.now.date()) for d in (-3, 0, 3)}
        if len(vals) != 1:
            return None
        nm = r.choice(CONDS[key][2])
        forms = [f"how many yrs has {she} had {nm}?", f"years since {nm} dx", f"how long has {p.given} had {nm} (years)?"]
        i = r.randrange(len(forms))
        return q("time_since", p, forms[i], "number", [vals.pop()], [c.ref], f"time_since/onset-years-{key}/{i}.any",
                 tol=0)
    kind = r.choice(["enc", "vacc", "proc", "drug"])
    if kind == "enc":
        cls = r.choice(["EMER", "AMB", "all"])
        items = [e for e in p.encs if cls == "all" or e.cls == cls]
        nm = {"EMER": "ED visit", "AMB": "clinic visit", "all": "visit"}[cls]
        key = cls
    else:
        table = KINDS[kind][1]
        keys = sorted(x for x in table if recs(p, kind, x))
        if not keys:
            return None
        key = r.choice(keys)
        items = recs(p, kind, key)
        nm = r.choice(table[key][2])
        if kind == "drug":
            nm = f"{nm} prescription"
    if not items:
        return None
    x = items[-1]
    if unit == "days":
        if not _same_local(x):
            return None
        ans = (p.now - x.t).days
        if ans != (p.now.date() - x.t.date()).days or ans > 3000:
            return None
        forms = [f"how many days since {her} last {nm}?", f"days since last {nm}?", f"last {nm} was how many days ago"]
    else:
        fnc = completed_months if unit == "months" else (lambda a, b: completed_years(a.date(), b.date()))
        vals = {fnc(x.t + timedelta(days=d), p.now) for d in (-3, 0, 3)}
        if len(vals) != 1:
            return None
        ans = vals.pop()
        if unit == "months" and ans > 48:
            return None
        u = "mo" if unit == "months" else "yrs"
        forms = [f"{u} since last {nm}?", f"how many {unit} since {her} last {nm}", f"how long ago was the last {nm}, in {unit}?"]
    i = r.randrange(len(forms))
    return q("time_since", p, forms[i], "number", [ans], [x.ref], f"time_since/{unit}-{kind}-{key}/{i}.any", tol=0)


def active_at(p, d_end):
    out = set()
    refs = []
    for c in p.conds:
        if c.t <= d_end and (c.end is None or c.end > d_end):
            out.add(c.name)
            refs.append(c.ref)
    return sorted(out), refs


def g_active_cond(p, r, k, P):
    she, her = p.pron()
    kind = ["now", "now", "date", "still", "still"][k % 5]
    if kind == "still":
        keys = sorted(x for x in CONDS if recs(p, "cond", x))
        if not keys:
            return None
        key = r.choice(keys)
        rs = recs(p, "cond", key)
        ans = any(c.end is None and c.status not in ("inactive", "resolved", "remission") for c in rs)
        if (k // 5) % 2 == 0 and not ans or (k // 5) % 2 == 1 and ans:
            return None
        nm = r.choice(CONDS[key][2])
        forms = [f"does {she} still have {nm}?", f"{nm} still active?", f"is the {nm} resolved or still active? (active = yes)",
                 f"still dealing with {nm}?"]
        forms = forms[:2] + forms[3:]
        i = r.randrange(len(forms))
        return q("active_conditions", p, forms[i], "boolean", [ans], [c.ref for c in rs], f"active_conditions/still-{key}/{i}.any")
    if kind == "now":
        names = sorted({c.name for c in p.conds if c.end is None and c.status not in ("inactive", "resolved", "remission")})
        refs = [c.ref for c in p.conds if c.end is None and c.status not in ("inactive", "resolved", "remission")]
        forms = ["active problems?", "current problem list", "pls list active dx", f"what's on {her} problem list right now",
                 f"what conditions does {p.given} currently have"]
        i = r.randrange(len(forms))
        return q("active_conditions", p, forms[i], "list", names, refs, f"active_conditions/now/{i}.any")
    lo, hi = min(c.t for c in p.conds), p.now
    for _ in range(20):
        d = (lo + timedelta(days=r.randint(30, max(31, (hi - lo).days)))).date()
        edges = [c.t for c in p.conds] + [c.end for c in p.conds if c.end]
        if all(abs((e - day0(d)).total_seconds()) > 3 * 86400 for e in edges):
            break
    else:
        return None
    names, refs = active_at(p, day0(d) + timedelta(hours=12))
    if not names:
        return None
    forms = [f"active problems on {fmt_date(d, r)}?", f"what was {she} being treated for as of {fmt_date(d, r)} (active dx)",
             f"problem list as of {fmt_date(d, r)}"]
    i = r.randrange(len(forms))
    return q("active_conditions", p, forms[i], "list", names, refs, f"active_conditions/date/{i}.any")


def g_active_med(p, r, k, P):
    if p.death:
        return None
    she, her = p.pron()
    if k % 2 == 0:
        act = [m for m in p.meds if m.status == "active"]
        names = sorted({m.name for m in act})
        if not names and k % 6 != 0:
            return None
        forms = ["current meds?", "pls list current meds", f"what's {she} on right now", "active med list",
                 f"what meds is {p.given} currently taking", "active Rx?"]
        i = r.randrange(len(forms))
        return q("active_medications", p, forms[i], "list", names, [m.ref for m in act], f"active_medications/now/{i}.any")
    keys = sorted(x for x in DRUGS if recs(p, "drug", x))
    if not keys:
        return None
    key = r.choice(keys)
    rs = recs(p, "drug", key)
    ans = any(m.status == "active" for m in rs)
    if (k // 2) % 2 == 0 and not ans or (k // 2) % 2 == 1 and ans:
        return None
    nm = r.choice(DRUGS[key][2])
    forms = [f"is {she} still on {nm}?", f"still taking {nm}?", f"{nm} still active?", f"{p.given} still on {nm}?"]
    i = r.randrange(len(forms))
    return q("active_medications", p, forms[i], "boolean", [ans], [m.ref for m in rs], f"active_medications/still-{key}/{i}.any")


def g_daily_dose(p, r, k, P):
    keys = sorted(x for x in DRUGS if recs(p, "drug", x))
    r.shuffle(keys)
    # mostly drugs whose latest prescription is not once a day
    keys.sort(key=lambda x: (recs(p, "drug", x)[-1].dpd in (None, 1.0)) if k % 3 else 0)
    she, her = p.pron()
    for key in keys:
        rs = recs(p, "drug", key)
        last = rs[-1]
        tied = {m.dpd for m in rs if m.t == last.t}
        if len(tied) != 1 or last.dpd is None or last.dpd < 0.25:
            continue
        nm = r.choice(DRUGS[key][2])
        forms = [f"how many doses/day of {nm}?", f"{nm} - doses per day on the latest rx?",
                 f"how many times a day is {she} supposed to take {nm}", f"{nm} frequency: doses per day?"]
        i = r.randrange(len(forms))
        return q("daily_dose", p, forms[i], "number", [round(last.dpd, 4)], [last.ref], f"daily_dose/{key}/{i}.any")


def _near_bday(born: date, at: date) -> bool:
    for y in (at.year - 1, at.year, at.year + 1):
        try:
            b = born.replace(year=y)
        except ValueError:
            b = date(y, 3, 1)
        if abs((b - at).days) <= 3:
            return True
    return False


def g_age(p, r, k, P):
    she, her = p.pron()
    kind = ["now", "death", "dx"][k % 3]
    if kind == "now":
        end = min(p.now, p.death) if p.death else p.now
        if _near_bday(p.birth, end.date()):
            return None
        forms = ["age?", f"how old is {p.given}?", "pt age", f"how old is {she}"] if not p.death else \
            ["age?", f"how old was {she} when {she} died", "age (at death)?"]
        i = r.randrange(len(forms))
        return q("age", p, forms[i], "number", [completed_years(p.birth, end.date())], [p.ref], f"age/now/{i}.any", tol=0)
    if kind == "death":
        if not p.death or _near_bday(p.birth, p.death.date()):
            return None
        forms = ["age at death?", f"how old was {p.given} when {she} passed?", "age at time of death"]
        i = r.randrange(len(forms))
        return q("age", p, forms[i], "number", [completed_years(p.birth, p.death.date())], [p.ref], f"age/death/{i}.any", tol=0)
    keys = sorted(x for x in CONDS if len(recs(p, "cond", x)) == 1)
    if not keys:
        return None
    key = r.choice(keys)
    c = recs(p, "cond", key)[0]
    if _near_bday(p.birth, c.t.date()):
        return None
    nm = r.choice(CONDS[key][2])
    forms = [f"age at {nm} dx?", f"how old was {she} when diagnosed with {nm}", f"{nm} - age at diagnosis?"]
    i = r.randrange(len(forms))
    return q("age", p, forms[i], "number", [completed_years(p.birth, c.t.date())], [c.ref, p.ref], f"age/dx-{key}/{i}.any", tol=0)


def g_demo(p, r, k, P):
    she, her = p.pron()
    kind = ["dob", "gender", "dead", "dod", "alive"][k % 5]
    if kind == "dob":
        forms = ["DOB?", "date of birth", f"when was {p.given} born?", "birthday?"]
        i = r.randrange(len(forms))
        return q("demographics", p, forms[i], "date", [p.birth.isoformat()], [p.ref], f"demographics/dob/{i}.any")
    if kind == "gender":
        forms = ["sex?", "gender?", "pt gender", f"is {p.given} male or female?"]
        i = r.randrange(len(forms))
        return q("demographics", p, forms[i], "string", [p.gender], [p.ref], f"demographics/gender/{i}.any")
    if kind in ("dead", "alive"):
        dead = p.death is not None and p.death <= p.now
        if (k // 5) % 2 == 0 and not dead and r.random() < 0.5:
            return None
        if kind == "dead":
            forms = [f"is {p.given} deceased?", "deceased?", "pt expired?", f"has {she} died?"]
            ans = dead
        else:
            forms = [f"is {p.given} still alive?", "alive?", "pt living?"]
            ans = not dead
        i = r.randrange(len(forms))
        return q("demographics", p, forms[i], "boolean", [ans], [p.ref], f"demographics/{kind}/{i}.any")
    if not p.death:
        return None
    forms = ["date of death?", f"when did {p.given} die?", "DOD?", f"when did {she} pass away"]
    i = r.randrange(len(forms))
    return q("demographics", p, forms[i], "date", [p.death.date().isoformat()], [p.ref], f"demographics/dod/{i}.any")


def gen_lookup(P, n):
    out = []
    pats = sorted(P.values(), key=lambda p: p.id)
    r0 = rng("lookup", "order")
    # Bulk patients first (three share a birth date, two another), then a few R4 ones
    bulk = [p for p in pats if p.src == "bulk"]
    r4 = [p for p in pats if p.src == "r4"]
    r0.shuffle(bulk)
    r0.shuffle(r4)
    now = max(p.now for p in P.values())
    for p in (bulk + r4)[:n]:
        others = [o for o in P.values() if o.given == p.given and o.family == p.family and o.birth == p.birth]
        if len(others) != 1:
            continue
        r = rng("lookup", p.id)
        b = fmt_date(p.birth, r)
        forms = [f"pt id for {p.given} {p.family}, DOB {b}?", f"find patient {p.given} {p.family} born {b}",
                 f"which patient is {p.family}, {p.given} (DOB {b})? give the id", f"look up {p.given} {p.family} dob {b}"]
        i = r.randrange(len(forms))
        item = q("patient_lookup", None, forms[i], "string", [p.id], [p.ref], f"patient_lookup/name-dob/{i}.any", now=now)
        out.append(item)
    return out


GEN = {"count_encounters": g_count_enc, "count_other": g_count_other, "existence_positive": g_exist_pos,
       "existence_negative": g_exist_neg, "first_last_time": g_first_last, "time_since": g_time_since,
       "active_conditions": g_active_cond, "active_medications": g_active_med, "daily_dose": g_daily_dose,
       "age": g_age, "demographics": g_demo}
_ = add_months
