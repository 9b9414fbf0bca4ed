"""Which names the LAN page answers to (against DNS rebinding), and how many
connections one address may hold.

DNS rebinding: a page on a foreign name (``evil.example``) whose DNS answer
later points at the box makes the browser treat the box as that page's own
site, so its scripts could read the history and post PINs. The browser still
sends the foreign name in ``Host``; so only requests whose ``Host`` is in the
allow-list are served (421 otherwise), and a POST's ``Origin`` must name an
allowed host too. The allow-list: the configured address, the box's host name
and its ``.local`` name (mDNS), ``localhost``, the names in ``web.hostnames``
(a reverse proxy's name), and an IP address literal only when it is the very
address the connection arrived on (or a loopback address): a foreign page can
never have a box's IP address as its own origin.

:class:`LimitedRunner` is an ``aiohttp`` ``AppRunner`` whose server refuses a
connection (closes it at once) when its address already holds
:data:`PER_ADDRESS` connections, or the page holds :data:`MAX_CONNECTIONS`:
one stranger cannot use up the process's file descriptors.
"""
from __future__ import annotations

import ipaddress
import logging
import socket
import time
from collections import Counter
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.web_server import Server

LOG = logging.getLogger(__name__)

PER_ADDRESS = 24         #: open connections one address may hold (a browser opens about 6)
MAX_CONNECTIONS = 400    #: open connections in all (the unit's LimitNOFILE is 1024)
LOG_EVERY_S = 10.0       #: refused connections are logged at most this often


def allowed_names(address: str, extra: tuple[str, ...] = (), hostname: str | None = None
                  ) -> frozenset[str]:
    """The host names (lower case, no port) the page answers to: ``address`` unless it
    is a wildcard (0.0.0.0, ::), the machine's ``hostname`` (default: this machine's)
    and ``<hostname>.local``, ``localhost`` and the ``extra`` names."""
    name = (hostname if hostname is not None else socket.gethostname()).lower().rstrip(".")
    names = {"localhost", name, f"{name.split('.')[0]}.local", *(e.lower() for e in extra)}
    if address not in ("0.0.0.0", "::", ""):
        names.add(address.lower())
    return frozenset(n for n in names if n)


def split_host(value: str) -> str | None:
    """The host of a ``Host`` header value (``name``, ``name:port``, ``[v6]:port``),
    lower case without the port; None when it is not a host at all."""
    try:
        parts = urlsplit("//" + value)
        host, _ = parts.hostname, parts.port          # .port raises on a bad port
    except ValueError:
        return None
    if not host or parts.path or parts.query or parts.fragment or parts.username is not None:
        return None
    return host.lower().rstrip(".") if not host.endswith("..") else None


def host_allowed(host: str | None, names: frozenset[str], local_ip: str | None) -> bool:
    """True when ``host`` (from :func:`split_host`) is in ``names``, or is an IP
    address equal to ``local_ip`` (the address the connection arrived on) or a
    loopback address."""
    if not host:
        return False
    if host in names:
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    if ip.is_loopback:
        return True
    try:
        return local_ip is not None and ip == ipaddress.ip_address(local_ip.split("%")[0])
    except ValueError:
        return False


def request_host_allowed(request: web.Request, names: frozenset[str]) -> bool:
    """:func:`host_allowed` for ``request``'s ``Host`` header and its local address."""
    sock = request.transport.get_extra_info("sockname") if request.transport else None
    local = sock[0] if isinstance(sock, tuple) and sock else None
    return host_allowed(split_host(request.headers.get("Host", "")), names, local)


def origin_allowed(origin: str | None, request: web.Request, names: frozenset[str]) -> bool:
    """True when ``origin`` is ``http(s)://`` + the request's own ``Host`` (the very
    page, port included), and that host is allowed."""
    if not origin:
        return False
    parts = urlsplit(origin)
    if (parts.scheme not in ("http", "https") or parts.path not in ("", "/")
            or parts.netloc.lower() != request.headers.get("Host", "").lower()):
        return False
    sock = request.transport.get_extra_info("sockname") if request.transport else None
    local = sock[0] if isinstance(sock, tuple) and sock else None
    return host_allowed(split_host(parts.netloc), names, local)


class _LimitedServer(Server):
    """aiohttp's server with a cap of connections per address and in all (made from
    the application's own server by :meth:`LimitedRunner._make_server`)."""

    def _start_counting(self) -> None:
        self.per_address: Counter = Counter()
        self._peers: dict[int, str] = {}
        self._logged = (float("-inf"), 0)

    def connection_made(self, handler, transport) -> None:
        super().connection_made(handler, transport)
        peer = transport.get_extra_info("peername")
        addr = peer[0] if isinstance(peer, tuple) and peer else "?"
        if self.per_address[addr] >= PER_ADDRESS or len(self._peers) >= MAX_CONNECTIONS:
            self._refused(addr)
            transport.pause_reading()
            handler._force_close = True            # its request loop ends before it reads
            loop = self._loop                      # and the socket closes once it has ended
            loop.call_soon(loop.call_soon, transport.abort)
            return
        self.per_address[addr] += 1
        self._peers[id(handler)] = addr

    def connection_lost(self, handler, exc=None) -> None:
        addr = self._peers.pop(id(handler), None)
        if addr is not None:
            self.per_address[addr] -= 1
            if self.per_address[addr] <= 0:
                del self.per_address[addr]
        super().connection_lost(handler, exc)

    def _refused(self, addr: str) -> None:
        last, count = self._logged
        now = time.monotonic()
        if now - last < LOG_EVERY_S:
            self._logged = (last, count + 1)
            return
        LOG.warning("web: refused a connection from %s: it holds %d already (%d open in all)%s",
                    addr, self.per_address[addr], len(self._peers),
                    f"; {count} more refused since the last line" if count else "")
        self._logged = (now, 0)


class LimitedRunner(web.AppRunner):
    """An ``AppRunner`` whose server caps connections per address and in all."""

    async def _make_server(self) -> Server:
        server = await super()._make_server()
        server.__class__ = _LimitedServer          # the same server, counting connections
        server._start_counting()
        return server
