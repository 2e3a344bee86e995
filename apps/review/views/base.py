"""What every console page and action shares: staff login, the user's access, the pending badge, error
pages, and answers that suit both a plain form post (redirect back) and the page's script (JSON)."""

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import View

from apps.core.errors import ApplicationError
from apps.review.access import ConsoleAccess
from apps.review.selectors.queue import pending_count


def wants_json(request) -> bool:
    """The console's script asks for JSON; a browser's plain form post asks for HTML."""
    return request.headers.get("Accept", "").startswith("application/json")


def safe_next(request, default: str | None = None) -> str:
    """Where to go back to after an action: a page of the console on this host, else `default`."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target.startswith("/review/") and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default or reverse("review:queue")


class ConsoleView(View):
    """A page or action of the console: staff only; `self.access` says what the user may see and do."""

    template_name: str | None = None
    nav = ""

    def dispatch(self, request, *args, **kwargs):
        user = request.user
        if not (user.is_authenticated and user.is_active and user.is_staff):
            if wants_json(request):
                return JsonResponse({"ok": False, "error": {"code": "not_authenticated",
                                                            "message": "Log in to the review console."}}, status=401)
            return redirect_to_login(request.get_full_path(), reverse("review:login"))
        self.access = ConsoleAccess.for_request(request)
        try:
            return super().dispatch(request, *args, **kwargs)
        except Http404:
            return self.error_page(404, "Not found", "There is nothing here, or nothing you may see.")
        except PermissionDenied as exc:
            return self.error_page(403, "Not allowed", str(exc) or "Your role does not allow this.")

    def page_context(self) -> dict:
        return {"access": self.access, "pending_count": pending_count(self.access), "nav": self.nav}

    def render_page(self, context: dict, *, template: str | None = None, status: int = 200):
        return render(self.request, template or self.template_name, {**self.page_context(), **context}, status=status)

    def render_fragment(self, template: str, context: dict, *, status: int = 200):
        """A piece of a page for the script to insert: no badge, no layout."""
        return render(self.request, template, {"access": self.access, **context}, status=status)

    def error_page(self, status: int, title: str, message: str):
        if wants_json(self.request):
            code = {403: "permission_denied", 404: "not_found"}.get(status, "error")
            return JsonResponse({"ok": False, "error": {"code": code, "message": message}}, status=status)
        return self.render_page({"title": title, "message": message, "status": status},
                                template="review/error.html", status=status)


class ActionView(ConsoleView):
    """A POST that changes something through a service, answered with JSON for the script, or with a
    redirect back (filters kept) and a message for a plain form post."""

    http_method_names = ["post"]

    def dispatch(self, request, *args, **kwargs):
        try:
            return super().dispatch(request, *args, **kwargs)
        except ApplicationError as exc:
            return self.refused(exc.message, status=exc.status_code, code=exc.code)

    def done(self, message: str, *, data: dict | None = None, redirect_to: str | None = None):
        if wants_json(self.request):
            return JsonResponse({"ok": True, "message": message, "pending_count": pending_count(self.access),
                                 **(data or {})})
        messages.success(self.request, message)
        return HttpResponseRedirect(redirect_to or safe_next(self.request))

    def refused(self, message: str, *, status: int = 400, code: str = "invalid_request", details=None):
        if wants_json(self.request):
            return JsonResponse({"ok": False, "error": {"code": code, "message": message, "details": details or {}},
                                 "pending_count": pending_count(self.access)}, status=status)
        messages.error(self.request, message)
        return HttpResponseRedirect(safe_next(self.request))

    def form_refused(self, form):
        errors = {name: [str(error) for error in field_errors] for name, field_errors in form.errors.items()}
        first = next(iter(errors.values()))[0] if errors else "Check the form."
        return self.refused(first, status=400, code="validation_error", details=errors)


def memory_json(memory) -> dict:
    return {"id": str(memory.pk), "status": memory.status, "content": memory.content,
            "memory_type": memory.memory_type, "user_id": memory.user_id}
