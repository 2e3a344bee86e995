"""conversations.0005_nfc_identifiers: session, user, agent and run ids written before the API normalised
them are rewritten in NFC; rows that would then collide keep their id and are logged."""

import importlib
import logging

from django.apps import apps as django_apps
from django.db import connection

from apps.conversations.models import Message, Session

migration = importlib.import_module("apps.conversations.migrations.0005_nfc_identifiers")

COMPOSED = "Jos\u00e9"
DECOMPOSED = "Jose\u0301"
SESSION_COMPOSED = "s\u00e9ance"
SESSION_DECOMPOSED = "se\u0301ance"
RUN_COMPOSED = "r\u00e9p"
RUN_DECOMPOSED = "re\u0301p"


def _migrate():
    with connection.schema_editor() as schema_editor:
        migration.normalise_identifiers(django_apps, schema_editor)


def _session(client, placeholder, *, run_id="run", seqs=(0,), **ids):
    """A session and messages as an older version stored them: ids exactly as the client sent them."""
    response = client.post(
        f"/api/v1/stores/main/sessions/{placeholder}/messages",
        {"user_id": "placeholder", "run_id": "placeholder",
         "messages": [{"role": "user", "content": f"message {seq}", "seq": seq} for seq in seqs]},
        format="json",
    )
    assert response.status_code == 202, response.content
    session = Session.objects.get(external_id=placeholder)
    Session.objects.filter(pk=session.pk).update(**ids)
    Message.objects.filter(session=session).update(client_run_id=run_id)
    return session


def test_decomposed_session_user_agent_and_run_ids_become_nfc(tenant_a):
    session = _session(tenant_a.client("write"), "p1", run_id=RUN_DECOMPOSED, external_id=SESSION_DECOMPOSED,
                       user_id=DECOMPOSED, agent_id=DECOMPOSED)

    _migrate()

    session.refresh_from_db()
    assert (session.external_id, session.user_id, session.agent_id) == (SESSION_COMPOSED, COMPOSED, COMPOSED)
    assert list(Message.objects.values_list("client_run_id", flat=True)) == [RUN_COMPOSED]
    response = tenant_a.client("read").get(f"/api/v1/stores/main/sessions/{SESSION_COMPOSED}")
    assert response.status_code == 200


def test_colliding_sessions_and_messages_keep_their_ids_and_are_logged(tenant_a, caplog):
    client = tenant_a.client("write")
    nfc_session = _session(client, "p1", external_id=SESSION_COMPOSED, user_id=COMPOSED)
    other_form = _session(client, "p2", external_id=SESSION_DECOMPOSED, user_id=DECOMPOSED, agent_id=DECOMPOSED)
    runs = _session(client, "p3", seqs=(0, 1, 2), external_id="runs", user_id="bob")
    Message.objects.filter(session=runs, client_seq__in=[0, 1]).update(client_run_id=RUN_DECOMPOSED)
    Message.objects.filter(session=runs, client_seq=2).update(client_run_id=RUN_COMPOSED, client_seq=1, seq=99)

    with caplog.at_level(logging.WARNING):
        _migrate()

    other_form.refresh_from_db()
    assert (other_form.external_id, other_form.user_id, other_form.agent_id) == (SESSION_DECOMPOSED, COMPOSED, COMPOSED)
    assert Session.objects.get(pk=nfc_session.pk).external_id == SESSION_COMPOSED
    assert str(other_form.pk) in caplog.text
    assert sorted(Message.objects.filter(session=runs).values_list("client_run_id", "client_seq")) == sorted([
        (RUN_COMPOSED, 0), (RUN_COMPOSED, 1), (RUN_DECOMPOSED, 1),
    ])
    # Both sessions are the user's now: erasing the user takes both.
    response = tenant_a.client("admin").delete(f"/api/v1/stores/main/users/{DECOMPOSED}")
    assert response.json()["sessions"] == 2
    assert list(Session.objects.values_list("external_id", flat=True)) == ["runs"]


def test_a_session_id_whose_nfc_form_would_not_fit_is_left_as_it_is(tenant_a):
    too_long = "\u0958" * 255
    session = Session.objects.create(store=tenant_a.store, external_id=too_long, user_id=too_long)

    _migrate()

    session.refresh_from_db()
    assert (session.external_id, session.user_id) == (too_long, too_long)
