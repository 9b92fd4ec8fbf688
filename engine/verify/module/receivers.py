"""What an expression of an answer's code holds, as far as the code itself says.

The forbidden-op rule (engine/verify/module/rules.py) takes ``x.sort()`` for
``torch.sort`` only where ``x`` is a tensor: a Python list, a dict, a numpy
array, a module (``tl.topk`` is Triton's) or the answer's own object is not.
This reads one file's syntax tree, scope by scope (a function's names, then
the enclosing functions', then the module's), flow-insensitively: a name is a
tensor when every value it is given is one. Kinds:

- ``tensor``: a parameter of ``forward`` or one annotated ``torch.Tensor``,
  the result of a torch function, an ``nn.Parameter``, a buffer, a tensor's
  method, arithmetic with a tensor, an attribute ``self.w`` given such a value;
- ``ndarray`` (numpy's), ``module`` (an imported module, or a library's
  function or class), ``self`` (the
  answer's own object), ``nn`` (a torch.nn module object) and ``other``
  (literals, containers, builtins' results, the answer's functions and classes):
  not a tensor;
- ``unknown``: anything else (a helper's parameter, an element of a list).
Nothing here runs the answer's code.
"""
from __future__ import annotations

import ast
from collections.abc import Callable

TENSOR, NDARRAY, MODULE, SELF, NN, OTHER, UNKNOWN = "tensor", "ndarray", "module", "self", "nn", "other", "unknown"
# a value read while it is being worked out (``a = a * 2``): no news, so it leaves the others' kind as it is
CYCLE = "cycle"
# expressions one file's reading may weigh: names that feed each other in a loop can take exponential
# work, so past this everything is unknown (a "could be", never a verdict); real answers take far fewer
STEPS = 20_000
DEPTH = 150  # expressions nested deeper than this (a sum of a thousand terms) are unknown, within Python's stack
NOT_TENSOR = frozenset({NDARRAY, MODULE, SELF, NN, OTHER})

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# builtins whose result is never a tensor (min, max, sum, abs, next, getattr can be)
_BUILTIN_OTHER = frozenset({
    "list", "dict", "set", "frozenset", "tuple", "sorted", "str", "repr", "format", "int", "float", "bool",
    "complex", "bytes", "bytearray", "len", "range", "zip", "enumerate", "reversed", "map", "filter",
    "isinstance", "issubclass", "hasattr", "callable", "id", "hash", "ord", "chr", "iter", "open", "print",
    "divmod", "type", "object", "slice", "memoryview", "vars", "dir", "globals", "locals"
})
_LITERALS = (ast.Constant, ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp,
             ast.GeneratorExp, ast.JoinedStr, ast.Lambda)
# a tensor's methods and attributes whose value is not a tensor
_METHOD_OTHER = frozenset({
    "item", "tolist", "size", "dim", "ndimension", "numel", "nelement", "data_ptr", "stride", "element_size",
    "is_contiguous", "is_floating_point", "is_complex", "is_signed", "get_device", "storage_offset",
    "untyped_storage", "storage", "equal", "allclose", "backward", "register_hook", "__len__", "is_set_to",
    "is_pinned", "is_shared"
})
_ATTR_TENSOR = frozenset({
    "T", "mT", "H", "mH", "data", "grad", "real", "imag", "values", "indices"
})
_ATTR_OTHER = frozenset({
    "shape", "dtype", "device", "ndim", "is_cuda", "layout", "requires_grad", "itemsize", "nbytes", "names",
    "is_leaf"
})
# torch.X(...) whose result is not a tensor
_TORCH_OTHER = frozenset({
    "device", "dtype", "Size", "Generator", "finfo", "iinfo", "no_grad", "enable_grad", "inference_mode",
    "autocast", "compile", "manual_seed", "seed", "initial_seed", "get_default_dtype", "set_default_dtype",
    "set_default_device", "set_grad_enabled", "is_tensor", "is_storage", "is_floating_point", "is_complex",
    "is_grad_enabled", "numel", "typename", "use_deterministic_algorithms", "set_float32_matmul_precision",
    "get_float32_matmul_precision", "set_printoptions", "save", "load", "Stream", "Event", "stream"
})
_TORCH_TENSOR_ROOMS = frozenset({"linalg", "fft", "special", "ops", "Tensor"})
_TORCH_OTHER_ROOMS = frozenset({"cuda", "backends", "distributed", "utils", "jit", "library", "compiler", "_dynamo",
                                "_inductor", "profiler", "autograd", "testing", "version", "hub", "amp",
                                "multiprocessing", "random", "mps", "cpu", "xpu"})
_OTHER_MODULES = frozenset({"math", "triton", "random", "time", "os", "sys", "functools", "itertools", "collections",
                            "operator", "statistics", "dataclasses", "json", "re", "typing", "pathlib"})
# a name imported from these is one of their modules, functions or classes, never a tensor
_LIBRARIES = _OTHER_MODULES | {"torch", "numpy", "einops", "cutlass", "cuda", "__future__"}


def torch_call_kind(dotted: str) -> str:
    """The kind of what calling the torch function ``dotted`` returns."""
    parts = dotted.split(".")
    if dotted in ("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer"):
        return TENSOR
    if len(parts) == 2:
        name = parts[1]
        return OTHER if name in _TORCH_OTHER or name[:1].isupper() and name != "Tensor" else TENSOR
    if parts[1] == "Tensor" and len(parts) == 3:  # torch.Tensor.m(x) is x.m()
        return OTHER if parts[2] in _METHOD_OTHER or parts[2] == "type" else TENSOR
    if parts[1] in _TORCH_TENSOR_ROOMS:
        return TENSOR
    if parts[1] == "nn" and len(parts) >= 4 and parts[2] in ("functional", "init"):
        return TENSOR
    if parts[1] == "nn" and parts[-1][:1].isupper():
        return NN
    return OTHER if parts[1] in _TORCH_OTHER_ROOMS else UNKNOWN


def combine(kinds: list[str]) -> str:
    found = set(kinds) - {CYCLE}
    if not found and kinds:
        return CYCLE
    if not found or UNKNOWN in found:
        return UNKNOWN
    if len(found) == 1:
        return found.pop()
    return OTHER if found <= NOT_TENSOR else UNKNOWN


class Kinds:
    """The kinds of one file's expressions. ``resolve`` gives an expression's
    dotted names through the file's imports (a leading ``?`` marks a name the
    file never binds)."""

    def __init__(self, tree: ast.Module, resolve: Callable[[ast.AST], set[str]]):
        self.tree, self.resolve = tree, resolve
        self.scope_of: dict[int, ast.AST] = {}
        self.parent_scope: dict[int, ast.AST] = {}
        self.binds: dict[int, dict[str, list]] = {}
        self.globals: dict[int, set[str]] = {}
        self.class_of: dict[int, ast.ClassDef] = {}  # a method -> its class
        self.attrs: dict[int, dict[str, list]] = {}  # a class -> self.attr's values
        self.busy: set[int] = set()
        self.known: dict[tuple[int, int], str] = {}
        self.cycled = False  # whether the value being worked out read one still being worked out
        self.steps = 0
        self._index(tree, tree, None)
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            self._class_attrs(cls)

    # -- indexing -----------------------------------------------------------------------
    def _index(self, node: ast.AST, scope: ast.AST, cls: ast.ClassDef | None) -> None:
        self.binds.setdefault(id(scope), {})
        for child in ast.iter_child_nodes(node):
            self.scope_of[id(child)] = scope
            if isinstance(child, _SCOPES):
                self.parent_scope[id(child)] = scope
                method = False
                if cls is not None and node is cls:
                    method, self.class_of[id(child)] = True, cls
                if not isinstance(child, ast.Lambda) and not method:  # a method's name is its class's, not a variable
                    self._bind(scope, child.name, ("other", child))
                self._params(child)
                self._index(child, child, None)
            elif isinstance(child, ast.ClassDef):
                self._bind(scope, child.name, ("other", child))
                self._index(child, scope, child)  # its body's expressions read the enclosing scope
            else:
                self._binding(child, scope, cls)
                self._index(child, scope, cls)

    def _bind(self, scope: ast.AST, name: str, source: tuple) -> None:
        self.binds.setdefault(id(scope), {}).setdefault(name, []).append(source)

    def _params(self, fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        args = fn.args
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        method = id(fn) in self.class_of and not any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in getattr(fn, "decorator_list", []))
        for i, (a, default) in enumerate(zip(positional, defaults)):
            if i == 0 and method:
                self._bind(fn, a.arg, ("self", self.class_of[id(fn)]))
            else:
                self._bind(fn, a.arg, ("param", fn, a, default))
        for a, default in zip(args.kwonlyargs, args.kw_defaults):
            self._bind(fn, a.arg, ("param", fn, a, default))
        for rest in (args.vararg, args.kwarg):  # *args, **kwargs: a tuple, a dict
            if rest is not None:
                self._bind(fn, rest.arg, ("kind", OTHER))

    def _binding(self, node: ast.AST, scope: ast.AST, cls: ast.ClassDef | None) -> None:
        if cls is not None and self.scope_of.get(id(node)) is scope and node in cls.body:
            return  # a class body's names are the class's attributes (read in _class_attrs)
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._target(target, ("expr", node.value, scope), scope)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            self._bind(scope, node.target.id, ("annotated", node.annotation, node.value, scope))
        elif isinstance(node, ast.NamedExpr):
            self._bind(scope, node.target.id, ("expr", node.value, scope))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            self._target(node.target, ("iter", node.iter, scope), scope)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._target(item.optional_vars, ("kind", UNKNOWN), scope)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self._bind(scope, node.name, ("kind", OTHER))
        elif isinstance(node, ast.Import):  # a module
            for a in node.names:
                self._bind(scope, a.asname or a.name.split(".")[0], ("kind", MODULE))
        elif isinstance(node, ast.ImportFrom):  # a library's names are its modules and functions; another file's, anything
            known = not node.level and (node.module or "").split(".")[0] in _LIBRARIES
            for a in node.names:
                self._bind(scope, a.asname or a.name, ("kind", MODULE if known else UNKNOWN))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.globals.setdefault(id(scope), set()).update(node.names)

    def _target(self, target: ast.AST, source: tuple, scope: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self._bind(scope, target.id, source)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    self._target(elt.value, ("kind", OTHER), scope)  # a list
                else:
                    self._target(elt, ("unpack", source, i, len(target.elts)), scope)

    def _class_attrs(self, cls: ast.ClassDef) -> None:
        attrs = self.attrs.setdefault(id(cls), {})
        outer = self.scope_of.get(id(cls), self.tree)
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if isinstance(t, ast.Name):
                        attrs.setdefault(t.id, []).append(("expr", stmt.value, outer))
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                attrs.setdefault(stmt.target.id, []).append(("annotated", stmt.annotation, stmt.value, outer))
        for fn in cls.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not (fn.args.posonlyargs + fn.args.args):
                continue
            me = (fn.args.posonlyargs + fn.args.args)[0].arg
            for node in ast.walk(fn):
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                    for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                            attrs.setdefault(t.attr, []).append(("expr", node.value, self.scope_of.get(id(node), fn)))
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and len(node.args) >= 2 \
                        and node.func.attr in ("register_buffer", "register_parameter") \
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == me \
                        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    attrs.setdefault(node.args[0].value, []).append(("expr", node.args[1], self.scope_of.get(id(node), fn)))

    # -- reading --------------------------------------------------------------------------
    def scope(self, node: ast.AST) -> ast.AST:
        return self.scope_of.get(id(node), self.tree)

    def lookup(self, name: str, scope: ast.AST) -> list | None:
        """The values a name is given where ``scope`` reads it; None where the file never binds it."""
        while True:
            binds = self.binds.get(id(scope), {})
            if name in binds and name not in self.globals.get(id(scope), ()):
                return binds[name]
            if scope is self.tree:
                return None
            scope = self.parent_scope.get(id(scope), self.tree)

    def kind(self, node: ast.AST, scope: ast.AST | None = None) -> str:
        """The kind of ``node`` where ``scope`` (by default its own) reads it."""
        found = self._k(node, self.scope(node) if scope is None else scope)
        return UNKNOWN if found == CYCLE else found

    def _k(self, node: ast.AST, scope: ast.AST) -> str:
        key = (id(node), id(scope))
        if key in self.known:
            return self.known[key]
        if id(node) in self.busy:
            self.cycled = True
            return CYCLE
        self.steps += 1
        if self.steps > STEPS or len(self.busy) > DEPTH:
            return UNKNOWN
        outer, self.cycled = self.cycled, False
        self.busy.add(id(node))
        try:
            found = self._kind(node, scope)
        finally:
            self.busy.discard(id(node))
        if not self.cycled:  # a value worked out from one still open is kept only as part of that one
            self.known[key] = found
        self.cycled = outer or self.cycled
        return found

    def _kind(self, node: ast.AST, scope: ast.AST) -> str:
        if isinstance(node, _LITERALS):
            return OTHER
        if isinstance(node, ast.Name):
            sources = self.lookup(node.id, scope)
            return UNKNOWN if sources is None else combine([self._source(s) for s in sources])
        if isinstance(node, ast.Attribute):
            return self._attribute(node, scope)
        if isinstance(node, ast.Subscript):
            base = self._k(node.value, scope)
            return base if base in (TENSOR, NDARRAY, CYCLE) else UNKNOWN
        if isinstance(node, (ast.BinOp, ast.Compare)):  # x > 0 is a tensor too
            operands = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.left, *node.comparators]
            sides = [self._k(o, scope) for o in operands]
            if TENSOR in sides:
                return TENSOR
            if NDARRAY in sides and all(k in NOT_TENSOR or k == CYCLE for k in sides):
                return NDARRAY
            return CYCLE if CYCLE in sides else combine(sides)  # a = a * b: what a is
        if isinstance(node, ast.UnaryOp):
            return OTHER if isinstance(node.op, ast.Not) else self._k(node.operand, scope)
        if isinstance(node, ast.IfExp):
            return combine([self._k(node.body, scope), self._k(node.orelse, scope)])
        if isinstance(node, ast.BoolOp):
            return combine([self._k(v, scope) for v in node.values])
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        return UNKNOWN

    def _source(self, source: tuple) -> str:
        tag = source[0]
        if tag == "kind":
            return source[1]
        if tag == "other":
            return OTHER
        if tag == "self":
            return SELF
        if tag == "expr":
            return self._k(source[1], source[2])
        if tag == "annotated":
            _, annotation, value, scope = source
            said = self.annotation(annotation)
            if said != UNKNOWN or value is None:
                return said
            return self._k(value, scope)
        if tag == "iter":
            return self._iterated(source[1], source[2])
        if tag == "unpack":
            inner, index, count = source[1], source[2], source[3]
            if inner[0] == "expr" and isinstance(inner[1], (ast.Tuple, ast.List)) and len(inner[1].elts) == count:
                return self._k(inner[1].elts[index], inner[2])
            whole = self._source(inner)
            return whole if whole in (TENSOR, NDARRAY, CYCLE) else UNKNOWN  # values, indices = x.topk(k)
        if tag == "param":
            _, fn, arg, default = source
            if arg.annotation is not None:
                said = self.annotation(arg.annotation)
                if said != UNKNOWN:
                    return said
            if isinstance(default, ast.Constant) and default.value is not None:
                return OTHER
            if getattr(fn, "name", "") == "forward" and id(fn) in self.class_of:
                return TENSOR  # a module's forward takes the problem's inputs
            return UNKNOWN
        return UNKNOWN

    def annotation(self, node: ast.AST) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return UNKNOWN
        if isinstance(node, ast.Subscript):
            node = node.value
            if isinstance(node, (ast.Name, ast.Attribute)) and ast.unparse(node).split(".")[-1] in ("Optional", "Union"):
                return UNKNOWN
        names = {d.lstrip("?") for d in self.resolve(node)} | {ast.unparse(node)}
        if names & {"torch.Tensor", "Tensor", "torch.nn.Parameter"}:
            return TENSOR
        if names & {"numpy.ndarray", "np.ndarray"}:
            return NDARRAY
        last = {n.rsplit(".", 1)[-1] for n in names}
        if last & {"int", "float", "bool", "str", "bytes", "list", "dict", "tuple", "set", "List", "Dict", "Tuple",
                   "Set", "Sequence", "Mapping", "Iterable", "Callable"}:
            return OTHER
        return UNKNOWN

    def _iterated(self, node: ast.AST, scope: ast.AST) -> str:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" \
                and self.lookup("range", scope) is None:
            return OTHER
        whole = self._k(node, scope)
        return whole if whole in (TENSOR, NDARRAY, CYCLE) else UNKNOWN  # a list's elements could be anything

    def _rooted(self, node: ast.AST) -> list[str]:
        return sorted(d for d in self.resolve(node) if not d.startswith("?"))

    def _attribute(self, node: ast.Attribute, scope: ast.AST) -> str:
        rooted = self._rooted(node)
        if rooted:
            return OTHER if any(d.split(".")[0] in ("torch", "numpy", "triton") for d in rooted) else UNKNOWN
        base = self._k(node.value, scope)
        if base in (TENSOR, CYCLE):
            return base if node.attr in _ATTR_TENSOR else OTHER if node.attr in _ATTR_OTHER else UNKNOWN
        if base == NDARRAY:
            return NDARRAY
        if base == NN and node.attr in ("weight", "bias"):
            return TENSOR
        if base == SELF and isinstance(node.value, ast.Name):
            sources = self.lookup(node.value.id, scope) or []
            classes = [s[1] for s in sources if s[0] == "self"]
            values = self.attrs.get(id(classes[0]), {}).get(node.attr) if classes else None
            if values:
                return combine([self._source(s) for s in values])
        return UNKNOWN

    def _call(self, node: ast.Call, scope: ast.AST) -> str:
        fn = node.func
        if isinstance(fn, ast.Name) and self.lookup(fn.id, scope) is None:  # a builtin
            return OTHER if fn.id in _BUILTIN_OTHER else UNKNOWN
        rooted = self._rooted(fn)
        if rooted:
            kinds = []
            for d in rooted:
                top = d.split(".")[0]
                kinds.append(torch_call_kind(d) if top == "torch" and "." in d
                             else NDARRAY if top == "numpy" else OTHER if top in _OTHER_MODULES else UNKNOWN)
            return combine(kinds)
        if isinstance(fn, ast.Name):
            sources = self.lookup(fn.id, scope) or []
            defs = [s[1] for s in sources if s[0] == "other"]
            if defs and len(defs) == len(sources):
                return combine([self._returns(d) for d in defs])
            return TENSOR if self._k(fn, scope) == NN else UNKNOWN
        if isinstance(fn, ast.Attribute):
            receiver = self._k(fn.value, scope)
            if receiver == CYCLE:  # g = g.cumsum(-2): what g is
                return OTHER if fn.attr in _METHOD_OTHER else CYCLE
            if receiver == TENSOR:
                if fn.attr == "numpy":
                    return NDARRAY
                if fn.attr == "type" and not node.args:
                    return OTHER
                return OTHER if fn.attr in _METHOD_OTHER else TENSOR
            if receiver == NDARRAY:
                return OTHER if fn.attr in ("tolist", "item") else NDARRAY
            if self._k(fn, scope) == NN:
                return TENSOR  # self.linear(x)
        return UNKNOWN

    def _returns(self, node: ast.AST) -> str:
        """What calling the answer's own function or class gives."""
        if isinstance(node, ast.ClassDef):
            return OTHER
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(node) in self.busy:
            return UNKNOWN
        if node.returns is not None:
            said = self.annotation(node.returns)
            if said != UNKNOWN:
                return said
        self.busy.add(id(node))
        try:
            values = [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None
                      and self.scope(r) is node]
            return combine([self._k(v, node) for v in values]) if values else OTHER
        finally:
            self.busy.discard(id(node))
