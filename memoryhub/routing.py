"""Websocket routes; the review app adds its live-update consumers here."""

websocket_urlpatterns: list = []
