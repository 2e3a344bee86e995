from rest_framework import exceptions, permissions

AUTHENTICATION_REQUIRED = "Authentication required: send 'Authorization: Bearer <api key>'."


def scope_missing(scope: str) -> exceptions.PermissionDenied:
    """The refusal of a key without `scope` (the MCP tools refuse in these words too)."""
    return exceptions.PermissionDenied(f"This API key lacks the '{scope}' scope.")


class HasApiKey(permissions.BasePermission):
    """Authenticated by an API key whose scope covers the operation.

    Views declare `required_scopes = {"GET": "read", "POST": "write", ...}`; scopes are ordered
    read < write < admin, so a key with a higher scope may do what a lower one may.
    """

    def has_permission(self, request, view):
        api_key = request.auth
        if api_key is None:
            raise exceptions.NotAuthenticated(AUTHENTICATION_REQUIRED)
        required = getattr(view, "required_scopes", {}).get(request.method)
        if required is None and request.method in ("HEAD", "OPTIONS"):
            required = getattr(view, "required_scopes", {}).get("GET", "read")
        if required is None:
            if hasattr(view, request.method.lower()):
                # A handler without a declared scope (a method inherited by mistake): fail closed.
                raise exceptions.PermissionDenied(f"{request.method} is not open to API keys here.")
            return True  # no such handler: DRF answers 405
        if not api_key.has_scope(required):
            raise scope_missing(required)
        return True
