import time

from django.core.management.base import BaseCommand

from apps.core.embeddings.base import get_embedder, resolve_embedding_config


class Command(BaseCommand):
    help = ("Load the packaged MiniLM model as the local embedder runs it, making its ONNX export from the shipped weights "
            "when there is none yet (once per data directory), so the first extraction or search of a new install does "
            "not wait for it.")

    def handle(self, *args, **options):
        started = time.monotonic()
        model, dimension = resolve_embedding_config(provider="local", model=None, dimension=None)
        embedder = get_embedder(provider="local", model=model, dimension=dimension)
        embedder.embed(["warm up"])
        self.stdout.write(f"Local embedder {model} ready on {embedder.runtime} in {time.monotonic() - started:.1f} s")
