from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import ApplicationError
from apps.portability.backup import database_restore


class Command(BaseCommand):
    help = ("Restore a backup_db dump into a new database on the same server (refused if it exists). Point "
            "memoryhub at it with EMBEDDED_PG_DATABASE (or DATABASE_URL) once it is done.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="A dump written by backup_db (or pg_dump --format=custom)")
        parser.add_argument("--database", required=True, help="The new database to restore into")

    def handle(self, *args, path, database, **options):
        if not Path(path).is_file():
            raise CommandError(f"No such file: {path}")
        try:
            database_restore(path=Path(path), database=database)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stderr.write(f"Restored {path} into database {database!r}.")
