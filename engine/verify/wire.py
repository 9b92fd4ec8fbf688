"""The wire between the checker's process and the answer's process.

The checks never import answer code: the answer lives in its own sandboxed
process and serves calls over a Unix socket. Each message is a length-prefixed
JSON header; the arrays it carries travel in one sealed memfd sent with the
message (SCM_RIGHTS), never as pickles, so decoding runs no code. Anything
that is not plain data (numbers, strings, bytes, lists, tuples, dicts,
numeric ndarrays) crosses as a handle: the receiver gets a :class:`Proxy`
whose calls and attribute reads travel back to the owner. Calls nest: while
the checker waits for an answer, the answer may call back into objects the
checker handed it (a target model), and the checker serves those.

Trust runs one way. The checker may do anything with the answer's objects;
the answer may only call what it was given and read its public attributes
(no dunders, no modules), so it cannot reach the checker's globals.
"""
from __future__ import annotations

import socket
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# what the rest of benchtui reaches through ``wire.``: the frames, the values, both halves
from benchtui.verify.wire_client import Client
from benchtui.verify.wire_client import call_plain as call_plain
from benchtui.verify.wire_client import rebuild_exception as rebuild_exception
from benchtui.verify.wire_frames import ALIGN as ALIGN
from benchtui.verify.wire_frames import MAX_PAYLOAD as MAX_PAYLOAD
from benchtui.verify.wire_frames import SEALS as SEALS
from benchtui.verify.wire_frames import Connection as Connection
from benchtui.verify.wire_frames import Deadline as Deadline
from benchtui.verify.wire_frames import Limit as Limit
from benchtui.verify.wire_frames import NotPlain as NotPlain
from benchtui.verify.wire_frames import PeerGone as PeerGone
from benchtui.verify.wire_frames import RemoteError as RemoteError
from benchtui.verify.wire_frames import SharedPages as SharedPages
from benchtui.verify.wire_frames import TooLarge as TooLarge
from benchtui.verify.wire_frames import WireError as WireError
from benchtui.verify.wire_frames import aligned_bytes as aligned_bytes
from benchtui.verify.wire_frames import socket_from_fd as socket_from_fd
from benchtui.verify.wire_server import Server
from benchtui.verify.wire_server import describe_raise as describe_raise
from benchtui.verify.wire_server import where_raised as where_raised
from benchtui.verify.wire_values import Proxy as Proxy
from benchtui.verify.wire_values import is_proxy as is_proxy


class Peer(Client, Server):
    """Requests to and requests from the other process over one Connection: the client
    half (wire_client.py) sends and awaits, the server half (wire_server.py) answers,
    nested both ways (while this side awaits a reply it serves the other's calls).

    ``trusting`` peers (the answer's side) let the other side do anything with
    their objects; the checker's peer is not trusting.
    """

    def __init__(self, conn: Connection, *, trusting: bool, ops: dict[str, Callable[[Any], Any]] | None = None):
        super().__init__(conn, trusting=trusting)
        self._client_state()
        self._server_state(ops)


@contextmanager
def echo_peer(reply: Any) -> Iterator[Peer]:
    """A peer served by a thread of this process whose ``echo`` op answers
    ``reply``: the wire's own cost for a request and a reply of given sizes,
    without the other process (which could slow its own empty calls to
    enlarge what is subtracted)."""

    here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    server = Peer(Connection(there), trusting=True, ops={"echo": lambda _: reply})
    thread = threading.Thread(target=server.serve_forever, name="benchtui-wire-echo", daemon=True)
    thread.start()
    client = Peer(Connection(here), trusting=False)
    try:
        yield client
    finally:
        client.close()
        thread.join(timeout=5)
        here.close()
        there.close()


def echo_round_trips(reply: Any, samples: int = 15, request: Any = None) -> list[float]:
    """Seconds of each of ``samples`` round trips carrying ``request`` whose
    answer is ``reply``, read by value as a timed reply is (``echo_peer``)."""
    with echo_peer(reply) as client:
        times = []
        for _ in range(max(1, samples)):
            start = time.perf_counter()
            client.request({"op": "echo"}, request, by_value=True, plain=True)
            times.append(time.perf_counter() - start)
        return times


def echo_round_trip_s(reply: Any, samples: int = 15, request: Any = None) -> float:
    """Median seconds of ``echo_round_trips``."""

    return statistics.median(echo_round_trips(reply, samples, request))
