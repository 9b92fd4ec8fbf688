"""Syntax-tree helpers the mutation operators share (``mutate``, ``numeric``,
``flow``): reading a libcst node (its code, its call's name and positional
arguments, the names it reads or assigns) and building the small replacements
they splice in."""
from __future__ import annotations

import re

import libcst as cst

_CODE = cst.Module([])
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)
# a call that rotates its operands (rotary position embeddings)
ROTARY = re.compile(r"(rope|rotary|rotate)", re.I)


def code(node) -> str:
    return _CODE.code_for_node(node)


def bare(expr):
    """The expression without its own parentheses."""
    return expr.with_changes(lpar=[], rpar=[]) if getattr(expr, "lpar", None) else expr


def paren(text: str) -> cst.BaseExpression:
    """``text`` parsed as one parenthesised expression, safe to splice anywhere."""
    return cst.parse_expression(f"({text})")


def keep_parens(node, value):
    """``value`` in ``node``'s place, keeping ``node``'s parentheses."""
    return value.with_changes(lpar=node.lpar or value.lpar, rpar=node.rpar or value.rpar) if node.lpar else value


def is_literal(expr) -> bool:
    """A number, string, True/False/None or a negative number."""
    if isinstance(expr, _LITERALS):
        return True
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return True
    return isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(
        expr.expression, (cst.Integer, cst.Float))


def int_value(expr) -> int | None:
    """The value of an integer literal (``3``, ``-1``, ``0x10``), else None."""
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value, 0)
        except ValueError:
            return None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = int_value(expr.expression)
        return None if inner is None else -inner
    return None


def plus(expr, delta: int) -> cst.BinaryOperation:
    """``(expr + delta)`` / ``(expr - |delta|)``."""
    op = cst.Add() if delta > 0 else cst.Subtract()
    return cst.BinaryOperation(left=expr, operator=op, right=cst.Integer(str(abs(delta))),
                               lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def call_name(call: cst.Call) -> str:
    """'sum' for ``sum(x)``, ``np.sum(x)`` and ``x.sum()``; '' for any other callee."""
    f = call.func
    if isinstance(f, cst.Name):
        return f.value
    if isinstance(f, cst.Attribute):
        return f.attr.value
    return ""


def receiver(call: cst.Call) -> str:
    """'np' for ``np.sum(...)``; '' for ``sum(...)``; the receiver's code for ``x.sum(...)``."""
    return code(call.func.value) if isinstance(call.func, cst.Attribute) else ""


def positional(call: cst.Call) -> list[int]:
    """The indices of the call's positional (not keyword, not starred) arguments."""
    return [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]


def with_arg(call: cst.Call, i: int, value) -> cst.Call:
    """The call with its i-th argument's value replaced."""
    args = list(call.args)
    args[i] = args[i].with_changes(value=value)
    return call.with_changes(args=args)


def names_in(node) -> set[str]:
    """The variable names a node reads (``x.attr`` reads ``x``, not ``attr``)."""
    out: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Name(self, n):
            out.add(n.value)

        def visit_Attribute(self, n):
            n.value.visit(self)
            return False  # x.attr reads x, not a local called attr

    node.visit(V())
    return out


def targets(target) -> list[str]:
    """The names an assignment target binds (``a``, ``a, (b, c)``)."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in targets(e.value)]
    return []


def is_mask(expr) -> bool:
    """An expression that reads as a mask: a comparison, a name like ``mask`` or
    ``causal``, ``tril``/``where``/``isfinite``, a cast or ``&``/``|``/``~`` of one."""
    e = bare(expr)
    if isinstance(e, cst.Comparison):
        return True
    if isinstance(e, (cst.Name, cst.Attribute)):
        last = e.value if isinstance(e, cst.Name) else e.attr.value
        return "mask" in last.lower() or last.lower() in ("causal", "valid", "keep", "visible", "allowed")
    if isinstance(e, cst.Subscript):
        return is_mask(e.value)
    if isinstance(e, cst.Call):
        name = call_name(e)
        if name in ("tril", "triu", "isfinite", "logical_and", "logical_or", "logical_not", "where"):
            return True
        if name in ("astype", "float", "to", "type", "double", "int") and isinstance(e.func, cst.Attribute):
            return is_mask(e.func.value)
        if name in ("float32", "float64", "float16", "asarray", "array") and positional(e):
            return is_mask(e.args[positional(e)[0]].value)
        return False
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, (cst.BitInvert, cst.Not)):
        return is_mask(e.expression)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.BitAnd, cst.BitOr)):
        return is_mask(e.left) or is_mask(e.right)
    return False
