from django.urls import re_path

from apps.mcp_server.server import server

urlpatterns = [
    # With or without the trailing slash: clients are configured by hand, and a redirect would lose the POST.
    re_path(r"^mcp/?$", server, name="mcp"),
]
