"""The PostgreSQL channel layer's rows past their expiry are purged; live ones stay."""

from datetime import timedelta

from channels_postgres.models import GroupChannel
from channels_postgres.models import Message as LayerMessage
from django.utils import timezone

from apps.memories.services.events import live_messages_purge


def test_expired_messages_and_memberships_are_deleted_and_live_ones_kept(db):
    now = timezone.now()
    LayerMessage.objects.create(channel="specific.a!1", message=b"old", expire=now - timedelta(seconds=1))
    kept_message = LayerMessage.objects.create(channel="specific.a!2", message=b"new", expire=now + timedelta(minutes=1))
    GroupChannel.objects.create(group_key="asgi:group:store.x", channel="specific.a!1", expire=now - timedelta(seconds=1))
    kept_member = GroupChannel.objects.create(group_key="asgi:group:store.x", channel="specific.a!2",
                                              expire=now + timedelta(hours=1))

    assert live_messages_purge(now=now) == {"messages": 1, "memberships": 1}
    assert list(LayerMessage.objects.values_list("pk", flat=True)) == [kept_message.pk]
    assert list(GroupChannel.objects.values_list("pk", flat=True)) == [kept_member.pk]
