import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
# Django must be set up before anything imports models (the websocket routes do).
django.setup(set_prefix=False)

from memoryhub.asgi_handler import ThreadedASGIHandler  # noqa: E402

django_asgi_app = ThreadedASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from memoryhub.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
