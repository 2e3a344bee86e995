"""Every list endpoint pages with a cursor; a malformed cursor is a JSON 400 naming `cursor`, never a 500.

Paging needs a list with items (`world`, three in each list); refusing a malformed cursor or a bad page size
happens before the list is read, so those checks run on lists that merely exist (`bare_lists`), every bad
value in one test per list.
"""

from base64 import b64encode
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import resolve
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from apps.conversations.models import Session
from apps.core.pagination import ordered_by
from apps.extraction.models import ExtractionJob
from apps.memories.models import Memory

STORE = "/api/v1/stores/main"
SESSION = f"{STORE}/sessions/s1"

# Every paginated list of the API; each holds three items in the world built below.
LISTS = {
    "memories": f"{STORE}/memories",  # newest first: (-created_at, -id)
    "sessions": f"{STORE}/sessions",  # newest first
    "messages": f"{SESSION}/messages",  # by seq
    "events": f"{SESSION}/events",  # by id (a big integer)
    "scratchpad": f"{SESSION}/scratchpad",  # by seq
    "working-memory": f"{SESSION}/working-memory",  # by key
    "checkpoints": f"{SESSION}/checkpoints",  # newest first
    "jobs": "/api/v1/jobs",  # newest first
}


def _cursor(querystring: str) -> str:
    return b64encode(querystring.encode()).decode()


MALFORMED_CURSORS = {
    "not base64": "garbage",
    "base64 alphabet violated": "!!!!",
    "not ascii": "cD0x\u00e9",
    "empty position": _cursor("p="),
    "negative offset": _cursor("o=-1"),
    "offset not a number": _cursor("o=many"),
    "reverse flag not a number": _cursor("r=yes"),
    "reverse flag out of range": _cursor("r=7"),
    "unknown token": _cursor("x=1"),
    "repeated token": _cursor("o=1&o=2"),
    "not a query string": _cursor("just some text"),
    "NUL in position": _cursor("p=a\x00b"),
}
# Positions that are not values of the ordering field: of a timestamp, seq, id; of a key (text up to 256).
NOT_A_NUMBER_OR_TIME = {"position not a number or time": _cursor("p=notadate"),
                        "position out of range": _cursor("p=" + "9" * 40)}
NOT_A_KEY = {"position longer than any key": _cursor("p=" + "k" * 257)}
GARBAGE_PAGE_SIZES = ["abc", "0", "-3", "1.5", "", "9" * 5000, "\x00"]


def _malformed(name: str) -> dict[str, str]:
    return {**MALFORMED_CURSORS, **(NOT_A_KEY if name == "working-memory" else NOT_A_NUMBER_OR_TIME)}


@pytest.fixture
def bare_lists(tenant_a):
    """tenant_a with the session s1 that the session's lists belong to: every list exists, most are empty."""
    response = tenant_a.client("admin").post(f"{SESSION}/spawn", {"user_id": "alice"}, format="json")
    assert response.status_code == 201, response.content
    return tenant_a


@pytest.fixture
def world(tenant_a, add_memory, configure_store):
    """tenant_a whose every list holds three items: memories, sessions, messages, events, scratchpad, ..."""
    configure_store(tenant_a.store, extraction_config={"enabled": False})  # the jobs are the three below
    admin = tenant_a.client("admin")
    for text in ("Alice likes tea", "Alice lives in Oslo", "Alice has a cat"):
        add_memory(tenant_a.store, text)
    assert admin.post(f"{SESSION}/spawn", {"user_id": "alice"}, format="json").status_code == 201
    for other in ("s2", "s3"):
        assert admin.post(f"{STORE}/sessions/{other}/spawn", {"user_id": "bob"}, format="json").status_code == 201
    messages = [{"role": "user", "content": f"message {seq}", "seq": seq} for seq in range(3)]
    response = admin.post(f"{SESSION}/messages", {"user_id": "alice", "run_id": "r1", "messages": messages},
                          format="json")
    assert response.status_code == 202, response.content
    for number in range(3):
        assert admin.post(f"{SESSION}/scratchpad", {"content": f"thought {number}"}, format="json").status_code == 201
        response = admin.put(f"{SESSION}/working-memory/key-{number}", {"value": number}, format="json")
        assert response.status_code in (200, 201), response.content
    for _ in range(2):
        assert admin.post(f"{SESSION}/checkpoints", {}, format="json").status_code == 201
    assert admin.post(f"{SESSION}/pause", {}, format="json").status_code == 200  # and a third checkpoint
    assert admin.post(f"{SESSION}/resume", {}, format="json").status_code == 200  # events: spawn, pause, resume
    session = Session.objects.get(store=tenant_a.store, external_id="s1")
    for to_seq in (1, 2, 3):
        ExtractionJob.objects.create(store=tenant_a.store, session=session, from_seq=to_seq - 1, to_seq=to_seq,
                                     trigger="flush", extractor="rules", status="succeeded")
    return tenant_a


def _next_cursor(body) -> str | None:
    return parse_qs(urlsplit(body["next"]).query)["cursor"][0] if body["next"] else None


@pytest.mark.parametrize("name", LISTS)
def test_valid_cursors_page_through_every_list_from_an_empty_cursor(world, name):
    client = world.client("read")
    everything = client.get(LISTS[name]).json()["results"]
    assert len(everything) == 3
    first = client.get(LISTS[name], {"page_size": 2}).json()
    assert client.get(LISTS[name], {"cursor": "", "page_size": 2}).json() == first  # an empty cursor: page one
    seen, cursor = [], None
    while True:
        response = client.get(LISTS[name], {"page_size": 2, **({"cursor": cursor} if cursor else {})})
        assert response.status_code == 200, response.content
        seen += response.json()["results"]
        cursor = _next_cursor(response.json())
        if cursor is None:
            break
    assert seen == everything
    back = client.get(response.json()["previous"]).json()  # and a reverse cursor leads back to the first page
    assert back["results"] == everything[:2]


def _names_the_cursor(response) -> bool:
    if response.status_code != 400:
        return False
    error = response.json()["error"]
    return error["code"] == "validation_error" and "cursor" in error["message"] and list(error["details"]) == ["cursor"]


@pytest.mark.parametrize("name", LISTS)
def test_a_malformed_cursor_is_a_json_400_naming_the_cursor(bare_lists, name):
    client = bare_lists.client("read")
    answers = {problem: client.get(LISTS[name], {"cursor": cursor}) for problem, cursor in _malformed(name).items()}
    wrong = {problem: (answer.status_code, answer.content[:300]) for problem, answer in answers.items()
             if not _names_the_cursor(answer)}
    assert len(answers) >= 13 and wrong == {}


@pytest.mark.parametrize("name", LISTS)
def test_page_size_garbage_falls_back_to_the_default(bare_lists, name):
    client = bare_lists.client("read")
    default = client.get(LISTS[name])
    assert default.status_code == 200, default.content
    pagination = resolve(LISTS[name]).func.cls.paginators["GET"]  # the class the view pages with
    for page_size in GARBAGE_PAGE_SIZES:
        response = client.get(LISTS[name], {"page_size": page_size})
        assert (response.status_code, response.json()) == (200, default.json()), repr(page_size)
        request = Request(APIRequestFactory().get("/", {"page_size": page_size}))
        assert pagination().get_page_size(request) == pagination.page_size, repr(page_size)


@pytest.mark.parametrize("position", ["not-a-uuid", "", "1234"])
def test_a_position_that_is_not_a_uuid_is_rejected_on_a_list_ordered_by_uuid(position):  # before any query
    paginator = ordered_by("id")()
    request = Request(APIRequestFactory().get("/", {"cursor": _cursor(f"p={position}")}))
    with pytest.raises(ValidationError) as raised:
        paginator.paginate_queryset(Memory.objects.all(), request)
    assert list(raised.value.detail) == ["cursor"]


def test_a_uuid_position_pages_a_list_ordered_by_uuid(tenant_a, add_memory):
    for text in ("Alice likes tea", "Alice lives in Oslo", "Alice has a cat"):
        add_memory(tenant_a.store, text)
    paginator = ordered_by("id", page_size=2)()
    first = paginator.paginate_queryset(Memory.objects.all(), Request(APIRequestFactory().get("/")))
    next_link = paginator.get_next_link()
    rest = paginator.paginate_queryset(Memory.objects.all(), Request(APIRequestFactory().get(next_link)))
    assert [m.pk for m in first + rest] == sorted(Memory.objects.values_list("pk", flat=True))
