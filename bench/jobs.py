"""The extraction benchmark's view of the database: open jobs, job statistics, the django-q2 queue, cleanup."""

import time

from harness import log


def open_jobs(store) -> int:
    from apps.extraction.models import ExtractionJob

    return ExtractionJob.objects.filter(store=store, status__in=ExtractionJob.OPEN_STATUSES).count()


def wipe_conversations(store) -> None:
    """Delete a store's sessions with their messages, working state, checkpoints, events and jobs (not its memories)."""
    from django.db import connection, transaction

    from apps.conversations.models import (
        Checkpoint,
        Message,
        ScratchpadEntry,
        Session,
        SessionEvent,
        TaskState,
        WorkingMemoryItem,
    )
    from apps.extraction.models import ExtractionJob

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {ExtractionJob._meta.db_table} WHERE store_id = %s", [store.pk])
        for model in (Message, WorkingMemoryItem, TaskState, ScratchpadEntry, Checkpoint, SessionEvent):
            cursor.execute(
                f"DELETE FROM {model._meta.db_table} WHERE session_id IN "
                f"(SELECT id FROM {Session._meta.db_table} WHERE store_id = %s)",
                [store.pk],
            )
        cursor.execute(f"DELETE FROM {Session._meta.db_table} WHERE store_id = %s", [store.pk])


def delete_store(store) -> None:
    import seeding

    wipe_conversations(store)
    seeding.delete_store(store)


def purge_queue() -> int:
    """Empty django-q2's queue (the ORM broker's table) in the benchmark database; only while no worker runs."""
    from django_q.models import OrmQ

    deleted, _ = OrmQ.objects.all().delete()
    return deleted


def queued_tasks() -> int:
    from django_q.models import OrmQ

    return OrmQ.objects.count()


def other_queue_readers() -> int:
    """Other sessions whose last query read django-q2's queue: a worker left running would take the jobs."""
    from django.db import connection
    from django_q.models import OrmQ

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND query LIKE %s",
            [f"%{OrmQ._meta.db_table}%"],
        )
        return cursor.fetchone()[0]


def wait_for_jobs(store, *, timeout: float, worker=None, label: str = "") -> float:
    """Wait until the store has no open job; returns the seconds waited."""
    started = time.perf_counter()
    next_report = started + 5
    while True:
        remaining = open_jobs(store)
        now = time.perf_counter()
        if remaining == 0:
            return now - started
        if worker is not None:
            worker.check_alive()
        if now - started > timeout:
            raise RuntimeError(f"{remaining} extraction jobs still open after {timeout:.0f} s {label}")
        if now >= next_report:
            log(f"    {remaining} jobs open {label}...")
            next_report = now + 5
        time.sleep(0.1)


def throughput_stats(store) -> dict:
    from django.db import connection

    from apps.conversations.models import Message
    from apps.extraction.models import ExtractionJob

    jobs = ExtractionJob._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT count(*), count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status = 'failed'),
                   count(*) FILTER (WHERE attempts > 1), min(started_at), max(finished_at),
                   coalesce(sum(added), 0), coalesce(sum(updated), 0), coalesce(sum(unchanged), 0),
                   coalesce(sum(deleted), 0)
              FROM {jobs} WHERE store_id = %s
            """,
            [store.pk],
        )
        row = cursor.fetchone()
        cursor.execute(
            f"""
            SELECT count(*) FROM {Message._meta.db_table} m
              JOIN {jobs} j ON j.session_id = m.session_id AND m.seq > j.from_seq AND m.seq <= j.to_seq
             WHERE j.store_id = %s AND j.status = 'succeeded' AND m.role = 'user'
            """,
            [store.pk],
        )
        user_turns = cursor.fetchone()[0]
        cursor.execute(f"SELECT duration_ms FROM {jobs} WHERE store_id = %s AND status = 'succeeded'", [store.pk])
        job_ms = [value for (value,) in cursor.fetchall() if value is not None]
        # One worker runs one job at a time: the gap before each job is the queue's overhead per task.
        cursor.execute(
            f"""
            SELECT 1000 * extract(epoch FROM started_at - lag(finished_at) OVER (ORDER BY started_at))
              FROM {jobs} WHERE store_id = %s AND status = 'succeeded'
            """,
            [store.pk],
        )
        gap_ms = [float(value) for (value,) in cursor.fetchall() if value is not None]
    names = ("jobs", "succeeded", "failed", "retried", "first_claim", "last_finished", "added", "updated", "unchanged")
    stats = dict(zip((*names, "deleted"), row, strict=True))
    stats.update(user_turns=user_turns, job_ms=job_ms, gap_ms=gap_ms)
    return stats
