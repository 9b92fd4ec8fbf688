"""--cluster / --no-cluster for `run` and `audit`, and the driver's signals while a cluster runs."""
from __future__ import annotations

import contextlib
import signal
import sys
import threading

from benchtui.commands.context import CommandError, UsageError


def add_cluster_args(p) -> None:
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run each answer as a Ray task on this cluster ('local': start one on this machine; "
                        "default: $BENCHTUI_CLUSTER, else [cluster] address in the config file)")
    p.add_argument("--no-cluster", action="store_true", help="run on this machine even when a default cluster is set")


def cluster_address(args) -> str | None:
    if args.no_cluster:
        if args.cluster:
            raise UsageError("--cluster and --no-cluster exclude each other")
        return None
    if args.cluster:
        return args.cluster
    from benchtui.host.config import default_cluster

    return default_cluster()


@contextlib.contextmanager
def connected(address: str | None):
    """The cluster (None: this machine). Without Ray: a usage error naming the extra (exit 2)."""
    if address is None:
        yield None
        return
    from benchtui.cluster.ray_cluster import INSTALL_HINT, ClusterUnavailable, open_cluster

    try:
        cluster = open_cluster(address)
    except ClusterUnavailable as exc:
        if str(exc) == INSTALL_HINT:
            raise UsageError(str(exc)) from None
        raise CommandError(str(exc)) from None
    print(f"cluster: {cluster.describe()}", file=sys.stderr, flush=True)
    # Ray prints what it hears from the cluster ("(raylet) Raylet is terminated ...") on
    # stdout: while connected, that goes to stderr, so `--json` keeps stdout JSON.
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield cluster
    finally:
        with contextlib.redirect_stdout(sys.stderr):
            cluster.close()


@contextlib.contextmanager
def driver_signals(cancel: threading.Event, cluster):
    """SIGINT/SIGTERM while runs are on a cluster: cancel the remote tasks (their
    sandboxes die with their workers) instead of dying and leaving them to run.
    ``caught`` holds the signal's name once one came; a second SIGINT stops at once."""
    caught: list[str] = []
    if cluster is None or threading.current_thread() is not threading.main_thread():
        yield caught
        return

    def handler(signum, frame):
        name = signal.Signals(signum).name
        if caught and signum == signal.SIGINT:
            raise KeyboardInterrupt
        caught.append(name)
        cluster.cancel_all(f"cancelled: the driver got {name}")
        cancel.set()
        print(f"benchtui: {name}: cancelling the cluster's tasks (again to stop at once)", file=sys.stderr, flush=True)

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield caught
    finally:
        for s, h in old.items():
            signal.signal(s, h)
