"""Websocket routes."""

from django.urls import path

from apps.review.consumers import StoreEventsConsumer

websocket_urlpatterns: list = [
    path("ws/stores/<str:store>/events/", StoreEventsConsumer.as_asgi()),
]
