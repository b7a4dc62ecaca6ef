"""HTTP helpers for provider plugins: deadline-bound httpx clients, an event-stream parser, the status mapping.

    from llmplex.http import async_client, classify_http_error, iter_sse, sync_client

    def create_client(settings):        # ProviderInfo.create_client
        return sync_client(base_url=settings.base_url)

    @hookimpl
    def llmplex_classify_error(error):
        return classify_http_error(error)   # None for what is not an HTTP status error

See ``llmplex.http.clients``, ``llmplex.http.aiohttp_clients`` (many requests in flight),
``llmplex.http.direct`` (posting on those clients' aiohttp session without httpx's objects),
``llmplex.http.sse``, ``llmplex.http.statuses`` and ``llmplex.http.segments`` (names put into URLs).
"""

from llmplex.http.aiohttp_clients import library_transport_replaced, sdk_async_client
from llmplex.http.chat_parts import chat_content_part
from llmplex.http.clients import async_client, honour_deadline, http_library, sync_client
from llmplex.http.direct import DirectSender, Reply, direct_sender
from llmplex.http.segments import check_name, path_segment
from llmplex.http.sse import ServerSentEvent, SSEDecoder, aiter_sse, iter_sse
from llmplex.http.statuses import (
    Override,
    body_excerpt,
    classify_http_error,
    default_error_class,
    error_for_status,
    error_from_response,
)

__all__ = [
    "DirectSender",
    "Override",
    "Reply",
    "SSEDecoder",
    "ServerSentEvent",
    "aiter_sse",
    "async_client",
    "body_excerpt",
    "chat_content_part",
    "check_name",
    "classify_http_error",
    "default_error_class",
    "direct_sender",
    "error_for_status",
    "error_from_response",
    "honour_deadline",
    "http_library",
    "iter_sse",
    "library_transport_replaced",
    "path_segment",
    "sdk_async_client",
    "sync_client",
]
