"""Waiting for a test app to go quiet.

A screen's reload runs in an exclusive worker group, so a second reload
cancels the first: that worker ends cancelled, which is how it should end,
and waiting must not fail on it. A worker that failed still fails the test.
"""
from __future__ import annotations

import contextlib

from textual.worker import WorkerCancelled


async def wait_workers(app) -> None:
    """Wait for every worker the app has now; cancelled ones count as done."""
    for worker in list(app.workers):
        with contextlib.suppress(WorkerCancelled):
            await worker.wait()


async def settle(app, pilot, rounds: int = 3) -> None:
    """Let messages and the workers they start run out, a few rounds deep."""
    for _ in range(rounds):
        await pilot.pause()
        await wait_workers(app)
    await pilot.pause()
