"""Logging in to the console, the way between it and the Django admin, and the layout's rules for small
screens and untrusted text (the browser tests check the rendering itself)."""

import re
from pathlib import Path

from django.contrib.auth import get_user_model
from django.test import Client

STATIC = Path(__file__).resolve().parents[2] / "static" / "review"


def test_staff_log_in_with_the_consoles_own_page(tenant_a):
    client = Client()
    page = client.get("/review/login/")
    assert page.status_code == 200 and 'data-testid="login-form"' in page.content.decode()
    response = client.post("/review/login/?next=/review/jobs/", {
        "username": "acme-reviewer", "password": "pw-reviewer-123!", "next": "/review/jobs/"})
    assert response.status_code == 302 and response["Location"] == "/review/jobs/"
    assert client.get("/review/").status_code == 200
    logout = client.post("/review/logout/")
    assert logout.status_code == 302 and client.get("/review/").status_code == 302


def test_non_staff_cannot_log_in(db):
    get_user_model().objects.create_user("customer", password="pw-customer-123!")
    response = Client().post("/review/login/", {"username": "customer", "password": "pw-customer-123!"})
    assert response.status_code == 200 and "not a staff account" in response.content.decode()


def test_the_admin_links_to_the_console_and_back(tenant_a, browsers):
    admin_index = browsers.admin.get("/admin/").content.decode()
    assert 'href="/review/"' in admin_index and 'data-testid="admin-review-link"' in admin_index
    assert 'href="/admin/"' in browsers.reviewer.get("/review/").content.decode()


def test_staff_of_no_tenant_are_told_why_the_pages_are_empty(outsider, browsers):
    body = browsers.outsider.get("/review/").content.decode()
    assert 'data-testid="no-tenant"' in body


def test_the_stylesheet_has_a_narrow_screen_layout_without_sideways_scrolling():
    css = (STATIC / "console.css").read_text()
    assert "@media (max-width: 719px)" in css and "@media (min-width: 720px)" in css
    assert re.search(r"body \{[^}]*overflow-x: hidden", css)
    assert "overflow-wrap: anywhere" in css  # a long word in a memory cannot widen the page
    # No fixed width wider than a 390 px phone outside the wide-screen rules.
    narrow = css.split("@media (min-width: 720px)")[0]
    widths = [int(value) for value in re.findall(r"(?<![-\w])(?:min-)?width:\s*(\d+)px", narrow)]
    assert all(width <= 390 for width in widths), widths
    assert "max-width: 1240px" in css  # a wide content column at 1280 px


def test_pages_declare_a_viewport_and_load_the_script_and_styles(review_world, browsers):
    body = browsers.reviewer.get("/review/").content.decode()
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in body
    assert "/static/review/console.css" in body and "/static/review/console.js" in body
    assert "https://" not in body  # nothing from a CDN


def test_the_script_opens_a_socket_per_store_and_reconnects():
    script = (STATIC / "console.js").read_text()
    assert '"/ws/stores/" + storeId + "/events/"' in script
    assert "backoff(attempt)" in script and "requestSubmit" in script
    assert "innerHTML" not in script.replace("template.innerHTML", "").replace("slot.innerHTML", "")
