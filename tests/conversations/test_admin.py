"""The session admin: working state, checkpoints and event log shown; terminate and restore through services."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.conversations.models import Checkpoint, Message, Session, SessionEvent
from apps.memories.models import Memory
from tests.admin_rows import add_admin_rows

BASE = "/api/v1/stores/main/sessions/s-1"


@pytest.fixture
def paused_session(tenant_a, configure_store):
    configure_store(tenant_a.store, extraction_config={"enabled": False})
    client = tenant_a.client("admin")
    spawned = client.post(f"{BASE}/spawn", {
        "user_id": "alice",
        "working_memory": [{"key": "shipping-address", "value": "12 Rua Augusta"}],
        "task_state": {"description": "Replace the broken kettle", "current_step": 1, "total_steps": 2},
    }, format="json")
    assert spawned.status_code == 201, spawned.content
    noted = client.post(f"{BASE}/scratchpad", {"content": "Warranty still valid until May"}, format="json")
    assert noted.status_code == 201, noted.content
    paused = client.post(f"{BASE}/pause", {"description": "waiting for the customer"}, format="json")
    assert paused.status_code == 200, paused.content
    return Session.objects.get(external_id="s-1", status="paused")


def test_session_page_shows_working_state_checkpoints_and_events(client, tenant_a, paused_session):
    client.force_login(tenant_a.reviewer)
    page = client.get(f"/admin/conversations/session/{paused_session.pk}/change/").content.decode()
    for text in ("shipping-address", "12 Rua Augusta", "Replace the broken kettle", "Warranty still valid until May",
                 "waiting for the customer", "Event log", "spawn", "pause"):
        assert text in page, text


def test_tenant_admin_restores_a_checkpoint_and_terminates(client, tenant_a, paused_session):
    api = tenant_a.client("admin")
    api.put(f"{BASE}/working-memory/shipping-address", {"value": "somewhere else"}, format="json")
    checkpoint = Checkpoint.objects.get()
    client.force_login(tenant_a.admin)
    response = client.post("/admin/conversations/checkpoint/",
                           {"action": "restore_checkpoints", "_selected_action": [str(checkpoint.pk)]}, follow=True)
    assert "Restored checkpoint(s): 1." in response.content.decode()
    assert api.get(f"{BASE}/working-memory/shipping-address").json()["value"] == "12 Rua Augusta"
    restore = SessionEvent.objects.get(event="restore")
    assert (restore.actor_type, restore.actor_label) == ("user", "acme-admin")

    response = client.post("/admin/conversations/session/",
                           {"action": "terminate_sessions", "_selected_action": [str(paused_session.pk)]}, follow=True)
    assert "Terminated session(s): 1." in response.content.decode()
    paused_session.refresh_from_db()
    assert paused_session.status == "terminated"
    assert Memory.objects.get(memory_type="episode").pk == paused_session.episode_memory_id
    again = client.post("/admin/conversations/session/",
                        {"action": "terminate_sessions", "_selected_action": [str(paused_session.pk)]}, follow=True)
    assert "already terminated" in again.content.decode()
    assert Memory.objects.filter(memory_type="episode").count() == 1


def test_reviewers_and_other_tenants_cannot_restore_or_terminate(client, tenant_a, tenant_b, paused_session):
    checkpoint = Checkpoint.objects.get()
    for user in (tenant_a.reviewer, tenant_b.admin):
        client.force_login(user)
        client.post("/admin/conversations/checkpoint/",
                    {"action": "restore_checkpoints", "_selected_action": [str(checkpoint.pk)]})
        client.post("/admin/conversations/session/",
                    {"action": "terminate_sessions", "_selected_action": [str(paused_session.pk)]})
    paused_session.refresh_from_db()
    assert paused_session.status == "paused"
    assert not SessionEvent.objects.filter(event__in=["restore", "terminate"]).exists()
    client.force_login(tenant_b.admin)
    assert client.get(f"/admin/conversations/session/{paused_session.pk}/change/").status_code == 302
    assert client.get(f"/admin/conversations/checkpoint/{checkpoint.pk}/change/").status_code == 302


def test_session_page_links_to_exactly_its_extraction_jobs(client, tenant_a):
    api = tenant_a.client("admin")
    for session_id in ("s-1", "s-2"):
        api.post(f"/api/v1/stores/main/sessions/{session_id}/messages",
                 {"user_id": "alice", "messages": [{"role": "user", "content": "I live in Lisbon"}]}, format="json")
    session = Session.objects.get(external_id="s-1")
    client.force_login(tenant_a.reviewer)
    page = client.get(f"/admin/conversations/session/{session.pk}/change/").content.decode()
    link = f"/admin/extraction/extractionjob/?session__id__exact={session.pk}"
    assert f'href="{link}">1 extraction jobs</a>' in page
    jobs_page = client.get(link)
    assert jobs_page.status_code == 200
    assert jobs_page.context["cl"].result_count == 1
    assert {job.session_id for job in jobs_page.context["cl"].result_list} == {session.pk}


@pytest.fixture
def long_transcript(tenant_a):
    session = add_admin_rows(tenant_a, 1)[0]
    Message.objects.bulk_create(
        Message(session=session, seq=seq, role="user", content=[{"text": f"line {seq}"}], text=f"line {seq}")
        for seq in range(2, 1001)
    )
    return session


def test_a_long_transcript_shows_its_latest_rows_and_links_to_all_of_them(client, tenant_a, long_transcript):
    client.force_login(tenant_a.reviewer)

    page = client.get(f"/admin/conversations/session/{long_transcript.pk}/change/").content.decode()

    shown = [int(seq) for seq in re.findall(r'<td class="field-text">\s*<p>line (\d+)</p>', page)]
    assert shown == list(range(951, 1001))  # the latest 50, in order
    link = f"/admin/conversations/message/?session__id__exact={long_transcript.pk}"
    assert "latest 50 of 1000" in page
    assert f'href="{link}"' in page
    full_list = client.get(link)
    assert full_list.status_code == 200
    assert full_list.context["cl"].result_count == 1000
    assert len(full_list.context["cl"].result_list) == 100  # one page of it


def test_the_session_page_costs_the_same_queries_for_a_short_and_a_long_transcript(client, tenant_a, long_transcript):
    short = add_admin_rows(tenant_a, 1)[0]
    client.force_login(tenant_a.reviewer)
    client.get(f"/admin/conversations/session/{short.pk}/change/")

    with CaptureQueriesContext(connection) as short_page:
        client.get(f"/admin/conversations/session/{short.pk}/change/")
    with CaptureQueriesContext(connection) as long_page:
        client.get(f"/admin/conversations/session/{long_transcript.pk}/change/")

    assert len(long_page) <= len(short_page) + 1  # the count of the capped transcript


def test_other_tenants_cannot_read_a_transcript_through_the_full_list(client, tenant_b, long_transcript):
    client.force_login(tenant_b.admin)

    response = client.get(f"/admin/conversations/message/?session__id__exact={long_transcript.pk}")

    assert response.status_code == 200 and response.context["cl"].result_count == 0


def test_the_checkpoint_page_restores_it_for_tenant_admins(client, tenant_a, paused_session):
    api = tenant_a.client("admin")
    api.put(f"{BASE}/working-memory/shipping-address", {"value": "somewhere else"}, format="json")
    checkpoint = Checkpoint.objects.get()
    page_url = f"/admin/conversations/checkpoint/{checkpoint.pk}/change/"
    restore_url = f"/admin/conversations/checkpoint/{checkpoint.pk}/restore/"
    client.force_login(tenant_a.admin)

    page = client.get(page_url).content.decode()
    confirmation = client.get(restore_url).content.decode()
    response = client.post(restore_url)

    assert f'href="{restore_url}"' in page
    assert f'action="{restore_url}"' in confirmation and "csrfmiddlewaretoken" in confirmation
    assert response.status_code == 302
    assert response.url == f"/admin/conversations/session/{paused_session.pk}/change/"
    assert api.get(f"{BASE}/working-memory/shipping-address").json()["value"] == "12 Rua Augusta"
    restore = SessionEvent.objects.get(event="restore")
    assert (restore.actor_type, restore.actor_label, restore.checkpoint_id) == ("user", "acme-admin", checkpoint.pk)


def test_reviewers_and_other_tenants_get_no_restore_button(client, tenant_a, tenant_b, paused_session):
    checkpoint = Checkpoint.objects.get()
    restore_url = f"/admin/conversations/checkpoint/{checkpoint.pk}/restore/"
    client.force_login(tenant_a.reviewer)

    page = client.get(f"/admin/conversations/checkpoint/{checkpoint.pk}/change/").content.decode()
    assert restore_url not in page
    assert client.get(restore_url).status_code == 403
    assert client.post(restore_url).status_code == 403
    client.force_login(tenant_b.admin)
    assert client.post(restore_url).status_code == 302  # not found: back to the admin index
    assert not SessionEvent.objects.filter(event="restore").exists()


def test_a_sessions_history_is_its_event_log(client, tenant_a, paused_session):
    other = add_admin_rows(tenant_a, 1)[0]
    client.force_login(tenant_a.reviewer)

    response = client.get(f"/admin/conversations/session/{paused_session.pk}/history/", follow=True)

    assert response.redirect_chain[0][0] == (
        f"/admin/conversations/sessionevent/?session__id__exact={paused_session.pk}"
    )
    events = response.context["cl"].result_list
    assert [event.event for event in events] and {event.session_id for event in events} == {paused_session.pk}
    assert other.pk not in {event.session_id for event in events}
