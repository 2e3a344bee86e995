import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from apps.core.cores import usable_cores

# After this long a stopping child still has work in hand (a q2 worker in the middle of a task, a slow
# request): its process group is ended. That is safe for a task: q2 delivers an unacknowledged task again
# after Q_RETRY_SECONDS, and an extraction job is claimed under a lease that expires.
STOP_GRACE_SECONDS = 5
# SIGTERM ends every q2 process at once (its sentinel and workers keep SIGTERM's default action);
# SIGKILL after this is for a process that ignores it, which none of ours should.
KILL_AFTER_SECONDS = 5
# A child that dies is started again after 1 s, then 2, 4... at most RESTART_MAX_DELAY_SECONDS while it keeps dying,
# and after 1 s again once it had run RESTART_RESET_AFTER_SECONDS.
RESTART_FIRST_DELAY_SECONDS = 1
RESTART_MAX_DELAY_SECONDS = 30
RESTART_RESET_AFTER_SECONDS = 60
# A child that exits on its own with an error this soon after its first start has a problem a restart cannot fix (the
# port is taken, the settings are broken): serve stops, saying so. One killed (by a signal) is always restarted.
STARTUP_SECONDS = 30


@dataclass
class _Supervised:
    """A child's restart history."""

    starts: int = 0
    started_at: float = 0.0
    failures: int = 0  # deaths in a row, each after a short run
    restart_at: float = 0.0

    def next_delay(self, ran_seconds: float) -> float:
        if ran_seconds >= RESTART_RESET_AFTER_SECONDS:
            self.failures = 0
        delay = min(RESTART_MAX_DELAY_SECONDS, RESTART_FIRST_DELAY_SECONDS * 2**self.failures)
        self.failures += 1
        return delay


def _exit_reason(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


def _web_workers() -> int:
    """WEB_CONCURRENCY, else one process per core this process may use, at most 4: a process runs Python one
    thread at a time, and with a single one concurrent requests queue for it while the other cores idle."""
    if os.environ.get("WEB_CONCURRENCY"):
        return int(os.environ["WEB_CONCURRENCY"])
    return min(4, usable_cores())


class Command(BaseCommand):
    help = ("Serve the ASGI app (HTTP + websockets) with uvicorn and run a django-q2 worker, each restarted when it dies;"
            " Ctrl-C stops both.")

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("MEMORYHUB_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("MEMORYHUB_PORT", "8000")))
        parser.add_argument("--web-workers", type=int, default=_web_workers(),
                            help="uvicorn worker processes (WEB_CONCURRENCY; default one per usable core, at most 4)")
        parser.add_argument("--no-worker", action="store_true", help="Serve HTTP only, without the q2 worker")

    def handle(self, *args, host, port, web_workers, no_worker, **options):
        python = sys.executable
        commands = {
            "web": [
                python, "-m", "uvicorn", "memoryhub.asgi:application",
                "--host", host, "--port", str(port), "--workers", str(web_workers),
                "--timeout-graceful-shutdown", str(STOP_GRACE_SECONDS),
                # memoryhub writes its own (ACCESS_LOG), with the route, the request id and the API key's prefix.
                "--no-access-log",
            ],
        }
        if not no_worker:
            commands["worker"] = [python, "manage.py", "qcluster"]

        stopping = False

        def request_stop(signum, frame):
            nonlocal stopping
            stopping = True

        # Before the children start: a Ctrl-C during startup must stop them too, not kill serve alone.
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, request_stop)

        children: dict[str, subprocess.Popen] = {}  # those running
        history = {name: _Supervised() for name in commands}
        exit_code = 0
        env = self._metrics_env()

        def start(name: str) -> None:
            # Each child leads its own process group, so that a terminal's Ctrl-C reaches serve alone and
            # serve stops each child one way, whatever the signal: SIGTERM to its main process, and if that
            # is not enough, to its whole group. q2 keeps SIGINT away from its workers and on SIGTERM lets
            # them finish their task first; a SIGKILL to the q2 main process alone would orphan them.
            children[name] = subprocess.Popen(commands[name], stdin=subprocess.DEVNULL, process_group=0, env=env)
            history[name].starts += 1
            history[name].started_at = time.monotonic()

        try:
            for name in commands:
                start(name)
            self.stdout.write(f"memoryhub on http://{host}:{port} ({', '.join(children)}); Ctrl-C to stop.")
            while not stopping:
                now = time.monotonic()
                for name in commands:
                    child, state = children.get(name), history[name]
                    if child is None:
                        if now >= state.restart_at:
                            start(name)
                            self.stderr.write(f"{name} restarted (pid {children[name].pid}).")
                        continue
                    if child.poll() is None:
                        continue
                    del children[name]
                    self._end_group(child)  # what the dead process leaves: q2's sentinel and workers, uvicorn's
                    ran = now - state.started_at
                    why = _exit_reason(child.returncode)
                    if state.starts == 1 and child.returncode > 0 and ran < STARTUP_SECONDS:
                        self.stderr.write(f"{name} {why} {ran:.0f} s after it started; stopping.")
                        exit_code, stopping = child.returncode, True
                        break
                    delay = state.next_delay(ran)
                    state.restart_at = now + delay
                    taken_over = (" (a job it was running resumes once its lease runs out)"
                                  if name == "worker" else "")
                    self.stderr.write(f"{name} (pid {child.pid}) {why} after running {ran:.0f} s{taken_over}; "
                                      f"restarting it in {delay:g} s.")
                time.sleep(0.2)
        finally:
            self._stop(children)
        self.stdout.write("memoryhub stopped.")
        if exit_code:
            sys.exit(exit_code)

    @staticmethod
    def _metrics_env() -> dict[str, str]:
        """The children's environment, with PROMETHEUS_MULTIPROC_DIR: every web and q2 worker process writes its
        metrics there, so /metrics on any web worker adds up the machine (apps/core/metrics.py)."""
        directory = Path(settings.PROMETHEUS_MULTIPROC_DIR or settings.DATA_DIR / "metrics")
        directory.mkdir(parents=True, exist_ok=True)
        # What processes of an earlier run wrote: kept, their counters would add to this run's, and their files
        # (one per process) pile up.
        for stale in directory.glob("*.db"):
            stale.unlink(missing_ok=True)
        return {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)}

    def _stop(self, children: dict[str, subprocess.Popen]) -> None:
        for child in children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for name in self._wait(children, STOP_GRACE_SECONDS):
            later = " (its unfinished task runs again later)" if name == "worker" else ""
            self.stderr.write(f"{name} still busy after {STOP_GRACE_SECONDS} s; ending it{later}.")
        # The whole group: also a q2 worker or uvicorn worker whose parent has exited already.
        self._signal_groups(children.values(), signal.SIGTERM)
        for name in self._wait(children, KILL_AFTER_SECONDS):
            self.stderr.write(f"{name} did not stop in time; killing it.")
        self._signal_groups(children.values(), signal.SIGKILL)
        for child in children.values():
            child.wait()

    @staticmethod
    def _end_group(child: subprocess.Popen) -> None:
        """End what is left of a dead child's process group (its main process has exited): SIGTERM, SIGKILL."""
        for signum in (signal.SIGTERM, signal.SIGKILL):
            deadline = time.monotonic() + KILL_AFTER_SECONDS
            while time.monotonic() < deadline:
                try:
                    os.killpg(child.pid, signum)
                    signum = 0  # sent once; from then on only asks whether a member is left
                except ProcessLookupError:
                    return  # none left
                try:
                    os.waitpid(-child.pid, os.WNOHANG)  # members that became our children (serve as PID 1)
                except ChildProcessError:
                    pass
                time.sleep(0.05)

    @staticmethod
    def _wait(children: dict[str, subprocess.Popen], seconds: float) -> list[str]:
        """Wait up to `seconds` for every child to exit; return the names of those still running."""
        deadline = time.monotonic() + seconds
        while any(child.poll() is None for child in children.values()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return [name for name, child in children.items() if child.poll() is None]

    @staticmethod
    def _signal_groups(children, signum: int) -> None:
        for child in children:
            try:
                os.killpg(child.pid, signum)
            except ProcessLookupError:
                pass  # every process of the group has exited
