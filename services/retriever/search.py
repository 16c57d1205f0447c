"""The search pipeline: sparse ∥ dense → RRF → rerank, each stage inside its budget.

    query ─┬─ embed ▸ dense search ─┐
           └─ sparse search ────────┴─ RRF ▸ rerank (top rerank_depth) ▸ top_k
                                        ▲
               their candidates ranked by best stored unit vector (hybrid only)

A text embedded by an earlier search is not embedded again: its vector is kept in
memory (``services/retriever/query_vectors.py``), and the embed stage is a lookup.

A question with several parts ("How many seats does Business include and how
long is the trash kept?", ``ragway.question.parts``) is also searched part by
part, and every part's lists join the fusion: each part's best passages reach
the context even when the parts live in different documents.

Stages run in a thread pool (the engines release the GIL). A stage that misses
its deadline is dropped, not awaited: dense late → sparse only, sparse late →
dense only, reranker late → fused order. Each drop is reported as a
degradation so the caller can record and announce it.

The reranker is the tenant's own adapted artifact when one is configured
(``ragway train reranker --from-folder``), else the shared one. When fusion is
already confident (its first passage leads by ``skip_margin``), the default
(unforced) rerank is skipped: the cheapest rerank is the one not run. A search
may bring its own weight and skip margin (a canary path rolling out an artifact
with the values fitted for it); otherwise the searcher's settings hold.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from ragway import spelling
from ragway.embedding import Embedder, Vectors
from ragway.question import parts
from ragway.units import plain
from services.retriever import tracing
from services.retriever.catalog import Build
from services.retriever.fusion import reciprocal_rank_fusion, unit_ranking
from services.retriever.model import AccessScope, Candidate, ChunkRecord
from services.retriever.query_vectors import QueryVectorCache
from services.retriever.rerank import Reranker

T = TypeVar("T")


class Mode(StrEnum):
    HYBRID = "hybrid"
    SPARSE = "sparse"
    DENSE = "dense"


class AllRetrieversFailedError(RuntimeError):
    """Neither sparse nor dense search produced a result inside the budget."""


@dataclass(frozen=True, slots=True)
class SearchOptions:
    top_k: int = 8
    candidate_depth: int = 50
    mode: Mode = Mode.HYBRID
    rerank: bool | None = None  # None: rerank when a model is configured
    budget_ms: int = 1000
    # The artifact a search named (SearchRequest.reranker, resolved by the shelf), in
    # place of the tenant's own or the shared default; None: the default.
    reranker: Reranker | None = None
    # This search's blend weight and skip margin (SearchRequest.rerank_weight,
    # .rerank_skip_margin), in place of the searcher's. None here always means "not
    # given": the searcher's setting holds, and for the skip margin that setting may
    # itself be None, never skip. A search that must never skip asks for the rerank
    # (rerank=True), which no margin skips.
    rerank_weight: float | None = None
    skip_margin: float | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.top_k <= 100:
            raise ValueError(f"top_k must be in [1, 100], got {self.top_k}")
        if not self.top_k <= self.candidate_depth <= 1000:
            raise ValueError(
                f"candidate_depth must be in [top_k={self.top_k}, 1000], got {self.candidate_depth}"
            )
        if not 10 <= self.budget_ms <= 60_000:
            raise ValueError(f"budget_ms must be in [10, 60000], got {self.budget_ms}")
        # The comparisons are false for NaN, and infinities lie outside: both refused.
        if self.rerank_weight is not None and not 0.0 <= self.rerank_weight <= 1.0:
            raise ValueError(f"rerank_weight must be in [0, 1], got {self.rerank_weight}")
        if self.skip_margin is not None and not -1.0 <= self.skip_margin <= 1.0:
            raise ValueError(f"rerank_skip_margin must be in [-1, 1], got {self.skip_margin}")
        given = [
            name
            for name, value in (
                ("rerank_weight", self.rerank_weight),
                ("rerank_skip_margin", self.skip_margin),
            )
            if value is not None
        ]
        if given and self.rerank is False:
            raise ValueError(
                f"{' and '.join(given)} given with RERANK_MODE_OFF; give neither or rerank"
            )


@dataclass(slots=True)
class Hit:
    chunk: ChunkRecord
    score: float
    fused: float = 0.0
    sparse: tuple[int, float] | None = None  # (rank, score)
    dense: tuple[int, float] | None = None
    units: tuple[int, float] | None = None  # (rank, best unit's cosine): the unit list
    rerank: float | None = None


@dataclass(slots=True)
class SearchOutcome:
    hits: list[Hit]
    build_id: str
    mode: Mode
    degraded: list[tuple[str, str]] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    # The reranker in force for this search (its artifact id), and what it did:
    # "reranked", "skipped" (fusion was confident), "late" (fused order kept).
    reranker: str | None = None
    rerank_outcome: str | None = None
    # Every text embedded for the dense search, with its vector, and the model's
    # id: the gateway hands them to the generator, which would embed the same
    # question again (SearchRequest.query_vectors).
    query_vectors: dict[str, Vectors] = field(default_factory=dict)
    embedding_model: str = ""


# "see Lumen plans and pricing", "see the Huddle participants column in Plans and
# pricing", "see [Deleted files and the trash](…)": a capitalised name after "see".
_SEE = re.compile(
    r"\bsee\s+(?:the\s+)?\[?([A-Z][^.;:()\[\]\n]{2,80}?)\]?(?:\([^)\s]*\))?\s*(?=[.;,)]|$)",
    re.M,
)
MAX_REFERENCES = 2


def _references(top: Sequence[Hit]) -> list[tuple[int, str]]:
    """(position, named page) of the first references in the top hits."""
    out: list[tuple[int, str]] = []
    for i, hit in enumerate(top):
        # Read as plain text: "see the **Huddle participants** column in
        # [Plans and pricing](https://…)" names its page only without the markup.
        for m in _SEE.finditer(plain(hit.chunk.text)):
            out.append((i, m.group(1).strip()))
            if len(out) == MAX_REFERENCES:
                return out
    return out


def _insert_followed(
    hits: list[Hit],
    references: Sequence[tuple[int, str]],
    followed: Mapping[int, Sequence[ChunkRecord]],
    top_k: int,
) -> list[Hit]:
    """Each reference's best chunk from another document, right after the hit naming it.

    Only a chunk not already in the top ``top_k`` is brought in: one that is there
    needs no help, and the context stays ``top_k`` passages long.
    """
    out = list(hits)
    shift = 0
    for n, (position, _) in enumerate(references):
        source = hits[position].chunk.document_id
        shown = {h.chunk.chunk_id for h in out[:top_k]}
        pick = next(
            (c for c in followed.get(n, ()) if c.document_id != source and c.chunk_id not in shown),
            None,
        )
        if pick is None:
            continue
        out = [h for h in out if h.chunk.chunk_id != pick.chunk_id]
        at = position + shift + 1
        out.insert(at, Hit(chunk=pick, score=out[at - 1].score, fused=out[at - 1].fused))
        shift += 1
    return out


# The fused list of candidates ranked by their best answer unit's cosine.
UNITS_LIST = "units"

# Candidates per list whose words a misspelt question is spelt by.
RESPELL_DEPTH = 30


def _respelt(query: str, lists: Mapping[str, Sequence[Candidate]]) -> str | None:
    """The question with its misspelt words spelt as the candidates spell them, or
    None when it has none (``ragway/spelling.py``; most questions stop at ``suspects``)."""
    if not spelling.suspects(query):
        return None
    chunks = {c.chunk.chunk_id: c.chunk for found in lists.values() for c in found[:RESPELL_DEPTH]}
    texts = [f"{c.title} {c.section} {c.text}" for c in chunks.values()]
    fixed = spelling.repair(query, spelling.vocabulary(texts), joined=spelling.compounds(texts))
    return fixed if fixed.lower() != query.lower() else None


def _stage(list_name: str) -> str:
    """ "sparse.part2" -> ".part2", "dense" -> "": which query a ranked list answers."""
    _, dot, rest = list_name.partition(".")
    return dot + rest


class HybridSearcher:
    def __init__(
        self,
        embedder: Embedder,
        executor: Executor,
        *,
        reranker: Reranker | None = None,
        default_for: Callable[[str], Reranker | None] | None = None,
        rerank_depth: int = 20,
        rrf_k: int = 60,
        skip_margin: float | None = None,
        rerank_weight: float = 1.0,
        unit_fusion: bool = True,
        query_vectors: QueryVectorCache | None = None,
    ) -> None:
        self._embedder = embedder
        # The vectors of texts embedded before (services/retriever/query_vectors.py);
        # None: every text is embedded.
        self._query_vectors = QueryVectorCache(0) if query_vectors is None else query_vectors
        self._unit_fusion = unit_fusion
        self._executor = executor
        # Which reranker a search of a tenant gets when it names none: the server
        # passes its shelf's rule (the tenant's own adapted one, else the shared one),
        # so that rule lives in one place; ``reranker`` alone serves every tenant.
        if default_for is not None and reranker is not None:
            raise ValueError("give reranker or default_for, not both")
        self._default_for = default_for or (lambda _tenant: reranker)
        # Fused top-1 ahead of top-2 by at least this much: rerank skipped (None: never).
        self._skip_margin = skip_margin
        # 1.0: the reranker's order; below, its scores blended with the fused ones.
        self._rerank_weight = rerank_weight
        self._rerank_depth = rerank_depth
        self._rrf_k = rrf_k

    async def search(
        self, build: Build, query: str, scope: AccessScope, options: SearchOptions
    ) -> SearchOutcome:
        attributes: tracing.Attributes = {
            "gen_ai.data_source.id": build.build_id,
            "gen_ai.request.top_k": options.top_k,
            "ragway.build_id": build.build_id,
            "ragway.retrieval.mode": options.mode.value,
            "ragway.retrieval.candidate_depth": options.candidate_depth,
            "ragway.retrieval.budget_ms": options.budget_ms,
            "ragway.fusion.rrf_k": self._rrf_k,
        }
        with tracing.retrieval(attributes) as span:
            outcome = await self._search(build, query, scope, options)
            span.set_attribute("ragway.retrieval.hits", len(outcome.hits))
            if outcome.degraded:
                span.set_attribute("ragway.degraded_stages", [s for s, _ in outcome.degraded])
            return outcome

    async def _search(
        self, build: Build, query: str, scope: AccessScope, options: SearchOptions
    ) -> SearchOutcome:
        started = time.perf_counter()
        deadline = started + options.budget_ms / 1000
        outcome = SearchOutcome(
            hits=[],
            build_id=build.build_id,
            mode=options.mode,
            embedding_model=self._embedder.model_id,
        )
        # Written from the pool's threads, where a stage that missed its deadline
        # may still finish after this search returned: the outcome gets copies.
        timings: dict[str, float] = {}
        embedded: dict[str, Vectors] = {}
        depth = options.candidate_depth
        stages = tracing.Stages()

        def timed(stage: str, fn: Callable[[], T]) -> Callable[[], T]:
            def run() -> T:
                t0 = time.perf_counter()
                try:
                    return fn()
                finally:
                    timings[stage] = (time.perf_counter() - t0) * 1000

            return run

        def embed(text: str, part: str) -> Vectors:
            model = self._embedder.model_id
            attributes = tracing.embeddings_attributes(model, part)
            with stages.span(f"embeddings {model}", attributes) as s:
                # A vector kept from an earlier search: the span (and the stage's
                # timing) is then the lookup's, and says so.
                vector, cached = self._query_vectors.vector(self._embedder, text)
                s.set_attribute("ragway.embeddings.cached", cached)
                s.set_attribute("gen_ai.embeddings.dimension.count", int(vector.shape[0]))
            embedded[text] = vector
            return vector

        def searched(
            name: str, part: str, fn: Callable[[], list[Candidate]]
        ) -> Callable[[], list[Candidate]]:
            def run() -> list[Candidate]:
                with stages.span(f"ragway.{name}", tracing.part_attributes(part)) as s:
                    found = fn()
                    s.set_attribute("ragway.candidates", len(found))
                    return found

            return run

        def dense_path(text: str, stage: str) -> Callable[[], list[Candidate]]:
            def run() -> list[Candidate]:
                vector = timed(f"embed{stage}", lambda: embed(text, stage.lstrip(".")))()
                return timed(
                    f"dense{stage}",
                    searched(
                        "dense",
                        stage.lstrip("."),
                        lambda: build.dense.search(vector.tolist(), scope, depth),
                    ),
                )()

            return run

        def sparse_path(text: str, stage: str) -> Callable[[], list[Candidate]]:
            return timed(
                f"sparse{stage}",
                searched(
                    "sparse", stage.lstrip("."), lambda: build.sparse.search(text, scope, depth)
                ),
            )

        # The whole question, then each of its parts when it has several.
        queries = [("", query)]
        question_parts = parts(query)
        if len(question_parts) > 1:
            queries += [(f".part{n}", p.text) for n, p in enumerate(question_parts, start=1)]

        # Retrieval may use 60 % of the budget; the rest is the reranker's.
        retrieval_deadline = started + 0.6 * options.budget_ms / 1000
        loop = asyncio.get_running_loop()

        def submit(text: str, stage: str) -> dict[str, asyncio.Future[list[Candidate]]]:
            """The retrievers the mode asks for, on the executor, keyed by list name."""
            futures: dict[str, asyncio.Future[list[Candidate]]] = {}
            if options.mode in (Mode.HYBRID, Mode.SPARSE):
                futures[f"sparse{stage}"] = loop.run_in_executor(
                    self._executor, sparse_path(text, stage)
                )
            if options.mode in (Mode.HYBRID, Mode.DENSE):
                futures[f"dense{stage}"] = loop.run_in_executor(
                    self._executor, dense_path(text, stage)
                )
            return futures

        async def collect(
            futures: Mapping[str, asyncio.Future[list[Candidate]]], missed: Callable[[str], str]
        ) -> dict[str, list[Candidate]]:
            """The lists that arrive before the retrieval deadline; the others degrade."""
            arrived: dict[str, list[Candidate]] = {}
            for name, fut in futures.items():
                try:
                    arrived[name] = await asyncio.wait_for(
                        asyncio.shield(fut),
                        timeout=max(0.0, retrieval_deadline - time.perf_counter()),
                    )
                except TimeoutError:
                    outcome.degraded.append((name, missed(name)))
            return arrived

        pending: dict[str, asyncio.Future[list[Candidate]]] = {}
        for stage, text in queries:
            pending |= submit(text, stage)
        budget = f"{0.6 * options.budget_ms:.0f} ms"
        lists = await collect(pending, lambda name: f"{name} search missed its {budget} deadline")
        if not lists:
            raise AllRetrieversFailedError(f"no retriever answered within {budget}")

        # A misspelt word ("a disabeld api key") matches nothing in BM25 and blurs the
        # embedding. Spelt as the candidates found so far spell it (all inside the
        # caller's scope), the question is searched again and both fused.
        respelt = _respelt(query, lists)
        if respelt is not None and time.perf_counter() < retrieval_deadline:
            lists |= await collect(
                submit(respelt, "_respelt"), lambda _: "the respelt search missed the deadline"
            )

        t0 = time.perf_counter()
        with stages.span("ragway.fuse", {"ragway.fusion.rrf_k": self._rrf_k}) as span:
            # A hybrid search also ranks its candidates by their best answer unit
            # (services/retriever/fusion.py:unit_ranking); single-retriever modes
            # stay what they say, the baselines of `ragway eval retrieval`.
            vectors = (
                {stage: embedded[text] for stage, text in queries if text in embedded}
                if self._unit_fusion and options.mode is Mode.HYBRID
                else {}
            )
            hits = self._fuse(lists, [stage for stage, _ in queries], vectors)
            span.set_attribute("ragway.fusion.lists", len(lists) + len(vectors))
            span.set_attribute("ragway.candidates", len(hits))
        timings["fuse"] = (time.perf_counter() - t0) * 1000

        # A passage that sends the reader elsewhere ("see the Huddle participants
        # column in Plans and pricing") brings the page it names: the fact is there.
        references = _references(hits[: options.top_k])
        if references and time.perf_counter() < retrieval_deadline:
            t0 = time.perf_counter()
            waits = [
                submit(f"{query} {phrase}", f".see{n + 1}")
                for n, (_, phrase) in enumerate(references)
            ]
            followed: dict[int, list[ChunkRecord]] = {}
            for n, futures in enumerate(waits):
                ranked = await collect(
                    futures, lambda _: "a followed reference missed the retrieval deadline"
                )
                followed[n] = [f.chunk for f in reciprocal_rank_fusion(ranked, k=self._rrf_k)]
            hits = _insert_followed(hits, references, followed, options.top_k)
            timings["references"] = (time.perf_counter() - t0) * 1000

        hits = await self._rerank(query, hits, options, deadline, outcome, scope.tenant)
        outcome.hits = hits[: options.top_k]
        timings["total"] = (time.perf_counter() - started) * 1000
        outcome.timings_ms = {**timings, **outcome.timings_ms}  # the rerank's, on the loop
        outcome.query_vectors = dict(embedded)
        return outcome

    def _fuse(
        self,
        lists: dict[str, list[Candidate]],
        parts_in_order: list[str],
        vectors: Mapping[str, Vectors],
    ) -> list[Hit]:
        # Each query's sparse and dense lists are fused on their own; a multi-part
        # question's rankings are then interleaved (whole, part 1, part 2, part 1,
        # part 2, …), so every part's best passages are near the top. Fusing all the lists
        # at once would favour passages vaguely related to several parts over the
        # one passage that answers a part. Where a query has its vector here, its
        # candidates ranked by their best answer unit are one more list of its fusion.
        rankings = []
        decoded: dict[str, Vectors] = {}  # each chunk's unit vectors, read once per search
        for stage in parts_in_order:
            ranked = {
                name.removesuffix(stage): c for name, c in lists.items() if _stage(name) == stage
            }
            vector = vectors.get(stage)
            if vector is not None:
                ranked[UNITS_LIST] = unit_ranking(ranked, vector, decoded)
            rankings.append(reciprocal_rank_fusion(ranked, k=self._rrf_k))
        hits: list[Hit] = []
        seen: set[str] = set()
        # Each ranking gives its best passage not yet taken, in turn: a part whose
        # best passages the whole question already took still gets its next one,
        # rather than losing its turn to a duplicate.
        cursors = [0] * len(rankings)
        # After its first turn the whole question waits until the parts run dry: its
        # lower hits are vaguely related to several parts, and a part's second or third
        # passage is the likelier home of that part's answer.
        whole_waits = len(rankings) > 1
        first_round = True
        while True:
            took = False
            for i, ranking in enumerate(rankings):
                if i == 0 and whole_waits and not first_round:
                    continue
                while cursors[i] < len(ranking) and ranking[cursors[i]].chunk.chunk_id in seen:
                    cursors[i] += 1
                if cursors[i] == len(ranking):
                    continue
                f = ranking[cursors[i]]
                seen.add(f.chunk.chunk_id)
                took = True
                hits.append(
                    Hit(
                        chunk=f.chunk,
                        score=f.fused,
                        fused=f.fused,
                        sparse=f.by_retriever.get("sparse"),
                        dense=f.by_retriever.get("dense"),
                        units=f.by_retriever.get(UNITS_LIST),
                    )
                )
            first_round = False
            if not took:
                if not whole_waits:
                    return hits
                whole_waits = False  # the parts ran dry: the whole question's turn again

    async def _rerank(
        self,
        query: str,
        hits: list[Hit],
        options: SearchOptions,
        deadline: float,
        outcome: SearchOutcome,
        tenant: str,
    ) -> list[Hit]:
        reranker = options.reranker or self._default_for(tenant)
        wanted = options.rerank if options.rerank is not None else reranker is not None
        if not wanted or not hits:
            return hits
        if reranker is None:
            outcome.degraded.append(("rerank", "no reranker model is configured; fused order kept"))
            return hits
        outcome.reranker = reranker.model_id
        if options.rerank is None and self._confident(hits, options):
            # Only the server default skips: an explicit RERANK_MODE_ON always reranks.
            outcome.rerank_outcome = "skipped"
            return hits
        head, tail = hits[: self._rerank_depth], hits[self._rerank_depth :]
        t0 = time.perf_counter()
        attributes: tracing.Attributes = {
            "ragway.rerank.depth": self._rerank_depth,
            "ragway.rerank.model": reranker.model_id,
            "ragway.candidates": len(head),
        }
        with tracing.tracer.start_as_current_span("ragway.rerank", attributes=attributes) as span:
            fut = asyncio.get_running_loop().run_in_executor(
                self._executor, reranker.score, query, [h.chunk.embedding_text for h in head]
            )
            try:
                scores = await asyncio.wait_for(
                    fut, timeout=max(0.0, deadline - time.perf_counter())
                )
            except TimeoutError:
                late = "reranker missed its deadline; fused order kept"
                outcome.degraded.append(("rerank", late))
                outcome.rerank_outcome = "late"
                span.set_attribute("ragway.degraded", True)
                return hits
            finally:
                outcome.timings_ms["rerank"] = (time.perf_counter() - t0) * 1000
        # Fusion's say is its order (a multi-part question's lists are interleaved,
        # so the order is not the fused scores' order): first = 1, last = 0.
        weight = self._rerank_weight if options.rerank_weight is None else options.rerank_weight
        blended = blend([-float(i) for i in range(len(head))], scores, weight)
        for hit, score, final in zip(head, scores, blended, strict=True):
            hit.rerank = score
            hit.score = final
        head.sort(key=lambda h: -h.score)
        outcome.rerank_outcome = "reranked"
        return head + tail

    def _confident(self, hits: list[Hit], options: SearchOptions) -> bool:
        """Fusion is sure of its first passage: the skip rule (``fusion_margin``), at the
        search's own margin when it gives one, else at the searcher's (None: never)."""
        margin = self._skip_margin if options.skip_margin is None else options.skip_margin
        if margin is None:
            return False
        return fusion_margin(hits) >= margin


def blend(fused: Sequence[float], rerank: Sequence[float], weight: float) -> list[float]:
    """``weight`` x reranker + (1 - weight) x fused, each min-max scaled over the head.

    ``fused`` is any score that orders the head as fusion did (the retriever
    passes minus the fused position).

    A reranker adapted in minutes knows less than fusion does about most
    questions and more about some; the weight (fit on a tuning QA set, see
    ``ragway eval qa-retrieval --fit-weight``) lets fusion keep its say. At 1.0
    the scores are the reranker's own, as before.
    """
    if weight >= 1.0:
        return list(rerank)
    return [
        weight * r + (1 - weight) * f for f, r in zip(_scaled(fused), _scaled(rerank), strict=True)
    ]


def _scaled(values: Sequence[float]) -> list[float]:
    low, high = min(values, default=0.0), max(values, default=0.0)
    if high <= low:
        return [0.0 for _ in values]
    return [(v - low) / (high - low) for v in values]


def fusion_margin(hits: Sequence[Hit]) -> float:
    """How far the fused first passage leads the second (RRF score units).

    ``ragway eval qa-retrieval`` fits the skip threshold on this quantity from a
    tuning QA set (``ragway_tools/evaluation/qa_retrieval.py``).
    """
    if len(hits) < 2:
        return float("inf")
    return hits[0].fused - hits[1].fused
