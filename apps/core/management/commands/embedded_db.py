from django.conf import settings
from django.core.management.base import BaseCommand

from memoryhub.embedded_db import stop_embedded_database


class Command(BaseCommand):
    help = "Show or stop the embedded PostgreSQL server (it keeps running between `make run`s)."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["status", "stop"])

    def handle(self, *args, action, **options):
        if settings.DATABASE_URL:
            self.stdout.write("DATABASE_URL is set: the embedded server is not in use.")
            return
        if action == "stop":
            stopped = stop_embedded_database(settings.EMBEDDED_PG_DIR)
            self.stdout.write("stopped" if stopped else "not running")
        else:
            db = settings.DATABASES["default"]
            self.stdout.write(f"running: {settings.EMBEDDED_PG_DIR} (socket {db['HOST']}, database {db['NAME']})")
