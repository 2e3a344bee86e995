"""The system check of the extraction settings: a value the extractors cannot use stops `manage.py check`
(and migrate, serve and qcluster, which run the checks) with an error naming the setting.

settings.py only reads these values: it is imported before the apps, so the rules stay with the code
that owns them (LLMConfig for the LLM_* settings, the store settings for the extractor choices).
"""

from django.conf import settings
from django.core.checks import Error
from django.core.exceptions import ImproperlyConfigured

from apps.extraction.extractors.llm.config import llm_config_from_settings
from apps.memories.store_settings import LIMITS, extractor_problem


def extraction_settings_check(app_configs=None, **kwargs) -> list[Error]:
    errors = []
    try:
        llm_config_from_settings()
    except ImproperlyConfigured as exc:
        errors.append(Error(str(exc), id="extraction.E001"))
    extractor = settings.EXTRACTION_DEFAULT_EXTRACTOR
    problem = LIMITS["extraction_config"]["extractor"].problem(extractor)
    if problem:
        errors.append(Error(f"EXTRACTION_DEFAULT_EXTRACTOR {problem}, got {extractor!r}", id="extraction.E002"))
    elif problem := extractor_problem(extractor):
        errors.append(Error(f"EXTRACTION_DEFAULT_EXTRACTOR={extractor}: {problem}", id="extraction.E003"))
    return errors
