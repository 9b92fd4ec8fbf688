"""Fakes that keep the real function's signature: a screen that calls the fake
with an argument the real function would refuse fails the test as it would
fail in use, so replacing the slow function does not hide the screen's call."""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable


def like(real: Callable) -> Callable[[Callable], Callable]:
    """Decorate a fake: each call is first bound to ``real``'s signature."""
    signature = inspect.signature(real)

    def wrap(fake: Callable) -> Callable:
        @functools.wraps(fake)
        def call(*args, **kwargs):
            signature.bind(*args, **kwargs)  # TypeError, as the real function would raise
            return fake(*args, **kwargs)

        call.__signature__ = signature
        return call

    return wrap
