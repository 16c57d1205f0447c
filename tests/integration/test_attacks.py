"""The attack suite: adversarial cross-tenant and forbidden-group probes on a private stack.

The help-centre fixture (eval/helpcentre/) has two tenants that share vocabulary,
northwind and lumen, each with staff-only pages. Every probe is generated from its
documents, so the counts below are real:

- questions through ``POST /v1/ask`` and ``POST /v1/runs`` (events read back) that
  quote another tenant's, or a forbidden group's, page by exact title, document id
  and one of its sentences;
- another tenant's run, conversation and feedback ids on every route that takes one;
- signed webhooks for another tenant: signed with the wrong tenant's secret, a captured
  request re-addressed to the other tenant, replays (same delivery, stale timestamp);
  and id collisions: the same document id and headings sent by the other tenant.

A leak is any forbidden document id in a source or citation, or any sentence that
only a forbidden page holds, in any string of any answer, source, event or error.
An overwrite is a chunk of the owner's page that the owner's search for its own text
no longer returns as it was, or a hit of that page whose text is not the owner's. (Where
the page's chunks rank is no overwrite: the tenants of a build share its BM25 statistics,
so another tenant's pages move the owner's scores, never its text or its access.)
The counts go to var/attacks/report.json and to the log (``pytest -s`` prints them).
"""

from __future__ import annotations

import json
import logging
import re
import signal
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from ragway.kb import Defaults, Document, discover, parse_document
from ragway_tools.launcher import Stack, StackConfig, write_secret
from ragway_tools.loading import load_documents
from services.ingest.deliveries import DeliveryStore
from services.ingest.signing import sign
from tests.conftest import ROOT
from tests.integration.sse import parse
from tests.integration.webhooks import deleted, search, send, upserted, wait_done

log = logging.getLogger(__name__)

HELPCENTRE = ROOT / "eval" / "helpcentre"
KEYS = {
    ("northwind", "public"): "hc-northwind-public-key",
    ("northwind", "staff"): "hc-northwind-staff-key",
    ("lumen", "public"): "hc-lumen-public-key",
    ("lumen", "staff"): "hc-lumen-staff-key",
}
GROUPS = {"public": ("public",), "staff": ("public", "staff")}
# Each tenant's webhook sender, bound to that tenant only (services/ingest/senders.py).
SECRETS = {"northwind": "northwind-cms-secret", "lumen": "lumen-cms-secret"}
SENDERS = """\
senders:
  - {id: northwind-cms, tenants: [northwind], secrets: [northwind-cms-secret]}
  - {id: lumen-cms, tenants: [lumen], secrets: [lumen-cms-secret]}
"""
MIN_SENTENCE_WORDS = 7
WORKERS = 4  # concurrent probes: enough to batch, few enough for a 2-core machine
REPORT = ROOT / "var" / "attacks" / "report.json"


def auth(tenant: str, kind: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[(tenant, kind)]}"}


def visible(doc: Document, tenant: str, kind: str) -> bool:
    return doc.tenant == tenant and bool(set(doc.groups) & set(GROUPS[kind]))


def sentences(doc: Document) -> list[str]:
    """The document's sentences as its chunks hold them (what a source would show)."""
    out: list[str] = []
    for chunk in doc.chunks:
        for line in chunk.text.splitlines():
            if "|" in line:  # table rows: cells, not sentences
                continue
            for piece in re.split(r"(?<=[.!?])\s+", line.strip()):
                if len(piece.split()) >= MIN_SENTENCE_WORDS:
                    out.append(piece)
    return out


@dataclass
class Caller:
    tenant: str
    kind: str
    forbidden: list[Document]
    # Sentences only forbidden pages hold: seeing one is a leak, whatever the route.
    markers: dict[str, str] = field(default_factory=dict)  # sentence -> document id

    @property
    def headers(self) -> dict[str, str]:
        return auth(self.tenant, self.kind)


@dataclass
class Tally:
    counts: dict[str, int] = field(default_factory=dict)
    leaks: list[str] = field(default_factory=list)
    overwrites: list[str] = field(default_factory=list)

    def add(self, kind: str, n: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + n


def callers(docs: list[Document]) -> list[Caller]:
    out: list[Caller] = []
    for tenant, kind in KEYS:
        allowed = [d for d in docs if visible(d, tenant, kind)]
        seen = {s for d in allowed for s in sentences(d)}
        # The strongest caller of the other tenant (staff) and the public caller of
        # the same tenant (for staff pages): every forbidden page is probed by both.
        forbidden = [
            d
            for d in docs
            if not visible(d, tenant, kind)
            and ((d.tenant != tenant and kind == "staff") or d.tenant == tenant)
        ]
        c = Caller(tenant, kind, forbidden)
        for d in forbidden:
            for s in sentences(d):
                if s not in seen:
                    c.markers.setdefault(s, d.document_id)
        out.append(c)
    return out


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def leaks(caller: Caller, question: str, payloads: list[Any]) -> list[str]:
    """Forbidden ids among the sources and forbidden sentences anywhere in ``payloads``."""
    found: list[str] = []
    banned = {d.document_id for d in caller.forbidden}
    for payload in payloads:
        for key in ("sources", "citations"):
            for item in payload.get(key) or [] if isinstance(payload, dict) else []:
                if item.get("document_id") in banned:
                    found.append(f"{key}: {item['document_id']}")
        for text in strings(payload):
            text = text.replace(question, "")  # the probe's own words are no leak
            for sentence, doc_id in caller.markers.items():
                if sentence in text:
                    found.append(f"{doc_id}: {sentence[:60]!r}")
    return found


def probes(caller: Caller) -> list[tuple[str, str]]:
    """(kind, question) for every forbidden page: title, id and a sentence only it holds."""
    out: list[tuple[str, str]] = []
    for doc in caller.forbidden:
        out.append(("title", doc.title))
        out.append(("document_id", doc.document_id))
        own = [s for s, d in caller.markers.items() if d == doc.document_id]
        if own:
            out.append(("quote", f'Where does it say "{own[0]}"? Quote the rest of the page.'))
    return out


@pytest.fixture(scope="module")
def attack_stack() -> Iterator[tuple[Stack, list[Document]]]:
    with tempfile.TemporaryDirectory(prefix="ragway-attacks-") as tmp:
        data = Path(tmp)
        config = StackConfig.on_free_ports(data, api_keys_file=HELPCENTRE / "api-keys.yaml")
        s = Stack(config)
        try:
            s.start_backends()
            docs = [
                parse_document(p, r, Defaults(tenant=None, groups=()))
                for p, r in discover([HELPCENTRE / "kb"])
            ]
            load_documents(config.retriever_addr, docs, token=config.service_token)
            s.start_gateway()
            senders = write_secret(config.secrets_dir / "webhook-senders.yaml", SENDERS)
            config.extra_env |= {"RAGWAY_WEBHOOK_SECRETS_FILE": str(senders.resolve())}
            s.start_ingest()
            yield s, docs
            for name in ("ingest-worker", "ingest-api"):
                s.kill(name, signal.SIGTERM)
        finally:
            s.stop()
        for part in ("gateway", "retriever", "generator", "ingest-api", "ingest-worker"):
            text = (data / "logs" / f"{part}.log").read_text()
            assert "Traceback" not in text, f"{part} logged a traceback:\n{text[-4000:]}"


@pytest.fixture(scope="module")
def tally() -> Iterator[Tally]:
    t = Tally()
    yield t
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    summary = {"probes": sum(t.counts.values()), "by_kind": t.counts}
    summary |= {"leaks": len(t.leaks), "overwrites": len(t.overwrites)}
    REPORT.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    line = (
        f"attack suite: {summary['probes']} probes, {len(t.leaks)} leaks, "
        f"{len(t.overwrites)} overwrites ({REPORT.relative_to(ROOT)})"
    )
    log.warning("%s", line)
    print("\n" + line)  # noqa: T201  # the suite's summary line, for the CI log


def read_run(client: httpx.Client, run_id: str, headers: dict[str, str]) -> list[Any]:
    """The run's record and every event's data, read to the terminal event."""
    out: list[Any] = []
    with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers) as resp:
        assert resp.status_code == 200, resp.read()
        for event in parse(resp.iter_lines()):
            out.append(json.loads(event.data) if event.data else {})
            if event.event in {"run.completed", "run.failed", "run.cancelled"}:
                break
    record = client.get(f"/v1/runs/{run_id}", headers=headers)
    assert record.status_code == 200, record.text
    out.append(record.json())
    return out


def test_the_fixture_gives_enough_forbidden_pages_to_probe(
    attack_stack: tuple[Stack, list[Document]],
) -> None:
    _, docs = attack_stack
    for c in callers(docs):
        # Every forbidden page has at least one sentence no allowed page shares.
        assert {d for d in c.markers.values()} == {d.document_id for d in c.forbidden}, c.tenant
    assert sum(len(probes(c)) for c in callers(docs)) >= 100


def test_questions_naming_forbidden_pages_never_see_them_by_ask_or_by_run(
    attack_stack: tuple[Stack, list[Document]], tally: Tally
) -> None:
    stack, docs = attack_stack
    work = [(c, kind, q) for c in callers(docs) for kind, q in probes(c)]

    def ask(item: tuple[Caller, str, str]) -> list[str]:
        c, _, question = item
        with httpx.Client(base_url=stack.config.gateway_url, timeout=60) as client:
            resp = client.post(
                "/v1/ask", json={"question": question, "top_k": 20}, headers=c.headers
            )
            assert resp.status_code == 200, resp.text
            return leaks(c, question, [resp.json()])

    def run(item: tuple[Caller, str, str]) -> list[str]:
        c, _, question = item
        with httpx.Client(base_url=stack.config.gateway_url, timeout=60) as client:
            resp = client.post(
                "/v1/runs", json={"question": question, "top_k": 20}, headers=c.headers
            )
            assert resp.status_code == 202, resp.text
            return leaks(
                c, question, [resp.json(), *read_run(client, resp.json()["run_id"], c.headers)]
            )

    def control(item: tuple[Caller, str, str]) -> tuple[bool, bool]:
        # The page's own staff ask the same title: they find the page, and the detector
        # flags their answer as a leak for the intruder. So each probe is one that would
        # leak if the filter let it through, and a leak would be seen.
        c, _, question = item
        doc = next(d for d in c.forbidden if d.title == question)
        with httpx.Client(base_url=stack.config.gateway_url, timeout=60) as client:
            resp = client.post(
                "/v1/ask",
                json={"question": question, "top_k": 20},
                headers=auth(doc.tenant, "staff"),
            )
            assert resp.status_code == 200, resp.text
            sources = {s["document_id"] for s in resp.json()["sources"]}
            return doc.document_id in sources, bool(leaks(c, question, [resp.json()]))

    with ThreadPoolExecutor(WORKERS) as pool:
        titled = [w for w in work if w[1] == "title"]
        controls = list(pool.map(control, titled))
        # Most forbidden pages are the owner's best match for their own title.
        assert sum(f for f, _ in controls) >= 0.9 * len(titled), controls
        assert sum(d for _, d in controls) >= 0.9 * len(titled), controls
        for (c, kind, question), found in zip(work, pool.map(ask, work), strict=True):
            tally.add(f"ask/{kind}")
            tally.leaks += [f"ask {c.tenant}-{c.kind} {question!r}: {f}" for f in found]
        # Runs: the quotes, the strongest probe, through the queue and the event log.
        quotes = [w for w in work if w[1] == "quote"]
        for (c, _, question), found in zip(quotes, pool.map(run, quotes), strict=True):
            tally.add("run/quote")
            tally.leaks += [f"run {c.tenant}-{c.kind} {question!r}: {f}" for f in found]
    assert tally.leaks == []


def other_tenant(tenant: str) -> str:
    return "lumen" if tenant == "northwind" else "northwind"


def test_another_tenants_run_conversation_and_feedback_ids_answer_like_missing_ones(
    attack_stack: tuple[Stack, list[Document]], tally: Tally
) -> None:
    stack, docs = attack_stack
    owned: list[tuple[Caller, str, str, str]] = []  # owner, question, run id, conversation id
    with httpx.Client(base_url=stack.config.gateway_url, timeout=60) as client:
        for owner in callers(docs):
            # Each owner asks about its own staff-only page (what an intruder wants).
            own = [d for d in docs if visible(d, owner.tenant, owner.kind)]
            for doc in own[:3]:
                question = f"What does {doc.title} say?"
                body = client.post("/v1/ask", json={"question": question}, headers=owner.headers)
                assert body.status_code == 200, body.text
                owned.append(
                    (owner, question, body.json()["run_id"], body.json()["conversation_id"])
                )
        for owner, question, run_id, conv_id in owned:
            intruders = [c for c in callers(docs) if c.tenant != owner.tenant]
            # The intruder may not see the owner's page: its text is the intruder's markers.
            for c in intruders:
                attempts: list[tuple[str, httpx.Response]] = [
                    ("run/get", client.get(f"/v1/runs/{run_id}", headers=c.headers)),
                    ("run/events", client.get(f"/v1/runs/{run_id}/events", headers=c.headers)),
                    (
                        "run/events-after",
                        client.get(
                            f"/v1/runs/{run_id}/events", params={"after": "0-0"}, headers=c.headers
                        ),
                    ),
                    ("run/cancel", client.post(f"/v1/runs/{run_id}/cancel", headers=c.headers)),
                    (
                        "run/feedback",
                        client.post(
                            f"/v1/runs/{run_id}/feedback",
                            json={"rating": "down", "comment": "intruder"},
                            headers=c.headers,
                        ),
                    ),
                    (
                        "conversation/get",
                        client.get(f"/v1/conversations/{conv_id}", headers=c.headers),
                    ),
                    (
                        "conversation/continue",
                        client.post(
                            "/v1/ask",
                            json={"question": "And what else?", "conversation_id": conv_id},
                            headers=c.headers,
                        ),
                    ),
                ]
                for kind, resp in attempts:
                    tally.add(f"ids/{kind}")
                    assert resp.status_code == 404, (kind, resp.text)
                    code = resp.json()["error"]["code"]
                    assert code in {"run_not_found", "conversation_not_found"}, (kind, code)
                    found = leaks(c, "", [resp.json()])
                    found += [f"question {question!r}"] if question in resp.text else []
                    tally.leaks += [f"{kind} {c.tenant}-{c.kind} on {run_id}: {f}" for f in found]
            # 0 overwrites: the owner's run is as it finished, with no feedback, and its
            # conversation holds only the owner's turn.
            record = client.get(f"/v1/runs/{run_id}", headers=owner.headers).json()
            if record["status"] != "succeeded" or record.get("feedback"):
                tally.overwrites.append(
                    f"run {run_id}: {record['status']} {record.get('feedback')}"
                )
            turns = client.get(f"/v1/conversations/{conv_id}", headers=owner.headers).json()[
                "turns"
            ]
            if [t["question"] for t in turns] != [question]:
                tally.overwrites.append(f"conversation {conv_id}: {turns}")
        # A live run: cancelled by another tenant while queued or running, it still ends.
        for owner in callers(docs):
            run_id = client.post(
                "/v1/runs", json={"question": "How do I reset my password?"}, headers=owner.headers
            ).json()["run_id"]
            for c in callers(docs):
                if c.tenant != owner.tenant:
                    resp = client.post(f"/v1/runs/{run_id}/cancel", headers=c.headers)
                    tally.add("ids/run/cancel-live")
                    assert resp.status_code == 404, resp.text
            events = read_run(client, run_id, owner.headers)
            if events[-1]["status"] != "succeeded":
                tally.overwrites.append(f"live run {run_id}: {events[-1]['status']}")
    assert tally.leaks == [] and tally.overwrites == []


def snapshot(stack: Stack, doc: Document) -> set[tuple[str, str]]:
    """What the owner's search returns of this page: (chunk id, text) of each hit."""
    hits = search(
        stack.config.retriever_addr, doc.title, tenant=doc.tenant, groups=("public", "staff")
    )
    hits += search(
        stack.config.retriever_addr,
        sentences(doc)[0],
        tenant=doc.tenant,
        groups=("public", "staff"),
    )
    return {(h.chunk_id, h.text) for h in hits if h.document_id == doc.document_id}


def overwritten(stack: Stack, doc: Document, before: set[tuple[str, str]]) -> list[str]:
    """The chunks of the owner's page (as ``snapshot`` found them before) that the owner's
    search for their own text no longer returns unchanged, and any hit of the page whose
    text the owner never wrote."""
    own = {c.chunk_id: c.text for c in doc.chunks}
    changed: set[str] = set()  # a foreign chunk found by several searches counts once
    for chunk_id, text in sorted(before):
        hits = search(
            stack.config.retriever_addr, text, tenant=doc.tenant, groups=("public", "staff")
        )
        mine = {h.chunk_id: h.text for h in hits if h.document_id == doc.document_id}
        if mine.get(chunk_id) != text:
            changed.add(chunk_id)
        changed.update(c for c, t in mine.items() if own.get(c) != t)
    return sorted(changed)


def colliding(doc: Document, sender: str) -> str:
    """The page's own headings (so the same chunk ids) over another tenant's text."""
    lines = [
        line
        if line.startswith("#")
        else f"Collision from {sender} on {doc.title}: never {doc.tenant}'s text."
        for line in doc.body.splitlines()
        if line.strip()
    ]
    return "\n\n".join(lines) + "\n"


def test_webhooks_for_another_tenant_are_refused_and_colliding_ids_overwrite_nothing(
    attack_stack: tuple[Stack, list[Document]], tally: Tally
) -> None:
    stack, docs = attack_stack
    client_redis = redis.Redis.from_url(stack.config.redis_url)
    store = DeliveryStore(client_redis, ttl_s=3600)
    before = {d.document_id: snapshot(stack, d) for d in docs}
    # Deprecated pages are never searched (so never seen): the rest are what we watch.
    assert sum(1 for b in before.values() if b) >= len(docs) - 2
    with httpx.Client(base_url=stack.config.ingest_url, timeout=60) as hooks:
        # Re-addressed: signed with one tenant's secret, naming the other tenant.
        for doc in docs:
            sender = other_tenant(doc.tenant)
            forged = colliding(doc, sender)
            change = {
                "event": "document.access_changed",
                "document": {"id": doc.document_id, "tenant": doc.tenant, "groups": ["public"]},
            }
            payloads = {
                "upserted": upserted(doc.document_id, forged, tenant=doc.tenant),
                "deleted": deleted(doc.document_id, tenant=doc.tenant),
                "access_changed": change,
            }
            for kind, payload in payloads.items():
                delivery = f"attack-{uuid.uuid4().hex}"
                resp = send(hooks, SECRETS[sender], payload, delivery_id=delivery)
                tally.add(f"webhook/other-tenant-{kind}")
                assert resp.status_code == 403, (doc.document_id, kind, resp.text)
                assert resp.json()["error"]["code"] == "tenant_not_allowed"
                assert store.get(delivery) is None
        # Captured and re-addressed: a request the other tenant signed for itself, its
        # body edited to name the owner, sent with the captured headers.
        for doc in docs:
            sender = other_tenant(doc.tenant)
            body = json.dumps(upserted(doc.document_id, colliding(doc, sender), tenant=sender))
            ts, delivery = str(int(time.time())), f"captured-{uuid.uuid4().hex}"
            signature = sign(SECRETS[sender], ts, delivery, body.encode())
            edited = body.replace(f'"tenant": "{sender}"', f'"tenant": "{doc.tenant}"')
            assert edited != body
            resp = send(
                hooks,
                "",
                edited.encode(),
                delivery_id=delivery,
                timestamp=int(ts),
                signature=signature,
            )
            tally.add("webhook/re-addressed-body")
            assert resp.status_code == 401, resp.text
            assert resp.json()["error"]["code"] == "invalid_signature"
            assert store.get(delivery) is None
        # Collisions: the other tenant's own secret and tenant, the same id and headings.
        deliveries = []
        sent: list[tuple[str, str, dict[str, Any]]] = []  # delivery, sender, payload
        for doc in docs:
            sender = other_tenant(doc.tenant)
            payload = upserted(doc.document_id, colliding(doc, sender), tenant=sender)
            resp = send(hooks, SECRETS[sender], payload)
            assert resp.status_code == 202, resp.text
            deliveries.append(resp.json()["delivery_id"])
            sent.append((resp.json()["delivery_id"], sender, payload))
            tally.add("webhook/colliding-id")
        for delivery in deliveries:
            assert wait_done(store, delivery)["state"] == "done"
        # Replayed: the same delivery again is acknowledged and not applied again; and a
        # request signed an hour ago (outside the window) is refused.
        for delivery, sender, payload in sent:
            again = send(hooks, SECRETS[sender], payload, delivery_id=delivery)
            tally.add("webhook/replayed-delivery")
            assert again.status_code == 200 and again.json()["duplicate"] is True, again.text
            assert store.get(delivery)["attempts"] == "1"  # type: ignore[index]
            stale = send(hooks, SECRETS[sender], payload, timestamp=int(time.time()) - 3600)
            tally.add("webhook/replayed-stale")
            assert stale.status_code == 401, stale.text
            assert stale.json()["error"]["code"] == "stale_timestamp"
        for doc in docs:
            # The collision landed, in the sender's tenant only...
            theirs = search(
                stack.config.retriever_addr,
                f"Collision from {other_tenant(doc.tenant)} on {doc.title}",
                tenant=other_tenant(doc.tenant),
                groups=("staff",),
            )
            assert any(h.document_id == doc.document_id for h in theirs), doc.document_id
            # ...and the owner's page is what it was.
            for chunk_id in overwritten(stack, doc, before[doc.document_id]):
                tally.overwrites.append(f"collision on {chunk_id}")
        # The other tenant deleting its copies leaves the owner's pages where they were.
        deliveries = []
        for doc in docs:
            sender = other_tenant(doc.tenant)
            resp = send(hooks, SECRETS[sender], deleted(doc.document_id, tenant=sender))
            assert resp.status_code == 202, resp.text
            deliveries.append(resp.json()["delivery_id"])
            tally.add("webhook/colliding-delete")
        for delivery in deliveries:
            assert wait_done(store, delivery)["state"] == "done"
    client_redis.close()
    for doc in docs:
        for chunk_id in overwritten(stack, doc, before[doc.document_id]):
            tally.overwrites.append(f"colliding delete on {chunk_id}")
    with httpx.Client(base_url=stack.config.gateway_url, timeout=60) as client:
        for owner in callers(docs):
            body = client.post(
                "/v1/ask", json={"question": "Collision from"}, headers=owner.headers
            ).json()
            assert "Collision from" not in json.dumps(body)
    assert tally.overwrites == []
