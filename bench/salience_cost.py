"""What the salience classifier adds to the rules extractor, per user turn, in-process (no server, no database).

    .venv/bin/python bench/salience_cost.py [--batches 400] [--repeat 3] [--dev-dir bench/data/extraction/dev]

Runs RulesExtractor.extract over the extraction benchmark's synthetic support batches (conversations.py: 10
messages, 5 user turns each) and, when present, over the dev extraction corpus (one conversation per call, as
one job would see it), with EXTRACTION_SALIENCE off, with the embedding model, and with the lexical fallback.
Prints user turns/s, the added milliseconds per user turn and how many clauses per user turn were scored. The
model is loaded before timing (a worker loads it once). Reports only; never fails on a time.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django  # noqa: E402

django.setup()

from conversations import SupportConversations  # noqa: E402
from django.conf import settings  # noqa: E402

from apps.extraction.extractors.base import ConversationMessage  # noqa: E402
from apps.extraction.extractors.rules import RulesExtractor  # noqa: E402
from apps.extraction.salience.scorer import SalienceScorer, local_embed  # noqa: E402


class _TimedEmbed:
    """The local model's embed, counting calls and clauses and timing each call."""

    def __init__(self):
        self.calls, self.clauses, self.seconds = 0, 0, []

    def __call__(self, texts):
        started = time.perf_counter()
        vectors = local_embed(texts)
        self.seconds.append(time.perf_counter() - started)
        self.calls += 1
        self.clauses += len(texts)
        return vectors


class _Counting:
    """Passes scores through and counts the clauses and calls."""

    def __init__(self, scorer):
        self.scorer, self.clauses, self.calls = scorer, 0, 0

    def score(self, texts):
        self.clauses += len(texts)
        self.calls += 1
        return self.scorer.score(texts)


def synthetic_jobs(count: int) -> list[list[ConversationMessage]]:
    conversations = SupportConversations(seed=7)
    jobs = []
    for user in range(count):
        turns = conversations.batch(user=user, session="s", index=user % 3)
        jobs.append([ConversationMessage(seq=seq, role=turn.role, text=turn.text) for seq, turn in enumerate(turns)])
    return jobs


def dev_jobs(directory: Path) -> list[list[ConversationMessage]]:
    jobs = []
    for path in sorted(directory.glob("*.json")):
        for conversation in json.loads(path.read_text(encoding="utf-8"))["conversations"]:
            jobs.append([ConversationMessage(seq=seq, role=message["role"], text=message["text"])
                         for seq, message in enumerate(conversation["messages"])])
    return jobs


def measure(jobs, *, salience: bool, scorer, repeat: int) -> tuple[float, _Counting]:
    settings.EXTRACTION_SALIENCE = salience
    counting = _Counting(scorer)
    extractor = RulesExtractor(scorer=counting)
    best = float("inf")
    for _ in range(repeat):
        counting.clauses = counting.calls = 0
        started = time.perf_counter()
        for messages in jobs:
            extractor.extract(messages=messages, existing=[])
        best = min(best, time.perf_counter() - started)
    return best, counting


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=400, help="synthetic 10-message batches")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each; the fastest counts")
    parser.add_argument("--dev-dir", type=Path, default=ROOT / "bench" / "data" / "extraction" / "dev")
    args = parser.parse_args()

    embed = _TimedEmbed()
    model, lexical = SalienceScorer(embed=embed), SalienceScorer(embed=None)
    local_embed(["warm up the model"])
    print(f"threshold {settings.EXTRACTION_SALIENCE_THRESHOLD}; the fastest of {args.repeat} runs counts")
    corpora = [("synthetic support batches", synthetic_jobs(args.batches))]
    if args.dev_dir.is_dir() and any(args.dev_dir.glob("*.json")):
        corpora.append((f"dev corpus ({args.dev_dir.name})", dev_jobs(args.dev_dir)))
    for name, jobs in corpora:
        turns = sum(message.role == "user" for messages in jobs for message in messages)
        off, _ = measure(jobs, salience=False, scorer=model, repeat=args.repeat)
        print(f"{name}: {len(jobs)} jobs, {turns} user turns")
        print(f"  {'salience off':22} {turns / off:8.0f} user turns/s  {off / turns * 1000:6.3f} ms/turn")
        for label, scorer in (("model", model), ("lexical fallback", lexical)):
            embed.calls, embed.clauses, embed.seconds = 0, 0, []
            seconds, counting = measure(jobs, salience=True, scorer=scorer, repeat=args.repeat)
            print(f"  {'salience ' + label:22} {turns / seconds:8.0f} user turns/s  {seconds / turns * 1000:6.3f} "
                  f"ms/turn  (+{(seconds - off) / turns * 1000:.3f} ms/turn; {counting.clauses / turns:.2f} "
                  f"clauses scored per turn)")
            if embed.calls:
                calls, clauses = embed.calls / args.repeat, embed.clauses / args.repeat
                print(f"  {'':22} model: {calls:.0f} calls for {clauses:.0f} clauses ({clauses / turns:.2f} per turn, "
                      f"{calls / len(jobs):.2f} calls per job), p50 {statistics.median(embed.seconds) * 1000:.1f} ms "
                      f"per call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
