"""What a challenge imports: the supported surface for challenge authors.

A challenge's ``conformance.py``, ``reference.py`` and ``adapters/*.py``
import from ``benchtui.api`` and from nothing else of benchtui's. Every name
in ``__all__`` keeps its meaning across releases; the modules these names
come from are internal and move when the engine is refactored, so a
challenge that reaches past this module may break on any upgrade.
docs/authoring.md ("The public API") has a worked example; challenges/AUTHORING.md
describes the Suite's methods.

``conformance.run(suite)`` is a challenge's whole entry point: ``suite`` is a
``Suite``, and ``with suite.check(name, threshold=..., requires=(...)) as c``
hands the check (a ``Check``) to the block.
"""
from __future__ import annotations

from benchtui.challenges.prompts import prompt_sha256
from benchtui.records import verdicts as _verdicts

# Two whole modules, re-exported as they are: the CUDA challenges share a dozen
# of cuda_suite's steps (compile, device, timed cycles, roofline figures), and
# reach_report's three functions read what an adapter's call reached. Their
# public functions are part of this surface; their underscored names are not.
from benchtui.verify import reach_report
from benchtui.verify.binding import Unbound, load_module, python_files
from benchtui.verify.cuda import suite as cuda_suite
from benchtui.verify.cuda.device import bf16_bits, bf16_to_float32, seeded_rows, seeded_values
from benchtui.verify.module.rules import compare as compare_tensors
from benchtui.verify.module.suite import run as run_module_suite
from benchtui.verify.seeds import derive as derive_seed
from benchtui.verify.smoke_stand_ins import checkpoint as smoke_checkpoint
from benchtui.verify.smoke_stand_ins import weights_checkpoint
from benchtui.verify.suite import Check, CheckFailed, InputMutated, SkipCheck, Suite, describe_exception
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
    # whole harnesses: an imported deck's checks, the CUDA challenges' steps, what a check reached
    "run_module_suite", "cuda_suite", "reach_report",
    # adapters: the stand-in checkpoints a training loop or a model conversion loads in the answer's process
    "smoke_checkpoint", "weights_checkpoint",
    # prompt versions: the hash challenge.toml's [prompts.<version>] lists
    "prompt_sha256",
]
