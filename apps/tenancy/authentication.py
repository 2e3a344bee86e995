from django.contrib.auth.models import AnonymousUser
from rest_framework import authentication, exceptions

from apps.tenancy.selectors import api_key_authenticate


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <api key>`; request.auth becomes the ApiKey."""

    keyword = "bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, raw_key = header.partition(" ")
        if scheme.lower() != self.keyword or not raw_key.strip():
            raise exceptions.AuthenticationFailed("Use 'Authorization: Bearer <api key>'.")
        api_key = api_key_authenticate(raw_key=raw_key.strip())
        if api_key is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        return AnonymousUser(), api_key

    def authenticate_header(self, request):
        return 'Bearer realm="memoryhub"'
