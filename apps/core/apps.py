import os

from django.apps import AppConfig


def close_connection_pools_before_fork() -> None:
    """Close the psycopg connection pools before this process forks (django-q2 forks its workers).

    A child would inherit the pool's open connections and use them alongside the parent and its
    siblings: several processes on one PostgreSQL socket get each other's results. The pool's
    threads do not survive a fork either. Closed here, each process opens a pool of its own on first use.
    """
    from django.db import connections

    for connection in connections.all():
        pools = getattr(connection, "_connection_pools", None)  # PostgreSQL backend with OPTIONS["pool"]
        if not pools or connection.alias not in pools:
            continue
        if not connection.in_atomic_block:
            connection.close()  # hands the connection back to the pool, which closes it next
        connection.close_pool()


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self):
        from django.urls import register_converter

        from apps.core import schema  # noqa: F401  (registers the OpenAPI auth extension)
        from apps.core.identifiers import IdentifierConverter, IdentifierPathConverter

        # Before any URLconf is loaded (URLconfs load on the first request or check).
        register_converter(IdentifierConverter, "identifier")
        register_converter(IdentifierPathConverter, "identifier_path")

        os.register_at_fork(before=close_connection_pools_before_fork)

        from django_q.signals import post_spawn

        from apps.core.health import start_worker_heartbeat

        # In each q2 worker process, once it is forked: its heartbeat, which /readyz looks for.
        post_spawn.connect(start_worker_heartbeat, dispatch_uid="core.worker_heartbeat")
