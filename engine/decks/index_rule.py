"""How a KernelBench-Hard check.py compares an index output, read from its
syntax tree (never run).

A top-k problem's check.py does not compare the returned indices with the
reference's: ties in the input make several index sets right. It gathers the
input at the answer's indices (``torch.gather(x, dim=-1, index=...)``, with
``x = inputs[0]``) and compares those values with the reference's values
output, by ``check_correctness(..., dtype=torch.float32)``. This module finds
that gather and follows its names back to the positions they come from: the
input gathered, the answer's output holding the indices (unpacked from the
answer's result), the reference's output the gathered values are compared
with, the dimension and the dtype whose tolerance applies. The harness reads
them from ``[module.indices]`` (engine/verify/module/suite.py).
"""
from __future__ import annotations

import ast

from benchtui.decks import pyread


def gathers(tree: ast.Module | None) -> bool:
    """Whether check.py gathers anything with torch.gather."""
    return tree is not None and any(_is_gather(n) for n in ast.walk(tree))


def read(tree: ast.Module | None) -> dict | None:
    """``{output, values, input, dim, dtype}`` of the index output check.py gathers
    by, or None where it gathers none or in a form these rules cannot follow."""
    if tree is None:
        return None
    assigned = _assignments(tree)
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_gather(n)):
        args = {**dict(zip(("input", "dim", "index"), call.args)), **{k.arg: k.value for k in call.keywords if k.arg}}
        if not {"input", "dim", "index"} <= set(args):
            continue
        try:
            dim = pyread.literal(args["dim"])
        except pyread.NotLiteral:
            continue
        source = _input_index(args["input"], assigned)
        output = _position(args["index"], assigned)
        gathered = _assigned_name(tree, call)
        compared = _compared_with(tree, gathered, assigned) if gathered else None
        if not isinstance(dim, int) or source is None or output is None or compared is None:
            continue
        values, dtype = compared
        return {"output": output, "values": values, "input": source, "dim": dim, "dtype": dtype}
    return None


def _is_gather(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "gather"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch")


def _assignments(tree: ast.Module) -> dict[str, ast.AST]:
    """name -> the expression last assigned to it; a name unpacked from a tuple maps to a
    ``(position, value)`` marker (an ast.Tuple of the index and the unpacked expression)."""
    out: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name):
            out[target.id] = node.value
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    out[elt.id] = ast.Tuple(elts=[ast.Constant(i), node.value], ctx=ast.Load())
    return out


def _root(node: ast.AST) -> ast.AST:
    """``a.to(torch.int64).float()`` -> ``a``: the value a chain of methods is called on."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        node = node.func.value
    return node


def _follow(node: ast.AST, assigned: dict[str, ast.AST], depth: int = 0):
    """A name followed through plain assignments (and method chains) to what it came from."""
    node = _root(node)
    while isinstance(node, ast.Name) and node.id in assigned and depth < 12:
        node, depth = _root(assigned[node.id]), depth + 1
    return node


def _input_index(node: ast.AST, assigned: dict[str, ast.AST]) -> int | None:
    """``inputs[0]`` (directly or through a name): 0."""
    node = _follow(node, assigned)
    if isinstance(node, ast.Subscript):
        try:
            index = pyread.literal(node.slice)
        except pyread.NotLiteral:
            return None
        return index if isinstance(index, int) else None
    return None


def _position(node: ast.AST, assigned: dict[str, ast.AST]) -> int | None:
    """The position in an unpacked result a name comes from (``sol_values, sol_indices = sol_out``:
    ``sol_indices`` is 1)."""
    node = _root(node)
    for _ in range(12):
        if not isinstance(node, ast.Name) or node.id not in assigned:
            return None
        value = assigned[node.id]
        if isinstance(value, ast.Tuple) and len(value.elts) == 2 and isinstance(value.elts[0], ast.Constant) \
                and isinstance(value.elts[0].value, int) and not isinstance(value.elts[1], ast.Constant):
            return value.elts[0].value
        node = _root(value)
    return None


def _assigned_name(tree: ast.Module, call: ast.Call) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and node.value is call and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
    return None


def _compared_with(tree: ast.Module, gathered: str, assigned: dict[str, ast.AST]) -> tuple[int, str | None] | None:
    """(the reference output's position, the dtype named for the tolerance) of the call
    that compares the gathered values: ``check_correctness(ref_values.float(), gathered.float(),
    dtype=torch.float32, ...)``."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and len(node.args) >= 2):
            continue
        second = _root(node.args[1])
        if not (isinstance(second, ast.Name) and second.id == gathered):
            continue
        position = _position(node.args[0], assigned)
        if position is None:
            continue
        dtype = next((pyread.dtype_name(k.value) for k in node.keywords if k.arg == "dtype"), None)
        return position, dtype
    return None
