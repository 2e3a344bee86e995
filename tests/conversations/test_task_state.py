"""Task state: put, patch and delete, progress from steps, status and finish time, validation."""

from datetime import timedelta

import pytest
import time_machine

from apps.conversations.models import TaskState
from tests.conversations.working_state import T0, TASK, assert_error, when


def test_put_sets_the_task_state_with_progress_from_steps(session):
    with time_machine.travel(T0, tick=False):
        response = session.client("write").put(
            TASK,
            {"description": "Book a trip to Rome", "current_step": 1, "total_steps": 4, "metadata": {"ticket": 7}},
            format="json",
        )
    assert response.status_code == 200, response.content
    body = response.json()
    assert {key: body[key] for key in ("description", "current_step", "total_steps", "progress", "status")} == {
        "description": "Book a trip to Rome", "current_step": 1, "total_steps": 4, "progress": 25.0,
        "status": "in_progress",
    }
    assert body["metadata"] == {"ticket": 7}
    assert when(body["started_at"]) == when(body["updated_at"]) == T0 and body["finished_at"] is None
    assert session.client("read").get(TASK).json() == body
    assert TaskState.objects.get().progress == 25.0


@pytest.mark.parametrize("given, stored", [(150, 100.0), (-5, 0.0), (42.5, 42.5), (0, 0.0), (100, 100.0), (1e300, 100.0)])
def test_progress_is_clamped_to_0_100(session, given, stored):
    client = session.client("write")
    put = client.put(TASK, {"description": "t", "progress": given}, format="json")
    assert put.json()["progress"] == stored
    patched = client.patch(TASK, {"progress": given}, format="json")
    assert patched.json()["progress"] == stored
    assert TaskState.objects.get().progress == stored


def test_explicit_progress_wins_over_steps(session):
    response = session.client("write").put(
        TASK, {"description": "t", "current_step": 1, "total_steps": 4, "progress": 90}, format="json"
    )
    assert response.json()["progress"] == 90.0
    assert TaskState.objects.get().progress == 90.0


def test_put_replaces_the_whole_task_state(session):
    client = session.client("write")
    client.put(
        TASK,
        {"description": "t", "current_step": 2, "total_steps": 5, "status": "blocked", "metadata": {"a": 1}},
        format="json",
    )
    body = client.put(TASK, {"description": "t"}, format="json").json()
    assert {key: body[key] for key in ("current_step", "total_steps", "progress", "status", "metadata")} == {
        "current_step": 0, "total_steps": None, "progress": 0.0, "status": "in_progress", "metadata": {},
    }
    assert TaskState.objects.count() == 1


def test_a_new_description_restarts_the_clock(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        client.put(TASK, {"description": "first"}, format="json")
        traveller.move_to(T0 + timedelta(minutes=1))
        same = client.put(TASK, {"description": "first", "current_step": 1}, format="json").json()
        assert when(same["started_at"]) == T0 and when(same["updated_at"]) == T0 + timedelta(minutes=1)
        traveller.move_to(T0 + timedelta(minutes=2))
        other = client.put(TASK, {"description": "second"}, format="json").json()
        assert when(other["started_at"]) == when(other["updated_at"]) == T0 + timedelta(minutes=2)


def test_patch_changes_only_what_it_names(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        client.put(TASK, {"description": "t", "total_steps": 4, "metadata": {"a": 1}}, format="json")
        traveller.move_to(T0 + timedelta(seconds=30))
        body = client.patch(TASK, {"current_step": 3}, format="json").json()
    assert (body["description"], body["current_step"], body["total_steps"], body["metadata"]) == ("t", 3, 4, {"a": 1})
    assert body["progress"] == 75.0  # derived from the steps
    assert when(body["started_at"]) == T0 and when(body["updated_at"]) == T0 + timedelta(seconds=30)
    assert client.patch(TASK, {"progress": 80}, format="json").json()["progress"] == 80.0
    assert client.patch(TASK, {"total_steps": 10}, format="json").json()["progress"] == 30.0
    assert client.patch(TASK, {"total_steps": None}, format="json").json()["total_steps"] is None


def test_completing_a_task_sets_progress_and_finished_at(session):
    client = session.client("write")
    with time_machine.travel(T0, tick=False) as traveller:
        client.put(TASK, {"description": "t", "current_step": 1, "total_steps": 4}, format="json")
        traveller.move_to(T0 + timedelta(minutes=3))
        done = client.patch(TASK, {"status": "completed"}, format="json").json()
        assert (done["status"], done["progress"]) == ("completed", 100.0)
        assert when(done["finished_at"]) == T0 + timedelta(minutes=3)
        traveller.move_to(T0 + timedelta(minutes=4))
        # Later edits of a finished task keep its finish time and its progress.
        noted = client.patch(TASK, {"metadata": {"note": "receipt sent"}}, format="json").json()
        assert (noted["status"], noted["progress"]) == ("completed", 100.0)
        assert when(noted["finished_at"]) == T0 + timedelta(minutes=3)
        reopened = client.patch(TASK, {"status": "in_progress"}, format="json").json()
        assert (reopened["finished_at"], reopened["progress"]) == (None, 25.0)
    failed = client.put(TASK, {"description": "t", "status": "failed"}, format="json").json()
    assert failed["finished_at"] is not None and failed["status"] == "failed"


def test_put_with_status_completed_sets_progress_100(session):
    body = session.client("write").put(TASK, {"description": "t", "status": "completed"}, format="json").json()
    assert (body["progress"], body["status"]) == (100.0, "completed") and body["finished_at"] is not None
    task = TaskState.objects.get()
    assert (task.progress, task.status) == (100.0, "completed") and task.finished_at is not None


@pytest.mark.parametrize("status", ["pending", "in_progress", "blocked", "completed", "failed", "cancelled"])
def test_every_status_choice_is_accepted(session, status):
    assert session.client("write").put(TASK, {"status": status}, format="json").json()["status"] == status
    assert TaskState.objects.get().status == status


def test_current_step_beyond_total_steps_is_400_and_changes_nothing(session):
    client = session.client("write")
    put = client.put(TASK, {"description": "t", "current_step": 5, "total_steps": 4}, format="json")
    error = assert_error(put, 400, "validation_error")
    assert "current_step" in error["details"]
    assert not TaskState.objects.exists()
    client.put(TASK, {"description": "t", "current_step": 2, "total_steps": 4}, format="json")
    assert_error(client.patch(TASK, {"current_step": 5}, format="json"), 400, "validation_error")
    assert_error(client.patch(TASK, {"total_steps": 1}, format="json"), 400, "validation_error")
    task = TaskState.objects.get()
    assert (task.current_step, task.total_steps, task.progress) == (2, 4, 50.0)


@pytest.mark.parametrize(
    "body",
    [
        {"progress": "NaN"},
        {"progress": "nan"},
        {"progress": "Infinity"},
        {"progress": "lots"},
        {"progress": "33"},
        {"progress": ""},
        {"progress": True},
        {"progress": [50]},
        {"status": "done"},
        {"status": None},
        {"current_step": -1},
        {"current_step": 1.5},
        {"current_step": "two"},
        {"total_steps": -1},
        {"total_steps": 2**31},
        {"description": 5},
        {"description": "nul \u0000"},
        {"metadata": [1]},
        {"metadata": "x"},
    ],
)
def test_bad_task_state_is_400_and_changes_nothing(session, body):
    client = session.client("write")
    assert_error(client.put(TASK, {"description": "t", **body}, format="json"), 400, "validation_error")
    assert not TaskState.objects.exists()
    client.put(TASK, {"description": "t", "progress": 10}, format="json")
    assert_error(client.patch(TASK, body, format="json"), 400, "validation_error")
    task = TaskState.objects.get()
    assert (task.description, task.progress, task.status, task.metadata) == ("t", 10.0, "in_progress", {})


def test_nan_as_a_json_literal_is_400(session):
    client = session.client("write")
    response = client.put(TASK, '{"description": "t", "progress": NaN}', content_type="application/json")
    assert_error(response, 400, "malformed_request")
    assert not TaskState.objects.exists()


def test_patch_with_nothing_to_change_is_400(session):
    client = session.client("write")
    client.put(TASK, {"description": "t"}, format="json")
    assert_error(client.patch(TASK, {}, format="json"), 400, "validation_error")
    assert_error(client.patch(TASK, {"unknown": 1}, format="json"), 400, "validation_error")
    task = TaskState.objects.get()
    assert (task.description, task.progress, task.status, task.metadata) == ("t", 0.0, "in_progress", {})


def test_progress_null_in_patch_is_400(session):
    client = session.client("write")
    client.put(TASK, {"description": "t", "progress": 40}, format="json")
    assert_error(client.patch(TASK, {"progress": None}, format="json"), 400, "validation_error")
    assert TaskState.objects.get().progress == 40.0


def test_missing_task_state_is_404(session):
    client = session.client("write")
    assert_error(client.get(TASK), 404, "task_state_not_found")
    assert_error(client.patch(TASK, {"progress": 5}, format="json"), 404, "task_state_not_found")
    assert_error(client.delete(TASK), 404, "task_state_not_found")
    assert not TaskState.objects.exists()


def test_deleting_the_task_state(session):
    client = session.client("write")
    client.put(TASK, {"description": "t"}, format="json")
    assert client.delete(TASK).json() == {"deleted": True}
    assert not TaskState.objects.exists()
    assert_error(client.get(TASK), 404, "task_state_not_found")
