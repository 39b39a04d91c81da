"""The web application: the page's files and one WebSocket per page.

Starlette serves ``static/`` and the socket at ``/ws``; each socket owns a
:class:`~odekit.serve.session.Session`.  Two tasks per socket: one reads the
page's messages and answers them, one sends a frame every
:data:`FRAME_INTERVAL` while a simulation runs.  Building integrators may
compile kernels with Numba (seconds, the first time), so it runs in a worker
thread, never on the event loop.

Only the names the server was started for reach it (:class:`Hosts`, against
DNS rebinding), and only its own pages may open its socket (the ``Origin``
check, against cross-site WebSocket hijacking); docs/serve.md says what is
accepted.
"""

import asyncio
import contextlib
import ipaddress
import json
import logging
import pathlib
import re
import time

import anyio
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.responses import FileResponse, PlainTextResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from .. import backend, checks
from .session import Session, hello

STATIC = pathlib.Path(__file__).with_name("static")
FRAME_INTERVAL = 1 / 30          # seconds between frames
TRY_AGAIN_LATER = 1013           # WebSocket close code: the server is at its limit of sessions
POLICY_VIOLATION = 1008          # WebSocket close code: refused (a server without HTTP denial responses)
MAX_FRAME = 1 << 20              # bytes of one WebSocket message; uvicorn closes with 1009 past it
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
log = logging.getLogger(__name__)


def create_app(max_sessions=8, warm=True, host="127.0.0.1", allow_hosts=()):
    """The Starlette application of ``odekit serve``.

    Parameters
    ----------
    max_sessions : int
        Sockets served at once; one more gets an ``error`` and is closed
        with code 1013 (try again later).
    warm : bool
        Compile the page's default integrators in a background thread at
        start-up, so that the first page does not wait for Numba.
    host : str
        The interface the server listens on; it decides the ``Host`` names
        answered (see :class:`Hosts`).
    allow_hosts : iterable of str
        More names to answer to, e.g. the machine's name on the network.
    """
    checks.count("max_sessions", max_sessions)
    hosts = Hosts(host, allow_hosts)
    sessions = set()

    async def index(request):
        return FileResponse(STATIC / "index.html")

    async def socket(ws: WebSocket):
        await ws.accept()
        if len(sessions) >= max_sessions:
            await _send(ws, {"type": "error", "field": None,
                             "message": f"the server is serving its limit of {max_sessions} pages; "
                                        "close one and reload"})
            await ws.close(code=TRY_AGAIN_LATER)
            return
        session = Session(time.monotonic)
        sessions.add(session)
        lock = anyio.Lock()          # a message and a frame never touch the runners at once
        try:
            await _send(ws, await anyio.to_thread.run_sync(hello))
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_frames, ws, session, lock)
                await _messages(ws, session, lock)
                tasks.cancel_scope.cancel()
        except* WebSocketDisconnect:    # from either task: the page went away
            pass
        finally:
            sessions.discard(session)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        # the common solvers of both scenes, compiled once for every page to come
        if warm:
            backend.in_background(_warm, "odekit-warm")
        yield

    app = Starlette(routes=[Route("/", index), Mount("/static", StaticFiles(directory=STATIC), name="static"),
                            WebSocketRoute("/ws", socket)], lifespan=lifespan,
                    middleware=[Middleware(_Guard, hosts=hosts)])
    return app


async def _send(ws, message):
    # JSON escapes every non-ASCII character: a lone surrogate echoed from a message
    # (a valid JSON escape, "\ud800") cannot be encoded as UTF-8 and would end the socket
    await ws.send_text(json.dumps(message, separators=(",", ":")))


async def _messages(ws, session, lock):
    while True:
        event = await ws.receive()
        if event["type"] == "websocket.disconnect":
            return
        text = event.get("text")
        if text is None:
            text = event.get("bytes") or b""      # refused by parse(), with a message
        async with lock:
            try:
                replies = await anyio.to_thread.run_sync(session.handle, text)
            except Exception:       # a defect of ours: the page is told, the log has the traceback
                log.exception("odekit serve: a message failed")
                replies = [{"type": "error", "field": None,
                            "message": "the server failed on that message (a defect of odekit's; the server's "
                                       "log has the details); the session goes on"}]
        for reply in replies:
            await _send(ws, reply)


async def _frames(ws, session, lock):
    while True:
        began = time.monotonic()
        if session.running:
            async with lock:
                # compiled stepping, but up to tens of milliseconds at the highest rates:
                # off the event loop, so that other pages and messages are not held up
                frame = await anyio.to_thread.run_sync(session.frame)
            await _send(ws, frame)
        await asyncio.sleep(max(0.0, FRAME_INTERVAL - (time.monotonic() - began)))


def _warm():
    for scene in ("orbit", "pendulum"):
        session = Session(time.monotonic)
        session.start({"type": "start", "scene": scene,
                       "solvers": ["euler", "rk4", "velocity_verlet", "forest_ruth"]})
        for _ in range(2):
            session.frame()


# --- who may use the server -----------------------------------------------------------------

class Hosts:
    """The ``Host`` names the server answers to, against DNS rebinding.

    A page on another site can have its own name resolve to this machine
    (DNS rebinding) and so reach the server from the browser; the ``Host``
    header then carries that foreign name.  Accepted: the name or address
    the server listens on and the ``allow`` names; the loopback names
    (localhost, 127.0.0.1, [::1]) when it listens on a loopback address; and,
    when it listens on every interface (0.0.0.0, ::), those and any IP
    address, since a rebound name is never an address.  Ports are not
    compared.

    Parameters
    ----------
    host : str
        The interface the server listens on.
    allow : iterable of str
        More names or addresses to answer to.
    """

    def __init__(self, host, allow=()):
        if isinstance(allow, str):
            allow = (allow,)
        bound = _name(host, "host")
        names = {bound} | {_name(name, "allow_hosts") for name in allow}
        address = _address(bound)
        self.any_address = bound == "" or (address is not None and address.is_unspecified)
        if self.any_address or bound == "localhost" or (address is not None and address.is_loopback):
            names |= set(LOOPBACK_NAMES)
        self.names = frozenset(names - {""})

    def accepts(self, header):
        """Whether a request with this ``Host`` header is served."""
        name = _host_name(header)
        return name is not None and (name in self.names or (self.any_address and _address(name) is not None))

    def refusal(self, scope):
        """Why a request (HTTP or WebSocket) is refused, or None when it is served."""
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not self.accepts(host):
            accepted = ", ".join(f"[{name}]" if ":" in name else name for name in sorted(self.names))
            accepted += " and any IP address" if self.any_address else ""
            return (f"odekit serve answers to {accepted}, not to the host {_cut(host)}: "
                    "restart it with --allow-host NAME to be reached under another name")
        origin = headers.get("origin")
        # a browser always sends Origin on a WebSocket handshake, so a missing one is a
        # script, which no foreign page can drive; a page must come from this very server
        if scope["type"] == "websocket" and origin is not None and not _same_origin(origin, host):
            return (f"a page from {_cut(origin)} may not open this server's socket: only the server's own "
                    f"pages (from http://{_cut(host)}) may")
        return None


class _Guard:
    """ASGI middleware: requests under a foreign Host, or sockets of a foreign page, get a 403 saying why."""

    def __init__(self, app, hosts):
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope, receive, send):
        reason = self.hosts.refusal(scope) if scope["type"] in ("http", "websocket") else None
        if reason is None:
            await self.app(scope, receive, send)
            return
        response = PlainTextResponse(reason + "\n", status_code=403)
        if scope["type"] == "http":
            await response(scope, receive, send)
        elif "websocket.http.response" in scope.get("extensions", {}):
            await WebSocket(scope, receive, send).send_denial_response(response)
        else:       # refused at the handshake all the same, with a bare 403
            await send({"type": "websocket.close", "code": POLICY_VIOLATION, "reason": reason})


class QuietRefusals(logging.Filter):
    """Drops the error uvicorn's sans-I/O WebSocket protocol logs after every refused handshake.

    It forgets that a denial response completes the handshake (Kludex/uvicorn#3138), so each
    page refused here would read as a failure of the server's own.
    """

    def filter(self, record):
        return record.getMessage() != "ASGI callable returned without completing handshake."


# a Host header: a name or an IPv4 address, or an IPv6 address in brackets; then perhaps a port
_HOST_HEADER = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9._-]*)(:[0-9]{1,5})?")
_DNS_NAME = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)(\.(?!-)[a-z0-9_-]{1,63}(?<!-))*\.?")


def _host_name(header):
    """The host of a ``Host`` header, without port or brackets, in lower case; None if it is not one."""
    match = _HOST_HEADER.fullmatch(header.lower())
    if match is None:
        return None
    name = match.group(1)
    if name.startswith("["):
        address = _address(name[1:-1])
        return str(address) if address is not None and address.version == 6 else None
    address = _address(name)
    return str(address) if address is not None else name.removesuffix(".")


def _address(name):
    """``name`` as an IP address, or None."""
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def _name(host, what):
    """A host to listen on or to answer to: a name or an IP address alone, as :func:`_host_name` writes it."""
    address = _address(host.strip("[]")) if isinstance(host, str) else None
    if address is not None:
        return str(address)
    if not isinstance(host, str) or not (host == "" or _DNS_NAME.fullmatch(host.lower())):
        raise ValueError(f"{what} must be a host name or an IP address alone (no scheme, port or path), "
                         f"got {host!r}")
    return host.lower().removesuffix(".")


def _same_origin(origin, host):
    """Whether ``origin`` (a page's scheme://host[:port]) is this server, reached as ``host``."""
    return origin.lower() in (f"http://{host}".lower(), f"https://{host}".lower())


def _cut(text, limit=80):
    """A header echoed in a refusal, made safe and short."""
    shown = text.encode("ascii", "backslashreplace").decode()
    return shown if len(shown) <= limit else shown[:limit - 3] + "..."
