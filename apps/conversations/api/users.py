"""Erasing a user (the right to be forgotten)."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from apps.conversations import services
from apps.conversations.serializers.sessions import UserEraseOutput
from apps.memories.api import ADMIN, StoreScopedView


class UserEraseApi(StoreScopedView):
    required_scopes = {"DELETE": ADMIN}
    # A kept response would name the erased user for a day. Repeated, an erase ends in the same state
    # (and answers with zero counts), so a retry needs no stored answer.
    keeps_idempotent_responses = False

    @extend_schema(
        responses={200: UserEraseOutput},
        summary="Forget a user: everything the store holds about them",
        description="Erase everything the store holds about one user, for good: every memory and revision, and "
                    "every session with its messages, working state, checkpoints, event log and extraction "
                    "jobs. Answers with the counts; a user with nothing stored gets zeros.",
    )
    def delete(self, request, store_name, user_id):
        counts = services.user_erase(store=self.get_store(), user_id=user_id)
        return Response(UserEraseOutput({"user_id": user_id, **counts}).data)
