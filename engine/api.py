"""What a challenge imports: the supported surface for challenge authors.

A challenge's ``conformance.py``, ``reference.py`` and ``adapters/*.py``
import from ``benchtui.api`` and from nothing else of benchtui's. Every name
in ``__all__`` keeps its meaning across releases; the modules these names
come from are internal and move when the engine is refactored, so a
challenge that reaches past this module may break on any upgrade.
docs/authoring.md ("The public API") lists every name with a worked example for
the CPU and one for CUDA; challenges/AUTHORING.md describes the Suite's methods.
Every name here is a class, a function or a constant: never a whole module.

``conformance.run(suite)`` is a challenge's whole entry point: ``suite`` is a
``Suite``, and ``with suite.check(name, threshold=..., requires=(...)) as c``
hands the check (a ``Check``) to the block.
"""
from __future__ import annotations

from benchtui.challenges.prompts import prompt_sha256
from benchtui.records import verdicts as _verdicts
from benchtui.verify.binding import Unbound, load_module, python_files
from benchtui.verify.cuda.device import bf16_bits, bf16_to_float32, seeded_rows, seeded_values
from benchtui.verify.cuda.suite import (
    CudaFault,
    build_in_answer_process,
    checker_device,
    device_info,
    error_text,
    gpu_preamble,
    roofline_figures,
    timed_cycles,
    timing_details,
)
from benchtui.verify.cuda.suite import answer_sources as cuda_sources
from benchtui.verify.cuda.suite import compile_answer as compile_cuda_answer
from benchtui.verify.module.rules import compare as compare_tensors
from benchtui.verify.module.suite import run as run_module_suite
from benchtui.verify.reach_report import batch_loops, describe_loops
from benchtui.verify.reach_report import record as record_reach
from benchtui.verify.seeds import derive as derive_seed
from benchtui.verify.smoke_stand_ins import checkpoint as smoke_checkpoint
from benchtui.verify.smoke_stand_ins import weights_checkpoint
from benchtui.verify.suite import Check, CheckFailed, InputMutated, SkipCheck, Suite, describe_exception
from benchtui.verify.timing.core import median_iqr
from benchtui.verify.wire import is_proxy


class V:
    """The verdicts a check records, by name: ``suite.record(name, V.INFO, ...)``."""

    PASS = _verdicts.PASS
    FAIL = _verdicts.FAIL
    ERROR = _verdicts.ERROR
    TIMEOUT = _verdicts.TIMEOUT
    SKIPPED = _verdicts.SKIPPED
    INFO = _verdicts.INFO
    UNBOUND = _verdicts.UNBOUND
    COMPILE_ERROR = _verdicts.COMPILE_ERROR
    FORBIDDEN = _verdicts.FORBIDDEN
    MISSING_DEPENDENCY = _verdicts.MISSING_DEPENDENCY


__all__ = [
    # the suite and its checks
    "Suite", "Check", "CheckFailed", "InputMutated", "SkipCheck", "Unbound", "describe_exception", "V",
    # seeded inputs: a label's own seed from the run's, and the CUDA harness's generators
    "derive_seed", "seeded_rows", "seeded_values", "bf16_bits", "bf16_to_float32",
    # comparing results
    "compare_tensors",
    # files of the challenge and of the answer
    "load_module", "python_files", "is_proxy",
    # an imported deck's checks, whole
    "run_module_suite",
    # a CUDA challenge's steps: compile, the GPU, the answer's library, timed cycles, figures
    "cuda_sources", "compile_cuda_answer", "gpu_preamble", "checker_device", "build_in_answer_process", "device_info",
    "timed_cycles", "timing_details", "roofline_figures", "median_iqr", "CudaFault", "error_text",
    # what a check reached through an adapter
    "record_reach", "batch_loops", "describe_loops",
    # adapters: the stand-in checkpoints a training loop or a model conversion loads in the answer's process
    "smoke_checkpoint", "weights_checkpoint",
    # prompt versions: the hash challenge.toml's [prompts.<version>] lists
    "prompt_sha256",
]
