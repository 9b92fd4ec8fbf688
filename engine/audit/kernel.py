"""Mutation operators for the bugs models write against a kernel's stated contract.

The syntactic operators (``mutate.py``) and the numerical ones (``numeric.py``,
``flow.py``) break what code does; these break what a prompt states and a
suite may never exercise: a default argument's value, a remainder tile
dropped, an accumulator or output narrowed to float32, a kept dimension
added or squeezed away, a tie broken the other way, a softmax's max-shift
dropped, a named configuration value replaced by a common constant, a
ragged batch weighted as full, a special token in the prompt read as the
end. Each function yields ``(node, replacement, operator, description)``;
``mutate._Collector`` calls them on every node it visits (``KERNEL``, the
``--operators kernel`` family, names them).
"""
from __future__ import annotations

import libcst as cst
from benchtui.audit.syntax import bare, call_name, code, int_value, paren, positional, receiver

KERNEL = {
    "default_flip": "a parameter's default changed: 128 -> 64, 0.6 -> 1.0, 0 -> 1, True -> False (callers that "
                    "leave the argument out get another value)",
    "remainder_tile": "the remainder tile dropped: range(0, N, T) -> range(0, N - T + 1, T), (N + T - 1) // T -> N // T",
    "narrow_dtype": "an accumulator or output narrowed: np.zeros/empty/ones/full(...) and *_like(x) made float32; "
                    "a returned .astype(...) dropped (the output no longer follows the input's dtype)",
    "kept_dim": "a kept dimension changed: keepdims=True added to a reduction over an axis; a squeeze dropped",
    "tie_break": "ties broken the other way: argsort(-x) -> argsort(x)[..., ::-1], sorted(..., reverse=True) -> "
                 "sorted(...)[::-1], argmax(x) -> the last maximum",
    "max_shift": "a softmax's max-shift dropped: exp(s - m) -> exp(s), s - s.max(...) -> s",
    "config_constant": "a named configuration value replaced by a common constant: cfg.rope_theta -> 10000.0, "
                       "cfg.n_kv_heads -> 8, cfg.rms_norm_eps -> 1e-05, ...",
    "ragged_full": "a ragged batch weighted as full: x.sum() / mask.sum() -> x.sum() / mask.size; "
                   "count += len(batch) -> count += batch_size",
    "special_end": "a special token in the prompt read as the end: a per-prompt `False` (not finished) -> "
                   "the prompt's last token == eos",
}

_MODULES = {"np", "numpy", "jnp", "mx", "torch", "math"}
_ALLOC = {"zeros", "ones", "empty", "full"}
_ALLOC_LIKE = {"zeros_like", "ones_like", "empty_like", "full_like"}
_REDUCE = {"sum", "mean", "max", "min", "amax", "amin", "logsumexp", "std", "var", "nansum", "prod"}
# common constants a model writes for the configuration value it should have read
_CONFIG = {"rope_theta": "10000.0", "rope_base": "10000.0", "theta": "10000.0", "rms_norm_eps": "1e-05",
           "norm_eps": "1e-05", "layer_norm_eps": "1e-05", "eps": "1e-05", "num_heads": "8", "n_heads": "8",
           "n_head": "8", "num_attention_heads": "8", "num_kv_heads": "8", "n_kv_heads": "8",
           "num_key_value_heads": "8", "n_kv_head": "8", "head_dim": "64", "vocab_size": "32000",
           "max_position_embeddings": "2048", "max_seq_len": "2048", "context_length": "2048",
           "group_size": "128", "block_size": "16", "tile_size": "64", "n_rep": "1", "num_layers": "12",
           "n_layers": "12", "num_hidden_layers": "12"}
_EOS = ("eos", "end_token", "stop_token", "eot")


def _kw(name: str, value: str) -> cst.Arg:
    return cst.Arg(value=cst.parse_expression(value), keyword=cst.Name(name),
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                         whitespace_after=cst.SimpleWhitespace("")))


def _add_kw(call: cst.Call, name: str, value: str) -> cst.Call:
    args = list(call.args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return call.with_changes(args=[*args, _kw(name, value)])


def _has_kw(call: cst.Call, *names: str) -> bool:
    return any(a.keyword is not None and a.keyword.value in names for a in call.args)


def default_flip(param: cst.Param) -> list[tuple]:
    """A literal default changed to another value a model might write."""
    d = param.default
    if d is None:
        return []
    new = None
    if isinstance(d, cst.Name) and d.value in ("True", "False"):
        new = "False" if d.value == "True" else "True"
    elif (n := int_value(d)) is not None:
        new = str(n // 2) if n > 2 else str(n + 1)
    elif isinstance(d, cst.Float) or (isinstance(d, cst.UnaryOperation) and isinstance(d.expression, cst.Float)):
        try:
            x = float(code(d))
        except ValueError:
            return []
        new = "0.5" if x == 1.0 else "1.0"
    if new is None:
        return []
    return [(param, param.with_changes(default=cst.parse_expression(new)), "default_flip",
             f"default {param.name.value}={code(d)} -> {new}")]


def remainder_tile(node) -> list[tuple]:
    """range(a, N, T) stopping before the remainder tile; a ceiling division made a floor."""
    if isinstance(node, cst.Call) and call_name(node) == "range" and not receiver(node):
        pos = positional(node)
        if len(pos) == 3 and int_value(node.args[pos[2]].value) is None:
            stop, step = node.args[pos[1]].value, node.args[pos[2]].value
            args = list(node.args)
            args[pos[1]] = args[pos[1]].with_changes(value=paren(f"{code(stop)} - {code(step)} + 1"))
            return [(node, node.with_changes(args=args), "remainder_tile",
                     f"range stops before a remainder tile of {code(step)}")]
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.FloorDivide):
        left = bare(node.left)
        # (N + T - 1) // T -> N // T
        if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Subtract) \
                and int_value(left.right) == 1 and isinstance(bare(left.left), cst.BinaryOperation) \
                and isinstance(bare(left.left).operator, cst.Add):
            n = bare(left.left).left
            return [(node, paren(f"{code(n)} // {code(node.right)}"), "remainder_tile",
                     "(N + T - 1) // T made N // T (the remainder tile dropped)")]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = bare(node.expression)
        # -(-N // T) -> N // T
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.FloorDivide) \
                and isinstance(bare(inner.left), cst.UnaryOperation) and isinstance(bare(inner.left).operator, cst.Minus):
            return [(node, paren(f"{code(bare(inner.left).expression)} // {code(inner.right)}"), "remainder_tile",
                     "-(-N // T) made N // T (the remainder tile dropped)")]
    if isinstance(node, cst.Call) and call_name(node) == "ceil" and len(node.args) == 1:
        arg = bare(node.args[0].value)
        if isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Divide):
            return [(node, paren(f"{code(arg.left)} // {code(arg.right)}"), "remainder_tile",
                     "ceil(N / T) made N // T (the remainder tile dropped)")]
    return []


def narrow_dtype(node: cst.Call) -> list[tuple]:
    """An allocation without a dtype (float64 in NumPy) made float32."""
    name = call_name(node)
    if receiver(node) not in ("np", "numpy") or _has_kw(node, "dtype"):
        return []
    limit = {"zeros": 1, "ones": 1, "empty": 1, "full": 2}.get(name, 1)
    if name in _ALLOC and len(positional(node)) <= limit or name in _ALLOC_LIKE and len(positional(node)) <= 1:
        return [(node, _add_kw(node, "dtype", "np.float32"), "narrow_dtype", f"np.{name}(...) allocated in float32")]
    return []


def returned_astype(node: cst.Return) -> list[tuple]:
    """``return y.astype(x.dtype)`` -> ``return y``: the output no longer follows the input's dtype."""
    value = bare(node.value)
    if isinstance(value, cst.Call) and call_name(value) == "astype" and isinstance(value.func, cst.Attribute):
        return [(node, node.with_changes(value=value.func.value), "narrow_dtype", "the returned .astype(...) dropped")]
    return []


def kept_dim(node: cst.Call) -> list[tuple]:
    """keepdims=True added to a reduction over an axis; a squeeze dropped."""
    name = call_name(node)
    if name in _REDUCE and receiver(node) and not _has_kw(node, "keepdims", "keepdim"):  # not the builtins
        on_module = receiver(node) in _MODULES
        has_axis = _has_kw(node, "axis", "dim") or len(positional(node)) >= (2 if on_module else 1)
        if has_axis and receiver(node) != "math":
            return [(node, _add_kw(node, "keepdims", "True"), "kept_dim", f"{name}(...) keeps the reduced axis")]
    if name == "squeeze":
        if isinstance(node.func, cst.Attribute) and receiver(node) not in _MODULES:
            return [(node, node.func.value, "kept_dim", "a squeeze dropped (the length-1 axis kept)")]
        pos = positional(node)
        if receiver(node) in _MODULES and pos:
            return [(node, node.args[pos[0]].value, "kept_dim", "a squeeze dropped (the length-1 axis kept)")]
    return []


def tie_break(node: cst.Call) -> list[tuple]:
    """The same order with ties the other way round."""
    name, pos = call_name(node), positional(node)
    if name == "argsort" and receiver(node) in _MODULES and pos:
        first = bare(node.args[pos[0]].value)
        if isinstance(first, cst.UnaryOperation) and isinstance(first.operator, cst.Minus):
            axis = next((code(a.value) for a in node.args if a.keyword is not None and a.keyword.value == "axis"), "-1")
            flip = "[..., ::-1]" if axis in ("-1", "None") else None
            if flip:
                text = f"{receiver(node)}.argsort({code(first.expression)}, axis={axis}, kind='stable'){flip}"
                return [(node, paren(text), "tie_break", "descending order by a reversed ascending sort (ties reversed)")]
    if name == "sorted" and not receiver(node):
        rev = next((a for a in node.args if a.keyword is not None and a.keyword.value == "reverse"), None)
        if rev is not None and code(rev.value) == "True":
            args = [a for a in node.args if a is not rev]
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return [(node, paren(f"{code(node.with_changes(args=args))}[::-1]"), "tie_break",
                     "sorted(..., reverse=True) -> sorted(...)[::-1] (ties reversed)")]
    if name == "argmax" and receiver(node) in ("np", "numpy") and len(pos) == 1 and len(node.args) == 1:
        x = code(node.args[0].value)
        return [(node, paren(f"np.size({x}) - 1 - np.argmax(np.ravel({x})[::-1])"), "tie_break",
                 "argmax takes the last maximum, not the first")]
    return []


def max_shift(node) -> list[tuple]:
    """exp(s - m) -> exp(s); s - s.max(...) -> s."""
    if isinstance(node, cst.Call) and call_name(node) == "exp" and len(node.args) == 1:
        arg = bare(node.args[0].value)
        if isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Subtract):
            return [(node, node.with_changes(args=[node.args[0].with_changes(value=arg.left)]), "max_shift",
                     f"exp({code(arg)}) without its shift")]
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract):
        right = bare(node.right)
        if isinstance(right, cst.Call) and call_name(right) in ("max", "amax", "nanmax") and \
                (receiver(right) not in ("", "math") or len(right.args) == 1):
            return [(node, node.left, "max_shift", "the row maximum not subtracted")]
    return []


def config_constant(node: cst.Attribute) -> list[tuple]:
    """``cfg.rope_theta`` -> ``10000.0``: the named model's value replaced by a common one."""
    attr = node.attr.value
    if attr in _CONFIG and code(node.value) not in _MODULES:
        return [(node, cst.parse_expression(_CONFIG[attr]), "config_constant", f"{code(node)} -> {_CONFIG[attr]}")]
    return []


def _length(expr) -> str | None:
    """What ``len(x)``, ``x.shape[0]`` or ``x.size`` counts, else None."""
    e = bare(expr)
    if isinstance(e, cst.Call) and call_name(e) == "len" and len(e.args) == 1:
        return code(e.args[0].value)
    if isinstance(e, cst.Subscript) and isinstance(e.value, cst.Attribute) and e.value.attr.value == "shape":
        return code(e.value.value)
    return None


def ragged_full(node, names: set[str]) -> list[tuple]:
    """A masked mean over the mask's size; an item count by the batch size. ``names``: the
    enclosing function's parameters and locals (a batch size to count by)."""
    out: list[tuple] = []
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
        right = bare(node.right)
        if isinstance(right, cst.Call) and call_name(right) == "sum" and "mask" in code(right).lower():
            target = code(right.func.value) if isinstance(right.func, cst.Attribute) and receiver(right) not in _MODULES \
                else (code(right.args[0].value) if right.args else None)
            if target:
                out.append((node, node.with_changes(right=paren(f"np.size({target})")), "ragged_full",
                            "a masked mean divided by every position, padding included"))
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) and _length(node.value):
        batch = next((n for n in sorted(names) if "batch_size" in n.lower() or n.lower() in ("bs", "batch")), None)
        if batch:
            out.append((node, node.with_changes(value=cst.Name(batch)), "ragged_full",
                        f"{code(node.value)} counted as a full batch ({batch})"))
    return out


def special_end(node: cst.Name, prompt_var: str | None, params: list[str]) -> list[tuple]:
    """A per-prompt ``False`` (a beam not finished) made ``prompt[-1] == eos``."""
    if node.value != "False" or prompt_var is None:
        return []
    eos = next((p for p in params if any(k in p.lower() for k in _EOS)), None)
    if eos is None:
        return []
    return [(node, paren(f"len({prompt_var}) > 0 and {prompt_var}[-1] == {eos}"), "special_end",
             f"a prompt ending in {eos} starts finished")]
