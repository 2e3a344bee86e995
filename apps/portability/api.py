"""A data-subject access request: everything a store holds about one user, as one JSON document."""

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema

from apps.core.schema import ErrorOutput
from apps.memories.api import ADMIN, StoreScopedView
from apps.portability import selectors
from apps.portability.serializers import UserExportOutput


class UserExportApi(StoreScopedView):
    # Admin, like the erase it pairs with: the document holds what read keys can see piecemeal, and also the
    # webhook deliveries that carried the user's data out, with their receivers' URLs, which only admins see.
    required_scopes = {"GET": ADMIN}

    @extend_schema(
        responses={
            200: UserExportOutput,
            413: OpenApiResponse(ErrorOutput, description="The document would pass "
                                 "MEMORYHUB_USER_EXPORT_MAX_BYTES (code `export_too_large`); export the user with "
                                 "`manage.py export_store <tenant> <store> --user <user id>` instead."),
        },
        summary="Export a user: everything the store holds about them",
        description="Everything the store holds about one user, as one JSON document (a data-subject access "
                    "request): every memory in every status with its history and provenance, every session with its "
                    "messages, working memory, task state, scratchpad, checkpoints and lifecycle log, the extraction "
                    "jobs that read them, and the webhook deliveries that sent the user's data to a receiver. A user "
                    "with nothing stored gets empty lists. Embeddings are left out (vectors computed from the "
                    "memories' text).",
    )
    def get(self, request, store_name, user_id):
        document = selectors.user_export_document(
            store=self.get_store(), user_id=user_id, max_bytes=settings.MEMORYHUB_USER_EXPORT_MAX_BYTES
        )
        return HttpResponse(document, content_type="application/json")
