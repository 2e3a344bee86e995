"""Who is calling: an API key on the API; a staff user's password on the admin and console logins, with a lockout
after repeated failures (django-axes: LOGIN_FAILURE_LIMIT failures for one username from one address)."""

from axes.backends import AxesStandaloneBackend
from django import forms
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse
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


# --- Staff logins -------------------------------------------------------------------------------------


def client_address(request) -> str | None:
    """The address a login failure is counted against: the socket's peer as uvicorn reports it (it applies
    X-Forwarded-For only from the proxies in FORWARDED_ALLOW_IPS), the same address the API throttles use."""
    return request.META.get("REMOTE_ADDR")


class LoginLockoutBackend(AxesStandaloneBackend):
    """axes' lockout for logins that come with a request: the admin's and the console's forms. A call of
    authenticate() without one (a shell, the test client's login()) has no client to count failures against;
    axes would raise, so the lockout lets it through to the password check."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def login_lockout_message() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return (f"Too many failed logins for this username from your address: logins are refused for {minutes} "
            f"minutes, even with the right password. Try again later or ask an administrator to unlock it.")


class LockoutAwareLoginForm(forms.Form):
    """Mixin for Django's AuthenticationForm: a login refused because of the lockout says so, instead of the
    usual "wrong username or password" (which would send a person on guessing)."""

    def clean(self):
        try:
            return super().clean()
        except forms.ValidationError:
            if getattr(self.request, "axes_locked_out", False):
                raise forms.ValidationError(login_lockout_message(), code="locked_out") from None
            raise


def login_locked_out_response(request, original_response=None, credentials=None) -> HttpResponse:
    """axes' answer to a locked-out login (AXES_LOCKOUT_CALLABLE): the login page as the view rendered it, with
    the lockout message in its form, as a 429 with Retry-After."""
    if original_response is None or original_response.status_code != 200:
        original_response = HttpResponse(login_lockout_message(), content_type="text/plain; charset=utf-8")
    original_response.status_code = 429
    original_response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return original_response
