"""The web application: the page's files and one WebSocket per page.

Starlette serves ``static/`` and the socket at ``/ws``; each socket owns a
:class:`~odekit.serve.session.Session`.  Two tasks per socket: one reads the
page's messages and answers them, one sends a frame every
:data:`FRAME_INTERVAL` while a simulation runs.  Building integrators may
compile kernels with Numba (seconds, the first time), so it runs in a worker
thread, never on the event loop.
"""

import asyncio
import contextlib
import pathlib
import threading
import time

import anyio
from starlette.applications import Starlette
from starlette.responses import FileResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from .session import Session, hello

STATIC = pathlib.Path(__file__).with_name("static")
FRAME_INTERVAL = 1 / 30          # seconds between frames
TRY_AGAIN_LATER = 1013           # WebSocket close code: the server is at its limit of sessions


def create_app(max_sessions=8, warm=True):
    """The Starlette application of ``odekit serve``.

    Parameters
    ----------
    max_sessions : int
        Sockets served at once; one more gets an ``error`` and is closed
        with code 1013 (try again later).
    warm : bool
        Compile the page's default integrators in a background thread at
        start-up, so that the first page does not wait for Numba.
    """
    if not (isinstance(max_sessions, int) and max_sessions >= 1):
        raise ValueError(f"max_sessions must be a positive integer, got {max_sessions!r}")
    sessions = set()

    async def index(request):
        return FileResponse(STATIC / "index.html")

    async def socket(ws: WebSocket):
        await ws.accept()
        if len(sessions) >= max_sessions:
            await ws.send_json({"type": "error", "field": None,
                                "message": f"the server is serving its limit of {max_sessions} pages; "
                                           "close one and reload"})
            await ws.close(code=TRY_AGAIN_LATER)
            return
        session = Session(time.monotonic)
        sessions.add(session)
        lock = anyio.Lock()          # a message and a frame never touch the runners at once
        try:
            await ws.send_json(await anyio.to_thread.run_sync(hello))
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
            threading.Thread(target=_warm, daemon=True).start()
        yield

    app = Starlette(routes=[Route("/", index), Mount("/static", StaticFiles(directory=STATIC), name="static"),
                            WebSocketRoute("/ws", socket)], lifespan=lifespan)
    return app


async def _messages(ws, session, lock):
    while True:
        event = await ws.receive()
        if event["type"] == "websocket.disconnect":
            return
        text = event.get("text")
        if text is None:
            text = event.get("bytes") or b""      # refused by parse(), with a message
        async with lock:
            replies = await anyio.to_thread.run_sync(session.handle, text)
        for reply in replies:
            await ws.send_json(reply)


async def _frames(ws, session, lock):
    while True:
        began = time.monotonic()
        if session.running:
            async with lock:
                # compiled stepping, but up to tens of milliseconds at the highest rates:
                # off the event loop, so that other pages and messages are not held up
                frame = await anyio.to_thread.run_sync(session.frame)
            await ws.send_json(frame)
        await asyncio.sleep(max(0.0, FRAME_INTERVAL - (time.monotonic() - began)))


def _warm():
    for scene in ("orbit", "pendulum"):
        session = Session(time.monotonic)
        session.start({"type": "start", "scene": scene,
                       "solvers": ["euler", "rk4", "velocity_verlet", "forest_ruth"]})
        for _ in range(2):
            session.frame()
