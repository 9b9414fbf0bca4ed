"""Which names a page on the LAN answers to: the ``Host`` and ``Origin`` checks.

A page that listens on the LAN must refuse requests whose ``Host`` header names
another site (DNS rebinding: a site the visitor opened points its own name at
this box's address, and its script then reads or drives the page as if it were
its own), and changes must come from a page this server served (``Origin``).

:func:`allowed_names` builds the allow-list: the configured address, this
machine's host name and its ``.local`` (mDNS) name, the machine's own IP
addresses, and ``localhost`` / ``127.0.0.1`` / ``::1``, plus any names the
owner adds (``web.hostnames``: a reverse proxy's). :class:`HostGuard` checks a
request's ``Host`` (always) and ``Origin`` (whenever the browser sends one, and
required on anything but GET/HEAD) against it, and against the port served; an
IP address is also this server when it is the very address the connection
arrived on (a foreign page can never have it as its own origin). The aiohttp
servers wrap it in a middleware.

:class:`LimitedRunner` is an ``aiohttp`` ``AppRunner`` whose server refuses a
connection (closes it at once) when its address already holds
:data:`PER_ADDRESS` connections, or the server holds :data:`MAX_CONNECTIONS`:
one stranger cannot use up the process's file descriptors.
"""
from __future__ import annotations

import ipaddress
import logging
import socket
import time
from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.web_server import Server

LOG = logging.getLogger(__name__)

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
ANY_ADDRESS = frozenset({"0.0.0.0", "::", ""})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORTS = {"http": 80, "https": 443}
PER_ADDRESS = 24         #: open connections one address may hold (a browser opens about 6)
MAX_CONNECTIONS = 400    #: open connections in all (the web unit's LimitNOFILE is 1024)
LOG_EVERY_S = 10.0       #: refused connections are logged at most this often


class HostRefused(Exception):
    """A request refused by :class:`HostGuard`; ``status`` is the HTTP status (421 for a
    Host this server is not, 403 for an Origin that is not this page)."""

    def __init__(self, message: str, status: int = 403):
        super().__init__(message)
        self.status = status


def own_addresses(hostname: str) -> frozenset[str]:
    """This machine's IP addresses as text: what ``hostname`` resolves to locally and
    the address of the interface the default route uses (found by connecting a UDP
    socket, which sends nothing). Unresolvable names and no route give fewer addresses,
    never an error."""
    found: set[str] = set()
    try:
        for info in socket.getaddrinfo(hostname, None):
            found.add(str(info[4][0]).split("%")[0])
    except (OSError, UnicodeError):
        pass
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as udp:
                udp.connect((probe, 9))
                found.add(str(udp.getsockname()[0]).split("%")[0])
        except OSError:
            pass
    return frozenset(found)


def allowed_names(address: str, hostname: str | None = None,
                  addresses: frozenset[str] | None = None,
                  extra: tuple[str, ...] = ()) -> frozenset[str]:
    """The host names and addresses a page listening on ``address`` answers to
    (lower case, IPv6 without brackets): ``address`` itself (unless it is a wildcard
    such as 0.0.0.0), ``hostname`` (default: this machine's), its first label +
    ``.local``, ``addresses`` (default: :func:`own_addresses`), the loopback names and
    the ``extra`` names (the config's ``web.hostnames``).
    Raises ValueError when ``address`` holds a character no host name has."""
    address = (address or "").strip().lower().strip("[]")
    if any(c in address for c in "/@?# "):
        raise ValueError(f"web address {address!r} is not a host name or IP address")
    hostname = (hostname if hostname is not None else socket.gethostname()).lower().rstrip(".")
    names = set(LOOPBACK)
    if address not in ANY_ADDRESS:
        names.add(address)
    if hostname:
        names.add(hostname)
        names.add(hostname.split(".")[0] + ".local")
    names |= addresses if addresses is not None else own_addresses(hostname or "localhost")
    names |= {e.strip().lower().rstrip(".") for e in extra}
    return frozenset(n.lower() for n in names if n)


def split_host(value: str) -> tuple[str, int | None]:
    """``"name:8080"`` -> ("name", 8080); ``"[::1]:80"`` -> ("::1", 80); no port -> None.
    Raises ValueError for a malformed value (an unclosed bracket, a port that is no number
    in 1..65535)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            raise ValueError(f"malformed host {value!r}")
        name, rest = value[1:end], value[end + 1:]
        if rest and not rest.startswith(":"):
            raise ValueError(f"malformed host {value!r}")
        port_text = rest[1:] if rest else None
    elif value.count(":") == 1:
        name, port_text = value.split(":")
    else:
        name, port_text = value, None            # a bare IPv6 address has no port
    port = None
    if port_text is not None:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"malformed port in host {value!r}")
        port = int(port_text)
    return name.rstrip("."), port


@dataclass(frozen=True)
class HostGuard:
    """The allow-list of ``names`` (see :func:`allowed_names`) and the ``port`` served
    (None: any port is accepted)."""

    names: frozenset[str]
    port: int | None = None

    @classmethod
    def for_address(cls, address: str, port: int | None = None,
                    hostname: str | None = None) -> "HostGuard":
        """The guard of a page listening on ``address``:``port``."""
        return cls(allowed_names(address, hostname), port)

    def check_host(self, host: str | None, local: str | None = None) -> None:
        """Raise :class:`HostRefused` (421) unless ``host`` (the Host header) names this
        server: a name of the list or ``local`` (the address the connection arrived
        on), and the port served when it gives one."""
        if not host:
            raise HostRefused("refused: the request names no host", 421)
        try:
            name, port = split_host(host)
        except ValueError as exc:
            raise HostRefused(f"refused: {exc}", 421) from None
        if not self._ours(name, port, 80, local):
            raise HostRefused(f"refused: this page does not answer to the host {host!r}", 421)

    def check_origin(self, origin: str | None, required: bool = True,
                     local: str | None = None) -> None:
        """Raise :class:`HostRefused` (403) unless ``origin`` (the Origin header) is a page
        of this server (http or https, a name of the list, the port served); a missing
        Origin is refused only when ``required``."""
        if not origin:
            if required:
                raise HostRefused("refused: a change must come from this page (no Origin header)")
            return
        parts = urlsplit(origin)
        try:
            name, port = split_host(parts.netloc)
        except ValueError:
            name, port = "", None
        if parts.scheme not in DEFAULT_PORTS or not self._ours(
                name, port, DEFAULT_PORTS[parts.scheme], local):
            raise HostRefused(f"refused: a change must come from this page, not from {origin}")

    def check(self, method: str, host: str | None, origin: str | None,
              local: str | None = None) -> None:
        """Both checks for one request: Host always; Origin when sent, and on every method
        but GET/HEAD/OPTIONS even when missing. ``local``: the address the connection
        arrived on (also this server's)."""
        self.check_host(host, local)
        self.check_origin(origin, required=method.upper() not in SAFE_METHODS, local=local)

    def _ours(self, name: str, port: int | None, default_port: int,
              local: str | None = None) -> bool:
        known = self.names | ({local.split("%")[0].lower()} if local else set())
        if name not in known and not _same_address(name, known):
            return False
        return self.port is None or (port if port is not None else default_port) == self.port


def _same_address(name: str, names: frozenset[str]) -> bool:
    """True when ``name`` is an IP address written another way than one of ``names``
    (``::0001`` for ``::1``)."""
    try:
        wanted = ipaddress.ip_address(name)
    except ValueError:
        return False
    for known in names:
        try:
            if ipaddress.ip_address(known) == wanted:
                return True
        except ValueError:
            continue
    return False


def host_middleware(guard: HostGuard):
    """An aiohttp middleware refusing, with a short plain-text answer, every request
    :meth:`HostGuard.check` refuses (before any handler runs)."""
    from aiohttp import web

    @web.middleware
    async def check_hosts(request, handler):
        """Host and Origin first; then the handler."""
        try:
            guard.check(request.method, request.headers.get("Host"), request.headers.get("Origin"),
                        local_address(request))
        except HostRefused as exc:
            return web.Response(text=str(exc), status=exc.status, content_type="text/plain")
        return await handler(request)
    return check_hosts


def local_address(request) -> str | None:
    """The address ``request``'s connection arrived on (this machine's), or None."""
    sock = request.transport.get_extra_info("sockname") if request.transport else None
    return str(sock[0]) if isinstance(sock, tuple) and sock else None


class _LimitedServer(Server):
    """aiohttp's server with a cap of connections per address and in all (made from
    the application's own server by :meth:`LimitedRunner._make_server`)."""

    def _start_counting(self) -> None:
        self.per_address: Counter = Counter()
        self._peers: dict[int, str] = {}
        self._logged = (float("-inf"), 0)

    def connection_made(self, handler, transport) -> None:
        """Count a new connection by its address; one over :data:`PER_ADDRESS` from that
        address, or over :data:`MAX_CONNECTIONS` in all, is refused (logged, closed)."""
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
        """Forget a closed connection in its address's count."""
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
