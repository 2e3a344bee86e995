from django.core.management.base import BaseCommand, CommandError

from apps.core.errors import ApplicationError
from apps.tenancy.models import Tenant
from apps.tenancy.services import api_key_issue


class Command(BaseCommand):
    help = "Create an API key for a tenant and print it (it is shown only once)."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True, help="Tenant slug")
        parser.add_argument("--name", required=True, help="A label for the key, e.g. 'support-bot'")
        parser.add_argument(
            "--scopes", default="read,write", help="Comma-separated: read, write, admin (default read,write)"
        )
        parser.add_argument("--stores", default="", help="Comma-separated store names to limit the key to")

    def handle(self, *args, tenant, name, scopes, stores, **options):
        try:
            tenant_obj = Tenant.objects.get(slug=tenant)
        except Tenant.DoesNotExist as exc:
            raise CommandError(f"No tenant with slug {tenant!r}.") from exc
        try:
            issued = api_key_issue(
                tenant=tenant_obj,
                name=name,
                scopes=[scope.strip() for scope in scopes.split(",") if scope.strip()],
                store_names=[store.strip() for store in stores.split(",") if store.strip()],
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stderr.write(f"Created API key {issued.api_key.prefix}… ({', '.join(issued.api_key.scopes)}).")
        self.stderr.write("Store it now: it cannot be shown again.")
        self.stdout.write(issued.raw_key)
