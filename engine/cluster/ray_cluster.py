"""Runs and audits on a Ray cluster: ``benchtui run|audit --cluster ADDRESS``.

Each answer run (or audit mutant) is one Ray task asking for what its
challenge needs: one GPU for a CUDA run, else one CPU and the challenge's
memory limit. The task receives a self-contained job bundle
(engine/runner/bundle.py: the answer's scratch copy, the adapter, the job)
and the challenge plugin, both through Ray's object store, never through a
shared filesystem, and runs :func:`engine.runner.bundle.execute_bundle` on
its node: the same two sandboxed processes as a run on this machine. Answer
code never runs in the Ray worker's own Python process. The task returns
plain data; the driver judges it and is the only writer of the store.

Faults: a task whose node (or worker) dies is retried once, preferring
another node; a second loss records the run ``interrupted``, naming the
nodes. Cancelling (the Runs screen's ``x``, SIGINT/SIGTERM of the driver)
force-cancels the tasks: Ray kills their workers, and each sandbox dies with
the worker thread that started it (``setpriv --pdeathsig``; engine/runner/sandbox.py).

Ray is optional (``pip install 'benchtui[cluster]'``); nothing here imports
it until a cluster is asked for.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import tempfile
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchtui.challenges.definition import Challenge
    from benchtui.runner.bundle import BundleResult, JobBundle

INSTALL_HINT = "--cluster needs Ray, which is not installed here: pip install 'benchtui[cluster]'"
LOCAL = "local"
LOCAL_OBJECT_STORE_BYTES = 512 * 1024 * 1024  # bundles are small: leave the shared memory to the answers
POLL_S = 0.25


class ClusterUnavailable(Exception):
    """Ray is missing, or the cluster cannot be reached: one line for the user."""


def ray_module() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ClusterUnavailable(INSTALL_HINT) from exc
    return ray


def node_label(node_id: str, ip: str = "") -> str:
    """How a node is named in progress lines, messages and ``runs.node``: ``<id prefix>@<ip>``."""
    return f"{node_id[:12]}@{ip}" if ip else node_id[:12]


# -- what runs on the worker ---------------------------------------------------------------

def _task(bundle: JobBundle, challenge_tar: bytes, reporter: Any, attempt: str) -> BundleResult:
    """One answer run on a worker node (a Ray task). Runs nothing itself:
    execute_bundle starts the sandboxed checker and answer processes."""
    import ray
    from benchtui.runner.bundle import check_engine, execute_bundle, worker_facts

    node = node_label(ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address())
    try:  # noqa: SIM105 - a best-effort step: try/except keeps the skipped failure visible where it is
        reporter.started.remote(attempt, node)  # fire and forget: progress shows the node at once
    except Exception:
        pass
    check_engine(bundle)  # the worker's benchtui must be the driver's
    bundle = dataclasses.replace(bundle, challenge_tar=challenge_tar, challenge_dir=None)
    got = execute_bundle(bundle)
    got["node"] = node
    got["facts"] = worker_facts(bundle.job.backend)
    return got


class _Reporter:
    """A tiny actor on the driver's node: tasks say where they started; the driver drains it."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def started(self, attempt: str, node: str) -> None:
        self.events.append((attempt, node))

    def drain(self) -> list[tuple[str, str]]:
        out, self.events = self.events, []
        return out


# -- the driver's side ---------------------------------------------------------------------

class Cluster:
    """A connection to a Ray cluster (``local``: one started here, on this machine only).
    Use as a context manager; :meth:`run` is called from many threads at once."""

    def __init__(self, address: str, *, num_cpus: int | None = None, num_gpus: int | None = None):
        ray = ray_module()
        self.ray = ray
        self.address = address
        self.unisolated: str | None = None  # `local` only: why it shares this machine's network, if it does
        common = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
        try:
            if address == LOCAL:
                # Ray's gRPC servers listen on every interface and it rewrites a loopback node
                # address to the routable one: the local instance gets a network namespace of
                # its own, where loopback is the only interface (engine/cluster/netns.py).
                from benchtui.cluster.netns import enter_private_network

                self.unisolated = enter_private_network()
                os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "error")  # not "no external connectivity" warnings
                extra = {}
                if not os.environ.get("RAY_TMPDIR") and len(tempfile.gettempdir()) > 40:
                    extra["_temp_dir"] = "/tmp/ray"  # Ray's sockets live there: a path over 107 bytes fails
                ray.init(num_cpus=num_cpus, num_gpus=num_gpus, _node_ip_address="127.0.0.1", dashboard_host="127.0.0.1",
                         object_store_memory=LOCAL_OBJECT_STORE_BYTES, **common, **extra)
            else:
                ray.init(address=address, **common)
        except Exception as exc:
            raise ClusterUnavailable(f"cannot reach the Ray cluster at {address!r}: {type(exc).__name__}: "
                                     f"{' '.join(str(exc).split())[:300]}") from exc
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._affinity = NodeAffinitySchedulingStrategy
        self.driver_node = ray.get_runtime_context().get_node_id()
        self._remote = ray.remote(max_retries=0)(_task)  # retried by hand: once, on another node
        self._reporter = ray.remote(num_cpus=0)(_Reporter).options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(self.driver_node, soft=True)).remote()
        self._lock = threading.Lock()
        self._drain_lock = threading.Lock()
        self._inflight: dict[str, object] = {}  # attempt -> ObjectRef
        self._nodes: dict[str, str] = {}  # attempt -> node label, once the task said where it runs
        self._callbacks: dict[str, Callable[[str], None]] = {}
        self._challenge_refs: dict[str, object] = {}
        self._cancel: threading.Event | None = None
        self.cancel_reason = "cancelled by the user"
        self.cancelled = threading.Event()
        self._closed = threading.Event()
        self._poller = threading.Thread(target=self._poll, name="benchtui-cluster-poll", daemon=True)
        self._poller.start()

    # -- facts -------------------------------------------------------------------------------
    def resources(self) -> dict[str, float]:
        resources: dict[str, float] = self.ray.cluster_resources()
        return resources

    def nodes(self) -> list[dict[str, Any]]:
        return [n for n in self.ray.nodes() if n.get("Alive")]

    def slots(self) -> int:
        """How many runs to keep in flight: one per CPU of the cluster."""
        return max(1, int(self.resources().get("CPU", 1)))

    def describe(self) -> str:
        res = self.resources()
        gpus = int(res.get("GPU", 0))
        where = ""
        if self.address == LOCAL:
            where = (f"; NOT isolated from the network ({self.unisolated}): Ray's ports listen on every interface"
                     if self.unisolated else "; a private network: loopback only")
        return (f"{self.address}: {len(self.nodes())} node(s), {int(res.get('CPU', 0))} CPUs"
                + (f", {gpus} GPUs" if gpus else "") + where)

    def choose_backend(self, requested: str, supported: tuple[str, ...]) -> tuple[str, str | None]:
        """The backend for a challenge on this cluster: CUDA where the cluster has a
        GPU (the task asks for one), else what this machine's probe picks among the
        rest (the nodes run the same benchtui install)."""
        from benchtui.host.backends import choose_backend

        gpus = self.resources().get("GPU", 0)
        if "cuda" in supported and requested in ("auto", "cuda") and gpus > 0:
            return "cuda", None
        if requested == "cuda":
            return "cuda", "no GPU in the cluster"
        rest = tuple(b for b in supported if b != "cuda")
        if requested == "auto" and not rest:
            return "cpu", f"{supported[0] if supported else 'cuda'} not available: no GPU in the cluster"
        return choose_backend(requested, rest or ("cpu",))

    def require_backend(self, requested: str) -> None:
        from benchtui.host.backends import BackendUnavailable, require_backend

        if requested == "cuda":
            if self.resources().get("GPU", 0) <= 0:
                raise BackendUnavailable("backend cuda is not usable on this cluster (no node offers a GPU); "
                                         "--backend auto runs what can run and skips the checks that need it")
            return
        require_backend(requested)

    def task_resources(self, bundle: JobBundle) -> dict[str, int]:
        """One GPU for a CUDA run; else one CPU and the challenge's memory limit (at most
        the biggest node's memory, so no task waits for a node that cannot exist)."""
        if bundle.gpu:
            return {"num_cpus": 1, "num_gpus": 1}
        biggest = max((n.get("Resources", {}).get("memory", 0) for n in self.nodes()), default=0)
        memory = int(bundle.limits.memory_mb) * 1024 * 1024
        if biggest:
            memory = min(memory, int(biggest))
        return {"num_cpus": 1, "memory": memory}

    def challenge_ref(self, path: Path) -> object:
        """The challenge plugin in the object store, put once per content and shared by its tasks."""
        from benchtui.runner.bundle import pack_tree

        data = pack_tree(path)
        key = hashlib.sha256(data).hexdigest()
        with self._lock:
            if key not in self._challenge_refs:
                self._challenge_refs[key] = self.ray.put(data)
            return self._challenge_refs[key]

    # -- running -----------------------------------------------------------------------------
    def watch(self, cancel: threading.Event) -> None:
        """Once ``cancel`` is set, every task in flight (and any submitted later) is force-cancelled."""
        self._cancel = cancel

    def cancel_all(self, reason: str | None = None) -> None:
        if reason:
            self.cancel_reason = reason
        self.cancelled.set()
        with self._lock:
            refs = list(self._inflight.values())
        for ref in refs:
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=True)

    def run(self, bundle: JobBundle, challenge: Challenge, on_running: Callable[..., None] | None = None) -> BundleResult:
        """Run one bundle as a Ray task and wait for it (called from a runner thread).
        Raises RunInterrupted when cancelled or when its node died twice."""
        from benchtui.runner.orchestrate import RunInterrupted

        ray = self.ray
        if self._cancelled_now():
            raise RunInterrupted(f"{self.cancel_reason} before it started")
        cref = self.challenge_ref(challenge.path)
        bref = ray.put(dataclasses.replace(bundle, challenge_dir=None, challenge_tar=None))
        options = self.task_resources(bundle)
        lost: list[tuple[str, str]] = []  # (node, why) per attempt lost to a node or worker dying
        for attempt_no in (1, 2):
            attempt = f"{bundle.key}#{uuid.uuid4().hex[:8]}"
            strategy = self._elsewhere(lost[-1][0]) if lost else "DEFAULT"
            ref = self._remote.options(**options, scheduling_strategy=strategy).remote(bref, cref, self._reporter, attempt)
            with self._lock:
                self._inflight[attempt] = ref
                if on_running is not None:
                    self._callbacks[attempt] = on_running
            if self._cancelled_now():
                self._cancel_one(ref)
            try:
                got: BundleResult = ray.get(ref)
                return got
            except Exception as exc:
                self._drain()  # the node it was on, if it said so before it was lost
                node = self._nodes.get(attempt, "")
                if self._cancelled_now():
                    raise RunInterrupted(f"{self.cancel_reason}" + (f" while it ran on node {node}" if node else ""), node) from None
                if isinstance(exc, ray.exceptions.RayTaskError):
                    # benchtui's own code failed on the worker (a version mismatch, ...): an error, no retry
                    cause = getattr(exc, "cause", None) or exc
                    raise RuntimeError(f"on node {node or '?'}: {type(cause).__name__}: "
                                       f"{' '.join(str(cause).split())[:400]}") from None
                why = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
                lost.append((node, why))
                if attempt_no == 1 and on_running is not None:
                    on_running(node, f"node {node or '?'} lost ({type(exc).__name__}): retrying once on another node")
            finally:
                with self._lock:
                    self._inflight.pop(attempt, None)
                    self._callbacks.pop(attempt, None)
        where = " then ".join(n or "an unknown node" for n, _ in lost)
        raise RunInterrupted(f"the node running it died, twice: {where} ({lost[-1][1]})", lost[-1][0] or lost[0][0])

    def _elsewhere(self, node_label_: str) -> object:
        """Soft affinity to a live node other than the one that was lost (any, when none is)."""
        for n in sorted(self.nodes(), key=lambda n: -n.get("Resources", {}).get("CPU", 0)):
            if not node_label_ or not node_label_.startswith(n["NodeID"][:12]):
                return self._affinity(n["NodeID"], soft=True)
        return "DEFAULT"

    def _cancelled_now(self) -> bool:
        if self._cancel is not None and self._cancel.is_set() and not self.cancelled.is_set():
            self.cancel_all()
        return self.cancelled.is_set()

    def _cancel_one(self, ref: object) -> None:
        with contextlib.suppress(Exception):
            self.ray.cancel(ref, force=True)

    def _drain(self) -> None:
        """Where the tasks started, as they told the reporter; each run's callback hears it once."""
        with self._drain_lock:  # one drain at a time: a run thread reading _nodes after it sees all drained so far
            try:
                events = self.ray.get(self._reporter.drain.remote(), timeout=10)
            except Exception:
                return
            for attempt, node in events:
                with self._lock:
                    self._nodes[attempt] = node
        for attempt, node in events:
            with self._lock:
                callback = self._callbacks.get(attempt)
            if callback is not None:
                with contextlib.suppress(Exception):
                    callback(node)

    def _poll(self) -> None:
        """Drain the reporter and watch the cancel flag, a few times a second."""
        while not self._closed.is_set():
            self._cancelled_now()
            self._drain()
            self._closed.wait(POLL_S)

    # -- lifetime ----------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._poller.join(timeout=15)
        with contextlib.suppress(Exception):
            self.ray.shutdown()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_cluster(address: str, **kw: Any) -> Cluster:
    """Connect (``local``: start one here). Raises ClusterUnavailable with a one-line reason."""
    return Cluster(address, **kw)
