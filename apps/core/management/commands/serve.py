import os
import signal
import subprocess
import sys
import time

from django.core.management.base import BaseCommand


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
                "--no-access-log" if os.environ.get("ACCESS_LOG", "true") == "false" else "--access-log",
            ],
        }
        if not no_worker:
            commands["worker"] = [python, "manage.py", "qcluster"]

        children = {name: subprocess.Popen(argv) for name, argv in commands.items()}
        stopping = False

        def request_stop(signum, frame):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        self.stdout.write(f"memoryhub on http://{host}:{port} ({', '.join(children)}); Ctrl-C to stop.")

        exit_code = 0
        while not stopping:
            for name, child in children.items():
                if child.poll() is not None:
                    self.stderr.write(f"{name} exited with code {child.returncode}; stopping.")
                    exit_code = child.returncode or 1
                    stopping = True
            time.sleep(0.2)

        for child in children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 20
        for name, child in children.items():
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.stderr.write(f"{name} did not stop in time; killing it.")
                child.kill()
                child.wait()
        self.stdout.write("memoryhub stopped.")
        if exit_code:
            sys.exit(exit_code)
