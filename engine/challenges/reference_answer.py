"""A challenge's reference as an answer folder holds it: what ``challenge check``
runs as the answer and what an audit of the reference mutates. An imported deck
problem's reference goes under the deck's answer file (``solution.py``), so the
suite binds it as it binds the deck's answers."""
from __future__ import annotations

from pathlib import Path

from benchtui.challenges.definition import Challenge


def module_answer(challenge: Challenge) -> tuple[str, str] | None:
    """An imported deck problem's answer file and class (its ``[module]`` table), or None."""
    m = challenge.raw.get("module")
    if not isinstance(m, dict):
        return None
    return str(m.get("answer_file", "solution.py")), str(m.get("answer_class", "Model"))


def reference_answer_files(challenge: Challenge) -> dict[str, str]:
    """The reference as an answer folder's files: ``reference.py``, or for an imported
    deck problem its answer file holding the reference's module, with ``ModelNew = Model``
    appended where the deck's answer class is another name (the checker's own alias
    of its own reference, not an answer's adapter)."""
    text = challenge.reference_path.read_text(encoding="utf-8")
    module = module_answer(challenge)
    if module is None:
        return {"reference.py": text}
    name, cls = module
    if cls != "Model":
        text += f"\n\n# benchtui challenge check: the reference as the answer\n{cls} = Model\n"
    return {name: text}


def write_reference_answer(challenge: Challenge, answer: Path) -> None:
    for name, text in reference_answer_files(challenge).items():
        (answer / name).write_text(text, encoding="utf-8")
