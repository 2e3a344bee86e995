"""Filters of the review console's templates. `reveal` is the one way untrusted text reaches a page."""

import json

from django import template
from django.urls import NoReverseMatch, reverse

from apps.memories.models import Memory
from apps.review import text

register = template.Library()


@register.filter(is_safe=False)
def reveal(value):
    """Escape, then mark invisible and bidirectional control characters visibly (apps.review.text)."""
    return text.reveal(value)


@register.filter
def has_hidden(value) -> bool:
    return text.has_hidden_characters(value)


@register.filter
def percent(value) -> str:
    if value is None:
        return "–"
    return f"{round(float(value) * 100)}%"


@register.filter
def as_json(value) -> str:
    """A JSON value as readable text (escaped by the template as any string is)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=None)


@register.filter
def duration_ms(value) -> str:
    if value is None:
        return "–"
    value = int(value)
    if value < 1000:
        return f"{value} ms"
    if value < 60_000:
        return f"{value / 1000:.1f} s"
    return f"{value / 60_000:.1f} min"


@register.filter
def seconds(value) -> str:
    if value is None:
        return "–"
    value = float(value)
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 120:
        return f"{value:.1f} s"
    if value < 7200:
        return f"{value / 60:.1f} min"
    return f"{value / 3600:.1f} h"


@register.simple_tag
def memory_types():
    return Memory.Type.choices


@register.simple_tag
def customer_url(user_id, memory=None) -> str:
    """The customer's page (at `memory`, when given); "" for an id no URL can hold."""
    try:
        url = reverse("review:customer", args=[user_id])
    except NoReverseMatch:
        return ""
    if memory is not None:
        url += f"?memory={memory.pk}#memory-{memory.pk}"
    return url


@register.simple_tag
def session_url(store_id, session_id, seq=None) -> str:
    """A session's transcript (at message `seq`, on the page that holds it, when given)."""
    try:
        url = reverse("review:session", args=[store_id, session_id])
    except NoReverseMatch:
        return ""
    if seq is not None:
        url += f"?at={int(seq)}#m-{int(seq)}"
    return url


@register.simple_tag(takes_context=True)
def page_url(context, number) -> str:
    """The current page's URL with `page` set to `number`, the other parameters kept."""
    query = context["request"].GET.copy()
    query["page"] = number
    return "?" + query.urlencode()


@register.filter
def get_item(mapping, key):
    """mapping[key], or None: for dicts keyed by what a template holds (a status, a session's pk)."""
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.filter
def status_label(value) -> str:
    """A memory status as people read it ("pending_review" -> "Pending review")."""
    return Memory.Status(value).label if value in Memory.Status.values else value
