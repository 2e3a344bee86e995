"""Logins to the admin and the console: after LOGIN_FAILURE_LIMIT failures for one username from one address, that
pair is refused with a 429 page saying why, even with the right password, until the lockout ends or is reset."""

from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

PASSWORD = "pw-admin-123!"
PAGES = {"admin": "/admin/login/?next=/admin/", "console": "/review/login/"}


def _log_in(client: Client, page: str, password: str, username: str = "acme-admin"):
    return client.post(PAGES[page], {"username": username, "password": password, "next": "/review/"})


@pytest.mark.parametrize("page", ["admin", "console"])
def test_fifty_wrong_passwords_lock_the_username_from_that_address(tenant_a, page):
    client = Client()
    statuses = [_log_in(client, page, f"guess-{number}").status_code for number in range(50)]
    assert statuses == [200] * 4 + [429] * 46  # LOGIN_FAILURE_LIMIT = 5: the fifth failure locks

    refused = _log_in(client, page, PASSWORD)
    assert refused.status_code == 429 and refused["Retry-After"] == str(15 * 60)
    body = refused.content.decode()
    assert "Too many failed logins for this username from your address" in body
    assert "refused for 15 minutes" in body
    assert "_auth_user_id" not in client.session
    # The page is the login page itself, with its form (here: the console's marker, or the admin's form).
    assert ('data-testid="login-error"' if page == "console" else 'id="login-form"') in body

    # Another username from the same address, and the same username from another address, may still log in.
    assert _log_in(Client(), page, "pw-reviewer-123!", username="acme-reviewer").status_code == 302
    assert _log_in(Client(REMOTE_ADDR="192.0.2.9"), page, PASSWORD).status_code == 302


def test_the_lockout_ends_after_its_time(tenant_a):
    client = Client()
    for number in range(5):
        _log_in(client, "console", f"guess-{number}")
    assert _log_in(client, "console", PASSWORD).status_code == 429
    with time_machine.travel(timezone.now() + timedelta(minutes=16)):
        assert _log_in(client, "console", PASSWORD).status_code == 302


def test_an_administrator_can_lift_a_lockout(tenant_a):
    client = Client()
    for number in range(5):
        _log_in(client, "admin", f"guess-{number}")
    assert _log_in(client, "admin", PASSWORD).status_code == 429
    call_command("axes_reset_username", "acme-admin", verbosity=0)
    assert _log_in(client, "admin", PASSWORD).status_code == 302


def test_a_success_clears_earlier_failures(tenant_a):
    client = Client()
    for number in range(4):
        assert _log_in(client, "console", f"guess-{number}").status_code == 200
    assert _log_in(client, "console", PASSWORD).status_code == 302
    client.post("/review/logout/")
    assert [_log_in(client, "console", f"again-{n}").status_code for n in range(4)] == [200] * 4


def test_no_lockout_when_it_is_turned_off(tenant_a, settings):
    settings.AXES_ENABLED = False  # what LOGIN_FAILURE_LIMIT=0 sets
    client = Client()
    assert {_log_in(client, "console", f"guess-{number}").status_code for number in range(10)} == {200}
    assert _log_in(client, "console", PASSWORD).status_code == 302


def test_failed_logins_keep_no_password(tenant_a):
    from axes.models import AccessAttempt

    for number in range(2):
        _log_in(Client(), "console", f"secret-guess-{number}")
    attempt = AccessAttempt.objects.get(username="acme-admin")
    assert attempt.failures_since_start == 2 and "secret-guess" not in attempt.post_data


def test_a_login_without_a_request_is_not_subject_to_the_lockout(tenant_a):
    # The test client's login() calls authenticate() without a request (so do shells and scripts).
    assert Client().login(username="acme-admin", password=PASSWORD)
