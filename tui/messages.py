"""Typed messages that workers post to the app (workers never touch widgets)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class RunProgress(Message):
    event: Any  # engine.runner.orchestrate.RunEvent


@dataclass
class RunsDone(Message):
    count: int
    cancelled: bool
    refused: str = ""  # why the machine ran none of them (a backend asked for by name is absent)
