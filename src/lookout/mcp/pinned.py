"""An httpx2 client (what the `mcp` client speaks through) held to the SSRF guard's rules.

Every TCP connection is opened by `GuardedBackend`: the host is resolved once by the guard's
resolver, every address is checked, and the socket goes to a checked address (TLS still verifies
the host name). So a DNS answer that changes between a check and the connection cannot redirect
it. Responses are bounded in bytes as they stream.

httpx2 and httpcore2 load with the first client made (a connector used), not with this module:
every web and worker process imports it, few use a connector (2.3 MiB RSS of an idle worker).
"""

from __future__ import annotations

import dataclasses
import functools
import socket
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from aiohttp import abc

from lookout.capabilities import guard
from lookout.settings import Settings

if TYPE_CHECKING:
    import httpcore2
    import httpx2


@dataclasses.dataclass(frozen=True)
class _Classes:
    backend: Callable[[guard.Policy, abc.AbstractResolver | None], httpcore2.AsyncNetworkBackend]
    transport: Callable[[guard.Policy, int], httpx2.AsyncHTTPTransport]  # (policy, max_bytes)


@functools.cache
def _classes() -> _Classes:
    """The guarded backend and transport, made at the first use (they subclass httpx2's)."""
    import httpcore2
    import httpx2

    class ResponseTooLarge(httpx2.StreamError):
        """The server's answer passed the byte limit."""

    class GuardedBackend(httpcore2.AsyncNetworkBackend):
        """Opens TCP connections only to addresses the policy allows."""

        def __init__(
            self, policy: guard.Policy, resolver: abc.AbstractResolver | None = None
        ) -> None:
            self.policy = policy
            self._resolver = guard.GuardedResolver(policy, resolver)
            self._inner = httpcore2.AnyIOBackend()

        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,  # noqa: ASYNC109 - httpcore2's interface
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore2.AsyncNetworkStream:
            answers = await self._resolver.resolve(host, port, socket.AF_UNSPEC)
            failure: httpcore2.ConnectError | None = None
            for answer in answers:
                try:
                    return await self._inner.connect_tcp(
                        answer["host"],
                        port,
                        timeout=timeout,
                        local_address=local_address,
                        socket_options=socket_options,
                    )
                except httpcore2.ConnectError as exc:
                    failure = exc
            raise failure or httpcore2.ConnectError(f"{host} has no address")

        async def connect_unix_socket(
            self,
            path: str,
            timeout: float | None = None,  # noqa: ASYNC109 - httpcore2's interface
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore2.AsyncNetworkStream:
            raise guard.blocked(path, "it is a local socket", rule=guard.RULE_SOCKET)

        async def sleep(self, seconds: float) -> None:
            await self._inner.sleep(seconds)

    class _BoundedStream(httpx2.AsyncByteStream):
        def __init__(self, inner: httpx2.AsyncByteStream, max_bytes: int) -> None:
            self._inner, self._max_bytes = inner, max_bytes

        async def __aiter__(self) -> AsyncIterator[bytes]:
            received = 0
            async for chunk in self._inner:
                received += len(chunk)
                if received > self._max_bytes:
                    raise ResponseTooLarge(f"The answer is larger than {self._max_bytes} bytes.")
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    class GuardedTransport(httpx2.AsyncHTTPTransport):
        """httpx2's transport over a connection pool whose network backend is `GuardedBackend`."""

        def __init__(self, policy: guard.Policy, max_bytes: int) -> None:
            super().__init__(trust_env=False)
            # httpx2 takes no network backend, so its pool is replaced by one built with ours.
            self._pool = httpcore2.AsyncConnectionPool(
                ssl_context=httpx2.create_ssl_context(trust_env=False),
                max_connections=4,
                network_backend=GuardedBackend(policy),
            )
            self._max_bytes = max_bytes

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            response = await super().handle_async_request(request)
            assert isinstance(response.stream, httpx2.AsyncByteStream)
            return httpx2.Response(
                status_code=response.status_code,
                headers=response.headers,
                stream=_BoundedStream(response.stream, self._max_bytes),
                extensions=response.extensions,
            )

    return _Classes(backend=GuardedBackend, transport=GuardedTransport)


def backend(
    policy: guard.Policy, resolver: abc.AbstractResolver | None = None
) -> httpcore2.AsyncNetworkBackend:
    """A network backend that opens TCP connections only to addresses `policy` allows."""
    return _classes().backend(policy, resolver)


def client(settings: Settings, headers: Mapping[str, str]) -> httpx2.AsyncClient:
    """A client for one connector: its headers, the settings' rules, time and size limits."""
    import httpx2

    policy = guard.Policy.from_settings(settings)
    return httpx2.AsyncClient(
        transport=_classes().transport(policy, settings.fetch_max_bytes),
        headers={"User-Agent": settings.user_agent, **headers},
        timeout=httpx2.Timeout(settings.fetch_timeout_s, connect=settings.fetch_connect_timeout_s),
        trust_env=False,
        follow_redirects=False,
    )
