"""Mutation operators for the bugs written in numerical code.

mutmut's and cosmic-ray's catalogues (``mutate.py``'s first operators) were
made for unit tests of ordinary code. The one-line bugs people and models
write in kernels are of other kinds: a parameter ignored, the wrong axis or
sort key, a running maximum or a mask dropped, an accumulation in a lower
precision, two same-typed arguments swapped, a clipped straight-through
gradient. Each function here yields ``(node, replacement, operator,
description)`` for one node; ``mutate._Collector`` calls them on every node
it visits with the enclosing function's ``Scope``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst
from benchtui.audit.syntax import (
    ROTARY,
    bare,
    call_name,
    code,
    int_value,
    is_literal,
    is_mask,
    keep_parens,
    names_in,
    paren,
    plus,
    positional,
    receiver,
    targets,
    with_arg,
)

# Module aliases: ``np.sum(x, 1)``'s 1 is an axis, ``x.sum(1)``'s too.
_MODULES = {"np", "numpy", "mx", "torch", "jnp", "jax", "cp", "cupy", "scipy", "special", "F", "nn", "math", "lax"}
_AXIS_FUNCS = {"sum", "mean", "max", "min", "argmax", "argmin", "cumsum", "cumprod", "prod", "std", "var", "softmax",
               "log_softmax", "logsumexp", "argsort", "sort", "concatenate", "stack", "expand_dims", "squeeze", "flip",
               "all", "any", "norm", "amax", "amin", "nansum", "nanmax", "diff", "average", "median", "topk",
               "argpartition", "partition", "max_pool"}
_KEY_FUNCS = {"sorted", "sort", "max", "min", "argmax", "argmin", "argsort", "nlargest", "nsmallest", "topk",
              "argpartition", "partition", "top_k", "amax", "amin"}
_PAIR_FUNCS = {"maximum", "minimum", "fmax", "fmin"}
_DTYPE_LOWER = {"float64": "float32", "double": "single", "float32": "float16", "single": "half",
                "longdouble": "float64", "float128": "float64", "int64": "int32", "int32": "int16",
                "complex128": "complex64", "bfloat16": "float16"}
_GRAD_FUNC = re.compile(r"(vjp|backward|bwd|grad)", re.I)
_GRAD_NAME = re.compile(r"^(grad|cot|ct$|ct_|d[A-Z_]|d[a-z]$|d[a-z]_|dout|dy|g$|g_|upstream)")
_STOP_GRADIENT = {"stop_gradient", "detach"}
_TUPLE_PARAMS = {"primals", "inputs", "saved", "residuals", "res"}


# -- the enclosing function: its parameters, what they default to, what each local is made of

@dataclass
class Scope:
    name: str
    params: list[str] = field(default_factory=list)
    constants: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)  # param -> values to pin it to
    sources: dict[str, set[str]] = field(default_factory=dict)  # local -> names its assignments read
    locals: list[str] = field(default_factory=list)  # in order of first assignment
    gradient: bool = False  # a backward / VJP function
    returned: set[str] = field(default_factory=set)  # names the function returns (alone or in a tuple)
    rotated: dict[str, set[str]] = field(default_factory=dict)  # a rotary call -> the operands it rotates
    paired_calls: set[int] = field(default_factory=set)  # ids of rotary calls unpacked to two names: q, k = rope(q, k)


def scope_of(fn: cst.FunctionDef, call_literals: dict[str, dict[str, list]]) -> Scope:
    params = [p for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)]
    decorators = " ".join(code(d.decorator) for d in fn.decorators)
    s = Scope(fn.name.value, [p.name.value for p in params],
              gradient=bool(_GRAD_FUNC.search(fn.name.value) or _GRAD_FUNC.search(decorators)))
    seen_calls = call_literals.get(fn.name.value, {})
    for p in params:
        values = []
        if p.default is not None and (is_literal(p.default) or isinstance(p.default, (cst.Attribute, cst.Name))):
            values.append(p.default)
        texts = {code(v) for v in values}
        for v in seen_calls.get(p.name.value, []):
            if code(v) not in texts and len(values) < 2:
                values.append(v)
                texts.add(code(v))
        if values:
            s.constants[p.name.value] = values

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, n):
            return n is fn  # a nested function is its own scope

        def visit_ClassDef(self, n):
            return False

        def _assign(self, assigned, value):
            read = names_in(value) if value is not None else set()
            for t in assigned:
                for name in targets(t):
                    if name not in s.sources:
                        s.locals.append(name)
                    s.sources.setdefault(name, set()).update(read)

        def visit_Assign(self, n):
            self._assign([t.target for t in n.targets], n.value)

        def visit_AnnAssign(self, n):
            self._assign([n.target], n.value)

        def visit_AugAssign(self, n):
            self._assign([n.target], n.value)

        def visit_For(self, n):
            self._assign([n.target], n.iter)

        def visit_Return(self, n):
            value = bare(n.value) if n.value is not None else None
            parts = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
            s.returned.update(p.value for p in parts if isinstance(p, cst.Name))

        def visit_Call(self, n):
            if ROTARY.search(call_name(n)):
                pos = positional(n)
                if pos:
                    s.rotated.setdefault(code(n.func), set()).add(code(n.args[pos[0]].value))

    fn.visit(V())
    for stmt in _statements(fn):  # q, k = apply_rotary(q, k, ...)
        if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Tuple) \
                and len(stmt.targets[0].target.elements) == 2 and isinstance(bare(stmt.value), cst.Call) \
                and ROTARY.search(call_name(bare(stmt.value))):
            s.paired_calls.add(id(bare(stmt.value)))
    return s


def _statements(fn: cst.FunctionDef):
    out = []

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, n):
            return n is fn

        def visit_SimpleStatementLine(self, n):
            out.extend(n.body)

    fn.visit(V())
    return out


def call_literals(module: cst.Module) -> dict[str, dict[str, list]]:
    """function name -> parameter -> literal values the file's own calls pass it
    (demos and tests included: they show the values an answer is used with)."""
    defs: dict[str, list[str]] = {}
    calls: list[cst.Call] = []

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, n):
            defs.setdefault(n.name.value, [p.name.value for p in (*n.params.posonly_params, *n.params.params,
                                                                   *n.params.kwonly_params)])

        def visit_Call(self, n):
            calls.append(n)

    module.visit(V())
    out: dict[str, dict[str, list]] = {}
    for c in calls:
        name = call_name(c)
        params = defs.get(name)
        if not params:
            continue
        offset = 1 if params[0] in ("self", "cls") and isinstance(c.func, cst.Attribute) else 0
        if name == "__init__" or params[0] in ("self", "cls") and not offset:
            continue
        given = [c.args[i] for i in positional(c)]
        if all(is_literal(a.value) for a in given):
            given = []  # f(1, 2, 3): a toy call, not the values an answer is used with
        for pos, arg in enumerate(given):
            if pos + offset < len(params) and is_literal(arg.value):
                out.setdefault(name, {}).setdefault(params[pos + offset], []).append(arg.value)
        for arg in c.args:
            if arg.keyword is not None and is_literal(arg.value):
                out.setdefault(name, {}).setdefault(arg.keyword.value, []).append(arg.value)
    return out


# -- the operators ------------------------------------------------------------------------

def parameter_constant(node: cst.Name, scope: Scope | None, dereferenced: bool = False):
    """A use of a parameter replaced by its default (or a literal the file's own
    calls pass): the answer that ignores the parameter it was given. Not None
    where the use is ``x[...]`` or ``x.attr``: that only crashes."""
    if scope is None:
        return
    for value in scope.constants.get(node.value, []):
        if dereferenced and isinstance(value, cst.Name) and value.value == "None":
            continue
        yield node, value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if isinstance(
            value, cst.UnaryOperation) else value, "parameter_constant", f"{node.value} -> {code(value)}"


def _lambda_alternatives(body) -> list[cst.BaseExpression]:
    body = bare(body)
    out = []
    if isinstance(body, cst.BinaryOperation):
        stack = [body]
        while stack:
            b = stack.pop(0)
            for side in (b.left, b.right):
                inner = bare(side)
                if isinstance(inner, cst.BinaryOperation):
                    stack.append(inner)
                if not is_literal(inner):
                    out.append(inner)
    elif isinstance(body, cst.UnaryOperation):
        out.append(body.expression)
    elif isinstance(body, cst.Subscript) and len(body.slice) == 1 and isinstance(body.slice[0].slice, cst.Index):
        i = int_value(body.slice[0].slice.value)
        if i is not None:
            for j in (0, 1, 2, -1):
                if j != i:
                    out.append(body.with_changes(slice=[body.slice[0].with_changes(
                        slice=cst.Index(cst.Integer(str(j)) if j >= 0 else cst.parse_expression(str(j))))]))
    elif isinstance(body, cst.Tuple):
        out.extend(e.value for e in body.elements)
    return out[:3]


def sort_key(node: cst.Call, scope: Scope | None, assigning: frozenset = frozenset()):
    """A sort/max/argmax key replaced by another expression of the same kind: a
    lambda's key by a part of it (the raw score for the length-penalised one,
    another field of the tuple), an array ranked by the local it was made from
    or the one made from it."""
    if call_name(node) not in _KEY_FUNCS:
        return
    for i, arg in enumerate(node.args):
        if arg.keyword is not None and arg.keyword.value == "key" and isinstance(arg.value, cst.Lambda):
            for alt in _lambda_alternatives(arg.value.body):
                new = arg.value.with_changes(body=alt)
                yield node, with_arg(node, i, new), "key", f"key {code(arg.value.body)} -> {code(alt)}"
    pos = positional(node)
    if not pos or scope is None:
        return
    first = node.args[pos[0]].value
    if call_name(node) in ("nlargest", "nsmallest") and len(pos) > 1:
        first = node.args[pos[1]].value
    if isinstance(first, cst.Name) and first.value in scope.sources or isinstance(first, cst.Name) and first.value in scope.params:
        x = first.value
        known = set(scope.sources) | set(scope.params)
        # never the name this statement assigns: it is not made yet
        near = [n for n in scope.sources.get(x, set()) if n in known and n != x and n not in assigning]
        near += [t for t in scope.locals if x in scope.sources.get(t, set()) and t != x and t not in assigning]
        for alt in sorted(dict.fromkeys(near), key=lambda n: (scope.locals + scope.params).index(n)
                          if n in scope.locals + scope.params else 0)[:3]:
            idx = node.args.index(next(a for a in node.args if a.value is first))
            yield node, with_arg(node, idx, cst.Name(alt)), "key", f"{call_name(node)} over {alt} instead of {x}"


def axis(node: cst.Call):
    """An axis changed: ``axis=-1`` -> ``-2`` / ``0``; ``x.sum(1)`` -> ``0`` / ``-1``."""
    name = call_name(node)
    where = None
    for i, arg in enumerate(node.args):
        if arg.keyword is not None and arg.keyword.value in ("axis", "dim") and int_value(arg.value) is not None:
            where = i
    pos = positional(node)
    if where is None and name in _AXIS_FUNCS:
        recv = receiver(node)
        if recv in _MODULES or recv == "":
            if len(pos) >= 2 and name not in ("concatenate", "stack"):
                where = pos[1]
        elif len(pos) >= 1:
            where = pos[0]
        if where is not None and int_value(node.args[where].value) is None:
            where = None
    if where is None:
        return
    v = int_value(node.args[where].value)
    for alt in [a for a in (-1, 0, -2, 1) if a != v][:2]:
        yield node, with_arg(node, where, cst.parse_expression(str(alt))), "axis", f"axis {v} -> {alt}"


def max_arg(node: cst.Call):
    """``np.maximum(a, b)`` / ``max(a, b)`` replaced by one of its arguments (a
    running maximum that keeps only the new tile's)."""
    name = call_name(node)
    pos = positional(node)
    pair = name in _PAIR_FUNCS or (isinstance(node.func, cst.Name) and name in ("max", "min"))
    if not pair or len(pos) != 2 or any(a.keyword is not None or a.star for a in node.args):
        return
    for i in pos:
        value = node.args[i].value
        yield node, value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if not isinstance(
            value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not value.lpar else value, "max_arg", \
            f"{name}(...) -> argument {i + 1}"


def mask(node):
    """A mask dropped: ``x * mask`` -> ``x``, ``np.where(cond, a, b)`` -> ``a`` or
    ``b``, ``a & b`` of masks -> either, ``masked_fill`` / ``tril`` left out."""
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, cst.Multiply):
            for keep, drop in ((node.left, node.right), (node.right, node.left)):
                if is_mask(drop) and not is_mask(keep):
                    yield node, keep_parens(node, keep), "mask", f"drop the mask {code(bare(drop))[:40]}"
        elif isinstance(node.operator, (cst.BitAnd, cst.BitOr)) and is_mask(node.left) and is_mask(node.right):
            for i, side in enumerate((node.left, node.right)):
                yield node, keep_parens(node, side), "mask", f"keep only mask {i + 1} of {code(node.operator).strip()}"
    elif isinstance(node, cst.Call):
        name, pos = call_name(node), positional(node)
        if name == "where" and len(pos) == 3:
            for i in pos[1:]:
                yield node, paren(code(bare(node.args[i].value))), "mask", f"where(...) -> argument {i + 1} always"
        elif name in ("masked_fill", "masked_fill_") and isinstance(node.func, cst.Attribute):
            yield node, paren(code(node.func.value)), "mask", "drop the masked_fill"
        elif name in ("tril", "triu") and len(pos) == 1 and isinstance(node.func, cst.Attribute):
            yield node, paren(code(node.args[pos[0]].value)), "mask", f"drop the {name}"


def dtype(node):
    """A dtype lowered: float64 -> float32, float32 -> float16, int64 -> int32 ..."""
    if isinstance(node, cst.Attribute) and node.attr.value in _DTYPE_LOWER and isinstance(node.value, cst.Name) \
            and node.value.value in _MODULES:
        low = _DTYPE_LOWER[node.attr.value]
        yield node, node.with_changes(attr=cst.Name(low)), "dtype", f"{node.attr.value} -> {low}"
    elif isinstance(node, cst.SimpleString) and node.value[1:-1] in _DTYPE_LOWER and node.value[0] in "'\"":
        low = _DTYPE_LOWER[node.value[1:-1]]
        yield node, node.with_changes(value=f"{node.value[0]}{low}{node.value[0]}"), "dtype", \
            f"{node.value[1:-1]} -> {low}"


def _kind(expr) -> str | None:
    e = bare(expr)
    if isinstance(e, (cst.Integer, cst.Float)) or int_value(e) is not None:
        return "number"
    for t in (cst.Name, cst.Attribute, cst.Subscript, cst.SimpleString):
        if isinstance(e, t):
            return None if isinstance(e, cst.Name) and e.value in ("True", "False", "None") else t.__name__
    return None


def swap_arguments(node: cst.Call):
    """Two same-kind arguments of a call swapped (names with names, numbers with
    numbers; positional beyond the first two, or keyword values); the first two
    positional ones are the ``arguments`` operator's."""
    args = list(node.args)
    pos = positional(node)
    pairs = [(pos[i], pos[j]) for i in range(len(pos)) for j in range(i + 1, len(pos)) if (i, j) != (0, 1)]
    kw = [i for i, a in enumerate(args) if a.keyword is not None]
    pairs += [(kw[i], kw[j]) for i in range(len(kw)) for j in range(i + 1, len(kw))]
    made = 0
    for a, b in pairs:
        ka, kb = _kind(args[a].value), _kind(args[b].value)
        if ka is None or ka != kb or code(args[a].value) == code(args[b].value) or made >= 3:
            continue
        new = list(args)
        new[a] = args[a].with_changes(value=args[b].value)
        new[b] = args[b].with_changes(value=args[a].value)
        made += 1
        label = (lambda i: args[i].keyword.value + "=" if args[i].keyword is not None else f"#{pos.index(i) + 1}")
        yield node, node.with_changes(args=new), "swap_arguments", f"swap arguments {label(a)} and {label(b)}"


def range_start(node: cst.Call):
    """``range(a, b)`` / ``arange(a, b)``: the start moved by one (the stop is
    ``mutate``'s ``range_bound`` too; integer bounds are the constant operator's)."""
    name, pos = call_name(node), positional(node)
    if name not in ("range", "arange") or len(pos) < 2:
        return
    i = pos[0]
    start = node.args[i].value
    if int_value(start) is not None:
        return
    for d in (1, -1):
        yield node, with_arg(node, i, plus(start, d)), "range_bound", f"range start {'+' if d > 0 else '-'} 1"
    if name == "arange":
        j = pos[1]
        if int_value(node.args[j].value) is None:
            for d in (1, -1):
                yield node, with_arg(node, j, plus(node.args[j].value, d)), "range_bound", \
                    f"range stop {'+' if d > 0 else '-'} 1"


def _stop_gradient_of(expr) -> tuple[str, str] | None:
    """(what, how) for ``stop_gradient(what)`` / ``what.detach()``; how is a
    format string that stops the gradient of its argument."""
    e = bare(expr)
    if not isinstance(e, cst.Call) or call_name(e) not in _STOP_GRADIENT:
        return None
    if call_name(e) == "detach" and isinstance(e.func, cst.Attribute):
        return code(e.func.value), "({}).detach()"
    pos = positional(e)
    if len(pos) != 1:
        return None
    return code(e.args[pos[0]].value), code(e.func) + "({})"


def _condition_names(scope: Scope, exclude: set[str]) -> list[str]:
    out = []
    for name in [*scope.params, *scope.locals]:
        if name in ("self", "cls", "ctx") or _GRAD_NAME.match(name) or name in exclude:
            continue
        out.append(f"{name}[0]" if name in _TUPLE_PARAMS else name)
    return list(dict.fromkeys(out))[:2]


def gradient_condition(node, scope: Scope | None, in_return: bool = False):
    """A gradient multiplied by a condition: the identity straight-through
    estimator made the clipped one (``g -> g * (abs(w) <= 1)``).

    Three shapes: ``w - stop_gradient(w)`` (the gradient carrier), ``w +
    stop_gradient(q - w)`` (forward value unchanged, gradient clipped), and in
    a backward / VJP function each returned gradient and each ``dX = ...``."""
    if isinstance(node, cst.BinaryOperation):
        bare_left, bare_right = bare(node.left), bare(node.right)
        if isinstance(node.operator, cst.Subtract):
            sg = _stop_gradient_of(bare_right)
            if sg and sg[0] == code(bare_left):
                yield node, paren(f"({code(bare(node))}) * (abs({sg[0]}) <= 1)"), "gradient_condition", \
                    f"gradient of {sg[0][:30]} clipped to |{sg[0][:30]}| <= 1"
        elif isinstance(node.operator, cst.Add):
            for free, other in ((bare_left, bare_right), (bare_right, bare_left)):
                sg = _stop_gradient_of(other)
                if sg and isinstance(free, (cst.Name, cst.Attribute, cst.Subscript)) and code(free) in sg[0]:
                    w = code(free)
                    text = f"{code(bare(node))} - ({w} - {sg[1].format(w)}) * (abs({w}) > 1)"
                    yield node, paren(text), "gradient_condition", f"gradient of {w[:30]} clipped to |{w[:30]}| <= 1"
        return
    if scope is None or not scope.gradient:
        return
    if in_return:
        value = node.value
        elements = [e.value for e in value.elements] if isinstance(bare(value), cst.Tuple) else [value]
        if isinstance(bare(value), cst.Tuple):
            elements = [e.value for e in bare(value).elements]
        for e in elements:
            if is_literal(e):
                continue
            for c in _condition_names(scope, names_in(e) if not isinstance(e, cst.Name) else {e.value}):
                yield e, paren(f"{code(bare(e))}) * (abs({c}) <= 1"), "gradient_condition", \
                    f"returned gradient {code(e)[:30]} times (abs({c}) <= 1)"
    elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
            and _GRAD_NAME.match(node.targets[0].target.value):
        g = node.targets[0].target.value
        for c in _condition_names(scope, {g}):
            yield node.value, paren(f"{code(bare(node.value))}) * (abs({c}) <= 1"), "gradient_condition", \
                f"{g} times (abs({c}) <= 1)"
