"""Train the salience classifier and write weights.json.

    .venv/bin/python -m apps.extraction.salience.train [--no-write] [--folds 5]

Data: data/labelled.jsonl (clauses labelled by hand, `durable` true/false) and, when present, clauses derived
from the dev part of the extraction corpus (bench/data/extraction/dev/*.json; held_out/ is never read): each
user clause that the statement path would score is positive when it holds an `expect`/`allow` value of its
conversation (one without a date: the statement path does not resolve dates), negative when it holds none of
`expect`/`allow`/`superseded`/`forgotten`, and left out otherwise.

Both regressions (embedding + hand features, and the lexical fallback) are fitted by Newton's method with an L2
penalty and balanced class weights, so the result depends only on the data. Cross-validation uses folds that
keep each conversation whole (seeded), and prints precision/recall at a few thresholds.
"""

import argparse
import json
import os
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA_DIR = Path(__file__).with_name("data")
LABELLED = DATA_DIR / "labelled.jsonl"
REPO = Path(__file__).resolve().parents[3]
DEV_CORPUS = REPO / "bench" / "data" / "extraction" / "dev"
SEED = 20261123
PENALTIES = (0.03, 0.1, 0.3, 1.0, 3.0)
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)
# The cascade: lexical scores below REJECT_BELOW or from ACCEPT_FROM on are final, the rest are embedded. The
# training prints what the cascade changes at each threshold in cross-validation (it should change nothing).
REJECT_BELOW = 0.1
ACCEPT_FROM = 0.99


@dataclass(frozen=True)
class Example:
    text: str
    durable: bool
    group: str  # examples of one group stay in one fold: a dev conversation, or one hand-written clause
    source: str  # "labelled" | "dev"


def labelled_examples(path: Path = LABELLED) -> list[Example]:
    examples = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            row = json.loads(line)
            examples.append(Example(row["text"], bool(row["durable"]), f"labelled:{number}", "labelled"))
    return examples


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.casefold())


_NUMBER_LIST = re.compile(r"\[\s*((?:-?[\d.e+-]+,\s*)*-?[\d.e+-]+)\s*\]")
_ISO_DATE = re.compile(r"\d{8}")  # "2026-03-14" once reduced to letters and digits


def _parts(item) -> list[str]:
    return [key for key in (_key(part) for part in (item if isinstance(item, list) else [item])) if key]


def dev_examples(directory: Path = DEV_CORPUS) -> list[Example]:
    """Scored-path clauses of the dev corpus, labelled by the values their conversation expects."""
    from apps.extraction.extractors.rules.context import RuleContext
    from apps.extraction.extractors.rules.person import Person
    from apps.extraction.extractors.rules.statements import pending_statement
    from apps.extraction.extractors.rules.text import normalise_text, split_clauses, split_sentences

    if directory.resolve().name != "dev":  # resolved: a link named dev to held_out/ is refused too
        raise ValueError("the salience classifier trains on the dev corpus only")
    ctx = RuleContext(seq=0, role="user", person=Person(), reference=None)
    examples = []
    for path in sorted(directory.glob("*.json")):
        corpus = json.loads(path.read_text(encoding="utf-8"))
        for conversation in corpus["conversations"]:
            # A dated fact ("check-up" on 2026-02-25) needs its date, which the statement path does not resolve:
            # a clause holding it is neither a positive nor a negative for the classifier.
            wanted = {part for key in ("expect", "allow") for item in conversation.get(key, [])
                      if not any(_ISO_DATE.fullmatch(part) for part in _parts(item))
                      for part in _parts(item) if len(part) >= 3}
            mentioned = {part for key in ("expect", "allow", "superseded", "forgotten")
                         for item in conversation.get(key, []) for part in _parts(item)}
            for message in conversation["messages"]:
                if message["role"] != "user":
                    continue
                for line in normalise_text(message["text"]).split("\n"):
                    for sentence in split_sentences(line):
                        for clause in split_clauses(sentence):
                            pending = pending_statement(clause, ctx)
                            if pending is None:
                                continue
                            key = _key(pending.text)
                            if any(part in key for part in wanted):
                                durable = True
                            elif not any(part in key for part in mentioned):
                                durable = False
                            else:
                                continue  # holds part of a fact: neither a clean positive nor a negative
                            examples.append(Example(pending.text, durable, f"dev:{conversation['id']}", "dev"))
    return examples


# --- Logistic regression ------------------------------------------------------------------------------------

def fit(features: np.ndarray, labels: np.ndarray, penalty: float, iterations: int = 25) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression with balanced class weights, by Newton's method: (weights, bias)."""
    rows, columns = features.shape
    design = np.hstack([features, np.ones((rows, 1))])
    positives = labels.sum()
    sample = np.where(labels == 1, rows / (2 * max(positives, 1)), rows / (2 * max(rows - positives, 1)))
    ridge = np.full(columns + 1, penalty)
    ridge[-1] = 1e-6  # the bias is not penalised
    beta = np.zeros(columns + 1)
    for _ in range(iterations):
        probability = predict(design, beta, 0.0)  # the bias is beta's last entry, against the column of ones
        gradient = design.T @ (sample * (probability - labels)) + ridge * beta
        hessian = (design * (sample * probability * (1 - probability))[:, None]).T @ design + np.diag(ridge)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return beta[:-1], float(beta[-1])


def predict(features: np.ndarray, weights: np.ndarray, bias: float) -> np.ndarray:
    from apps.extraction.salience.scorer import sigmoid  # the scorer's own; importing it needs Django set up

    return sigmoid(features @ weights + bias)


def folds(examples: list[Example], count: int) -> list[int]:
    """A fold number per example; whole groups per fold, each label's groups dealt round-robin after a shuffle."""
    groups = sorted({example.group for example in examples})
    random.Random(SEED).shuffle(groups)
    durable_group = {example.group: example.durable for example in examples}
    assigned, dealt = {}, {True: 0, False: 0}
    for group in groups:
        label = durable_group[group]
        assigned[group] = dealt[label] % count
        dealt[label] += 1
    return [assigned[example.group] for example in examples]


def cross_validate(features: np.ndarray, labels: np.ndarray, fold_of: list[int], count: int,
                   penalty: float) -> np.ndarray:
    fold_of = np.asarray(fold_of)
    scores = np.zeros(len(labels))
    for fold in range(count):
        train, test = fold_of != fold, fold_of == fold
        weights, bias = fit(features[train], labels[train], penalty)
        scores[test] = predict(features[test], weights, bias)
    return scores


def metrics(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict:
    kept = scores >= threshold
    true_positive = int((kept & (labels == 1)).sum())
    precision = true_positive / max(int(kept.sum()), 1)
    recall = true_positive / max(int((labels == 1).sum()), 1)
    return {"precision": round(precision, 3), "recall": round(recall, 3),
            "f1": round(2 * precision * recall / max(precision + recall, 1e-9), 3)}


def log_loss(scores: np.ndarray, labels: np.ndarray) -> float:
    scores = np.clip(scores, 1e-6, 1 - 1e-6)
    return float(-np.mean(labels * np.log(scores) + (1 - labels) * np.log(1 - scores)))


def _report(name: str, scores: np.ndarray, labels: np.ndarray, sources: np.ndarray) -> dict:
    summary = {}
    for subset, mask in (("all", np.ones(len(labels), bool)), ("labelled", sources == "labelled"),
                         ("dev", sources == "dev")):
        if not mask.any():
            continue
        rows = {f"{threshold:.1f}": metrics(scores[mask], labels[mask], threshold) for threshold in THRESHOLDS}
        summary[subset] = rows
        cells = "  ".join(f"t={t} P={m['precision']:.2f} R={m['recall']:.2f}" for t, m in rows.items())
        print(f"  {name:8} {subset:9} n={int(mask.sum()):4}  {cells}")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--no-write", action="store_true", help="print the cross-validation only")
    parser.add_argument("--no-dev", action="store_true", help="train on the hand-labelled clauses only")
    parser.add_argument("--dev-dir", type=Path, default=DEV_CORPUS, help="the dev corpus (default: %(default)s)")
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    import django

    django.setup()
    from apps.extraction.salience.features import FEATURE_NAMES
    from apps.extraction.salience.scorer import (
        WEIGHTS_PATH,
        lexical_embedder,
        lexical_vectors,
        local_embed,
        local_embedder,
        model_vectors,
    )

    examples = labelled_examples()
    dev = [] if args.no_dev else dev_examples(args.dev_dir)
    examples += dev
    texts = [example.text for example in examples]
    labels = np.asarray([1.0 if example.durable else 0.0 for example in examples])
    sources = np.asarray([example.source for example in examples])
    print(f"{len(examples)} clauses: {int(labels.sum())} durable, {int(len(labels) - labels.sum())} not "
          f"({len(examples) - len(dev)} hand-labelled, {len(dev)} from {args.dev_dir})")

    matrices = {"model": model_vectors(local_embed(texts), texts), "lexical": lexical_vectors(texts)}
    fold_of = folds(examples, args.folds)
    cv_scores = {}
    result = {"features": list(FEATURE_NAMES), "seed": SEED,
              "data": {"labelled": len(examples) - len(dev), "dev": len(dev), "durable": int(labels.sum()),
                       "not_durable": int(len(labels) - labels.sum())}, "cross_validation": {}}
    for name, matrix in matrices.items():
        losses = {penalty: log_loss(cross_validate(matrix, labels, fold_of, args.folds, penalty), labels)
                  for penalty in PENALTIES}
        penalty = min(PENALTIES, key=lambda value: (losses[value], value))
        print(f"{name}: L2 penalty {penalty} (CV log loss "
              + ", ".join(f"{value}: {loss:.3f}" for value, loss in losses.items()) + ")")
        scores = cv_scores[name] = cross_validate(matrix, labels, fold_of, args.folds, penalty)
        result["cross_validation"][name] = {"penalty": penalty, **_report(name, scores, labels, sources)}
        weights, bias = fit(matrix, labels, penalty)
        result[name] = {"weights": [round(float(value), 6) for value in weights], "bias": round(bias, 6),
                        "penalty": penalty}
    lexical = cv_scores["lexical"]
    decided = (lexical < REJECT_BELOW) | (lexical >= ACCEPT_FROM)
    cascade = np.where(decided, lexical, cv_scores["model"])
    print(f"cascade: lexical below {REJECT_BELOW} or from {ACCEPT_FROM} decides {decided.mean():.0%} of the clauses "
          "without the model")
    result["cascade"] = {"reject_below": REJECT_BELOW, "accept_from": ACCEPT_FROM,
                         "decided_by_lexical": round(float(decided.mean()), 3),
                         **_report("cascade", cascade, labels, sources)}
    for name, embedder in (("model", local_embedder()), ("lexical", lexical_embedder())):
        result[name]["embedding"] = {"model": embedder.model, "dimension": embedder.dimension}
    if not args.no_write:
        text = json.dumps(result, indent=1)
        text = _NUMBER_LIST.sub(lambda match: "[" + " ".join(match.group(1).split()) + "]", text)  # one line each
        WEIGHTS_PATH.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {WEIGHTS_PATH.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
