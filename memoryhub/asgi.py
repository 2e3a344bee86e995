import asyncio
import logging
import os
import threading

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
from django.db import connections  # noqa: E402

from apps.memories import live  # noqa: E402
from apps.memories.services import store_embedders_load  # noqa: E402
from memoryhub.routing import websocket_urlpatterns  # noqa: E402


class BrowserOriginValidator(OriginValidator):
    """A browser's websocket (which carries the staff's session cookie) must come from one of our hosts, or
    another site could listen with a reviewer's login. Browsers always send Origin; a client without one is not
    a browser (an agent with an API key) and has no cookies to borrow, so it passes on to authentication."""

    def valid_origin(self, parsed_origin):
        return parsed_origin is None or super().valid_origin(parsed_origin)


logger = logging.getLogger(__name__)


def _load_embedders_in_background() -> None:
    """The stores' local models, loaded while the process already serves: a search that comes first waits for the
    load under way instead of starting its own."""

    def load() -> None:
        try:
            loaded = store_embedders_load()
            if loaded:
                logger.info("Embedders loaded at start: %s", ", ".join(loaded))
        except Exception:  # noqa: BLE001 - the first search loads it then, and says what is wrong
            logger.warning("Could not load the stores' embedders at start.", exc_info=True)
        finally:
            connections.close_all()

    threading.Thread(target=load, name="embedder load", daemon=True).start()


class BindLiveEventLoop:
    """Live events from request threads are sent from the server's loop, where the websocket consumers are.
    Also answers the server's lifespan messages: at startup, the stores' models start loading (EMBEDDING_LOAD_AT_START)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        live.bind_event_loop(asyncio.get_running_loop())
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        return await self.app(scope, receive, send)

    @staticmethod
    async def _lifespan(receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if settings.EMBEDDING_LOAD_AT_START:
                    _load_embedders_in_background()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return


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
