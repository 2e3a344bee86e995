"""Delivering webhooks: where a webhook URL may point, the signature, and one attempt at a delivery.

A delivery's task claims it with a conditional UPDATE that pushes `next_attempt_at` out by a lease, so a
duplicated task finds nothing due and cannot send it while another sends it. Each POST is signed with the
webhook's secret, Stripe-style: `Memoryhub-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,
and sent only to addresses checked at that moment (public ones unless WEBHOOK_ALLOW_PRIVATE_ADDRESSES), never
following a redirect. A delivery that fails on every attempt counts against its webhook; after
WEBHOOK_DISABLE_AFTER_FAILURES of them in a row the webhook is disabled, and a success resets the count.
"""

import hashlib
import hmac
import ipaddress
import json
import logging
import re
import socket
import time
from dataclasses import dataclass
from datetime import timedelta

import httpx
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.memories.models import Webhook, WebhookDelivery

logger = logging.getLogger(__name__)

DELIVER_TASK = "apps.memories.tasks.deliver_webhook"
SIGNATURE_HEADER = "Memoryhub-Signature"
USER_AGENT = "memoryhub-webhooks/1.0"
# Each retry waits 4 times longer than the one before (10 s, 40 s, 160 s, ~11 min, ~43 min by default).
BACKOFF_FACTOR = 4
MAX_URL_LENGTH = 2000
# Of a failed answer's body, this much is kept in `last_error` (enough for the receiver's own message).
ERROR_BODY_CHARS = 200
# A host's addresses tried in one attempt, each until it connects or refuses (the lease below counts them).
CONNECT_ATTEMPTS = 4
_HOSTNAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$")


# --- Addresses ---------------------------------------------------------------------------------------------


class _RefusedAddress(Exception):
    """The URL's host cannot be resolved, or resolves to an address webhooks may not reach."""


def check_webhook_url(url) -> str:
    """The URL as stored, or a 400 saying what is wrong with it (including where its host points)."""
    url = url.strip() if isinstance(url, str) else url
    try:
        parsed = _parse_url(url)
        _addresses(parsed)
    except _RefusedAddress as exc:
        raise ApplicationError(str(exc), code="webhook_url_refused", details={"url": [str(exc)]}) from None
    except ValueError as exc:
        raise ApplicationError(f"Invalid webhook URL: {exc}", code="invalid_webhook_url",
                               details={"url": [str(exc)]}) from None
    return url


def _parse_url(url) -> httpx.URL:
    if not isinstance(url, str) or not url:
        raise ValueError("give an http or https URL.")
    if len(url) > MAX_URL_LENGTH:
        raise ValueError(f"at most {MAX_URL_LENGTH} characters.")
    if any(character.isspace() or not character.isprintable() for character in url):
        raise ValueError("it must not contain spaces or control characters.")
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, UnicodeError) as exc:
        raise ValueError(str(exc) or "not a URL.") from None
    if parsed.scheme not in ("http", "https"):
        raise ValueError("only http and https URLs can receive webhooks.")
    host = parsed.raw_host.decode("ascii")
    if not host:
        raise ValueError("the URL names no host.")
    if not (_ip_literal(host) or _HOSTNAME.match(host)):
        raise ValueError(f"{parsed.host!r} is not a host name.")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise ValueError(f"port {parsed.port} is out of range.")
    return parsed


def _ip_literal(host: str):
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _addresses(url: httpx.URL) -> list:
    """The addresses to send to: the host's, each allowed (unless WEBHOOK_ALLOW_PRIVATE_ADDRESSES), in the
    resolver's order. A host with one forbidden address among others is refused whole: an attacker's DNS
    would otherwise pair a public address with an inner one."""
    host = url.raw_host.decode("ascii")
    literal = _ip_literal(host)
    if literal is not None:
        found = [literal]
    else:
        try:
            infos = socket.getaddrinfo(host, url.port or (443 if url.scheme == "https" else 80),
                                       type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise _RefusedAddress(f"The host {url.host!r} could not be resolved.") from None
        found = list(dict.fromkeys(ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos))
    if not settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES:
        forbidden = [address for address in found if not _is_public(address)]
        if forbidden:
            raise _RefusedAddress(
                f"The host {url.host!r} is or resolves to {forbidden[0]}, a private, loopback, link-local or "
                "reserved address: webhooks are sent to public addresses only."
            )
    return found


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _is_public(address) -> bool:
    """A public unicast address; an IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4, Teredo) is judged by
    the IPv4 address it reaches."""
    if address.version == 6:
        embedded = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return _is_public(embedded)
    return address.is_global and not address.is_multicast


# --- Queueing ----------------------------------------------------------------------------------------------


def enqueue_deliveries(delivery_ids) -> None:
    from django_q.brokers import get_broker
    from django_q.tasks import async_task

    broker = get_broker()
    # One transaction: with the ORM broker, a bulk add's hundred tasks are a hundred inserts and one commit.
    with transaction.atomic():
        for delivery_id in delivery_ids:
            async_task(DELIVER_TASK, str(delivery_id), broker=broker, task_name=f"webhook-{delivery_id}",
                       group="webhooks")


def _schedule_attempt(delivery_id, attempt: int, run_at) -> None:
    from django_q.models import Schedule

    Schedule.objects.create(
        name=f"webhook-{delivery_id}-{attempt}",
        func=DELIVER_TASK,
        args=repr(str(delivery_id)),
        schedule_type=Schedule.ONCE,
        repeats=-1,  # a ONCE schedule with negative repeats is deleted once it has run
        next_run=run_at,
    )


def backoff_seconds(attempt: int) -> int:
    """How long after failed attempt number `attempt` (1-based) the next one is due."""
    return min(settings.WEBHOOK_BACKOFF_SECONDS * BACKOFF_FACTOR ** (attempt - 1), settings.WEBHOOK_BACKOFF_MAX_SECONDS)


# --- Delivering --------------------------------------------------------------------------------------------


def _attempt_lease() -> timedelta:
    # Longer than one attempt can take: a connection per address tried, then the answer.
    return timedelta(seconds=CONNECT_ATTEMPTS * settings.WEBHOOK_CONNECT_TIMEOUT_SECONDS
                     + 2 * settings.WEBHOOK_TIMEOUT_SECONDS + 30)


def _claim(delivery_id) -> WebhookDelivery | None:
    """Take the delivery if it is queued and due; None if it is not (sent, failed, not yet due, or being sent)."""
    now = timezone.now()
    claimed = WebhookDelivery.objects.filter(
        pk=delivery_id, status=WebhookDelivery.Status.QUEUED, next_attempt_at__lte=now
    ).update(attempts=F("attempts") + 1, next_attempt_at=now + _attempt_lease(), updated_at=now)
    if not claimed:
        return None
    return WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()


@dataclass(frozen=True)
class _Answer:
    status_code: int | None = None
    error: str = ""

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def webhook_delivery_attempt(*, delivery_id) -> WebhookDelivery | None:
    """Make one attempt at a delivery if it is due: sign and POST it, then record the answer, scheduling the
    next attempt or failing it for good. None when the delivery was not due (another task has it, or it is done)."""
    delivery = _claim(delivery_id)
    if delivery is None:
        return None
    webhook = delivery.webhook
    started = time.monotonic()
    if not webhook.is_active:  # disabled since the delivery was queued: it fails without counting against it
        return _record(delivery, _Answer(error="Not sent: the webhook is disabled."), duration_ms=0, final=True,
                       counts=False)
    answer = _post(webhook, delivery)
    duration_ms = int((time.monotonic() - started) * 1000)
    final = answer.succeeded or delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS
    if not answer.succeeded:
        # The host only (a URL's path or query often holds a token) and the status, not the reply (which often
        # echoes the payload).
        logger.info("Webhook delivery %s of webhook %s to %s failed (attempt %s): %s", delivery.pk, webhook.pk,
                    httpx.URL(webhook.url).host, delivery.attempts, answer.status_code or "no answer")
    return _record(delivery, answer, duration_ms=duration_ms, final=final, counts=True)


def _record(delivery: WebhookDelivery, answer: _Answer, *, duration_ms: int, final: bool,
            counts: bool) -> WebhookDelivery:
    now = timezone.now()
    delivery.response_status, delivery.last_error, delivery.duration_ms = answer.status_code, answer.error, duration_ms
    if answer.succeeded:
        delivery.status, delivery.delivered_at, delivery.next_attempt_at = WebhookDelivery.Status.SUCCEEDED, now, None
    elif final:
        delivery.status, delivery.next_attempt_at = WebhookDelivery.Status.FAILED, None
    else:
        delivery.next_attempt_at = now + timedelta(seconds=backoff_seconds(delivery.attempts))
    delivery.updated_at = now
    fields = ["status", "response_status", "last_error", "duration_ms", "delivered_at", "next_attempt_at", "updated_at"]
    with transaction.atomic():
        # Only while this attempt still holds the delivery: one that outlived its lease must not overwrite
        # the outcome of the attempt that took over.
        still_ours = WebhookDelivery.objects.filter(
            pk=delivery.pk, status=WebhookDelivery.Status.QUEUED, attempts=delivery.attempts
        ).update(**{name: getattr(delivery, name) for name in fields})
        if still_ours and counts:
            if answer.succeeded:
                Webhook.objects.filter(pk=delivery.webhook_id, consecutive_failures__gt=0).update(
                    consecutive_failures=0, updated_at=now
                )
            elif final:
                _count_final_failure(delivery)
    if not still_ours:
        return WebhookDelivery.objects.filter(pk=delivery.pk).first() or delivery  # as the other attempt left it
    if not final:
        _schedule_attempt(delivery.pk, delivery.attempts + 1, delivery.next_attempt_at)
    return delivery


def _count_final_failure(delivery: WebhookDelivery) -> None:
    webhook = Webhook.objects.select_for_update().filter(pk=delivery.webhook_id).first()
    if webhook is None:
        return  # deleted meanwhile
    webhook.consecutive_failures += 1
    fields = ["consecutive_failures", "updated_at"]
    threshold = settings.WEBHOOK_DISABLE_AFTER_FAILURES
    if threshold and webhook.is_active and webhook.consecutive_failures >= threshold:
        webhook.is_active, webhook.disabled_at = False, timezone.now()
        # Not the last error's text: the receiver's reply may echo a customer's words, and this row outlives
        # erasures and the delivery log's retention. The delivery log has the details.
        last = f"HTTP {delivery.response_status}" if delivery.response_status else "no answer"
        webhook.disabled_reason = (
            f"Disabled after {webhook.consecutive_failures} deliveries in a row failed on every attempt; "
            f"the last: {last} (see the delivery log)."
        )
        fields += ["is_active", "disabled_at", "disabled_reason"]
        logger.warning("Webhook %s disabled: %s", webhook.pk, webhook.disabled_reason)
    webhook.save(update_fields=fields)
    delivery.webhook = webhook


def webhook_signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """The Memoryhub-Signature header of `body` sent at `timestamp` (Unix seconds)."""
    digest = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode("ascii") + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def _body(payload) -> bytes:
    return json.dumps(payload, cls=DjangoJSONEncoder, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _post(webhook: Webhook, delivery: WebhookDelivery) -> _Answer:
    """POST the delivery to the webhook, connecting only to the addresses checked here (a host whose DNS answer
    changes between the check and the connection cannot lead the request elsewhere)."""
    try:
        url = _parse_url(webhook.url)
        addresses = _addresses(url)
    except (ValueError, _RefusedAddress) as exc:
        return _Answer(error=f"Not sent: {exc}")
    body = _body(delivery.payload)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Memoryhub-Event": delivery.event_type,
        "Memoryhub-Delivery": str(delivery.pk),
        SIGNATURE_HEADER: webhook_signature(secret=webhook.secret, timestamp=int(time.time()), body=body),
        "Host": url.netloc.decode("ascii"),
    }
    host = url.raw_host.decode("ascii")
    # TLS checks the certificate against the host name, not the address connected to.
    extensions = {"sni_hostname": host} if url.scheme == "https" and _ip_literal(host) is None else {}
    timeout = httpx.Timeout(settings.WEBHOOK_TIMEOUT_SECONDS, connect=settings.WEBHOOK_CONNECT_TIMEOUT_SECONDS)
    # trust_env off: no proxy or .netrc of the worker's environment gets the events.
    with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        failure = ""
        for address in addresses[:CONNECT_ATTEMPTS]:
            request = client.build_request("POST", url.copy_with(host=str(address)), content=body, headers=headers,
                                           extensions=extensions)
            try:
                return _send(client, request)
            except httpx.ConnectTimeout:
                failure = f"No connection to {url.host} within {settings.WEBHOOK_CONNECT_TIMEOUT_SECONDS:g} s."
            except httpx.ConnectError as exc:
                failure = f"Could not connect to {url.host}: {_words(exc)}."
            except httpx.TimeoutException:
                return _Answer(error=f"No answer within {settings.WEBHOOK_TIMEOUT_SECONDS:g} s.")
            except httpx.HTTPError as exc:
                return _Answer(error=f"The request failed: {_words(exc)}.")
        return _Answer(error=failure)


def _words(exc: Exception) -> str:
    return str(exc) or exc.__class__.__name__


def _send(client: httpx.Client, request: httpx.Request) -> _Answer:
    response = client.send(request, stream=True)  # streamed: of a failure's body, only the start is read
    try:
        code = response.status_code
        if 200 <= code < 300:
            return _Answer(status_code=code)
        if 300 <= code < 400:
            where = response.headers.get("location", "")[:ERROR_BODY_CHARS]
            return _Answer(status_code=code, error=f"The receiver answered {code}, a redirect to {where!r}; redirects "
                                                   "are not followed: give the final URL.")
        excerpt = _excerpt(response)
        return _Answer(status_code=code, error=f"The receiver answered {code} {response.reason_phrase}"
                                               + (f": {excerpt}" if excerpt else "."))
    finally:
        response.close()


def _excerpt(response: httpx.Response) -> str:
    """The start of an answer's body, as one line of storable text."""
    received = b""
    deadline = time.monotonic() + settings.WEBHOOK_TIMEOUT_SECONDS
    try:
        for chunk in response.iter_bytes():
            received += chunk
            if len(received) >= 4 * ERROR_BODY_CHARS or time.monotonic() > deadline:
                break
    except httpx.HTTPError:
        pass  # the status says enough
    text = " ".join(received.decode("utf-8", errors="replace").replace("\x00", "").split())
    return text[:ERROR_BODY_CHARS] + ("…" if len(text) > ERROR_BODY_CHARS else "")
