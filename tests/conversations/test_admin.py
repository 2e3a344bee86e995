"""The session admin: working state, checkpoints and event log shown; terminate and restore through services."""

import pytest

from apps.conversations.models import Checkpoint, Session, SessionEvent
from apps.memories.models import Memory

BASE = "/api/v1/stores/main/sessions/s-1"


@pytest.fixture
def paused_session(tenant_a):
    client = tenant_a.client("admin")
    client.patch("/api/v1/stores/main", {"extraction_config": {"enabled": False}}, format="json")
    client.post(f"{BASE}/spawn", {
        "user_id": "alice",
        "working_memory": [{"key": "shipping-address", "value": "12 Rua Augusta"}],
        "task_state": {"description": "Replace the broken kettle", "current_step": 1, "total_steps": 2},
    }, format="json")
    client.post(f"{BASE}/scratchpad", {"content": "Warranty still valid until May"}, format="json")
    client.post(f"{BASE}/pause", {"description": "waiting for the customer"}, format="json")
    return Session.objects.get(external_id="s-1")


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
    assert f'href="{link}">1 extraction job(s) of this session' in page
    jobs_page = client.get(link)
    assert jobs_page.status_code == 200
    assert jobs_page.context["cl"].result_count == 1
    assert {job.session_id for job in jobs_page.context["cl"].result_list} == {session.pk}
