from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import ApplicationError
from apps.tenancy.services import tenant_create


class Command(BaseCommand):
    help = "Create a tenant."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--slug", default=None)

    def handle(self, *args, name, slug, **options):
        try:
            tenant = tenant_create(name=name, slug=slug)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(tenant.slug)
