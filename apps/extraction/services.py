"""Extraction jobs: schedule, claim, run, retry; each job's results commit with the session's high-water mark."""

import logging
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from apps.conversations.models import Message, Session
from apps.core.actors import Actor
from apps.core.background import LeaseKeeper
from apps.core.errors import ConflictError, NotFoundError
from apps.core.sql import RowLoader
from apps.extraction.consolidation import consolidate
from apps.extraction.extractors import get_extractor
from apps.extraction.extractors.base import ConversationMessage, ExtractionError
from apps.extraction.models import ExtractionJob
from apps.extraction.selectors import related_memories
from apps.memories.events import Event, EventType
from apps.memories.models import MemoryStore
from apps.memories.services.events import events_collected, events_publish
from apps.memories.store_settings import extraction_settings_for, extractor_problem, resolve_extractor
from apps.tenancy.models import Tenant
from memoryhub.logging import log_context

logger = logging.getLogger(__name__)

EXTRACTION_ACTOR = Actor.system("extraction")
RUN_TASK = "apps.extraction.tasks.run_extraction_job"


# --- Scheduling -------------------------------------------------------------------------------------


def _enqueue(job_id) -> None:
    from django_q.tasks import async_task

    task_id = async_task(
        RUN_TASK, str(job_id), task_name=f"extract-{job_id}", group="extraction", sync=settings.EXTRACTION_RUN_INLINE
    )
    if not settings.EXTRACTION_RUN_INLINE:
        # updated_at doubles as "last enqueued": the sweep re-enqueues only jobs quiet for longer than
        # a task can legitimately wait, so a backlog is not flooded with duplicate tasks.
        ExtractionJob.objects.filter(pk=job_id).update(q_task_id=str(task_id or ""), updated_at=timezone.now())


def extraction_job_schedule(*, session: Session, trigger: str, force: bool = False) -> ExtractionJob | None:
    """Create and enqueue a job for the session's unextracted messages if its trigger is due.

    Call inside a transaction holding the session row lock. At most one job per session is open;
    a finishing job schedules the next one, so a session's messages are extracted in order. While the
    store's extractor cannot run here (llm without a model), messages wait: a job could only fail; a
    forced schedule (a flush) is refused with a ConflictError saying what is missing.
    """
    config = extraction_settings_for(session.store)
    if not config.enabled or session.last_seq <= session.extracted_seq:
        return None
    problem = extractor_problem(config.extractor)
    if problem:
        if force:
            raise ConflictError(f"Cannot extract: {problem}.", code="extractor_not_ready",
                                details={"extractor": config.extractor})
        return None
    if not force and session.unscheduled_user_turns < config.every_n_turns:
        return None
    if ExtractionJob.objects.filter(session=session, status__in=ExtractionJob.OPEN_STATUSES).exists():
        return None
    job = ExtractionJob.objects.create(
        store=session.store,
        session=session,
        from_seq=session.extracted_seq,
        to_seq=session.last_seq,
        trigger=trigger,
        extractor=resolve_extractor(config.extractor),
        max_attempts=settings.EXTRACTION_MAX_ATTEMPTS,
    )
    Session.objects.filter(pk=session.pk).update(scheduled_seq=session.last_seq, unscheduled_user_turns=0)
    session.scheduled_seq, session.unscheduled_user_turns = session.last_seq, 0
    transaction.on_commit(lambda: _enqueue(job.pk))
    return job


def extraction_flush(*, session: Session, trigger: str = ExtractionJob.Trigger.FLUSH) -> ExtractionJob | None:
    """The job that will extract the session's unextracted messages: the open one, or a new one."""
    with transaction.atomic():
        locked = Session.objects.select_for_update().select_related("store").get(pk=session.pk)
        open_job = ExtractionJob.objects.filter(session=locked, status__in=ExtractionJob.OPEN_STATUSES).first()
        if open_job:
            return open_job
        return extraction_job_schedule(session=locked, trigger=trigger, force=True)


def extraction_flush_and_wait(
    *, session: Session, wait_seconds: float, trigger: str = ExtractionJob.Trigger.FLUSH
) -> tuple[list[ExtractionJob], bool]:
    """Extract everything not yet extracted, waiting up to `wait_seconds`; returns (jobs, complete)."""
    try:
        return _flush_and_wait(session=session, wait_seconds=wait_seconds, trigger=trigger)
    except (Session.DoesNotExist, ExtractionJob.DoesNotExist):
        raise NotFoundError(f"Session {session.external_id!r} was deleted meanwhile.",
                            code="session_not_found") from None


def _flush_and_wait(*, session: Session, wait_seconds: float, trigger: str) -> tuple[list[ExtractionJob], bool]:
    deadline = time.monotonic() + wait_seconds
    jobs: dict = {}
    while True:
        job = extraction_flush(session=session, trigger=trigger)
        if job is None:
            break
        jobs[job.pk] = job
        while job.status in ExtractionJob.OPEN_STATUSES and time.monotonic() < deadline:
            time.sleep(0.05)
            job.refresh_from_db()
        jobs[job.pk] = job
        if job.status in ExtractionJob.OPEN_STATUSES or job.status == ExtractionJob.Status.FAILED:
            break
        if time.monotonic() >= deadline:
            break
    store = session.store
    session.refresh_from_db()
    session.store = store  # the same row; refresh_from_db drops it and the caller renders it
    complete = session.extracted_seq >= session.last_seq
    return list(jobs.values()), complete


# The two entry points the conversations app calls (tests/test_layers.py names them): it stands below
# extraction, but new messages and a session's end must reach extraction while the session is locked.


def extraction_after_ingest(*, session: Session) -> ExtractionJob | None:
    """Schedule extraction of messages just stored, if the store's turn trigger is due (session locked)."""
    return extraction_job_schedule(session=session, trigger=ExtractionJob.Trigger.TURNS)


def extraction_at_session_end(*, session: Session, wait_seconds: float) -> tuple[list[ExtractionJob], bool]:
    """The final extraction of a terminating session, waited for up to `wait_seconds`; none (and not
    complete) when the store's extractor cannot run here: the session still ends."""
    try:
        return extraction_flush_and_wait(session=session, wait_seconds=wait_seconds,
                                         trigger=ExtractionJob.Trigger.SESSION_END)
    except ConflictError as exc:
        if exc.code != "extractor_not_ready":
            raise
        return [], False


# --- Running ----------------------------------------------------------------------------------------


def _lease() -> timedelta:
    return timedelta(seconds=settings.EXTRACTION_LEASE_SECONDS)


def _renew_job_leases(held: dict) -> None:
    """Extend the lease of each job this process runs ({job id: the attempt it runs}); a run that lost its job to
    another (its lease ran out meanwhile) extends nothing, and finds out when it commits."""
    for job_id, attempts in held.items():
        ExtractionJob.objects.filter(pk=job_id, status=ExtractionJob.Status.RUNNING, attempts=attempts).update(
            lease_expires_at=timezone.now() + _lease()
        )


# The lease is the one sign that a running job's worker lives: renewed from a thread, it holds however long the
# model takes, and it runs out EXTRACTION_LEASE_SECONDS after the worker died (killed, out of memory, machine lost).
_job_leases = LeaseKeeper(
    "extraction job leases", period=lambda: settings.EXTRACTION_LEASE_SECONDS / 3, renew=_renew_job_leases
)


_JOB_ROWS, _STORE_ROWS, _TENANT_ROWS, _SESSION_ROWS = (
    RowLoader(ExtractionJob), RowLoader(MemoryStore), RowLoader(Tenant), RowLoader(Session)
)
# The claim and the job it took, with its store, tenant and session (as select_related would read them), in one
# statement: a worker claims a job every few milliseconds when it works through a backlog.
_CLAIM = f"""
    WITH claimed AS (
        UPDATE "{ExtractionJob._meta.db_table}"
           SET status = 'running', attempts = attempts + 1, started_at = %(now)s,
               lease_expires_at = %(lease)s, updated_at = %(now)s
         WHERE id = {{which}}
           AND ((status = 'queued' AND (run_after IS NULL OR run_after <= %(now)s))
                OR (status = 'running' AND lease_expires_at < %(now)s AND attempts < max_attempts))
        RETURNING *
    )
    SELECT {_JOB_ROWS.select_list("j")}, {_STORE_ROWS.select_list("st")}, {_TENANT_ROWS.select_list("t")},
           {_SESSION_ROWS.select_list("se")}
      FROM claimed j
      JOIN "{MemoryStore._meta.db_table}" st ON st.id = j.store_id
      JOIN "{Tenant._meta.db_table}" t ON t.id = st.tenant_id
      JOIN "{Session._meta.db_table}" se ON se.id = j.session_id
"""
# The oldest due job of an extractor that no other run is claiming this instant (SKIP LOCKED: never waits on one).
_NEXT_QUEUED = f"""(
    SELECT id FROM "{ExtractionJob._meta.db_table}"
     WHERE status = 'queued' AND (run_after IS NULL OR run_after <= %(now)s) AND extractor = %(extractor)s
     ORDER BY created_at, id
     LIMIT 1
       FOR UPDATE SKIP LOCKED
)"""


def _claim(job_id=None, *, extractor: str = "") -> ExtractionJob | None:
    """Take the job if it is queued and due, or running under an expired lease with attempts left (one at its last
    attempt is the lease sweep's to fail); None if someone else has it. Without `job_id`: the oldest queued job of
    `extractor` that is due, if any."""
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            _CLAIM.format(which="%(id)s" if job_id is not None else _NEXT_QUEUED),
            {"now": now, "lease": now + _lease(), "id": job_id, "extractor": extractor},
        )
        row = cursor.fetchone()
    if row is None:
        return None
    values = iter(row)
    job, store, tenant, session = (
        rows.load([next(values) for _ in range(len(rows))])
        for rows in (_JOB_ROWS, _STORE_ROWS, _TENANT_ROWS, _SESSION_ROWS)
    )
    store.tenant = tenant
    job.store, job.session = store, session
    return job


@dataclass(frozen=True)
class JobOutcome:
    job: ExtractionJob | None
    claimed: bool


def extraction_job_run(*, job_id) -> JobOutcome:
    """Run one job: extract outside any transaction, then commit memories + high-water mark together."""
    job = _claim(job_id)
    if job is None:
        # Taken by a live run, finished, or not due: a run that dies leaves its lease to run out, and the workers'
        # lease sweep (extraction_jobs_revive) queues the job again then.
        return JobOutcome(job=None, claimed=False)
    return _run_held(job)


def _run_held(job: ExtractionJob) -> JobOutcome:
    # Every log line of the run names its job; the lease is renewed while it runs.
    with log_context(job_id=str(job.pk)), _job_leases.holding(job.pk, job.attempts):
        return _run_claimed(job)


def extraction_job_run_next(*, extractor: str = "rules") -> JobOutcome | None:
    """Claim and run the oldest due queued job of `extractor`, whatever task was queued for it; None when there is
    none. A worker that has just run a job runs the jobs waiting behind it this way (apps.extraction.tasks): a
    backlog of short rules jobs is worked through without a broker round trip per job, and the task later
    delivered for a job already run finds it taken and returns."""
    job = _claim(extractor=extractor)
    return None if job is None else _run_held(job)


def extraction_jobs_run_queued(*, extractor: str, until: float) -> list[JobOutcome]:
    """Run the due queued jobs of `extractor`, oldest first, until there are none or time.monotonic() reaches
    `until` (checked between jobs: the job in hand is finished)."""
    outcomes = []
    while time.monotonic() < until:
        outcome = extraction_job_run_next(extractor=extractor)
        if outcome is None:
            break
        outcomes.append(outcome)
    return outcomes


def _run_claimed(job: ExtractionJob) -> JobOutcome:
    started = time.monotonic()
    try:
        config = extraction_settings_for(job.store)
        problem = extractor_problem(job.extractor)
        if problem and config.extractor == "auto":
            # Scheduled while this server had a model, run after a restart without one: auto means rules now.
            job.extractor, problem = resolve_extractor("auto"), None
        if problem:
            raise ExtractorNotReady(f"The {job.extractor} extractor cannot run: {problem}.")
        session = job.session
        session.store = job.store
        base_seq = session.extracted_seq
        counts = None
        if base_seq < job.to_seq:
            messages = _messages_to_extract(session, after_seq=base_seq, to_seq=job.to_seq)
            existing, user_name = related_memories(
                store=job.store, user_id=session.user_id, messages=messages, search=job.extractor != "rules"
            )
            try:
                candidates = get_extractor(job.extractor).extract(
                    messages=messages, existing=existing, user_name=user_name
                )
            except ExtractionError as exc:
                if not (job.extractor == "llm" and config.fallback_to_rules and job.attempts >= job.max_attempts):
                    raise
                logger.warning("Extraction job %s falls back to the rules extractor on its last attempt: %s",
                               job.pk, exc)
                job.extractor, job.fallback_reason = "rules", f"{exc.__class__.__name__}: {exc}"[:4000]
                candidates = get_extractor("rules").extract(messages=messages, existing=existing, user_name=user_name)
        with transaction.atomic(), events_collected():
            # Results commit only while this run holds the job: its lease may have run out (the database was out
            # of reach longer than the lease) and the job been queued again for another run. The job's row stays
            # locked until the commit, so the lease sweep cannot take the job in between.
            locked = _lock_session_of_held_job(job)
            locked.store = job.store
            if locked.extracted_seq != base_seq:
                raise ConflictError("Another run extracted this session meanwhile; retrying.")
            if base_seq < job.to_seq:
                counts = consolidate(
                    store=job.store, session=locked, job=job, candidates=candidates, actor=EXTRACTION_ACTOR
                )
                locked.extracted_seq = job.to_seq
                locked.save(update_fields=["extracted_seq", "updated_at"])
            job.status = ExtractionJob.Status.SUCCEEDED
            job.from_seq = min(base_seq, job.to_seq)
            job.error = ""
            if counts:
                job.added, job.updated, job.deleted, job.unchanged = (
                    counts.added, counts.updated, counts.deleted, counts.unchanged,
                )
            job.finished_at = timezone.now()
            job.lease_expires_at = None
            job.duration_ms = int((time.monotonic() - started) * 1000)
            job.save(update_fields=["status", "from_seq", "error", "added", "updated", "deleted", "unchanged",
                                    "extractor", "fallback_reason", "finished_at", "lease_expires_at",
                                    "duration_ms", "updated_at"])
            events_publish([_job_event(EventType.JOB_FINISHED, job, locked)])
            # Messages that arrived while this job ran: their trigger may be due now.
            extraction_job_schedule(session=locked, trigger=ExtractionJob.Trigger.TURNS)
        return JobOutcome(job=job, claimed=True)
    except LeaseLost:
        logger.warning("Extraction job %s: attempt %s lost its lease to another run; its results are dropped.",
                       job.pk, job.attempts)
        return JobOutcome(job=None, claimed=False)
    except ExtractorNotReady as exc:
        # A configuration problem, not a passing failure: retrying cannot help, and a traceback says less.
        logger.warning("Extraction job %s failed: %s", job.pk, exc)
        return _failed(_record_failure(job=job, error=exc, started=started, retry=False))
    except Exception as exc:  # noqa: BLE001 - every failure is recorded on the job and retried
        logger.warning("Extraction job %s failed (attempt %s): %s", job.pk, job.attempts, exc, exc_info=True)
        return _failed(_record_failure(job=job, error=exc, started=started))


_MESSAGES_SQL = (
    f'SELECT seq, role, text, created_at FROM "{Message._meta.db_table}" '  # not the content blocks
    "WHERE session_id = %s AND seq > %s AND seq <= %s ORDER BY seq"
)


def _messages_to_extract(session: Session, *, after_seq: int, to_seq: int) -> list[ConversationMessage]:
    with connection.cursor() as cursor:
        cursor.execute(_MESSAGES_SQL, [session.pk, after_seq, to_seq])
        return [ConversationMessage(seq=seq, role=role, text=text, created_at=created_at)
                for seq, role, text, created_at in cursor.fetchall()]


# The session locked, and the job with it: whether this run still holds it, in one round trip.
_LOCK_SESSION_AND_JOB = f"""
    SELECT {_SESSION_ROWS.select_list("s")}, j.status = 'running' AND j.attempts = %(attempts)s
      FROM "{Session._meta.db_table}" s
      JOIN "{ExtractionJob._meta.db_table}" j ON j.session_id = s.id
     WHERE s.id = %(session)s AND j.id = %(job)s
       FOR UPDATE OF s, j
"""


def _lock_session_of_held_job(job: ExtractionJob) -> Session:
    """The job's session, locked with the job; LeaseLost if this run no longer holds the job."""
    with connection.cursor() as cursor:
        cursor.execute(_LOCK_SESSION_AND_JOB, {"session": job.session_id, "job": job.pk, "attempts": job.attempts})
        row = cursor.fetchone()
    if row is None:
        raise Session.DoesNotExist("The session was deleted, and its jobs with it.")
    if not row[-1]:
        raise LeaseLost
    return _SESSION_ROWS.load(row[:-1])


def _failed(job: ExtractionJob | None) -> JobOutcome:
    # None: the run had lost the job to another; that run's outcome is its own to report (and to count).
    return JobOutcome(job=job, claimed=job is not None)


class ExtractorNotReady(Exception):
    """The store's extractor is not configured on this server (e.g. llm without a model)."""


class LeaseLost(Exception):
    """The run's lease ran out and the job was queued again (or failed) before the run could commit."""


# The extractor too: a run that fell back to the rules (or ran an auto job's rules) says so when it then fails.
_FAILURE_FIELDS = ["error", "lease_expires_at", "duration_ms", "status", "run_after", "finished_at", "extractor",
                   "fallback_reason", "updated_at"]


def _record_failure(
    *, job: ExtractionJob, error: Exception, started: float, retry: bool = True
) -> ExtractionJob | None:
    """Record the run's failure (queued again with backoff, or failed for good); None when the run no longer holds
    the job (its lease ran out and another run, or the sweep, took it), which is then left as it is."""
    now = timezone.now()
    job.error = f"{error.__class__.__name__}: {error}"[:4000]
    job.lease_expires_at = None
    job.duration_ms = int((time.monotonic() - started) * 1000)
    job.updated_at = now
    retry = retry and job.attempts < job.max_attempts
    if retry:
        delay = settings.EXTRACTION_RETRY_BACKOFF_SECONDS * (2 ** (job.attempts - 1))
        job.status = ExtractionJob.Status.QUEUED
        job.run_after = now + timedelta(seconds=delay)
    else:
        job.status = ExtractionJob.Status.FAILED
        job.finished_at = now
    # Only while this run still holds the job: a run that outlived its lease must not overwrite the
    # outcome of the run that took over (which may have succeeded meanwhile).
    still_ours = ExtractionJob.objects.filter(
        pk=job.pk, status=ExtractionJob.Status.RUNNING, attempts=job.attempts
    ).update(**{name: getattr(job, name) for name in _FAILURE_FIELDS})
    if not still_ours:
        return None
    if retry:
        _schedule_retry(job)
    else:
        # Outside any transaction here: sent at once.
        events_publish([_job_event(EventType.JOB_FAILED, job, job.session)])
    return job


def _job_event(event_type: str, job: ExtractionJob, session: Session) -> Event:
    return Event(
        type=event_type, store_id=str(job.store_id), store_name=job.store.name,
        data={"job": {"id": str(job.pk), "session_id": session.external_id, "user_id": session.user_id,
                      "status": job.status, "extractor": job.extractor, "trigger": job.trigger,
                      "from_seq": job.from_seq, "to_seq": job.to_seq, "attempts": job.attempts,
                      "added": job.added, "updated": job.updated, "deleted": job.deleted, "unchanged": job.unchanged,
                      "duration_ms": job.duration_ms, "error": job.error}},
    )


def _schedule_retry(job: ExtractionJob) -> None:
    if settings.EXTRACTION_RUN_INLINE:
        return  # tests drive retries explicitly
    from django_q.models import Schedule

    Schedule.objects.create(
        name=f"retry-{job.pk}-{job.attempts}",
        func=RUN_TASK,
        args=repr(str(job.pk)),
        schedule_type=Schedule.ONCE,
        repeats=1,
        next_run=job.run_after,
    )


def extraction_job_retry_problem(*, job: ExtractionJob) -> str | None:
    """Why retrying `job` would fail again at once (its extractor cannot run on this server), or None.

    The extractor a retry runs: the model again after a fallback to the rules; a store set to auto runs the
    rules when no model is configured (as extraction_job_run decides)."""
    extractor = "llm" if job.fallback_reason else job.extractor
    problem = extractor_problem(extractor)
    if problem and extraction_settings_for(job.store).extractor != "auto":
        return f"the {extractor} extractor cannot run: {problem}"
    return None


def extraction_job_retry(*, job: ExtractionJob) -> ExtractionJob:
    """Run a failed job again (from the admin, the API or the review console), with a fresh set of attempts;
    refused while the store's configuration would make it fail the same way again."""
    with transaction.atomic():
        locked = ExtractionJob.objects.select_for_update(of=("self",)).select_related("store").get(pk=job.pk)
        if locked.status != ExtractionJob.Status.FAILED:
            raise ConflictError(f"Only failed jobs can be retried; this one is {locked.status}.", code="job_not_failed")
        problem = extraction_job_retry_problem(job=locked)
        if problem:
            raise ConflictError(f"Retrying would fail again: {problem}.", code="extractor_not_ready")
        if ExtractionJob.objects.filter(session_id=locked.session_id, status__in=ExtractionJob.OPEN_STATUSES).exists():
            raise ConflictError("This session already has an extraction job in progress.", code="job_in_progress")
        locked.status = ExtractionJob.Status.QUEUED
        locked.attempts = 0
        locked.run_after = timezone.now()  # due now, and waiting since now (the queue's lag)
        locked.finished_at = None
        locked.trigger = ExtractionJob.Trigger.RETRY
        if locked.fallback_reason:  # the rules ran instead of the model: a fresh set of attempts asks the model
            locked.extractor, locked.fallback_reason = "llm", ""
        locked.save()
        transaction.on_commit(lambda: _enqueue(locked.pk))
    return locked


def extraction_jobs_revive() -> dict:
    """Queue again the running jobs whose lease ran out: their worker died. A job that has had all its attempts
    this way fails instead (it may be what kills its workers). Every q2 worker process runs this every
    WORKER_HEARTBEAT_SECONDS (apps.extraction.tasks); q2's re-delivery of the dead worker's task comes much later."""
    now = timezone.now()
    revived = failed = 0
    expired = ExtractionJob.objects.filter(status=ExtractionJob.Status.RUNNING, lease_expires_at__lt=now)
    for job in expired.select_related("store", "session"):
        # Conditional: the run may have committed, or another sweep taken the job, since the read.
        still_expired = ExtractionJob.objects.filter(
            pk=job.pk, status=ExtractionJob.Status.RUNNING, attempts=job.attempts, lease_expires_at__lt=now
        )
        if job.attempts >= job.max_attempts:
            job.status, job.finished_at, job.lease_expires_at = ExtractionJob.Status.FAILED, now, None
            job.error = (f"Its worker stopped without finishing it, {job.attempts} times (killed, out of memory, "
                         "or its machine lost).")
            if still_expired.update(status=job.status, error=job.error, finished_at=now, lease_expires_at=None,
                                    updated_at=now):
                logger.warning("Extraction job %s failed: %s", job.pk, job.error)
                events_publish([_job_event(EventType.JOB_FAILED, job, job.session)])
                failed += 1
        # run_after: it waits for a worker from now on (the queue's lag, /readyz), not since it was created.
        elif still_expired.update(status=ExtractionJob.Status.QUEUED, run_after=now, lease_expires_at=None,
                                  error="Its worker stopped without finishing it; queued again.", updated_at=now):
            logger.warning("Extraction job %s: its worker stopped during attempt %s; queued again.",
                           job.pk, job.attempts)
            _enqueue(job.pk)
            revived += 1
    return {"revived": revived, "failed": failed}


def extraction_sweep() -> dict:
    """Periodic: revive jobs of dead workers, re-enqueue due retries, and extract idle sessions."""
    now = timezone.now()
    leases = extraction_jobs_revive()
    # A queued task is re-delivered by the broker after Q retry seconds if a worker took it and died;
    # a job quiet for longer than that (plus the scheduler's 30 s tick) lost its task.
    lost_after = timedelta(seconds=settings.Q_CLUSTER["retry"] + 60)
    stale_queued = ExtractionJob.objects.filter(
        Q(run_after__isnull=True) | Q(run_after__lte=now - timedelta(seconds=60)),
        status=ExtractionJob.Status.QUEUED,
        updated_at__lt=now - lost_after,
    )
    requeued = 0
    for job_id in stale_queued.values_list("pk", flat=True):
        _enqueue(job_id)  # lost task, or a retry whose schedule did not fire; duplicates cannot double-run
        requeued += 1
    idle = 0
    for store in MemoryStore.objects.all().only("pk", "extraction_config", "tenant_id"):
        config = extraction_settings_for(store)
        if not config.enabled or not config.idle_seconds or extractor_problem(config.extractor):
            continue  # messages of a store whose extractor cannot run here wait; no lock taken for nothing
        quiet_since = now - timedelta(seconds=config.idle_seconds)
        candidates = Session.objects.filter(
            store=store, last_activity_at__lt=quiet_since, last_seq__gt=F("scheduled_seq")
        ).exclude(status=Session.Status.TERMINATED)
        for session_id in candidates.values_list("pk", flat=True):
            with transaction.atomic():
                session = Session.objects.select_for_update().get(pk=session_id)
                session.store = store
                if extraction_job_schedule(session=session, trigger=ExtractionJob.Trigger.IDLE, force=True):
                    idle += 1
    return {**leases, "requeued": requeued, "idle_sessions": idle}

