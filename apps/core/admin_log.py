"""The admin's log ("Recent actions") quotes the objects it records: its object_repr is the object's
str() at the time (a memory's first 80 characters). Deleting data for good deletes those entries too."""

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import models
from django.db.models.functions import Cast

# Deep enough for a session's rows and a memory's history; a bound, because a cascade can loop (a model
# whose rows cascade to rows of the same model).
MAX_CASCADE_DEPTH = 4


def admin_log_forget(*querysets: models.QuerySet) -> int:
    """Delete the admin log entries of the rows of `querysets` and of the rows their deletion cascades to
    (a session's messages, checkpoints...). Call it before deleting the rows: it finds them by query."""
    condition = models.Q()
    pending = [(queryset, 0) for queryset in querysets]
    while pending:
        queryset, depth = pending.pop()
        model = queryset.model
        row_ids = queryset.order_by().values(_pk=Cast("pk", models.TextField()))
        content_type = ContentType.objects.get_for_model(model, for_concrete_model=False)
        condition |= models.Q(content_type=content_type, object_id__in=row_ids)
        if depth == MAX_CASCADE_DEPTH:
            continue
        for relation in model._meta.related_objects:
            if getattr(relation, "on_delete", None) is models.CASCADE:
                children = relation.related_model._base_manager.filter(
                    **{f"{relation.field.name}__in": queryset.order_by().values("pk")}
                )
                pending.append((children, depth + 1))
    if not condition:
        return 0
    deleted, _ = LogEntry.objects.filter(condition).delete()
    return deleted
