"""The review console in a real browser: Chromium driven by Playwright, against a uvicorn server and a
django-q2 worker on the test database (fixtures in tests/review/conftest.py). Every tab also fails its test
on a script error, a failed request or a dialog."""

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from django.utils import timezone

from apps.conversations.models import Session
from apps.core.actors import Actor
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory, MemoryRevision, Webhook, WebhookDelivery
from apps.memories.services import memory_update
from tests.review.conftest import EXTRACTION, conversation, pending

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

HIGHLIGHT = "rgb(255, 246, 194)"  # .message:target and .memory-row:target in console.css


@pytest.fixture
def reviewed_store(tenant_a, quiet_stores, configure_store):
    """tenant_a's store "main", where what extraction finds waits for review; extraction itself off."""
    return configure_store(tenant_a.store, review_policy="review")


def latest_revision(memory: Memory) -> MemoryRevision:
    return MemoryRevision.objects.filter(memory=memory).latest("id")


def test_a_reviewer_logs_in_with_the_consoles_form(open_tab, staff_logins, reviewed_store):
    pending(reviewed_store, "Prefers window seats")
    tab = open_tab()
    tab.goto("/review/")  # not logged in: sent to the login page
    assert "/review/login/" in tab.page.url
    tab.testid("login-username").fill("acme-reviewer")
    tab.testid("login-password").fill("not the password")
    tab.testid("login-submit").click()
    assert "Please enter a correct username and password" in tab.testid("login-error").inner_text()

    tab.testid("login-password").fill(staff_logins["acme-reviewer"])
    with tab.page.expect_navigation():
        tab.testid("login-submit").click()
    assert tab.page.url == tab.base_url + "/review/"
    assert tab.testid("current-user").inner_text() == "acme-reviewer"
    assert tab.testid("pending-count").inner_text() == "1"
    assert tab.testid("card-content").all_inner_texts() == ["Prefers window seats"]


def test_a_key_approves_the_focused_card_without_a_reload(reviewer_tab, reviewed_store):
    older = pending(reviewed_store, "Prefers window seats")
    newer = pending(reviewed_store, "Drinks oat milk")
    tab = reviewer_tab
    tab.goto("/review/")
    tab.page.evaluate("window.notReloaded = true")
    assert tab.testid("pending-count").inner_text() == "2"
    for key in "jjkj":  # newest first: the second card is the older memory
        tab.page.keyboard.press(key)
    assert tab.page.locator(".card.focused").get_attribute("data-memory-id") == str(older.pk)
    tab.page.keyboard.press("a")

    tab.page.locator(f"#card-{older.pk}").wait_for(state="detached")
    assert tab.testid("pending-count").inner_text() == "1"
    assert tab.testid("matching-count").inner_text() == "1"
    assert tab.page.evaluate("window.notReloaded") is True
    # The next card takes the focus, so the next key acts on it.
    assert tab.page.locator(".card.focused").get_attribute("data-memory-id") == str(newer.pk)
    older.refresh_from_db()
    assert older.status == Memory.Status.ACTIVE
    revision = latest_revision(older)
    assert (revision.actor_type, revision.actor_label, revision.after["status"]) == ("user", "acme-reviewer", "active")
    newer.refresh_from_db()
    assert newer.status == Memory.Status.PENDING_REVIEW


def test_edit_then_approve_from_the_keyboard(reviewer_tab, reviewed_store):
    memory = pending(reviewed_store, "Lives in Pariss")
    tab = reviewer_tab
    tab.goto("/review/")
    tab.page.keyboard.press("e")  # no card focused yet: the first one
    content = tab.page.locator(f"#card-{memory.pk}").get_by_test_id("edit-content")
    assert content.evaluate("element => element === document.activeElement")
    content.fill("Lives in Paris, France")
    tab.page.locator(f"#card-{memory.pk}").get_by_test_id("edit-reason").fill("typo")
    tab.page.locator(f"#card-{memory.pk}").get_by_test_id("edit-approve-submit").click()

    tab.page.locator(f"#card-{memory.pk}").wait_for(state="detached")
    assert tab.testid("pending-count").inner_text() == "0"
    assert tab.testid("queue-empty").is_visible()
    memory.refresh_from_db()
    assert (memory.status, memory.content) == (Memory.Status.ACTIVE, "Lives in Paris, France")
    edit, approval = MemoryRevision.objects.filter(memory=memory).order_by("id")[1:]
    assert (edit.action, edit.reason, edit.after["content"], edit.actor_label) == (
        "update", "typo", "Lives in Paris, France", "acme-reviewer")
    assert (approval.after["status"], approval.actor_label) == ("active", "acme-reviewer")


def test_reject_with_a_reason_typed_after_r_and_enter(reviewer_tab, reviewed_store):
    kept = pending(reviewed_store, "Prefers tea")
    wrong = pending(reviewed_store, "Is a cat")
    tab = reviewer_tab
    tab.goto("/review/")
    tab.page.keyboard.press("r")  # the first card: the newest
    reason = tab.page.locator(f"#card-{wrong.pk}").get_by_test_id("reject-reason")
    assert reason.evaluate("element => element === document.activeElement")
    tab.page.keyboard.type("the assistant said it, not the customer")
    tab.page.keyboard.press("Enter")

    tab.page.locator(f"#card-{wrong.pk}").wait_for(state="detached")
    assert tab.testid("pending-count").inner_text() == "1"
    assert tab.testid("card").get_attribute("data-memory-id") == str(kept.pk)
    wrong.refresh_from_db()
    assert wrong.status == Memory.Status.REJECTED
    revision = latest_revision(wrong)
    assert (revision.reason, revision.actor_label, revision.after["status"]) == (
        "the assistant said it, not the customer", "acme-reviewer", "rejected")


def test_a_cards_source_link_opens_the_transcript_at_that_message(reviewer_tab, reviewed_store):
    # 120 messages: the source is on the transcript's second page, which the link must open.
    texts = [f"Small talk number {index}" for index in range(1, 121)]
    texts[108] = "By the way, I am allergic to latex"  # seq 109, said by the user
    conversation(reviewed_store, "s-long", texts[:100])
    session = conversation(reviewed_store, "s-long", texts[100:])  # at most 100 messages a call
    memory = pending(reviewed_store, "Allergic to latex", session=session, seqs=[109])
    tab = reviewer_tab
    tab.goto("/review/")
    source = tab.page.locator(f"#card-{memory.pk}").get_by_test_id("card-source")
    assert "allergic to latex" in source.inner_text()
    with tab.page.expect_navigation():
        source.get_by_test_id("source-link").click()

    assert tab.page.url.endswith("?at=109#m-109")
    message = tab.page.locator("#m-109")
    assert message.get_by_test_id("message-text").inner_text() == "By the way, I am allergic to latex"
    assert message.evaluate("element => element.matches(':target')")
    assert message.evaluate("element => getComputedStyle(element).backgroundColor") == HIGHLIGHT
    assert message.is_visible() and tab.page.evaluate("window.scrollY") > 0  # scrolled to it
    assert "Page 2 of 2" in tab.testid("pager").inner_text()
    # And back: the message links to the memory it produced.
    link = message.get_by_test_id("message-memory-link")
    assert link.inner_text() == "Allergic to latex"
    with tab.page.expect_navigation():
        link.click()
    assert tab.page.locator(f"#memory-{memory.pk}").evaluate(
        "element => getComputedStyle(element).backgroundColor") == HIGHLIGHT
    # An assistant's message is highlighted as well when it is the target.
    tab.goto(f"/review/stores/{reviewed_store.pk}/sessions/s-long/?at=110#m-110")
    assert tab.page.locator("#m-110").evaluate("element => getComputedStyle(element).backgroundColor") == HIGHLIGHT


def test_a_customers_memories_are_searched_by_meaning(reviewer_tab, reviewed_store, add_memory):
    add_memory(reviewed_store, "Is allergic to latex")
    add_memory(reviewed_store, "Lives in Berlin")
    add_memory(reviewed_store, "Prefers tea to coffee")
    add_memory(reviewed_store, "Latex gloves give bob a rash", user_id="bob")  # another customer
    tab = reviewer_tab
    tab.goto("/review/")
    tab.testid("customer-lookup-input").fill("alice")
    with tab.page.expect_navigation():
        tab.testid("customer-lookup-input").press("Enter")
    assert tab.page.url == tab.base_url + "/review/customers/alice/"

    tab.testid("customer-search-input").fill("latex allergy")
    with tab.page.expect_navigation():
        tab.testid("customer-search-submit").click()
    hits = tab.testid("search-hit")
    assert "Is allergic to latex" in hits.first.inner_text()
    assert not any("bob" in text for text in hits.all_inner_texts())


def test_a_memorys_history_opens_in_place_as_a_word_diff(reviewer_tab, reviewed_store, add_memory):
    memory = add_memory(reviewed_store, "Works as a nurse in Leeds")
    memory_update(memory=memory, changes={"content": "Works as a doctor in Leeds"}, actor=EXTRACTION,
                  reason="promoted")
    tab = reviewer_tab
    tab.goto("/review/customers/alice/")
    row = tab.page.locator(f"#memory-{memory.pk}")
    row.get_by_test_id("history").click()
    diff = row.get_by_test_id("word-diff")
    assert diff.locator("del").inner_text().strip() == "nurse"
    assert diff.locator("ins").inner_text().strip() == "doctor"
    assert row.get_by_test_id("revision-reason").inner_text() == "Why: promoted"
    assert row.get_by_test_id("revision").count() == 2


def test_the_tenant_admin_forgets_a_customer_after_typing_the_id(admin_tab, reviewed_store, add_memory):
    session = conversation(reviewed_store, "s-alice", ["My phone is 0123 456 789", "Noted."])
    pending(reviewed_store, "Phone is 0123 456 789", session=session, seqs=[1])
    add_memory(reviewed_store, "Lives in Berlin")
    add_memory(reviewed_store, "Lives in Rome", user_id="bob")
    tab = admin_tab
    tab.goto("/review/customers/alice/")
    confirm, submit = tab.testid("forget-confirm"), tab.testid("forget-submit")
    assert submit.is_disabled()
    for almost in ("alic", "Alice", "alice "):
        confirm.fill(almost)
        assert submit.is_disabled(), almost
    confirm.fill("alice")
    assert submit.is_enabled()
    with tab.page.expect_navigation():
        submit.click()

    assert "Forgot alice" in tab.testid("message").inner_text()
    assert not Memory.objects.filter(user_id="alice").exists()
    assert not MemoryRevision.objects.filter(user_id="alice").exists()
    assert not Session.objects.filter(user_id="alice").exists()
    assert Memory.objects.filter(user_id="bob").count() == 1
    assert tab.testid("no-memories").is_visible()


def test_the_forget_section_is_not_offered_to_a_reviewer(reviewer_tab, reviewed_store, add_memory):
    add_memory(reviewed_store, "Lives in Berlin")
    reviewer_tab.goto("/review/customers/alice/")
    assert reviewer_tab.testid("customer-id").inner_text() == "alice"
    assert reviewer_tab.testid("forget-section").count() == 0


def test_a_memory_a_worker_extracts_appears_in_the_open_queue(reviewer_tab, tenant_a, configure_store, console):
    configure_store(tenant_a.store, review_policy="review")  # extraction on, by the worker; its output held
    waiting = pending(tenant_a.store, "Prefers window seats", user_id="carol")
    tab = reviewer_tab
    tab.goto("/review/")
    tab.page.locator("[data-testid='live-status'][data-state='on']").wait_for()
    assert tab.testid("pending-count").inner_text() == "1"
    tab.page.evaluate("""() => {
        window.notReloaded = true;
        new MutationObserver(() => {
            if (!window.cardArrivedAt && document.querySelectorAll("[data-testid='card']").length > 1)
                window.cardArrivedAt = Date.now();
        }).observe(document.getElementById("cards"), {childList: true});
    }""")

    started = time.monotonic()
    response = httpx.post(f"{console.base_url}/api/v1/stores/main/sessions/live-1/messages",
                          headers={"Authorization": f"Bearer {tenant_a.keys['write']}"},
                          json={"user_id": "dana", "messages": [
                              {"role": "user", "content": "My email is dana@example.com."}]}, timeout=10)
    assert response.status_code == 202, response.text
    card = tab.testid("card").filter(has_text="dana@example.com")
    card.wait_for(timeout=20_000)
    after_post = time.monotonic() - started

    memory = Memory.objects.get(user_id="dana")
    assert memory.status == Memory.Status.PENDING_REVIEW
    assert card.get_attribute("data-memory-id") == str(memory.pk)
    assert tab.testid("card").first.get_attribute("data-memory-id") == str(memory.pk)  # newest on top
    tab.page.locator("[data-testid='pending-count']", has_text="2").wait_for(timeout=5_000)
    assert tab.testid("matching-count").inner_text() == "2"
    assert tab.page.evaluate("window.notReloaded") is True
    job = ExtractionJob.objects.get(session__external_id="live-1")
    assert job.q_task_id  # run by the worker process
    # The memory committed with the job's finished_at (the bench's measure); the card arrived at cardArrivedAt.
    arrived = datetime.fromtimestamp(tab.page.evaluate("window.cardArrivedAt") / 1000, tz=UTC)
    after_commit = (arrived - job.finished_at).total_seconds()
    print(f"\nlive update: card shown {after_post:.2f} s after the message was posted, "
          f"{after_commit * 1000:.0f} ms after the worker committed the memory")
    assert after_post < 20
    assert waiting.pk  # the card that was there stays
    assert tab.page.locator(f"#card-{waiting.pk}").is_visible()


def _horizontal_overflow(tab) -> dict:
    """The page's scroll width against its width, and the visible elements that end beyond the viewport."""
    return tab.page.evaluate("""() => {
        const width = document.documentElement.clientWidth;
        const beyond = Array.from(document.querySelectorAll("body *")).filter((element) => {
            const box = element.getBoundingClientRect();
            return box.width > 1 && box.height > 1 && box.right > width + 0.5 && !element.closest(".visually-hidden");
        }).map((element) => element.tagName.toLowerCase() + "." + element.className + " " + element.getBoundingClientRect().right);
        return {scrollWidth: document.documentElement.scrollWidth, clientWidth: width, beyond: beyond.slice(0, 10)};
    }""")


def test_the_queue_and_customer_pages_fit_a_phone_and_use_a_wide_screen(open_tab, staff_logins, reviewed_store,
                                                                       add_memory):
    session = conversation(reviewed_store, "s-" + "x" * 60, ["I am allergic to latex", "Noted."])
    long_word = "https://example.com/" + "a" * 300
    pending(reviewed_store, f"Keeps notes at {long_word}", session=session, seqs=[1], confidence=0.9)
    pending(reviewed_store, "Allergic to latex", session=session, seqs=[1], user_id="alice")
    add_memory(reviewed_store, "Is allergic to latex")
    phone = open_tab(width=390, height=844)
    phone.log_in("acme-reviewer", staff_logins["acme-reviewer"])
    for path in ("/review/", "/review/customers/alice/"):
        phone.goto(path)
        overflow = _horizontal_overflow(phone)
        assert overflow["scrollWidth"] <= overflow["clientWidth"] == 390 and not overflow["beyond"], (path, overflow)

    wide = open_tab(width=1280, height=800)
    wide.log_in("acme-reviewer", staff_logins["acme-reviewer"])
    wide.goto("/review/")
    assert min(box["width"] for box in (card.bounding_box() for card in wide.testid("card-content").all())) > 500
    wide.goto("/review/customers/alice/")
    assert wide.testid("memory-content").first.bounding_box()["width"] > 500


def test_untrusted_text_is_shown_as_text_with_hidden_characters_marked(reviewer_tab, reviewed_store):
    memory = pending(reviewed_store, "<script>alert(1)</script><img src=x onerror=alert(2)> paid \u202eus 001")
    tab = reviewer_tab
    for path in ("/review/", "/review/customers/alice/", f"/review/memories/{memory.pk}/"):
        tab.goto(path)
        content = tab.page.locator("[data-testid='card-content'], [data-testid='memory-content']").first
        assert content.inner_text().startswith("<script>alert(1)</script><img src=x onerror=alert(2)> paid ")
        assert content.get_by_test_id("hidden-char").inner_text() == "⟨U+202E⟩"
        assert content.locator("script, img").count() == 0
    tab.page.wait_for_timeout(300)  # an injected handler would have run by now
    assert tab.dialogs == []


def test_selected_cards_are_rejected_together(reviewer_tab, reviewed_store):
    first, second, third = (pending(reviewed_store, text) for text in ("Is a robot", "Is a cat", "Prefers tea"))
    tab = reviewer_tab
    tab.goto("/review/")
    for key in "xjjx":  # the newest and the oldest
        tab.page.keyboard.press(key)
    assert tab.testid("selected-count").inner_text() == "2"
    tab.testid("bulk-reason").fill("made up by the model")
    tab.testid("bulk-reject").click()

    for memory in (first, third):
        tab.page.locator(f"#card-{memory.pk}").wait_for(state="detached")
    assert tab.testid("selected-count").inner_text() == "0"
    assert tab.testid("pending-count").inner_text() == "1"
    assert {memory.content: memory.status for memory in Memory.objects.all()} == {
        "Is a robot": "rejected", "Is a cat": "pending_review", "Prefers tea": "rejected"}
    assert {latest_revision(memory).reason for memory in (first, third)} == {"made up by the model"}


# --- Every page: fits a phone, and its screenshot ------------------------------------------------------------

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture
def showcase(tenant_a, reviewed_store, add_memory):
    """A store with what a support team sees on a normal day: conversations, pending memories with their
    sources, an edited memory, extraction jobs (one failed) and a webhook with its deliveries."""
    store = reviewed_store
    reviewer = Actor.for_user(tenant_a.reviewer)
    support = conversation(store, "support-2291", [
        "Hi, I moved to Lyon last month and need to change my delivery address.",
        "Of course. What is the new address?",
        "12 Rue de la République, 69002 Lyon. And please never call me before 10am.",
        "Noted: no calls before 10am.",
        "Also, I'm allergic to latex, so no latex gloves with the delivery please.",
        "Understood, I've added a note for the couriers.",
    ])
    paris = add_memory(store, "Lives in Paris", metadata={"subject": "location"})
    nurse = add_memory(store, "Works as a nurse in Leeds")
    memory_update(memory=nurse, changes={"content": "Works as a doctor at Leeds General"}, actor=reviewer,
                  reason="she was promoted, said in support-2291")
    add_memory(store, "Prefers email to phone calls", memory_type="preference")
    chat = conversation(store, "chat-88", ["My name is Robert but everyone calls me Bob.", "Hi Bob!"],
                        user_id="bob")
    now = timezone.now()
    jobs = [
        ExtractionJob.objects.create(store=store, session=support, from_seq=0, to_seq=6, trigger="turns",
                                     extractor="rules", status="succeeded", attempts=1, added=3,
                                     started_at=now + timedelta(seconds=1), finished_at=now + timedelta(seconds=2),
                                     duration_ms=840),
        ExtractionJob.objects.create(store=store, session=chat, from_seq=0, to_seq=2, trigger="session_end",
                                     extractor="llm", status="failed", attempts=3, finished_at=now + timedelta(seconds=9),
                                     error="httpx.ConnectTimeout: timed out connecting to the model"),
    ]
    pending(store, "Goes by Bob", user_id="bob", session=chat, seqs=[1], confidence=0.62)
    pending(store, "Is allergic to latex", session=support, seqs=[5], job_id=jobs[0].pk, confidence=0.93)
    pending(store, "Prefers no calls before 10am", session=support, seqs=[3], job_id=jobs[0].pk, confidence=0.74,
            memory_type="preference")
    pending(store, "Lives in Lyon", session=support, seqs=[1, 3], job_id=jobs[0].pk, confidence=0.86,
            metadata={"subject": "location", "supersedes": str(paris.pk)})  # newest: on top of the queue
    webhook = Webhook.objects.create(store=store, url="https://crm.example.com/hooks/memoryhub",
                                     description="CRM sync", event_types=["memory.created", "memory.status_changed"],
                                     secret="whsec_showcase")
    for index, (status, answer, error) in enumerate([("succeeded", 200, ""), ("succeeded", 204, ""),
                                                     ("failed", 503, "Service Unavailable")]):
        WebhookDelivery.objects.create(webhook=webhook, event_id=f"evt_{index}", event_type="memory.created",
                                       payload={}, status=status, attempts=1 if answer < 300 else 5,
                                       response_status=answer, last_error=error, duration_ms=120 + index * 40)
    return SimpleNamespace(store=store, support=support, nurse=nurse, webhook=webhook)


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


def test_every_page_fits_a_phone_and_is_photographed(open_tab, staff_logins, showcase, tmp_path):
    """Each page at 390 px without sideways scrolling; a 1280x800 screenshot of each in docs/screenshots when
    UPDATE_SCREENSHOTS=1 (committed, shown in the README), else in a temporary directory."""
    folder = SCREENSHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    store = showcase.store
    pages = {
        "queue": "/review/",
        "customer": "/review/customers/alice/",
        "session": f"/review/stores/{store.pk}/sessions/support-2291/?at=5#m-5",
        "jobs": "/review/jobs/",
        "overview": "/review/overview/",
        "webhooks": f"/review/stores/{store.pk}/webhooks/?webhook={showcase.webhook.pk}",
    }
    phone = open_tab(width=390, height=844)
    phone.log_in("acme-admin", staff_logins["acme-admin"])
    for name, path in pages.items():
        phone.goto(path)
        overflow = _horizontal_overflow(phone)
        assert overflow["scrollWidth"] <= overflow["clientWidth"] and not overflow["beyond"], (name, overflow)
    phone.goto("/review/")
    phone.page.screenshot(path=folder / "queue-390.png")

    tab = open_tab(width=1280, height=800)
    tab.goto("/review/login/")
    tab.page.screenshot(path=folder / "login.png")
    tab.log_in("acme-admin", staff_logins["acme-admin"])
    for name, path in pages.items():
        tab.goto(path)
        if name == "queue":
            tab.page.locator("[data-testid='live-status'][data-state='on']").wait_for()
            tab.page.keyboard.press("j")
            tab.page.mouse.move(0, 0)
        if name == "customer":
            row = tab.page.locator(f"#memory-{showcase.nurse.pk}")
            row.get_by_test_id("history").click()
            row.get_by_test_id("word-diff").wait_for()
            row.scroll_into_view_if_needed()
            tab.page.evaluate("window.scrollBy(0, 120)")
        tab.page.screenshot(path=folder / f"{name}.png")

    names = ["login", "queue", "queue-390", "customer", "session", "jobs", "overview", "webhooks"]
    for name in names:
        assert _png_size(folder / f"{name}.png") == ((390, 844) if name == "queue-390" else (1280, 800)), name
