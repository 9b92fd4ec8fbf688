"""Single-point mutants of a Python source, built on libcst.

libcst keeps every byte of the file (comments, spacing, quotes), so a mutant
differs from the original only where the operator struck and its diff is one
line: ``ast.unparse`` would rewrite the whole file. The first operators
follow mutmut's and cosmic-ray's catalogues (see docs/audit.md for
why neither package is used directly); ``numeric.py`` adds the bugs numerical
code has. ``OPERATORS`` lists them all.

Each site is found once by ``_Collector``; ``_Apply`` rebuilds the tree with
only that node replaced (libcst trees are immutable, so one parse serves
every mutant).
"""
from __future__ import annotations

import difflib
import hashlib
import warnings
from dataclasses import dataclass

import libcst as cst
from benchtui.audit import flow, kernel, numeric
from benchtui.audit.syntax import call_name, code, plus, positional, targets
from libcst.metadata import (
    ExpressionContext,
    ExpressionContextProvider,
    MetadataWrapper,
    PositionProvider,
    WhitespaceInclusivePositionProvider,
)

# Every operator, in one place: its name (stable: stored with each mutant and
# used to spread a capped sample) and what it writes.
OPERATORS = {
    "comparison": "a comparison flipped: < for <=, == for !=, in for not in",
    "boolean": "and for or, a not dropped",
    "arithmetic": "+ for -, * for /, += for -=, a unary minus dropped",
    "constant": "a number off by one (n+1, n-1; a float +1.0), True for False",
    "range_bound": "a range/arange start or stop, not a literal, moved by one",
    "slice_bound": "a slice's lower or upper bound, not a literal, moved by one",
    "arguments": "a keyword argument or the last argument dropped; the first two swapped",
    "statement": "an assignment or call statement removed",
    "return": "return None instead of a value",
    "parameter_constant": "a use of a parameter replaced by its default, or by a literal the file's own calls pass",
    "key": "a sort/max/argmax key replaced: a lambda key by a part of it, an array by the local it came from or fed",
    "axis": "an axis changed: axis=-1 to -2 or 0, x.sum(1) to 0 or -1",
    "max_arg": "np.maximum(a, b) / max(a, b) / minimum replaced by one of its arguments",
    "mask": "a mask dropped: x * mask to x, where(c, a, b) to a or b, one side of mask & mask, masked_fill, tril",
    "dtype": "a dtype lowered: float64 to float32, float32 to float16, int64 to int32 (names and strings)",
    "swap_arguments": "two same-kind arguments of a call swapped (beyond the first two, or two keyword values)",
    "gradient_condition": "a gradient multiplied by a condition: w - stop_gradient(w) or a returned/dX gradient "
                          "times (abs(w) <= 1), the clipped straight-through estimator",
    "normalisation": "a normalisation dropped: softmax / log_softmax / normalize(x) to x, x - logsumexp(x) to x",
    "one_operand": "a rotation or a mask applied to one operand only: k = rope(k) to k where q is rotated too; "
                   "a mask applied after the next statement reads the masked value (a maximum taken before the mask)",
    "unscaled": "the unscaled accumulator returned: return acc / l to return acc (and out = acc / l where out is returned)",
    "reported_figure": "a reported figure read from elsewhere: a metric in a dict of figures replaced by another "
                       "figure or a constant; an evaluate/perplexity function returning a constant",
    "empty_branch": "an empty-input guard changed: if len(x) == 0 dropped (if False), or widened to len(x) <= 1",
    **kernel.KERNEL,
}
# operator families `benchtui audit --operators` selects
FAMILIES = {"all": set(OPERATORS), "kernel": set(kernel.KERNEL), "classic": set(OPERATORS) - set(kernel.KERNEL)}


@dataclass
class Mutant:
    file: str  # path relative to the answer folder
    line: int
    operator: str  # a key of OPERATORS
    description: str
    source: str  # the whole mutated file
    diff: str

    @property
    def sha(self) -> str:
        return hashlib.sha256(f"{self.file}\0{self.source}".encode()).hexdigest()

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "operator": self.operator, "description": self.description,
                "diff": self.diff, "sha": self.sha}


_COMPARE = {cst.LessThan: cst.LessThanEqual, cst.LessThanEqual: cst.LessThan, cst.GreaterThan: cst.GreaterThanEqual,
            cst.GreaterThanEqual: cst.GreaterThan, cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal,
            cst.Is: cst.IsNot, cst.IsNot: cst.Is, cst.In: cst.NotIn, cst.NotIn: cst.In}
_ARITH = {cst.Add: cst.Subtract, cst.Subtract: cst.Add, cst.Multiply: cst.Divide, cst.Divide: cst.Multiply,
          cst.FloorDivide: cst.Multiply, cst.Power: cst.Multiply, cst.Modulo: cst.FloorDivide,
          cst.BitAnd: cst.BitOr, cst.BitOr: cst.BitAnd, cst.LeftShift: cst.RightShift, cst.RightShift: cst.LeftShift}
_AUG = {cst.AddAssign: cst.SubtractAssign, cst.SubtractAssign: cst.AddAssign,
        cst.MultiplyAssign: cst.DivideAssign, cst.DivideAssign: cst.MultiplyAssign}
_SKIP_FUNCS = ("test_", "main", "demo", "bench", "benchmark", "_test", "example", "selftest", "self_test")
_QUIET_CALLS = {"print", "pprint", "warn", "debug", "info", "warning", "log", "error", "exception", "write", "flush"}


_LOOPS = (cst.For, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def _is_docstring(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and \
        isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString)


def _op_text(op) -> str:
    return code(op).strip()


def _swap_op(op, new_cls):
    kw = {}
    for name in ("whitespace_before", "whitespace_after"):
        if hasattr(op, name) and hasattr(new_cls, "__dataclass_fields__") and name in new_cls.__dataclass_fields__:
            kw[name] = getattr(op, name)
    return new_cls(**kw)


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider, WhitespaceInclusivePositionProvider, ExpressionContextProvider)

    def __init__(self):
        super().__init__()
        self.sites: list[tuple] = []
        self._skip = 0
        self._literals: dict = {}
        self._scopes: list[numeric.Scope] = []  # the enclosing functions (and lambdas, which shadow names)
        self._not_uses: set[int] = set()  # names that read no variable: x.NAME, f(NAME=...)
        self._dereferenced: set[int] = set()  # x[...], x.attr: None there is a certain crash, not a bug worth a mutant
        self._assigning: frozenset[str] = frozenset()  # the names the statement being visited assigns
        self._functions: list[cst.FunctionDef] = []
        self._prompt_loops: list[str] = []  # loop variables over prompts: `for p in prompts`, `[... for p in prompts]`
        self._statements: list[cst.SimpleStatementLine] = []  # the statement being visited: the line a tracer records

    # -- places no mutant goes: tests, demos, main guards, prints, annotations, f-strings, decorators
    def _skipping(self, node) -> bool:
        if isinstance(node, cst.FunctionDef):
            name = node.name.value.lower()
            return name.startswith(_SKIP_FUNCS) or name.endswith("_test")
        if isinstance(node, cst.ClassDef):
            return node.name.value.startswith("Test")
        if isinstance(node, cst.If):
            return "__name__" in code(node.test)
        if isinstance(node, cst.Call):
            return call_name(node) in _QUIET_CALLS
        return isinstance(node, (cst.Annotation, cst.FormattedString, cst.Decorator, cst.Import, cst.ImportFrom,
                                 cst.Assert, cst.Raise, cst.Global, cst.Nonlocal))

    def on_visit(self, node) -> bool:
        if isinstance(node, cst.Module):
            self._literals = numeric.call_literals(node)
        elif isinstance(node, cst.FunctionDef):
            self._scopes.append(numeric.scope_of(node, self._literals))
            self._functions.append(node)
        elif isinstance(node, cst.Lambda):
            self._scopes.append(numeric.Scope("<lambda>", [p.name.value for p in node.params.params]))
        elif isinstance(node, cst.Attribute):
            self._not_uses.add(id(node.attr))
            self._dereferenced.add(id(node.value))
        elif isinstance(node, cst.Subscript):
            self._dereferenced.add(id(node.value))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            self._not_uses.add(id(node.keyword))
        elif isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            assigned = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            self._assigning = frozenset(n for t in assigned for n in targets(t))
        if isinstance(node, cst.SimpleStatementLine):
            self._statements.append(node)
        if isinstance(node, _LOOPS):
            loop = node if isinstance(node, cst.For) else node.for_in  # a comprehension's element comes first
            target = loop.target
            looped = isinstance(target, cst.Name) and "prompt" in code(loop.iter).lower()
            self._prompt_loops.append(target.value if isinstance(target, cst.Name) and looped else "")
        if self._skipping(node):
            self._skip += 1
        elif not self._skip:
            self._sites_of(node)
        return True

    def on_leave(self, original_node) -> None:
        if isinstance(original_node, (cst.FunctionDef, cst.Lambda)):
            self._scopes.pop()
        if isinstance(original_node, cst.FunctionDef):
            self._functions.pop()
        elif isinstance(original_node, _LOOPS):
            self._prompt_loops.pop()
        elif isinstance(original_node, cst.SimpleStatementLine):
            self._statements.pop()
        elif isinstance(original_node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            self._assigning = frozenset()
        if self._skipping(original_node):
            self._skip -= 1

    def _add(self, node, replacement, operator: str, description: str, at=None) -> None:
        line = self.get_metadata(PositionProvider, at if at is not None else node).start.line
        span = self.get_metadata(WhitespaceInclusivePositionProvider, node)
        where = ((span.start.line, span.start.column), (span.end.line, span.end.column))
        self.sites.append((node, replacement, operator, description, line, where))

    def _scope_of_name(self, name: str) -> numeric.Scope | None:
        """The innermost function that binds ``name``; None for a module-level name."""
        for scope in reversed(self._scopes):
            if name in scope.params or name in scope.sources:
                return scope if name in scope.params else None
        return None

    def _numeric_sites(self, node) -> None:
        scope = self._scopes[-1] if self._scopes else None
        found = []
        if isinstance(node, cst.Name) and id(node) not in self._not_uses and \
                self.get_metadata(ExpressionContextProvider, node, None) == ExpressionContext.LOAD:
            found += numeric.parameter_constant(node, self._scope_of_name(node.value), id(node) in self._dereferenced)
        elif isinstance(node, cst.Call):
            for op in (numeric.sort_key, numeric.axis, numeric.max_arg, numeric.mask, numeric.swap_arguments,
                       numeric.range_start):
                found += op(node, scope, self._assigning) if op is numeric.sort_key else op(node)
            found += flow.normalisation(node)
            found += flow.one_operand(node, scope)
        elif isinstance(node, cst.BinaryOperation):
            found += numeric.mask(node)
            found += numeric.gradient_condition(node, scope)
            found += flow.normalisation(node)
        elif isinstance(node, (cst.Attribute, cst.SimpleString)):
            found += numeric.dtype(node)
        elif isinstance(node, cst.Return) and node.value is not None:
            found += numeric.gradient_condition(node, scope, in_return=True)
            found += flow.unscaled(node, scope, in_return=True)
            found += flow.reported_figure(node, scope)
        elif isinstance(node, cst.Assign):
            found += numeric.gradient_condition(node, scope)
            found += flow.unscaled(node, scope)
            found += flow.reported_figure(node, scope)
        elif isinstance(node, cst.Dict):
            found += flow.reported_figure(node, scope)
        elif isinstance(node, (cst.If, cst.IfExp)):
            found += flow.empty_branch(node, scope)
        elif isinstance(node, cst.IndentedBlock):
            for block, replacement, operator, description, at in flow.statement_order(node):
                self._add(block, replacement, operator, description, at=at)
        found += self._kernel_sites(node, scope)
        for target, replacement, operator, description in found:
            self._add(target, replacement, operator, description)

    def _kernel_sites(self, node, scope) -> list[tuple]:
        """The contract operators (``kernel.KERNEL``); a default's mutant is placed on its
        function's first statement, the line a call reaches."""
        if isinstance(node, cst.Param) and self._functions and node in self._params_of(self._functions[-1]):
            body = self._functions[-1].body
            statements = list(body.body) if isinstance(body, cst.IndentedBlock) else []
            if statements and _is_docstring(statements[0]):  # a docstring runs no line a tracer sees
                statements = statements[1:]
            first = statements[0] if statements else None
            for target, replacement, operator, description in kernel.default_flip(node):
                if first is not None:
                    self._add(target, replacement, operator, description, at=first)
            return []
        found = []
        if isinstance(node, cst.Call):
            found += kernel.remainder_tile(node) + kernel.narrow_dtype(node) + kernel.kept_dim(node)
            found += kernel.tie_break(node) + kernel.max_shift(node)
        elif isinstance(node, cst.BinaryOperation):
            found += kernel.remainder_tile(node) + kernel.max_shift(node)
            found += kernel.ragged_full(node, set())
        elif isinstance(node, cst.UnaryOperation):
            found += kernel.remainder_tile(node)
        elif isinstance(node, cst.Attribute) and \
                self.get_metadata(ExpressionContextProvider, node, None) == ExpressionContext.LOAD:
            found += kernel.config_constant(node)
        elif isinstance(node, cst.AugAssign) and scope is not None:
            found += kernel.ragged_full(node, {*scope.params, *scope.locals})
        elif isinstance(node, cst.Return) and node.value is not None:
            found += kernel.returned_astype(node)
        elif isinstance(node, cst.Name) and node.value == "False" and scope is not None and self._prompt_loops:
            # on the statement's first line: a tracer records that line of a multi-line statement
            at = self._statements[-1] if self._statements else None
            for target, replacement, operator, description in kernel.special_end(
                    node, self._prompt_loops[-1] or None, scope.params):
                self._add(target, replacement, operator, description, at=at)
        return found

    @staticmethod
    def _params_of(fn: cst.FunctionDef) -> list:
        p = fn.params
        return [*p.posonly_params, *p.params, *p.kwonly_params]

    def _sites_of(self, node) -> None:
        self._numeric_sites(node)
        if isinstance(node, cst.Comparison):
            for i, target in enumerate(node.comparisons):
                new = _COMPARE.get(type(target.operator))
                if new:
                    comps = list(node.comparisons)
                    comps[i] = target.with_changes(operator=_swap_op(target.operator, new))
                    self._add(node, node.with_changes(comparisons=comps), "comparison",
                              f"{_op_text(target.operator)} -> {_op_text(comps[i].operator)}")
        elif isinstance(node, cst.BooleanOperation):
            new = cst.Or if isinstance(node.operator, cst.And) else cst.And
            self._add(node, node.with_changes(operator=_swap_op(node.operator, new)), "boolean",
                      f"{_op_text(node.operator)} -> {_op_text(new())}")
        elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Not, cst.Minus)):
            if isinstance(node.operator, cst.Minus) and isinstance(node.expression, (cst.Integer, cst.Float)):
                pass  # -1 is a constant: the constant operator changes it
            else:
                what = "boolean" if isinstance(node.operator, cst.Not) else "arithmetic"
                inner = node.expression.with_changes(lpar=node.lpar or node.expression.lpar,
                                                     rpar=node.rpar or node.expression.rpar)
                self._add(node, inner, what, f"drop unary {_op_text(node.operator)}")
        elif isinstance(node, cst.BinaryOperation):
            new = _ARITH.get(type(node.operator))
            if new:
                self._add(node, node.with_changes(operator=_swap_op(node.operator, new)), "arithmetic",
                          f"{_op_text(node.operator)} -> {_op_text(new())}")
        elif isinstance(node, cst.AugAssign):
            new = _AUG.get(type(node.operator))
            if new:
                self._add(node, node.with_changes(operator=_swap_op(node.operator, new)), "arithmetic",
                          f"{_op_text(node.operator)} -> {_op_text(new())}")
        elif isinstance(node, cst.Integer):
            try:
                n = int(node.value.replace("_", ""), 0)
            except ValueError:
                return
            for m in ([n + 1, n - 1] if n > 0 else [n + 1]):
                self._add(node, node.with_changes(value=str(m)), "constant", f"{node.value} -> {m}")
        elif isinstance(node, cst.Float):
            try:
                x = float(node.value.replace("_", ""))
            except ValueError:
                return
            self._add(node, node.with_changes(value=repr(x + 1.0)), "constant", f"{node.value} -> {x + 1.0!r}")
        elif isinstance(node, cst.Name) and node.value in ("True", "False"):
            flip = "False" if node.value == "True" else "True"
            self._add(node, node.with_changes(value=flip), "constant", f"{node.value} -> {flip}")
        elif isinstance(node, cst.Call):
            self._call_sites(node)
        elif isinstance(node, cst.Slice):
            for part in ("lower", "upper"):
                bound = getattr(node, part)
                if bound is not None and not isinstance(bound, (cst.Integer, cst.UnaryOperation)):
                    for d in (1, -1):
                        self._add(node, node.with_changes(**{part: plus(bound, d)}), "slice_bound",
                                  f"slice {part} bound {'+' if d > 0 else '-'} 1")
        elif isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
            self._statement_sites(node)

    def _call_sites(self, node: cst.Call) -> None:
        args = list(node.args)
        pos = positional(node)
        if call_name(node) == "range" and pos:
            i = pos[-1] if len(pos) <= 2 else pos[1]
            stop = args[i].value
            if not isinstance(stop, cst.Integer):  # an integer stop is the constant operator's
                for d in (1, -1):
                    new = list(args)
                    new[i] = args[i].with_changes(value=plus(stop, d))
                    self._add(node, node.with_changes(args=new), "range_bound", f"range stop {'+' if d > 0 else '-'} 1")
        if len(pos) >= 2:
            a, b = pos[0], pos[1]
            new = list(args)
            new[a] = args[a].with_changes(value=args[b].value)
            new[b] = args[b].with_changes(value=args[a].value)
            self._add(node, node.with_changes(args=new), "arguments", "swap the first two arguments")
        for i, arg in enumerate(args):
            if arg.keyword is not None:
                new = args[:i] + args[i + 1:]
                if new and i == len(args) - 1:  # the new last argument keeps no dangling comma
                    new[-1] = new[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                self._add(node, node.with_changes(args=new), "arguments", f"drop argument {arg.keyword.value}=")
        if len(pos) >= 2 and pos[-1] == len(args) - 1:
            new = args[:-1]
            new[-1] = new[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            self._add(node, node.with_changes(args=new), "arguments", "drop the last argument")

    def _statement_sites(self, node: cst.SimpleStatementLine) -> None:
        stmt = node.body[0]
        if isinstance(stmt, cst.Return):
            if stmt.value is not None and not (isinstance(stmt.value, cst.Name) and stmt.value.value == "None"):
                self._add(stmt, stmt.with_changes(value=cst.Name("None")), "return", "return None instead")
        elif isinstance(stmt, (cst.Assign, cst.AugAssign, cst.AnnAssign)) or (
                isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and call_name(stmt.value) not in _QUIET_CALLS):
            self._add(stmt, cst.Pass(), "statement", "remove the statement")


def _offsets(source: str) -> list[int]:
    starts, pos = [0], 0
    for line in source.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def _splice(module: cst.Module, source: str, starts: list[int], node, replacement, where) -> str:
    """The mutant's text: the node's own span replaced by the replacement's
    code (fast); the whole tree rebuilt when the span does not match."""
    (l0, c0), (l1, c1) = where
    a, b = starts[l0 - 1] + c0, starts[l1 - 1] + c1
    if source[a:b] == module.code_for_node(node):
        return source[:a] + module.code_for_node(replacement) + source[b:]
    return module.visit(_Apply(node, replacement)).code


class _Apply(cst.CSTTransformer):
    def __init__(self, target, replacement):
        super().__init__()
        self.target, self.replacement = target, replacement

    def on_leave(self, original_node, updated_node):
        return self.replacement if original_node is self.target else updated_node


@dataclass
class Site:
    """A place a mutant can be made, before it is built (building costs a
    codegen and a compile: an audit capped at N builds only what it picks)."""
    file: str
    line: int
    operator: str
    description: str
    key: str  # stable while the file is unchanged: orders the pick
    index: int


class Source:
    """One file parsed once; its sites on the reached lines; mutants built on demand."""

    def __init__(self, source: str, file: str, lines: set[int] | None = None):
        self.text, self.file = source, file
        self.sites: list[Site] = []
        self._raw: list[tuple] = []
        self._seen: set[str] = set()
        try:
            wrapper = MetadataWrapper(cst.parse_module(source))
        except cst.ParserSyntaxError:
            return
        collector = _Collector()
        wrapper.visit(collector)
        self.module = wrapper.module
        self._starts = _offsets(source)
        self._original = source.splitlines(keepends=True)
        count: dict[tuple, int] = {}
        for node, replacement, operator, description, line, where in collector.sites:
            if lines is not None and line not in lines:
                continue
            ident = (file, line, operator, description)
            count[ident] = count.get(ident, 0) + 1
            key = hashlib.sha256(repr((*ident, count[ident])).encode()).hexdigest()
            self.sites.append(Site(file, line, operator, description, key, len(self._raw)))
            self._raw.append((node, replacement, where))

    def build(self, site: Site) -> Mutant | None:
        """The mutant at ``site``; None when it does not compile or repeats one already built."""
        node, replacement, where = self._raw[site.index]
        try:
            text = _splice(self.module, self.text, self._starts, node, replacement, where)
            with warnings.catch_warnings():  # `None[0]`, `x is 1`: compile's warnings are no news here
                warnings.simplefilter("ignore")
                compile(text, self.file, "exec")
        except Exception:  # a mutant that does not build or compile is no mutant
            return None
        if text == self.text or text in self._seen:
            return None
        self._seen.add(text)
        diff = "".join(difflib.unified_diff(self._original, text.splitlines(keepends=True), f"a/{self.file}",
                                            f"b/{self.file}", n=1))
        return Mutant(self.file, site.line, site.operator, site.description, text, diff)


def mutants_of(source: str, file: str, lines: set[int] | None = None) -> list[Mutant]:
    """Every single-point mutant of ``source`` that compiles and differs from
    it; with ``lines`` (the lines the checks reached), only mutants there."""
    src = Source(source, file, lines)
    return [m for m in (src.build(s) for s in src.sites) if m is not None]
