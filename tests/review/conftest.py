"""Fixtures of the review console's tests: logged-in browsers of each role, and pending memories with the
conversation they came from (made through the services, as extraction makes them); for the real-browser tests,
the console served by real processes and Chromium tabs on it."""

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.test import Client
from playwright.sync_api import Browser, BrowserContext, Locator, Page, sync_playwright

from apps.conversations.services import MessageInput, messages_ingest
from apps.core.actors import Actor
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory
from apps.memories.services import MemoryInput, memory_create
from tests.processes import LiveProcesses, server_and_worker, wait_for

EXTRACTION = Actor.system("extraction")


def browser(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def conversation(store, session_id: str, texts: list[str], user_id: str = "alice"):
    """A session of `user_id` with `texts` as alternating user/assistant messages (seq 1, 2, ...)."""
    messages = [MessageInput(role="user" if index % 2 == 0 else "assistant", content=text)
                for index, text in enumerate(texts)]
    return messages_ingest(store=store, session_external_id=session_id, user_id=user_id, messages=messages).session


def pending(store, content: str, user_id: str = "alice", *, session=None, seqs=(), job_id=None, **fields) -> Memory:
    """A memory held for review, from messages `seqs` of `session` when given."""
    provenance, context = {}, {}
    if session is not None:
        source = {"session_id": session.external_id, "message_seqs": list(seqs)}
        if job_id:
            source["job_id"] = str(job_id)
        provenance, context = {"sources": [source]}, dict(source)
    item = MemoryInput(user_id=user_id, content=content, status=Memory.Status.PENDING_REVIEW,
                       source=Memory.Source.EXTRACTION if session is not None else Memory.Source.API,
                       provenance=provenance, session_id=session.external_id if session is not None else "",
                       **fields)
    return memory_create(store=store, item=item, actor=EXTRACTION, context=context).memory


@dataclass
class Browsers:
    admin: Client
    reviewer: Client
    other_admin: Client  # tenant_b's admin
    outsider: Client  # staff of no tenant
    anonymous: Client


@pytest.fixture
def browsers(tenant_a, tenant_b, outsider) -> Browsers:
    return Browsers(admin=browser(tenant_a.admin), reviewer=browser(tenant_a.reviewer),
                    other_admin=browser(tenant_b.admin), outsider=browser(outsider), anonymous=browser())


@pytest.fixture
def quiet_stores(tenant_a, tenant_b, configure_store):
    """Extraction off in both stores: conversations are stored, no job runs."""
    for world in (tenant_a, tenant_b):
        configure_store(world.store, extraction_config={"enabled": False})


def snapshot(store) -> dict:
    """Every row of `store` that a refused action must leave as it was."""
    from apps.conversations.models import Message, Session
    from apps.memories.models import MemoryRevision

    memory_fields = [f.attname for f in Memory._meta.concrete_fields if f.attname not in ("embedding", "search_vector")]
    return {
        "memories": list(Memory.objects.filter(store=store).order_by("pk").values(*memory_fields)),
        "revisions": list(MemoryRevision.objects.filter(store=store).order_by("pk").values()),
        "sessions": list(Session.objects.filter(store=store).order_by("pk").values()),
        "messages": list(Message.objects.filter(session__store=store).order_by("pk").values()),
        "jobs": list(ExtractionJob.objects.filter(store=store).order_by("pk").values()),
    }


@dataclass
class ReviewWorld:
    """tenant_a's store with a conversation of alice, a pending memory from it, an active one, a deleted one,
    and a failed extraction job."""

    world: object
    session: object
    pending: Memory
    active: Memory
    deleted: Memory
    job: object

    @property
    def store(self):
        return self.world.store


@pytest.fixture
def review_world(tenant_a, quiet_stores, add_memory) -> ReviewWorld:
    from apps.memories.services import memory_delete

    store = tenant_a.store
    session = conversation(store, "s-1", ["I moved to Paris last month", "Great, noted.", "I'm allergic to latex"])
    active = add_memory(store, "Lives in Berlin", metadata={"subject": "location"})
    job = ExtractionJob.objects.create(store=store, session=session, from_seq=0, to_seq=3, trigger="turns",
                                       extractor="rules", status="failed", attempts=3,
                                       error="RuntimeError: the rules extractor crashed")
    memory = pending(store, "Lives in Paris", session=session, seqs=[1], job_id=job.pk,
                     metadata={"subject": "location", "supersedes": str(active.pk)}, confidence=0.8)
    deleted = add_memory(store, "Has a cat named Tom")
    deleted = memory_delete(memory=deleted, actor=EXTRACTION, reason="test setup")
    return ReviewWorld(world=tenant_a, session=session, pending=memory, active=active, deleted=deleted, job=job)


# --- A real browser on a real server (tests/review/test_browser.py) -------------------------------------------


class LiveConsole(LiveProcesses):
    """The console served by a uvicorn process, with a qcluster worker for extraction, on the test database."""


@pytest.fixture(scope="module")
def live_console(django_db_setup, tmp_path_factory) -> Iterator[LiveConsole]:
    with server_and_worker(tmp_path_factory.mktemp("console")) as processes:
        yield LiveConsole(*processes)


@pytest.fixture
def console(live_console, transactional_db) -> Iterator[LiveConsole]:
    """The live console for one test; the server and the worker see only committed rows, hence transactional_db."""
    yield live_console
    # Before the database is emptied for the next test: a job the worker is still running holds row locks that
    # would deadlock the TRUNCATE.
    wait_for(lambda: not ExtractionJob.objects.filter(status__in=ExtractionJob.OPEN_STATUSES).exists(),
             timeout=60, what="the worker to finish its extraction jobs")


@pytest.fixture(scope="module")
def chromium(live_console) -> Iterator[Browser]:
    """Debian's Chromium driven by Playwright (its own browser download does not work here).

    Started after the server (which must not inherit what follows) and stopped at the end of the module: while
    Playwright's sync API is running, its event loop is the running loop of this thread, so Django would take
    every ORM call of the tests for one made from async code and refuse it."""
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("chromium is not installed: `make test` installs it (make system-test-deps)")
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Tab:
    """A page of its own browser context (its own cookies), with what went wrong in it: script errors, console
    errors and any dialog (alert, confirm) it opened."""

    page: Page
    base_url: str
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def goto(self, path: str):
        response = self.page.goto(self.base_url + path)
        assert response is not None and response.ok, f"{path}: {response and response.status}"
        return response

    def testid(self, name: str) -> Locator:
        return self.page.get_by_test_id(name)

    def log_in(self, username: str, password: str, *, then: str = "/review/") -> None:
        """Log in through the console's form and land on `then`."""
        self.page.goto(f"{self.base_url}/review/login/?next={then}")
        self.testid("login-username").fill(username)
        self.testid("login-password").fill(password)
        with self.page.expect_navigation():
            self.testid("login-submit").click()
        assert self.page.url == self.base_url + then, self.page.url


@pytest.fixture
def open_tab(chromium, console) -> Iterator[Callable[..., Tab]]:
    """Open a tab on the live console: `open_tab(width=390)`; each tab is its own browser context.

    After the test, no tab may have had a script error or opened a dialog."""
    tabs: list[tuple[BrowserContext, Tab]] = []

    def open_one(*, width: int = 1280, height: int = 800) -> Tab:
        context = chromium.new_context(viewport={"width": width, "height": height})
        context.set_default_timeout(10_000)
        page = context.new_page()
        tab = Tab(page=page, base_url=console.base_url)
        page.on("pageerror", lambda error: tab.errors.append(f"page error: {error}"))
        page.on("console", lambda message: tab.errors.append(f"console {message.type}: {message.text}")
                if message.type == "error" else None)
        page.on("response", lambda response: tab.errors.append(f"{response.status} {response.url}")
                if response.status >= 400 else None)

        def on_dialog(dialog):
            tab.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        page.on("dialog", on_dialog)
        tabs.append((context, tab))
        return tab

    yield open_one
    for context, _ in tabs:
        context.close()
    problems = [problem for _, tab in tabs for problem in tab.errors + tab.dialogs]
    assert not problems, problems


PASSWORDS = {"acme-admin": "pw-admin-123!", "acme-reviewer": "pw-reviewer-123!"}


@pytest.fixture
def staff_logins(tenant_a) -> dict[str, str]:
    """tenant_a's staff with passwords the server can check: username -> password.

    The test settings hash passwords with MD5 (fast), which the server's settings do not accept; PBKDF2 with few
    iterations is accepted, checked at once, and upgraded by the server on the first login."""
    hasher = PBKDF2PasswordHasher()
    for user in (tenant_a.admin, tenant_a.reviewer):
        password = PASSWORDS[user.get_username()]
        user.password = hasher.encode(password, hasher.salt(), iterations=1000)
        user.save(update_fields=["password"])
    return dict(PASSWORDS)


@pytest.fixture
def reviewer_tab(open_tab, staff_logins) -> Tab:
    """A tab logged in as tenant_a's reviewer, on the queue."""
    tab = open_tab()
    tab.log_in("acme-reviewer", staff_logins["acme-reviewer"])
    return tab


@pytest.fixture
def admin_tab(open_tab, staff_logins) -> Tab:
    """A tab logged in as tenant_a's admin, on the queue."""
    tab = open_tab()
    tab.log_in("acme-admin", staff_logins["acme-admin"])
    return tab
