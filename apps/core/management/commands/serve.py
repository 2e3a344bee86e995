import os
import signal
import subprocess
import sys
import time

from django.core.management.base import BaseCommand

# After this long a stopping child still has work in hand (a q2 worker in the middle of a task, a slow
# request): its process group is ended. That is safe for a task: q2 delivers an unacknowledged task again
# after Q_RETRY_SECONDS, and an extraction job is claimed under a lease that expires.
STOP_GRACE_SECONDS = 5
# SIGTERM ends every q2 process at once (its sentinel and workers keep SIGTERM's default action);
# SIGKILL after this is for a process that ignores it, which none of ours should.
KILL_AFTER_SECONDS = 5


class Command(BaseCommand):
    help = "Serve the ASGI app (HTTP + websockets) with uvicorn and run a django-q2 worker; Ctrl-C stops both."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("MEMORYHUB_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("MEMORYHUB_PORT", "8000")))
        parser.add_argument("--web-workers", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "1")))
        parser.add_argument("--no-worker", action="store_true", help="Serve HTTP only, without the q2 worker")

    def handle(self, *args, host, port, web_workers, no_worker, **options):
        python = sys.executable
        commands = {
            "web": [
                python, "-m", "uvicorn", "memoryhub.asgi:application",
                "--host", host, "--port", str(port), "--workers", str(web_workers),
                "--timeout-graceful-shutdown", str(STOP_GRACE_SECONDS),
                "--no-access-log" if os.environ.get("ACCESS_LOG", "true") == "false" else "--access-log",
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

        children: dict[str, subprocess.Popen] = {}
        exit_code = 0
        try:
            for name, argv in commands.items():
                # Each child leads its own process group, so that a terminal's Ctrl-C reaches serve alone and
                # serve stops each child one way, whatever the signal: SIGTERM to its main process, and if that
                # is not enough, to its whole group. q2 keeps SIGINT away from its workers and on SIGTERM lets
                # them finish their task first; a SIGKILL to the q2 main process alone would orphan them.
                children[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, process_group=0)
            self.stdout.write(f"memoryhub on http://{host}:{port} ({', '.join(children)}); Ctrl-C to stop.")
            while not stopping:
                for name, child in children.items():
                    if child.poll() is not None:
                        self.stderr.write(f"{name} exited with code {child.returncode}; stopping.")
                        exit_code = child.returncode or 1
                        stopping = True
                time.sleep(0.2)
        finally:
            self._stop(children)
        self.stdout.write("memoryhub stopped.")
        if exit_code:
            sys.exit(exit_code)

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
