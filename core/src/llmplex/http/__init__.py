"""HTTP helpers for provider plugins: httpx clients that hold every request to the call's deadline.

    from llmplex.http import async_client, sync_client

    def create_client(settings):        # ProviderInfo.create_client
        return MySDK(http_client=sync_client())

See :mod:`llmplex.http.clients`.
"""

from llmplex.http.clients import async_client, honour_deadline, sync_client

__all__ = ["async_client", "honour_deadline", "sync_client"]
