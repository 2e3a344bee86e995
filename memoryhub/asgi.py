import asyncio
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
# Django must be set up before anything imports models (the websocket routes do).
django.setup(set_prefix=False)

from memoryhub.asgi_handler import ThreadedASGIHandler  # noqa: E402

django_asgi_app = ThreadedASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import OriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from apps.memories import live  # noqa: E402
from memoryhub.routing import websocket_urlpatterns  # noqa: E402


class BrowserOriginValidator(OriginValidator):
    """A browser's websocket (which carries the staff's session cookie) must come from one of our hosts, or
    another site could listen with a reviewer's login. Browsers always send Origin; a client without one is not
    a browser (an agent with an API key) and has no cookies to borrow, so it passes on to authentication."""

    def valid_origin(self, parsed_origin):
        return parsed_origin is None or super().valid_origin(parsed_origin)


class BindLiveEventLoop:
    """Live events from request threads are sent from the server's loop, where the websocket consumers are."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        live.bind_event_loop(asyncio.get_running_loop())
        return await self.app(scope, receive, send)


application = BindLiveEventLoop(
    ProtocolTypeRouter(
        {
            "http": django_asgi_app,
            "websocket": BrowserOriginValidator(
                AuthMiddlewareStack(URLRouter(websocket_urlpatterns)), settings.ALLOWED_HOSTS
            ),
        }
    )
)
