import os
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.memories.models import MemoryStore
from apps.portability.selectors import store_export_lines


class Command(BaseCommand):
    help = ("Export a store as JSON Lines: a header, then its memories (with history and provenance), sessions "
            "(with working state) and messages; streamed, in one consistent snapshot.")

    def add_arguments(self, parser):
        parser.add_argument("tenant", help="Tenant slug")
        parser.add_argument("store", help="Store name")
        parser.add_argument("--out", default="-", help="File to write (default -, standard output)")
        parser.add_argument("--with-embeddings", action="store_true",
                            help="Include each memory's vector: an import into a store of the same embedder then "
                                 "computes none")
        parser.add_argument("--user", help="Only this user's memories, sessions and messages")

    def handle(self, *args, tenant, store, out, with_embeddings, user, **options):
        found = MemoryStore.objects.select_related("tenant").filter(tenant__slug=tenant, name=store).first()
        if found is None:
            raise CommandError(f"No store {store!r} in tenant {tenant!r}.")
        lines = store_export_lines(store=found, with_embeddings=with_embeddings, user_id=user)
        if out == "-":
            written = self._write(lines, self.stdout)  # OutputWrapper: adds the newline
        else:
            path = Path(out)
            partial = path.with_name(path.name + ".partial")
            with open(partial, "w", encoding="utf-8", newline="\n") as file:
                written = self._write(lines, file)
            os.replace(partial, path)  # an export cut short never looks like a finished one
        self.stderr.write(f"Exported {tenant}/{store}: {written - 1:,} records after the header"
                          + (f" to {out}" if out != "-" else "") + ".")

    def _write(self, lines, file) -> int:
        count = 0
        for line in lines:
            file.write(line if file is self.stdout else line + "\n")
            count += 1
        file.flush()
        return count
