"""The live MeshCat server, every socket bound to one address (127.0.0.1 unless asked otherwise).

meshcat's own ``meshcat-server`` binds its ZeroMQ command socket to 127.0.0.1 but its web server (the page and the
websocket that streams the scene) to every interface.  ``Viewer(live=True)`` runs this file instead, as a script
(``python -u meshcat_server.py --host H``, without importing denoc_pin): meshcat's bridge, its web server told the
same address as its ZeroMQ socket.  It prints ``zmq_url=…`` and ``web_url=…`` as ``meshcat-server`` does.
"""

from __future__ import annotations

import argparse
import warnings

with warnings.catch_warnings():  # a pyzmq event-loop DeprecationWarning on import
    warnings.simplefilter("ignore", DeprecationWarning)
    from meshcat.servers.zmqserver import ZMQWebSocketBridge

__all__ = ["LocalBridge", "main"]


class LocalBridge(ZMQWebSocketBridge):
    """meshcat's bridge whose web server listens on ``host`` only, as its ZeroMQ socket does."""

    def make_app(self):
        app = super().make_app()
        listen = app.listen

        def bound(port, **options):
            return listen(port, address=self.host, **options)

        app.listen = bound
        return app


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="MeshCat's server, listening on one address")
    parser.add_argument("--host", default="127.0.0.1", help="the address both sockets listen on (default 127.0.0.1)")
    args = parser.parse_args(argv)
    bridge = LocalBridge(host=args.host)
    print(f"zmq_url={bridge.zmq_url}", flush=True)
    print(f"web_url={bridge.web_url}", flush=True)
    try:
        bridge.run()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
