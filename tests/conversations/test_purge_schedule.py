"""Expired working state is deleted by a django-q2 schedule that the migrations create."""

from datetime import timedelta
from pydoc import locate

import time_machine
from django.utils import timezone
from django_q.models import Schedule

from apps.conversations import tasks
from apps.conversations.models import Checkpoint, WorkingMemoryItem

BASE = "/api/v1/stores/main/sessions/s-1"


def test_the_purge_schedule_runs_every_minute_and_points_at_the_task(db):
    schedule = Schedule.objects.get(name="working-state-purge")
    assert (schedule.schedule_type, schedule.minutes, schedule.repeats) == (Schedule.MINUTES, 1, -1)
    assert locate(schedule.func) is tasks.purge_expired


def test_the_purge_deletes_only_what_has_expired(tenant_a):
    client = tenant_a.client("write")
    client.post(f"{BASE}/spawn", {"user_id": "alice", "working_memory": [
        {"key": "short", "value": 1, "ttl_seconds": 60},
        {"key": "long", "value": 2, "ttl_seconds": 3600},
        {"key": "forever", "value": 3},
    ]}, format="json")
    client.post(f"{BASE}/checkpoints", {"ttl_seconds": 120}, format="json")
    kept = client.post(f"{BASE}/checkpoints", {"ttl_seconds": 0}, format="json").json()["id"]
    with time_machine.travel(timezone.now() + timedelta(minutes=10), tick=False):
        assert tasks.purge_expired() == {"working_memory_items": 1, "checkpoints": 1}
        assert tasks.purge_expired() == {"working_memory_items": 0, "checkpoints": 0}
    assert sorted(WorkingMemoryItem.objects.values_list("key", flat=True)) == ["forever", "long"]
    assert [str(pk) for pk in Checkpoint.objects.values_list("pk", flat=True)] == [kept]
