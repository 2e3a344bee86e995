"""URLs for tests/test_asgi_handler.py: views that show which thread and connection served them."""

import threading
import time

from django.db import connection, connections
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

served: list[dict] = []


def slow(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    time.sleep(float(request.GET.get("seconds", "0.3")))
    served.append({"thread": threading.get_ident(), "connection": connections["default"]})  # this thread's
    return JsonResponse({"ok": True})


def failing(request):
    raise RuntimeError("boom")


def streamed(request):
    return StreamingHttpResponse(f"part {index}\n" for index in range(3))


@csrf_exempt
def echo(request):
    return HttpResponse(request.body, content_type="application/octet-stream")


urlpatterns = [
    path("slow", slow),
    path("failing", failing),
    path("streamed", streamed),
    path("echo", echo),
]
