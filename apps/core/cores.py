"""How many CPU cores this process may run on."""

import os


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system has one, as in a container pinned to some
    cores), else every core; at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1
