"""httpx transports that misbehave the way networks do."""

from collections.abc import Callable

import httpx


class LosesFirstResponse(httpx.HTTPTransport):
    """Delivers each request, but loses the answer of the first one (of those `matching` selects): the
    client sees a broken connection after the server has acted, which is what a retry must survive."""

    def __init__(self, matching: Callable[[httpx.Request], bool] | None = None):
        super().__init__()
        self.matching = matching or (lambda request: True)
        self.sent = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if not self.matching(request):
            return response
        self.sent += 1
        if self.sent == 1:
            response.read()
            response.close()
            raise httpx.ReadError("connection reset after the request was sent")
        return response


class LosesAnswers(httpx.HTTPTransport):
    """Delivers each request, and loses the answer of every one `matching` selects while `losing` is set."""

    def __init__(self, matching: Callable[[httpx.Request], bool]):
        super().__init__()
        self.matching = matching
        self.losing = True
        self.lost = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if self.losing and self.matching(request):
            self.lost += 1
            response.read()
            response.close()
            raise httpx.ReadError("connection reset after the request was sent")
        return response
