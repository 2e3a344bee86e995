from django.apps import AppConfig


class ExtractionConfig(AppConfig):
    name = "apps.extraction"
    label = "extraction"

    def ready(self):
        from django.core import checks
        from django_q.signals import post_spawn

        from apps.core.health import register_readiness_check
        from apps.core.metrics import register_scrape_collector
        from apps.extraction.checks import extraction_settings_check
        from apps.extraction.metrics import ExtractionJobsCollector
        from apps.extraction.selectors import extraction_queue_readiness
        from apps.extraction.tasks import start_lease_sweep

        checks.register(extraction_settings_check)
        register_readiness_check("queue", extraction_queue_readiness)
        # Jobs by state and the queue's lag, read at each /metrics scrape (apps/extraction/metrics.py).
        register_scrape_collector(ExtractionJobsCollector())
        # In each q2 worker process, once it is forked: the sweep that revives jobs whose lease ran out.
        post_spawn.connect(start_lease_sweep, dispatch_uid="extraction.lease_sweep")
