"""Mutation operators for bugs of data flow: what a value is made of, not the
arithmetic on it.

Each is a bug an answer's own tests tend to miss because the result keeps its
shape and stays plausible: a normalisation left out (``log_softmax`` dropped,
raw scores summed), a rotation or a mask applied to one operand only (keys
rotated and queries not; a running maximum taken before the causal mask),
the unscaled accumulator returned (the division by the softmax denominator
dropped at the return), a reported figure read from elsewhere (a metric
replaced by a constant or another figure), and an empty-input guard changed
(dropped, or widened to swallow the length-one case). Like ``numeric``'s,
each function yields ``(node, replacement, operator, description)``;
``statement_order`` also names the line it strikes, since its node is the
block that holds the two statements it swaps.
"""
from __future__ import annotations

import re

import libcst as cst
from benchtui.audit.numeric import Scope
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
    positional,
    targets,
)

# a call that normalises its first argument (returns it as probabilities,
# log-probabilities or a unit-norm / unit-RMS vector)
_NORMALISERS = {"softmax", "log_softmax", "logsoftmax", "normalize", "normalise", "l2_normalize", "l2_normalise",
                "rms_norm", "layer_norm", "rmsnorm", "layernorm", "normalized", "normalised"}
_LOG_NORMALISERS = {"logsumexp", "log_sum_exp", "logaddexp_reduce"}
_METRIC = re.compile(r"(loss|ppl|perplex|acc(uracy)?$|accuracy|bpc|bits_per|time|seconds|latency|throughput|"
                     r"tokens_per|speedup|score|error)", re.I)
_LENGTHS = {"n", "N", "length", "size", "count", "num", "n_items", "seq_len", "L", "T"}


def normalisation(node):
    """A normalisation dropped: ``log_softmax(x, ...)`` / ``softmax`` /
    ``normalize`` -> ``x``, and a hand-written log-softmax ``x - logsumexp(x)``
    -> ``x`` (raw scores where log-probabilities were meant)."""
    if isinstance(node, cst.Call) and call_name(node).lower() in _NORMALISERS and not call_name(node)[:1].isupper():
        # (a class, nn.RMSNorm(dims), builds a layer: it normalises nothing yet)
        pos = positional(node)
        if pos:
            arg = node.args[pos[0]].value
            yield node, paren(code(bare(arg))), "normalisation", f"drop the {call_name(node)}"
        elif isinstance(node.func, cst.Attribute) and not node.args:  # x.softmax()
            yield node, paren(code(node.func.value)), "normalisation", f"drop the {call_name(node)}"
    elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract):
        right = bare(node.right)
        if isinstance(right, cst.Call) and (call_name(right).lower() in _LOG_NORMALISERS or (
                call_name(right) == "log" and "sum" in code(right) and "exp" in code(right))):
            yield node, keep_parens(node, node.left), "normalisation", \
                f"drop the log-normaliser {call_name(right)}(...)"


def one_operand(node, scope: Scope | None):
    """A rotation applied to one operand only: ``k = rope(k, ...)`` -> ``k``
    where the same rotation is applied to another operand (``q``) in the same
    function; ``q, k = apply_rotary(q, k, ...)`` -> ``q, k = q, apply_rotary(q,
    k, ...)[1]`` (and the other side)."""
    if not isinstance(node, cst.Call) or not ROTARY.search(call_name(node)):
        return
    callee = code(node.func)
    pos = [node.args[i].value for i in positional(node)]
    first = pos[0] if pos else None
    if scope is not None and first is not None and len(scope.rotated.get(callee, ())) >= 2:
        yield node, paren(code(bare(first))), "one_operand", \
            f"{call_name(node)} left out for {code(first)[:30]} only"
    elif len(pos) >= 2 and all(isinstance(bare(p), cst.Name) for p in pos[:2]) and \
            scope is not None and id(node) in scope.paired_calls:
        a, b = code(pos[0]), code(pos[1])
        yield node, paren(f"{a}, {code(node)}[1]"), "one_operand", f"{call_name(node)}: {a} left unrotated"
        yield node, paren(f"{code(node)}[0], {b}"), "one_operand", f"{call_name(node)}: {b} left unrotated"


def _masking_assign(stmt) -> str | None:
    """The name a statement masks in place (``s = where(c, -inf, s)``, ``s =
    s.masked_fill(...)``, ``s = s + mask``, ``s[mask] = -inf``), or None."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        stmt = stmt.body[0]
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0].target, bare(stmt.value)
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and "inf" in code(value):
            return target.value.value
        if not isinstance(target, cst.Name):
            return None
        x = target.value
        if isinstance(value, cst.Call) and call_name(value) in ("where", "masked_fill", "masked_fill_") \
                and x in names_in(value):
            return x
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Multiply)):
            sides = (bare(value.left), bare(value.right))
            if any(isinstance(s, cst.Name) and s.value == x for s in sides) and any(is_mask(s) for s in sides):
                return x
    if isinstance(stmt, cst.AugAssign) and isinstance(stmt.target, cst.Name) and is_mask(stmt.value):
        return stmt.target.value
    return None


def _masks(stmt) -> str | None:
    """The name a statement masks: itself, or the last masking assignment inside
    an ``if`` that applies the mask only where a tile needs it."""
    if isinstance(stmt, cst.If) and stmt.orelse is None and isinstance(stmt.body, cst.IndentedBlock):
        names = [_masks(s) for s in stmt.body.body]
        return names[-1] if names and names[-1] else None
    return _masking_assign(stmt)


def _reads(stmt, name: str) -> bool:
    return name in names_in(stmt)


def statement_order(block: cst.IndentedBlock):
    """A mask applied after the statement that first reads the masked value:
    the masking statement (or the ``if`` around it) swapped with the next
    statement, when that one reads the masked name and makes nothing the mask
    needs, and a later statement still reads the masked value. In tiled attention this is the running maximum taken before the
    causal mask; yields (block, new block, operator, description, line of the
    statement that now reads the unmasked value)."""
    body = list(block.body)
    for i in range(len(body) - 1):
        x = _masks(body[i])
        if not x:
            continue
        nxt = body[i + 1]
        if not isinstance(nxt, cst.SimpleStatementLine) or not _reads(nxt, x):
            continue
        made = {n for s in nxt.body if isinstance(s, (cst.Assign, cst.AugAssign, cst.AnnAssign))
                for t in ([t.target for t in s.targets] if isinstance(s, cst.Assign) else [s.target])
                for n in targets(t)}
        if x in made or made & names_in(body[i]) or not any(_reads(s, x) for s in body[i + 2:]):
            continue  # the masked value must keep a use: one operand masked, the other not
        new = body[:i] + [nxt.with_changes(leading_lines=body[i].leading_lines),
                          body[i].with_changes(leading_lines=nxt.leading_lines)] + body[i + 2:]
        yield block, block.with_changes(body=new), "one_operand", f"mask on {x} applied after the next statement reads it", nxt


def unscaled(node, scope: Scope | None, in_return: bool = False):
    """The unscaled accumulator returned: ``return acc / l`` -> ``return acc``,
    and ``out = acc / l`` -> ``out = acc`` where ``out`` is what the function
    returns (or writes into a returned array: ``O[...] = acc / l``)."""
    if in_return:
        value = bare(node.value)
        elements = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [node.value]
        for e in elements:
            b = bare(e)
            if isinstance(b, cst.BinaryOperation) and isinstance(b.operator, cst.Divide) and not is_literal(b.left):
                yield e, keep_parens(e, b.left), "unscaled", f"return {code(b.left)[:30]} undivided"
        return
    if scope is None or not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return
    target = node.targets[0].target
    name = target.value if isinstance(target, cst.Name) else \
        target.value.value if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) else None
    value = bare(node.value)
    if name in scope.returned and isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide) \
            and not is_literal(value.left):
        yield node.value, keep_parens(node.value, value.left), "unscaled", \
            f"{name} = {code(value.left)[:30]} undivided"


def _metric_key(expr) -> str | None:
    e = bare(expr)
    if isinstance(e, cst.SimpleString) and _METRIC.search(e.value[1:-1]):
        return e.value[1:-1]
    return None


def reported_figure(node, scope: Scope | None):
    """A reported figure read from elsewhere: in a dict of figures (``{"val_loss":
    vl, "train_loss": tl}``) a metric's value replaced by another figure of the
    same dict (a stale one) or by a constant; ``results["ppl"] = x`` -> a
    constant; a function that computes a figure (``evaluate``, ``perplexity``,
    ``accuracy``) returning a constant."""
    if isinstance(node, cst.Dict):
        figures = [(i, e) for i, e in enumerate(node.elements)
                   if isinstance(e, cst.DictElement) and _metric_key(e.key) and not is_literal(e.value)]
        for i, e in figures:
            key = _metric_key(e.key)
            others = [o for j, o in figures if j != i and code(o.value) != code(e.value)][:1]
            for alt in [o.value for o in others] + [cst.Float("1.0")]:
                elements = list(node.elements)
                elements[i] = e.with_changes(value=alt)
                what = "a constant" if isinstance(alt, cst.Float) else code(alt)[:30]
                yield node, node.with_changes(elements=elements), "reported_figure", f"figure {key!r} read from {what}"
    elif isinstance(node, cst.Assign) and len(node.targets) == 1:
        t = node.targets[0].target
        if isinstance(t, cst.Subscript) and len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index) \
                and _metric_key(t.slice[0].slice.value) and not is_literal(node.value):
            yield node.value, cst.Float("1.0"), "reported_figure", \
                f"figure {_metric_key(t.slice[0].slice.value)!r} set to a constant"
    elif isinstance(node, cst.Return) and node.value is not None and scope is not None \
            and re.search(r"(eval|valid|perplex|accuracy|metric)", scope.name, re.I) \
            and not is_literal(node.value) and not isinstance(bare(node.value), (cst.Tuple, cst.Dict)):
        yield node.value, cst.Float("1.0"), "reported_figure", f"{scope.name} returns a constant"


_FLAGS = {"causal", "training", "verbose", "done", "finished", "found", "ok", "valid", "flag", "stop", "converged",
          "debug", "eval", "is_causal", "use_cache", "inplace", "normalize", "normalise", "keepdims", "reverse"}


def _empty_guard(test, scope: Scope | None = None) -> tuple[str, cst.BaseExpression] | None:
    """(what is tested, the guard widened to the length-one case) for a test of
    an empty or zero-length input; None for any other test (``not causal``
    tests a flag: a parameter defaulting to True/False, or a flag's name)."""
    t = bare(test)
    if isinstance(t, cst.UnaryOperation) and isinstance(t.operator, cst.Not):
        inner = bare(t.expression)
        name = inner.value if isinstance(inner, cst.Name) else inner.attr.value if isinstance(inner, cst.Attribute) else ""
        flag = name.lower() in _FLAGS or name.lower().startswith(("is_", "has_", "use_")) or (scope is not None and any(
            isinstance(v, cst.Name) and v.value in ("True", "False") for v in scope.constants.get(name, [])))
        if name and not flag and not is_literal(inner):
            return code(inner), paren(f"len({code(inner)}) <= 1")
        return None
    if not isinstance(t, cst.Comparison) or len(t.comparisons) != 1:
        return None
    op, right = t.comparisons[0].operator, bare(t.comparisons[0].comparator)
    left = bare(t.left)
    left_code = code(left)
    sized = (isinstance(left, cst.Call) and call_name(left) == "len") or left_code.endswith((".size", "]")) and (
        ".shape[" in left_code or left_code.endswith(".size")) or (isinstance(left, cst.Name) and left.value in _LENGTHS)
    if not sized:
        return None
    n = int_value(right)
    if isinstance(op, cst.Equal) and n == 0 or isinstance(op, cst.LessThan) and n == 1 \
            or isinstance(op, cst.LessThanEqual) and n == 0:
        return left_code, paren(f"{left_code} <= 1")
    return None


def empty_branch(node, scope: Scope | None = None):
    """An empty-input branch changed: the guard for an empty (or zero-length)
    input dropped (``if len(x) == 0:`` -> ``if False:``), or widened to take
    the length-one case too (``<= 1``)."""
    if not isinstance(node, (cst.If, cst.IfExp)):
        return
    guard = _empty_guard(node.test, scope)
    if guard is None:
        return
    what, wider = guard
    yield node.test, cst.Name("False"), "empty_branch", f"the empty-input branch on {what[:30]} dropped"
    yield node.test, wider, "empty_branch", f"the empty-input branch on {what[:30]} taken for length one too"
