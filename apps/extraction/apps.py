from django.apps import AppConfig


class ExtractionConfig(AppConfig):
    name = "apps.extraction"
    label = "extraction"

    def ready(self):
        from django.core import checks

        from apps.extraction.checks import extraction_settings_check

        checks.register(extraction_settings_check)
