"""``odekit serve``: the orbit and pendulum shootout, live in the browser.

:func:`serve` runs the page's server; :func:`odekit.serve.app.create_app`
builds the application; :mod:`odekit.serve.session` holds the protocol
(described in ``docs/serve.md``) and :mod:`odekit.serve.scenes` the physics.
"""

import logging
import socket
import webbrowser

from .. import checks


def serve(host="127.0.0.1", port=0, open_browser=False, max_sessions=8, announce=None, allow_hosts=()):
    """Serve the page until interrupted.

    Parameters
    ----------
    host : str
        Interface to listen on; the default serves this machine only.
    port : int
        TCP port, 0 for a free one.
    open_browser : bool
        Open the page in the default browser once the server listens.
    max_sessions : int
        Pages served at once.
    announce : callable
        Called with the line giving the page's address.
    allow_hosts : iterable of str
        Names besides ``host`` (and, on loopback, localhost) that the page may
        be reached under; see :class:`odekit.serve.app.Hosts`.
    """
    server, sock, url = listen(host, port, max_sessions, allow_hosts)
    (announce or (lambda line: print(line, flush=True)))(f"odekit serve: {url}  (Ctrl-C to stop)")
    if open_browser:
        webbrowser.open(url)
    server.run(sockets=[sock])


def listen(host="127.0.0.1", port=0, max_sessions=8, allow_hosts=(), warm=True):
    """A uvicorn server for the page, its listening socket and the page's address.

    ``server.run(sockets=[sock])`` serves until ``server.should_exit`` is
    set; :func:`serve` runs it, a test may run it in a thread.  The
    parameters are :func:`serve`'s; ``warm`` is
    :func:`~odekit.serve.app.create_app`'s.
    """
    try:
        import uvicorn

        from .app import MAX_FRAME, QuietRefusals, create_app
    except ImportError as exc:
        raise ImportError(f"odekit serve needs the 'serve' extra ({exc.name} is missing): "
                          "python -m pip install -e '.[serve]' in the odekit checkout") from None

    app = create_app(max_sessions, warm=warm, host=host, allow_hosts=allow_hosts)
    port = checks.count("port", port, 0, 65535, "an integer from 0 to 65535 (0: a free port)")
    # bind first, so that the address printed is the one listening (port 0 picks a free one)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)        # a page opened at once waits in the queue until uvicorn accepts
    port = sock.getsockname()[1]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    # a message up to MAX_FRAME gets a reply (an error past 4096 characters); a larger
    # frame is not read: the socket is closed with 1009, message too big
    config = uvicorn.Config(app, log_level="warning", ws_max_size=MAX_FRAME)
    errors = logging.getLogger("uvicorn.error")     # configured by uvicorn.Config, just above
    if not any(isinstance(f, QuietRefusals) for f in errors.filters):
        errors.addFilter(QuietRefusals())
    return uvicorn.Server(config), sock, url
