"""A private network for a local Ray instance (a local instance binds to loopback only).

Ray's gRPC servers listen on every interface and Ray rewrites a loopback node
address to the machine's routable one, so no Ray option keeps ``--cluster
local`` off the network. Instead the calling thread moves into a new network
namespace whose only interface is loopback, brought up here; the Ray processes
and threads it starts from then on live there, and their ports exist nowhere
else (not even for other processes on this machine).

Linux only. Root (in the initial user namespace) needs just CLONE_NEWNET, which
works from any thread; anyone else also needs a user namespace, which the kernel
allows only in a single-threaded process. When neither works the caller gets the
reason and carries on unisolated (and says so).
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import struct

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
_IFREQ = "16sH22x"  # struct ifreq: the name, then ifr_flags, padded to 40 bytes


def _unshare(flags: int) -> int:
    """0, or the errno of unshare(2)."""
    libc = ctypes.CDLL(None, use_errno=True)
    return 0 if libc.unshare(flags) == 0 else ctypes.get_errno()


def _map_ids(uid: int, gid: int) -> None:
    """Inside a fresh user namespace: the same uid and gid as outside (no root)."""
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"{gid} {gid} 1")


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack(_IFREQ, fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack(_IFREQ, b"lo", 0)))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack(_IFREQ, b"lo", flags | IFF_UP))


def interfaces() -> list[str]:
    """The network interfaces this thread sees (from /proc/thread-self/net/dev)."""
    path = "/proc/thread-self/net/dev" if os.path.exists("/proc/thread-self") else "/proc/self/net/dev"
    with open(path) as fh:
        return [line.split(":", 1)[0].strip() for line in fh.read().splitlines()[2:] if ":" in line]


def enter_private_network() -> str | None:
    """Move this thread into a new network namespace with only loopback, up.
    Returns None when done, else one line saying why it could not be."""
    if not os.path.exists("/proc/self/ns/net"):
        return "this system has no network namespaces (Linux only)"
    uid, gid = os.getuid(), os.getgid()
    err = _unshare(CLONE_NEWNET)
    if err == errno.EPERM:
        err = _unshare(CLONE_NEWUSER | CLONE_NEWNET)
        if err == errno.EINVAL:
            return "a user namespace needs a single-threaded process, and this one has started threads"
        if err == 0:
            try:
                _map_ids(uid, gid)
            except OSError as exc:
                return f"cannot map this user into its namespace: {exc}"
    if err:
        return f"unshare(CLONE_NEWNET) failed: {os.strerror(err)}"
    try:
        loopback_up()
    except OSError as exc:
        return f"cannot bring loopback up in the new network namespace: {exc}"
    return None
