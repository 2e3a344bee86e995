"""Every list endpoint pages with a cursor; a malformed cursor is a JSON 400 naming `cursor`, never a 500."""

from base64 import b64encode
from urllib.parse import parse_qs, urlsplit

import pytest
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
MALFORMED = [
    pytest.param(name, cursor, id=f"{name}-{problem}")
    for name in LISTS
    for problem, cursor in {**MALFORMED_CURSORS,
                            **(NOT_A_KEY if name == "working-memory" else NOT_A_NUMBER_OR_TIME)}.items()
]


@pytest.fixture
def world(tenant_a, add_memory):
    """tenant_a whose every list holds three items: memories, sessions, messages, events, scratchpad, ..."""
    admin = tenant_a.client("admin")
    admin.patch(STORE, {"extraction_config": {"enabled": False}}, format="json")
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
def test_valid_cursors_page_through_every_list(world, name):
    client = world.client("read")
    everything = client.get(LISTS[name]).json()["results"]
    assert len(everything) == 3
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


@pytest.mark.parametrize(("name", "cursor"), MALFORMED)
def test_a_malformed_cursor_is_a_json_400_naming_the_cursor(world, name, cursor):
    response = world.client("read").get(LISTS[name], {"cursor": cursor})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error" and "cursor" in error["message"]
    assert list(error["details"]) == ["cursor"]


@pytest.mark.parametrize("page_size", ["abc", "0", "-3", "1.5", "", "9" * 5000, "\x00"])
@pytest.mark.parametrize("name", LISTS)
def test_page_size_garbage_falls_back_to_the_default(world, name, page_size):
    response = world.client("read").get(LISTS[name], {"page_size": page_size})
    assert response.status_code == 200, response.content
    assert len(response.json()["results"]) == 3


@pytest.mark.parametrize("name", LISTS)
def test_an_empty_cursor_is_the_first_page(world, name):
    client = world.client("read")
    first = client.get(LISTS[name], {"page_size": 2}).json()
    assert client.get(LISTS[name], {"cursor": "", "page_size": 2}).json() == first


@pytest.mark.parametrize("position", ["not-a-uuid", "", "1234"])
def test_a_position_that_is_not_a_uuid_is_rejected_on_a_list_ordered_by_uuid(world, position):
    paginator = ordered_by("id")()
    request = Request(APIRequestFactory().get("/", {"cursor": _cursor(f"p={position}")}))
    with pytest.raises(ValidationError) as raised:
        paginator.paginate_queryset(Memory.objects.all(), request)
    assert list(raised.value.detail) == ["cursor"]


def test_a_uuid_position_pages_a_list_ordered_by_uuid(world):
    paginator = ordered_by("id", page_size=2)()
    first = paginator.paginate_queryset(Memory.objects.all(), Request(APIRequestFactory().get("/")))
    next_link = paginator.get_next_link()
    rest = paginator.paginate_queryset(Memory.objects.all(), Request(APIRequestFactory().get(next_link)))
    assert [m.pk for m in first + rest] == sorted(Memory.objects.values_list("pk", flat=True))
