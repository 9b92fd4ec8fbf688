"""The wire between the checker and the answer's process, in one process:
what crosses by value, what the answer may do with the checker's objects,
and what malformed input the checker refuses."""
from __future__ import annotations

import json
import os
import socket
import struct
import threading

import numpy as np
import pytest
from benchtui.verify import wire


class Model:
    """Stands for a checker object handed to the answer (a target model)."""

    secret = "seed-1234"

    def __init__(self):
        self.vocab = 7

    def logits(self, tokens):
        return np.arange(len(tokens), dtype=np.float64)

    def _private(self):
        return "hidden"


@pytest.fixture
def pair():
    """(checker peer, answer peer); the answer side serves in a thread."""
    a, b = socket.socketpair()
    checker = wire.Peer(wire.Connection(a), trusting=False)
    answer = wire.Peer(wire.Connection(b), trusting=True,
                       ops={"keep": lambda v: v, "fetch": lambda v: v, "get": lambda name: ANSWER_SIDE[name]})
    thread = threading.Thread(target=answer.serve_forever, daemon=True)
    thread.start()
    yield checker, answer
    checker.close()
    thread.join(timeout=5)
    a.close()
    b.close()


ANSWER_SIDE: dict = {}  # objects that live on the answer's side of the socket


def remote(checker: wire.Peer, obj):
    """Make obj an answer-side object and get the checker's proxy for it."""
    ANSWER_SIDE[id(obj)] = obj
    with checker.reference():
        return checker.call_op("get", id(obj))


def test_arrays_and_containers_cross_by_value(pair):
    checker, _ = pair
    value = {"a": np.arange(12, dtype=np.float32).reshape(3, 4), 3: (1, 2.5, float("nan"), None, "x", b"\x00\x01"),
             "s": np.float64(2.5), "c": 1 + 2j, "empty": np.zeros((0, 3))}
    back = checker.call_op("fetch", value)
    assert back["a"].dtype == np.float32 and back["a"].shape == (3, 4)
    np.testing.assert_array_equal(back["a"], value["a"])
    assert back[3][:2] == (1, 2.5) and np.isnan(back[3][2]) and back[3][3:] == (None, "x", b"\x00\x01")
    assert back["s"] == 2.5 and back["c"] == 1 + 2j and back["empty"].shape == (0, 3)


def test_objects_cross_as_proxies_and_calls_go_back(pair):
    checker, _ = pair
    fn = remote(checker, lambda x, scale=2: x * scale)
    assert wire.is_proxy(fn)
    np.testing.assert_array_equal(fn(np.ones(3), scale=3), np.full(3, 3.0))
    assert [p.name for p in __import__("inspect").signature(fn).parameters.values()] == ["x", "scale"]


def test_the_answers_exceptions_come_back_as_builtins_or_remote_errors(pair):
    checker, _ = pair

    def bad(kind):
        if kind == "value":
            raise ValueError("bad shape")
        raise KeyError("k")

    fn = remote(checker, bad)
    with pytest.raises(ValueError, match="bad shape") as info:
        fn("value")
    assert info.value.remote_where.startswith("test_wire.py:")
    with pytest.raises(KeyError):
        fn("key")


def test_in_place_writes_to_inputs_are_seen_by_the_checker(pair):
    checker, _ = pair

    def scribble(x):
        x[0] = 99.0
        return None

    fn = remote(checker, scribble)
    mine = np.zeros(4)
    checker.watch = True
    fn(mine)
    checker.watch = False
    assert mine[0] == 0.0  # the checker's own array is untouched
    assert checker.mutated_log and "float64[4]" in checker.mutated_log[0]


def test_a_write_anywhere_in_a_large_input_is_seen_and_only_that_input_named(pair):
    """The comparison after a watched call goes piece by piece: a write in the last byte of
    the last piece of a large array counts, an untouched array sent beside it does not."""
    from benchtui.verify import wire_client

    checker, _ = pair

    def scribble(x, y):
        x.reshape(-1).view(np.uint8)[-1] ^= 1  # the last byte of x: past every earlier piece
        return None

    fn = remote(checker, scribble)
    big = np.zeros(3 * wire_client.COMPARE_CHUNK // 8 + 5)  # three pieces and a part
    other = np.ones((4, 6))[:, ::2]  # not contiguous: sent as its contiguous copy
    checker.watch = True
    fn(big, other)
    checker.watch = False
    assert len(checker.mutated_log) == 1 and f"float64[{big.size}]" in checker.mutated_log[0], checker.mutated_log


def test_the_answer_may_call_the_checkers_objects_but_not_reach_behind_them(pair):
    checker, answer = pair
    seen = {}

    def use(model):
        seen["logits"] = model.logits([1, 2, 3])
        seen["vocab"] = model.vocab
        for name in ("__class__", "__dict__", "_private", "__init__"):
            try:
                answer.request({"op": "getattr", "t": model._id, "name": name})
                seen[name] = "reached"
            except AttributeError:
                seen[name] = "refused"
        method = model.logits
        try:
            answer.request({"op": "getattr", "t": method._id, "name": "__globals__"})
            seen["globals"] = "reached"
        except AttributeError:
            seen["globals"] = "refused"
        try:
            answer.request({"op": "setattr", "t": model._id, "name": "vocab"}, 0)
            seen["setattr"] = "reached"
        except PermissionError:
            seen["setattr"] = "refused"
        return True

    model = Model()
    assert remote(checker, use)(model) is True
    np.testing.assert_array_equal(seen["logits"], [0.0, 1.0, 2.0])
    assert seen["vocab"] == 7 and model.vocab == 7
    assert {k: v for k, v in seen.items() if k not in ("logits", "vocab")} == dict.fromkeys(
        ["__class__", "__dict__", "_private", "__init__", "globals", "setattr"], "refused")


def test_results_kept_by_reference_stay_behind(pair):
    checker, _ = pair
    fn = remote(checker, lambda: (np.ones((2, 2)), 3))
    with checker.reference():
        out = fn()
    assert wire.is_proxy(out)
    assert out[1] == 3
    np.testing.assert_array_equal(checker.call_op("fetch", out)[0], np.ones((2, 2)))


def _raw_reply(sock: socket.socket, header: dict, fd: int | None = None) -> None:
    data = json.dumps(header).encode()
    frame = struct.pack("<Q", len(data)) + data
    if fd is None:
        sock.sendall(frame)
    else:
        sock.sendmsg([frame], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))])


@pytest.mark.parametrize("case", ["object_dtype", "outside_payload", "unsealed", "garbage_header", "unknown_handle"])
def test_the_checker_refuses_malformed_replies(case):
    a, b = socket.socketpair()
    checker = wire.Peer(wire.Connection(a), trusting=False)
    fd = None
    if case in ("object_dtype", "outside_payload", "unsealed"):
        fd = os.memfd_create("t", os.MFD_ALLOW_SEALING)
        os.ftruncate(fd, 64)
        if case != "unsealed":
            import fcntl

            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, wire.SEALS)
    value = {"object_dtype": {"$a": 0, "dt": "|O", "sh": [2]}, "outside_payload": {"$a": 0, "dt": "<f8", "sh": [100]},
             "unsealed": {"$a": 0, "dt": "<f8", "sh": [2]}, "unknown_handle": {"$r": 12345},
             "garbage_header": None}[case]

    def reply():
        b.recv(1 << 16)
        if case == "garbage_header":
            b.sendall(struct.pack("<Q", 5) + b"nope!")
        else:
            _raw_reply(b, {"op": "reply", "id": 1, "v": value, **({"arrays": [0]} if fd is not None else {})}, fd)

    t = threading.Thread(target=reply)
    t.start()
    with pytest.raises(wire.WireError):
        checker.ping()
    t.join()
    if fd is not None:
        os.close(fd)
    a.close()
    b.close()


def test_a_gone_answer_is_peer_gone():
    a, b = socket.socketpair()
    checker = wire.Peer(wire.Connection(a), trusting=False)
    b.close()
    with pytest.raises(wire.PeerGone):
        checker.ping()
    with pytest.raises(wire.PeerGone):
        checker.ping()
    a.close()


def test_echo_round_trip_measures_the_wire_without_the_other_process():
    """What a timed cycle's reply costs on the wire, measured by a thread of
    this process: more bytes back take longer than none."""
    import numpy as np
    from benchtui.verify.wire import echo_round_trip_s

    empty = echo_round_trip_s(None, samples=9)
    full = echo_round_trip_s({"outputs": [np.zeros(1 << 21, dtype=np.float32)]}, samples=9)
    assert 0 < empty < full


# -- replies read by value, within a size, and pages the checker keeps ------------------

class Host:
    """An answer-side object whose methods reply plain data, or not."""

    def plain(self):
        return {"ms": 1.5, "out": [np.arange(4, dtype=np.float32)]}

    def lazy(self):
        return {"ms": 1.5, "out": [Model()]}  # a handle, deep in the reply

    def big(self, n):
        return {"x": "x" * n} if n < 0 else {"x": np.zeros(n, dtype=np.uint8)}

    def long_header(self):
        return {"x": "x" * (2 << 20)}

    def write(self, arr):
        arr[:] = 7  # the checker's pages, mapped on this side
        return None


def test_a_plain_reply_is_decoded_whole_and_a_handle_in_it_is_named(pair):
    checker, _ = pair
    host = remote(checker, Host())
    got = wire.call_plain(host.plain)
    assert got["ms"] == 1.5 and np.array_equal(got["out"][0], np.arange(4, dtype=np.float32))
    with pytest.raises(wire.NotPlain, match="handle to an object 'Model'"):
        wire.call_plain(host.lazy)
    checker.ping()  # the connection is still in step


def test_a_reply_past_its_limit_is_refused_from_its_announced_size(pair):
    checker, _ = pair
    host = remote(checker, Host())
    limit = wire.Limit("the reply", payload=wire.aligned_bytes([1024]))
    assert wire.call_plain(host.big, 1024, limit=limit)["x"].nbytes == 1024
    with pytest.raises(wire.TooLarge, match="the reply: 1048576 bytes of arrays, over the 1024"):
        wire.call_plain(host.big, 1 << 20, limit=limit)
    checker.ping()  # arrays refused unread: the stream is still in step
    with pytest.raises(wire.TooLarge, match="a header of"):
        wire.call_plain(host.long_header, limit=limit)
    with pytest.raises(wire.PeerGone):  # the rest of that header was left on the socket
        checker.ping()


def test_shared_pages_are_written_and_read_by_the_checker(pair):
    checker, _ = pair
    host = remote(checker, Host())
    sent = np.zeros(16, dtype=np.float32)
    keep: list = []
    wire.call_plain(host.write, sent, keep=keep)
    pages = keep[0]
    slot = pages.slot(sent)
    assert np.frombuffer(pages.read(slot), dtype=np.float32).tolist() == [7.0] * 16  # seen here, whatever is said
    pages.write(slot, np.full(16, 2.0, dtype=np.float32))
    assert np.frombuffer(pages.read(slot), dtype=np.float32).tolist() == [2.0] * 16
    with pytest.raises(ValueError):
        pages.write(slot, np.zeros(17, dtype=np.float32))
    pages.close()
