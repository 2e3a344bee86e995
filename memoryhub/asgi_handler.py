"""Django's ASGI handler, with each HTTP request run in one trip to a worker thread.

memoryhub's views and middleware are synchronous. Django's own ASGI handler runs them as an async middleware
chain: every middleware's request and response hooks, the view and the response's close each hop to a thread
of their own, on a thread started for each request (asgiref's ThreadSensitiveContext), and all sync code of a
process waits for one thread. That cost about 6 ms per request here, more than the database work of most, and
kept a process to one request at a time. This handler reads the body on the event loop, then runs the whole
request as WSGI would (request_started, the sync middleware chain and view, the response's content and close,
request_finished) in one call on the event loop's thread pool, and sends the answer from the loop. Concurrent
requests run in parallel threads, each with its own database connection (returned to the pool when the request
finishes, in the thread that used it). Websockets are not concerned: Channels routes them elsewhere.
"""

from asgiref.sync import sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.urls import set_script_prefix


class ThreadedASGIHandler(ASGIHandler):
    def __init__(self):
        super().__init__()
        self.load_middleware(is_async=False)  # the sync chain: no hop between middlewares

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        try:
            response = await sync_to_async(self._respond, thread_sensitive=False)(scope, body_file)
        finally:
            body_file.close()
        if response.streaming:
            # Content produced while it is sent: each chunk of a sync iterator is made in a worker thread.
            if not response.is_async:
                response.streaming_content = _in_threads(response.streaming_content)
            try:
                await self.send_response(response, send)
            finally:
                await sync_to_async(response.close, thread_sensitive=False)()
            return
        await self.send_response(response, send)

    def _respond(self, scope, body_file):
        """The whole request, in this thread. A non-streaming answer is closed here (request_finished: this
        thread's database connection goes back to the pool) with its content already rendered."""
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            response._handler_class = self.__class__
        if not response.streaming:
            response.content  # noqa: B018 - rendered now, before close() releases what it was made from
            response.close()
        return response


async def _in_threads(chunks):
    iterator = iter(chunks)
    done = object()
    while (chunk := await sync_to_async(next, thread_sensitive=False)(iterator, done)) is not done:
        yield chunk
