#!/usr/bin/env python3
"""Sanity checks for a help-centre style QA fixture (no ragway code involved).

Usage: check.py [FIXTURE_DIR]. Without an argument it checks the fixture it sits in
(eval/helpcentre); e.g. ``python3 eval/helpcentre/check.py eval/supportdesk`` checks
another fixture laid out the same way (kb/<tenant>/*.md, api-keys.yaml,
qa-tuning.yaml, qa-heldout.yaml).
"""

import collections, glob, hashlib, os, re, sys
import yaml

HERE = (
    os.path.abspath(sys.argv[1])
    if len(sys.argv) > 1
    else os.path.dirname(os.path.abspath(__file__))
)
norm = lambda s: re.sub(r"\s+", " ", s).strip().lower()
errors = []

docs = {}  # document_id -> (front matter, normalised body)
for path in sorted(glob.glob(os.path.join(HERE, "kb", "*", "*.md"))):
    text = open(path, encoding="utf-8").read()
    _, fm, body = text.split("---\n", 2)
    meta = yaml.safe_load(fm)
    for k in ("title", "document_id", "url", "version", "tenant", "groups"):
        if k not in meta:
            errors.append(f"{path}: missing {k}")
    if meta["document_id"] in docs:
        errors.append(f"duplicate document_id {meta['document_id']}")
    if not meta["document_id"].startswith(meta["tenant"] + "/"):
        errors.append(f"{path}: document_id/tenant mismatch")
    words = len(body.split())
    if not 150 <= words <= 900:
        errors.append(f"{path}: {words} words")
    docs[meta["document_id"]] = (meta, norm(body))
deprecated = {d for d, (m, _) in docs.items() if m.get("status") == "deprecated"}

keys = yaml.safe_load(open(os.path.join(HERE, "api-keys.yaml")))["keys"]
by_hash = {k["sha256"]: k for k in keys}
used_keys = set()


def check_callers(name, callers):
    """Every caller's plain key hashes to a key of the caller's tenant, with the
    staff group exactly when the caller is a -staff caller."""
    for caller, plain in callers.items():
        k = by_hash.get(hashlib.sha256(plain.encode()).hexdigest())
        if k is None:
            errors.append(f"{name}: caller {caller}: sha256 of its key is not in api-keys.yaml")
            continue
        used_keys.add(k["id"])
        if k["tenant"] != caller.split("-")[0]:
            errors.append(f"{name}: caller {caller}: key {k['id']} is for tenant {k['tenant']}")
        if ("staff" in k["groups"]) != caller.endswith("-staff"):
            errors.append(f"{name}: caller {caller}: key {k['id']} has groups {k['groups']}")


def check_fact(item_id, fact, sources):
    for s in sources:
        if s not in docs:
            errors.append(f"{item_id}: unknown source {s}")
        elif s in deprecated:
            errors.append(f"{item_id}: gold source {s} is deprecated")
    alts = fact if isinstance(fact, list) else [fact]
    if not any(norm(a) in docs[s][1] for a in alts for s in sources if s in docs):
        errors.append(f"{item_id}: fact {fact!r} not found in {sources}")


ids, counts = set(), {}
for name in ("qa-tuning.yaml", "qa-heldout.yaml"):
    data = yaml.safe_load(open(os.path.join(HERE, name), encoding="utf-8"))
    callers = data["callers"]
    check_callers(name, callers)
    for d in data["deprecated_documents"]:
        if d not in deprecated:
            errors.append(f"{name}: {d} is not a deprecated page")
    c = counts[name] = collections.Counter()
    for it in data["items"]:
        iid = it["id"]
        if iid in ids:
            errors.append(f"duplicate id {iid}")
        ids.add(iid)
        c[it["segment"]] += 1
        if it["caller"] not in callers:
            errors.append(f"{iid}: unknown caller")
        tenant = it["caller"].split("-")[0]
        if "parts" in it:
            srcs = set()
            for p in it["parts"]:
                check_fact(iid, p["fact"], p["sources"])
                srcs.add(tuple(p["sources"]))
                if any(not s.startswith(tenant + "/") for s in p["sources"]):
                    errors.append(f"{iid}: part source from another tenant")
            if len(srcs) < 2:
                errors.append(f"{iid}: multi-part needs different documents")
            continue
        if it["fact"] is None:
            continue
        check_fact(iid, it["fact"], it["sources"])
        if any(not s.startswith(tenant + "/") for s in it["sources"]):
            errors.append(f"{iid}: source from another tenant")
        if it["caller"] == tenant:  # public caller must not need staff pages
            for s in it["sources"]:
                if (
                    s in docs
                    and "staff" in docs[s][0]["groups"]
                    and "public" not in docs[s][0]["groups"]
                ):
                    errors.append(f"{iid}: public caller with staff-only source")
        if "trap" in it:
            if not any(norm(it["trap"]) in docs[d][1] for d in deprecated):
                errors.append(f"{iid}: trap {it['trap']!r} not in a deprecated page")
            tr = re.compile(r"(?<![\w.,$])" + re.escape(norm(it["trap"])) + r"(?![\w,]|\.\d)")
            if any(tr.search(docs[s][1]) for s in it["sources"]):
                print(f"warning: {iid}: trap {it['trap']!r} also occurs in a current gold page")
        if "forbidden_text" in it and not any(
            norm(it["forbidden_text"]) in docs[s][1] for s in it["sources"]
        ):
            errors.append(f"{iid}: forbidden_text not on its gold page")

for k in keys:
    if k["id"] not in used_keys:
        errors.append(f"api key {k['id']}: no caller's key hashes to it")

segs = sorted(set().union(*counts.values()))
print(f"{'segment':18}{'tuning':>8}{'heldout':>9}{'total':>7}")
for s in segs:
    a, b = counts["qa-tuning.yaml"][s], counts["qa-heldout.yaml"][s]
    print(f"{s:18}{a:8}{b:9}{a + b:7}")
ta, tb = sum(counts["qa-tuning.yaml"].values()), sum(counts["qa-heldout.yaml"].values())
print(f"{'TOTAL':18}{ta:8}{tb:9}{ta + tb:7}")
print(
    f"documents: {len(docs)} ({collections.Counter(d.split('/')[0] for d in docs)}), deprecated: {sorted(deprecated)}"
)
for e in errors:
    print("ERROR:", e)
sys.exit(1 if errors else 0)
