"""What the salience classifier adds to the rules extractor, per user turn, in-process (no server, no database).

    .venv/bin/python bench/salience_cost.py [--batches 400] [--repeat 5] [--corpus bench/data/extraction]
        [--limit N] [--smoke]

Runs RulesExtractor.extract over the extraction benchmark's synthetic support batches (conversations.py: 10
messages, 5 user turns each) and over the dev part of the extraction quality corpus (one job per session, its
messages with the times they were sent, as the worker would see them), with EXTRACTION_SALIENCE off, with the
embedding model and with the lexical fallback. Each job's time is the fastest of --repeat runs. Prints a result
line per corpus and setting: p50/p95 ms per job, user turns/s, the milliseconds per user turn salience adds and
the clauses scored per turn, then the model's calls. The model is loaded before timing (a worker loads it once).
Reports only, never fails on a time; exits 1 if an extraction raised.
"""

import argparse
import math
import statistics
import time
from pathlib import Path

from extraction_corpus import CorpusError, load_corpus
from harness import ROOT, exit_status, log, parse_args, result_line, run_main
from harness import start as harness_start
from load import percentile

CORPUS = ROOT / "bench" / "data" / "extraction"
SMOKE = dict(batches=10, repeat=1, limit=3)


class _TimedEmbed:
    """The local model's embed, counting calls and clauses and timing each call."""

    def __init__(self, embed):
        self.embed = embed
        self.calls, self.clauses, self.seconds = 0, 0, []

    def __call__(self, texts):
        started = time.perf_counter()
        vectors = self.embed(texts)
        self.seconds.append(time.perf_counter() - started)
        self.calls += 1
        self.clauses += len(texts)
        return vectors


class _Counting:
    """Passes scores through and counts the clauses and calls."""

    def __init__(self, scorer):
        self.scorer, self.clauses, self.calls = scorer, 0, 0

    def score(self, texts, floors=None):
        self.clauses += len(texts)
        self.calls += 1
        return self.scorer.score(texts, floors)


def options(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=400, help="synthetic 10-message batches (default 400)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each job; the fastest counts (default 5)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="corpus directory; its dev/ part is read")
    parser.add_argument("--limit", type=int, default=0, help="only the first N dev conversations (0: all)")
    args = parse_args(parser, argv, smoke=SMOKE, report=False)
    if args.batches < 0 or args.repeat < 1 or args.limit < 0:
        parser.error("need --batches >= 0, --repeat >= 1 and --limit >= 0")
    return args


def synthetic_jobs(count: int) -> list:
    from conversations import SupportConversations

    from apps.extraction.extractors.base import ConversationMessage

    conversations = SupportConversations(seed=7)
    jobs = []
    for user in range(count):
        turns = conversations.batch(user=user, session="s", index=user % 3)
        jobs.append([ConversationMessage(seq=seq, role=turn.role, text=turn.text) for seq, turn in enumerate(turns)])
    return jobs


def corpus_jobs(root: Path, limit: int) -> list:
    """One job per session of the dev conversations, in order, each message with its time."""
    from apps.extraction.extractors.base import ConversationMessage

    try:
        conversations = load_corpus(root, parts=("dev",))
    except CorpusError as error:
        raise SystemExit(f"bad corpus file: {error}") from None
    if limit:
        conversations = conversations[:limit]
    return [[ConversationMessage(seq=seq, role=message.role, text=message.text, created_at=message.at)
             for seq, message in enumerate(messages)]
            for conversation in conversations for _, messages in conversation.sessions()]


def measure(jobs, *, salience: bool, scorer, repeat: int) -> tuple[list[float], _Counting, list[str]]:
    """(each job's fastest time in seconds, the clauses scored in one run, the errors of the jobs that raised)."""
    from django.conf import settings

    from apps.extraction.extractors.rules import RulesExtractor

    settings.EXTRACTION_SALIENCE = salience
    counting = _Counting(scorer)
    extractor = RulesExtractor(scorer=counting)
    best = [math.inf] * len(jobs)
    errors: dict[int, str] = {}
    for _ in range(repeat):
        counting.clauses = counting.calls = 0
        for index, messages in enumerate(jobs):
            started = time.perf_counter()
            try:
                extractor.extract(messages=messages, existing=[])
            except Exception as exc:  # a benchmark counts a failed job and goes on
                errors.setdefault(index, f"job {index}: {type(exc).__name__}: {exc}")
            best[index] = min(best[index], time.perf_counter() - started)
    return best, counting, list(errors.values())


def main(argv=None) -> int:
    args = options(argv)
    harness_start("memoryhub salience cost", database=False)

    from django.conf import settings

    from apps.extraction.salience.scorer import SalienceScorer, local_embed

    embed = _TimedEmbed(local_embed)
    model, lexical = SalienceScorer(embed=embed), SalienceScorer(embed=None)
    local_embed(["warm up the model"])
    log(f"threshold {settings.EXTRACTION_SALIENCE_THRESHOLD}; each job's fastest of {args.repeat} run(s) counts")
    corpora = [("synthetic", synthetic_jobs(args.batches)), ("dev corpus", corpus_jobs(args.corpus, args.limit))]
    for name, jobs in corpora:
        turns = sum(message.role == "user" for messages in jobs for message in messages)
        if not turns:
            log(f"{name}: no user turns, skipped")
            continue
        log(f"{name}: {len(jobs)} jobs, {turns} user turns")
        off_seconds = None
        for label, salience, scorer in (("off", False, model), ("model", True, model), ("lexical", True, lexical)):
            embed.calls, embed.clauses, embed.seconds = 0, 0, []
            times, counting, errors = measure(jobs, salience=salience, scorer=scorer, repeat=args.repeat)
            seconds = sum(times)
            off_seconds = seconds if off_seconds is None else off_seconds
            details = f"per job; {turns / seconds:.0f} user turns/s, {seconds / turns * 1000:.3f} ms/turn"
            if salience:
                details += (f" ({(seconds - off_seconds) / turns * 1000:+.3f} against off), "
                            f"{counting.clauses / turns:.2f} clauses scored per turn")
            result_line(f"{name}, salience {label}", failed=len(errors), p50=percentile(times, 50) * 1000,
                        p95=percentile(times, 95) * 1000, digits=3, details=details,
                        first_error=errors[0] if errors else "")
            if embed.calls:
                calls, clauses = embed.calls / args.repeat, embed.clauses / args.repeat
                log(f"    model: {calls:.0f} calls for {clauses:.0f} clauses ({calls / len(jobs):.2f} calls per job), "
                    f"p50 {statistics.median(embed.seconds) * 1000:.1f} ms per call")
    return exit_status()


if __name__ == "__main__":
    run_main(main, on_interrupt="nothing to clean up")
