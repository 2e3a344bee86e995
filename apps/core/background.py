"""Daemon threads a process runs beside its work: one renewing the leases of the work it holds (an extraction job,
a request's Idempotency-Key), and periodic chores of a worker process (its heartbeat, reviving jobs of dead workers).

Each round uses the thread's own database connection and hands it back to the pool afterwards, so an idle thread
holds none. A round that fails (the database is down) is logged once, not every few seconds, and the thread goes on.
"""

import logging
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Hashable
from contextlib import contextmanager
from functools import partial

from django.db import connection

logger = logging.getLogger(__name__)


class _Round:
    """Runs one round of a thread's work, saying when it starts failing and when it works again."""

    def __init__(self, name: str):
        self.name = name
        self.failing = False

    def run(self, work: Callable[[], object]) -> None:
        try:
            work()
        except Exception as exc:  # noqa: BLE001 - the thread must outlive a database outage
            if not self.failing:
                logger.warning("%s failed (said once until it works again): %s: %s",
                               self.name, exc.__class__.__name__, exc)
            self.failing = True
        else:
            if self.failing:
                logger.warning("%s works again.", self.name)
            self.failing = False
        finally:
            try:
                connection.close()  # back to the pool until the next round
            except Exception:  # noqa: BLE001 - a connection the database dropped is gone anyway
                pass


_started_in_worker: set[tuple[int, str]] = set()


def start_periodic_in_cluster_worker(name: str, interval_seconds: float, work: Callable[[], object]) -> None:
    """start_periodic for django-q2's post_spawn: once per worker process of a `qcluster` command. q2 also sends
    post_spawn when it runs a task synchronously in the calling process (a web process or a test with
    EXTRACTION_RUN_INLINE), once per task: that process is no worker and gets no thread."""
    is_cluster_worker = sys.argv[1:2] == ["qcluster"] and multiprocessing.parent_process() is not None
    started = (os.getpid(), name)
    if not is_cluster_worker or started in _started_in_worker:
        return
    _started_in_worker.add(started)
    start_periodic(name, interval_seconds, work)


def start_periodic(name: str, interval_seconds: float, work: Callable[[], object]) -> threading.Thread:
    """Run `work` now, then every `interval_seconds`, in a daemon thread that ends with the process."""

    def loop():
        round_ = _Round(name)
        while True:
            round_.run(work)
            time.sleep(interval_seconds)

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    return thread


class LeaseKeeper:
    """Keeps the leases of work running in this process alive from one daemon thread: every `period()` seconds it
    calls `renew(held)` with what is held ({key: token}). Work that ends within a period costs a dict entry and no
    query, so a short request pays nothing for the lease its key carries.

    The thread is started on first use in each process: threads do not survive a fork (q2 forks its workers).
    """

    def __init__(self, name: str, *, period: Callable[[], float], renew: Callable[[dict], object]):
        self.name = name
        self._period = period
        self._renew = renew
        self._held: dict = {}
        self._lock = threading.Lock()
        self._thread_pid: int | None = None
        os.register_at_fork(after_in_child=self._forget_parent)

    def hold(self, key: Hashable, token=None) -> None:
        with self._lock:
            self._held[key] = token
            if self._thread_pid != os.getpid():
                self._thread_pid = os.getpid()
                threading.Thread(target=self._run, name=self.name, daemon=True).start()

    def release(self, key: Hashable) -> None:
        with self._lock:
            self._held.pop(key, None)

    @contextmanager
    def holding(self, key: Hashable, token=None):
        self.hold(key, token)
        try:
            yield
        finally:
            self.release(key)

    def _run(self) -> None:
        round_ = _Round(self.name)
        while True:
            time.sleep(self._period())
            with self._lock:
                held = dict(self._held)
            if held:
                round_.run(partial(self._renew, held))

    def _forget_parent(self) -> None:
        # The child's copy of the lock may have been taken by a thread that does not exist in the child.
        self._lock = threading.Lock()
        self._held = {}
        self._thread_pid = None
