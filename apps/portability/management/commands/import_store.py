import sys
import time

from django.core.management.base import BaseCommand, CommandError

from apps.core.actors import Actor
from apps.core.errors import ApplicationError
from apps.portability.services import store_import
from apps.tenancy.models import Tenant


class Command(BaseCommand):
    help = ("Import a store export (JSON Lines, from export_store) into a store, creating it from the file's header "
            "if it does not exist. Idempotent: what is already there is left as it is, so a rerun completes an "
            "interrupted import.")
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("tenant", help="Tenant slug (the tenant must exist: manage.py create_tenant)")
        parser.add_argument("store", help="Store name; created from the file's header when missing")
        parser.add_argument("--in", dest="source", default="-", help="File to read (default -, standard input)")
        parser.add_argument("--reembed", action="store_true",
                            help="Compute every vector with the store's embedder, even when the file carries vectors "
                                 "of another embedder (otherwise refused)")

    def handle(self, *args, tenant, store, source, reembed, **options):
        tenant_row = Tenant.objects.filter(slug=tenant).first()
        if tenant_row is None:
            raise CommandError(f"No tenant with slug {tenant!r}.")
        last_report = [time.monotonic()]

        def progress(result):
            if options["verbosity"] >= 1 and time.monotonic() - last_report[0] >= 5:
                last_report[0] = time.monotonic()
                counts = result.counts
                self.stderr.write(f"  ... {counts['memories']:,} memories, {counts['sessions']:,} sessions, "
                                  f"{counts['messages']:,} messages imported")

        stream = options.get("stdin") or sys.stdin
        try:
            if source == "-":
                result = self._import(tenant_row, store, stream, reembed, progress)
            else:
                with open(source, encoding="utf-8") as file:
                    result = self._import(tenant_row, store, file, reembed, progress)
        except OSError as exc:
            raise CommandError(f"Cannot read {source}: {exc}") from exc
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        counts = result.counts
        self.stdout.write(
            f"Imported into {tenant}/{result.store.name}{' (created)' if result.created_store else ''}: "
            f"{counts['memories']:,} memories ({counts['memories_present']:,} already there, "
            f"{counts['memories_duplicate']:,} duplicates of live ones), {counts['revisions']:,} revisions, "
            f"{counts['sessions']:,} sessions ({counts['sessions_present']:,} already there), "
            f"{counts['messages']:,} messages ({counts['messages_present']:,} already there or in a session that was); "
            f"embeddings {result.embeddings}."
        )

    def _import(self, tenant, store, lines, reembed, progress):
        return store_import(tenant=tenant, store_name=store, lines=lines, reembed=reembed, progress=progress,
                            actor=Actor(kind="system", id="", label="manage.py import_store"))
