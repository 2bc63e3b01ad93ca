"""Score fhirqa's checker on the blind probe through its public API (fhirqa.consistency.check_note).

    python -m evals.consistency_blind.score --db STORE [--notes evals/consistency_blind/notes.jsonl] [--out FILE]

Alignment: a gold value entity matches a checker entity whose value span overlaps it; a gold name entity
(drug, diagnosis, procedure, vaccine, or a value-less mention) one whose span overlaps it. Positive class:
inconsistent. A flag on a consistent/unverifiable gold entity or on unlabelled text is a false positive.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict

FIELD = {"value": "value", "unit": "unit", "time": "time", "existence": "existence", "wrong_drug": "existence"}


def overlap(a, b):
    return a and b and a[0] < b[1] and b[0] < a[1]


def key_span(ce, gold_has_value):
    e = ce["entity"]
    if gold_has_value and e.get("value_span"):
        return e["value_span"]
    return e.get("span")


def gold_has_value(g):
    return any(ch.isdigit() for ch in g["text"])


def run(db, notes):
    from fhirqa.consistency import PatientChecker

    checkers, results = {}, []
    for n in notes:
        ck = checkers.get(n["patient"]) or PatientChecker(db, n["patient"])
        checkers = {n["patient"]: ck}
        kw = {"encounter": n["encounter"]} if n.get("encounter") else {}
        try:
            rep = ck.check(n["text"], n["time"], n["type"], **kw)
        except TypeError:
            rep = ck.check(n["text"], n["time"], n["type"])
        out = json.loads(rep.to_json())
        results.append(out["entities"])
    return results


def score(notes, results):
    rows = []  # (gold, matched checker entities)
    stray = []
    for n, ents in zip(notes, results, strict=True):
        used = set()
        for g in n["entities"]:
            if g["cls"] == "medication":  # one drug per gold span: its name or its dose
                m = [i for i, ce in enumerate(ents) if overlap(ce["entity"].get("span"), g["span"])
                     or overlap(ce["entity"].get("value_span"), g["span"])]
            else:
                hv = gold_has_value(g) and g["cls"] in ("lab", "vital")
                m = [i for i, ce in enumerate(ents) if overlap(key_span(ce, hv), g["span"])]
            used |= set(m)
            rows.append((n, g, [ents[i] for i in m]))
        for i, ce in enumerate(ents):
            if i not in used and ce["status"] == "inconsistent":
                stray.append((n, ce))
    return rows, stray


def prf(tp, fp, fn):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def report(rows, stray):
    lines = []
    tp = Counter()
    fp = Counter()
    fn = Counter()
    kind_n = Counter()
    kind_hit = Counter()
    kind_field = Counter()
    handled = defaultdict(Counter)
    misses, falses = [], []
    for n, g, ms in rows:
        flagged = [c for c in ms if c["status"] == "inconsistent"]
        cls = g["cls"]
        if g["label"] == "inconsistent":
            kind_n[g["kind"]] += 1
            if flagged:
                tp[cls] += 1
                tp["all"] += 1
                kind_hit[g["kind"]] += 1
                if any(FIELD[g["kind"]] in c["fields"] for c in flagged):
                    kind_field[g["kind"]] += 1
            else:
                fn[cls] += 1
                fn["all"] += 1
                misses.append((n, g, ms))
        else:
            st = "flagged" if flagged else (ms[0]["status"] if ms else "not found")
            handled[g["label"]][st] += 1
            if flagged:
                fp[cls] += 1
                fp["all"] += 1
                falses.append((n, g, flagged))
    for n, ce in stray:
        cls = {"observation": "lab"}.get(ce["entity"]["category"], ce["entity"]["category"])
        fp[cls] += 1
        fp["all"] += 1
        falses.append((n, None, [ce]))
    lines.append(f"{'class':14} {'n':>4} {'TP':>4} {'FP':>4} {'FN':>4} {'P':>7} {'R':>7} {'F1':>7}")
    for c in ["all", "lab", "vital", "medication", "condition", "procedure", "immunization"] + \
            sorted(set(fp) - {"all", "lab", "vital", "medication", "condition", "procedure", "immunization"}):
        p, r, f = prf(tp[c], fp[c], fn[c])
        lines.append(f"{c:14} {tp[c] + fn[c]:4} {tp[c]:4} {fp[c]:4} {fn[c]:4} {p:7.1%} {r:7.1%} {f:7.1%}")
    lines.append("")
    lines.append(f"{'kind':12} {'n':>4} {'recall':>8} {'field R':>8}")
    for k in sorted(kind_n):
        lines.append(f"{k:12} {kind_n[k]:4} {kind_hit[k] / kind_n[k]:8.1%} {kind_field[k] / kind_n[k]:8.1%}")
    lines.append("")
    for lab, c in handled.items():
        lines.append(f"gold {lab}: " + ", ".join(f"{k} {v}" for k, v in c.most_common()))
    return "\n".join(lines), misses, falses


def ctx(n, span, w=45):
    t = n["text"]
    return (t[max(0, span[0] - w):span[0]] + "[[" + t[span[0]:span[1]] + "]]" + t[span[1]:span[1] + w]).replace("\n", " ⏎ ")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Score the blind consistency probe")
    ap.add_argument("--db", required=True)
    ap.add_argument("--notes", default="evals/consistency_blind/notes.jsonl")
    ap.add_argument("--failures", action="store_true", help="print every miss and false flag")
    ap.add_argument("--json", help="write per-gold alignment as JSON lines")
    a = ap.parse_args(argv)
    notes = [json.loads(line) for line in open(a.notes, encoding="utf-8")]
    results = run(a.db, notes)
    rows, stray = score(notes, results)
    text, misses, falses = report(rows, stray)
    print(text)
    if a.failures:
        print("\n## misses")
        for n, g, ms in misses:
            got = "; ".join(f"{c['status']} {c['fields']} {c['entity']['name']!r} t={c['entity']['time']['text']!r}"
                            f" {c.get('reason', '')[:80]}" for c in ms) or "not found"
            print(f"- {n['id']} {g['cls']}/{g['kind']}: {ctx(n, g['span'])}\n    truth: {g['truth'][:110]}\n    got: {got}")
        print("\n## false flags")
        for n, g, cs in falses:
            sp = g["span"] if g else cs[0]["entity"]["span"]
            lab = f"{g['cls']}/{g['label']}" if g else "unlabelled"
            for c in cs:
                print(f"- {n['id']} {lab}: {ctx(n, sp)}\n    truth: {(g or {}).get('truth', '')[:110]}\n"
                      f"    got: {c['fields']} {c['entity']['name']!r} items={c['items'][:2]} "
                      f"t={c['entity']['time']['text']!r} {c.get('reason', '')[:120]}")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            for n, g, ms in rows:
                f.write(json.dumps({"note": n["id"], "gold": g, "checker": [
                    {"status": c["status"], "fields": c["fields"], "name": c["entity"]["name"]} for c in ms]}) + "\n")


if __name__ == "__main__":
    main()
