"""Exit 0 when memoryhub answers 200 at a health URL: `python deploy/healthcheck.py [--url URL] [--wait SECONDS]`.

For probes that run on the server's own machine or container (systemd's ExecStartPost, compose's healthcheck).
Django answers 400 to a Host it does not serve, so the request carries the first name in ALLOWED_HOSTS.
Standard library only.
"""

import argparse
import os
import sys
import time
import urllib.error
import urllib.request


def _served_host() -> str:
    for name in os.environ.get("ALLOWED_HOSTS", "").split(","):
        name = name.strip()
        if name and name != "*" and not name.startswith("."):
            return name
    return "localhost"


def _answers(url: str, host: str) -> bool:
    request = urllib.request.Request(url, headers={"Host": host})
    try:
        with urllib.request.urlopen(request, timeout=3) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000/healthz")
    parser.add_argument("--wait", type=float, default=0, help="keep trying this many seconds")
    args = parser.parse_args()
    host = _served_host()
    deadline = time.monotonic() + args.wait
    while True:
        if _answers(args.url, host):
            return 0
        if time.monotonic() >= deadline:
            print(f"{args.url} (Host: {host}) did not answer 200", file=sys.stderr)
            return 1
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
