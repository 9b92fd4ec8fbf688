"""The rules of the kernel decks a module harness reproduces, and benchtui's own.

Pure functions the checker calls (engine/verify/module/suite.py): each deck's
forbidden-op rule (a text search of solution.py) beside benchtui's reading of
the code (names resolved through imports, aliases, ``getattr`` and string
concatenation; a tensor method only on what engine/verify/module/receivers.py shows
to be a tensor), each deck's tolerance and comparison, the bytes/flops
formulas, and the device peaks a figure is set against. Nothing here imports
answer code: the answer's files are read as text and parsed.
"""
from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from benchtui.verify.module import ops as module_ops
from benchtui.verify.module.receivers import NDARRAY, NOT_TENSOR, TENSOR, Kinds

HARD, KB = "kernelbench-hard", "kernelbench"

# KernelBench-Hard's per-dtype defaults (its src/eval/correctness.py); fp32 for anything else.
HARD_TOLERANCE = {
    "float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (1e-2, 1e-2),
    "float8_e4m3fn": (1e-1, 1e-1), "float8_e5m2": (1e-1, 1e-1),
    "int8": (0.0, 0.0), "int32": (0.0, 0.0), "int64": (0.0, 0.0),
}


# -- forbidden ops ----------------------------------------------------------------------

def deck_grep(source: str, forbidden: list[str]) -> list[str]:
    """KernelBench-Hard's own rule: a forbidden string anywhere in solution.py's text."""
    return [f for f in forbidden if re.search(re.escape(f), source)]


@dataclass
class Hit:
    file: str
    line: int
    forbidden: str
    how: str
    certain: bool = True  # False: the code could reach it, as far as it can be read (a figure, not a verdict)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.how} ({self.forbidden})"


def forbidden_in_code(files: dict[str, str], forbidden: list[str],
                      native: dict[str, str] | None = None) -> tuple[list[Hit], list[str]]:
    """Where the answer's Python files reach a forbidden op, read from their
    syntax trees, and where its C++/CUDA sources (``native``: .cpp/.cu files;
    the strings of the Python files besides) call the library routine a
    forbidden op stands for: (hits, files that do not parse). A hit is
    ``certain`` where the code resolves to the op (a torch function through
    the file's imports, a tensor's method on what is a tensor, an op that runs
    the same library routine, that routine reached through NumPy, SciPy, BLAS
    or C++); where it could only be it (a method of that name on a receiver
    not known to be a tensor, a name the file never binds), it is not."""
    hits, unparsed = [], []
    for rel, source in sorted(files.items()):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):  # what cannot be parsed is searched as text, as the deck does
            unparsed.append(rel)
            for f in deck_grep(source, forbidden):
                at = source.find(f)
                hits.append(Hit(rel, source.count("\n", 0, at) + 1, f, "named in a file that does not parse as Python"))
            hits.extend(native_hits(rel, source, forbidden))  # a run with its .cu appended: its C++ is read too
            continue
        hits.extend(_Resolver(rel, tree).hits(forbidden))
    for rel, source in sorted((native or {}).items()):
        hits.extend(native_hits(rel, source, forbidden))
    return hits, unparsed


# the decks' shorthand for torch.nn.functional
_SHORTHAND = {"F": "torch.nn.functional"}


def _canonical(target: str) -> str:
    head, _, rest = target.partition(".")
    return f"{_SHORTHAND[head]}.{rest}" if rest and head in _SHORTHAND else target


class _Resolver:
    """Dotted names of the expressions of one file, through its imports and
    simple assignments (flow-insensitive: one name, every value it was given).
    A name the file never binds (a builtin, or one a ``*`` import may bring)
    resolves to itself and to each ``*``-imported module's name of it, marked
    ``?``: it could be any of them."""

    def __init__(self, rel: str, tree: ast.Module):
        self.rel, self.tree = rel, tree
        # a docstring that names an op is prose, not a call
        self.docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
        self.names: dict[str, set[str]] = {}
        self.imports: list[tuple[int, str]] = []
        self.bound = _bound_names(tree)
        self.star_imports: list[str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.imports.append((node.lineno, a.name))
                    if a.asname:
                        self.names.setdefault(a.asname, set()).add(a.name)
                    else:
                        top = a.name.split(".")[0]
                        self.names.setdefault(top, set()).add(top)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                self.imports.append((node.lineno, node.module))
                if any(a.name == "*" for a in node.names):
                    self.star_imports.append(node.module)
                for a in node.names:
                    self.names.setdefault(a.asname or a.name, set()).add(f"{node.module}.{a.name}")
        for _ in range(3):  # aliases of aliases
            for node in ast.walk(tree):
                value, targets = None, []
                if isinstance(node, ast.Assign):
                    value, targets = node.value, node.targets
                elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                    value, targets = node.value, [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        for dotted in self.resolve(value):
                            self.names.setdefault(target.id, set()).add(dotted)

    @cached_property
    def kinds(self) -> Kinds:
        """What the file's expressions hold, read only where a method or ``@`` could be the op."""
        return Kinds(self.tree, self.resolve)

    def resolve(self, node: ast.AST, depth: int = 0) -> set[str]:
        if depth > 12:
            return set()
        if isinstance(node, ast.Name):
            if node.id in self.bound:
                return set(self.names.get(node.id, ()))
            return {"?" + node.id} | {f"?{m}.{node.id}" for m in self.star_imports}
        if isinstance(node, ast.Attribute):
            return {f"{base}.{node.attr}" for base in self.resolve(node.value, depth + 1)}
        if isinstance(node, ast.Call):
            fn = node.func
            fname = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            if fname == "getattr" and len(node.args) >= 2:
                attr = fold_string(node.args[1])
                if attr is not None:
                    return {f"{base}.{attr}" for base in self.resolve(node.args[0], depth + 1)}
            if fname in ("import_module", "__import__") and node.args:
                module = fold_string(node.args[0])
                if module is not None:
                    return {module}
        return set()

    def _receiver(self, call: ast.Call) -> tuple[ast.AST, str] | None:
        """(receiver, method) of ``x.m(...)`` or ``getattr(x, "m")(...)``."""
        fn = call.func
        if isinstance(fn, ast.Attribute):
            return fn.value, fn.attr
        if isinstance(fn, ast.Call) and isinstance(fn.func, ast.Name) and fn.func.id == "getattr" and len(fn.args) >= 2:
            attr = fold_string(fn.args[1])
            if attr is not None:
                return fn.args[0], attr
        return None

    def hits(self, forbidden: list[str]) -> list[Hit]:
        found: dict[tuple[int, str], Hit] = {}

        def add(line: int, f: str, how: str, certain: bool = True) -> None:
            have = found.get((line, f))
            if have is None or certain and not have.certain:  # a line's certain hit replaces its could-be
                found[(line, f)] = Hit(self.rel, line, f, how, certain)

        for f in forbidden:
            words = f.split()
            if len(words) == 2 and words[0] in ("import", "from"):  # an import statement's text
                for line, module in self.imports:
                    if module == words[1] or module.startswith(words[1] + "."):
                        add(line, f, f"imports {module}")
                continue
            target = _canonical(f.strip())
            last = target.rsplit(".", 1)[-1]
            method_of_tensor = target.startswith("torch.") and target.count(".") == 1
            same = op_names(target)  # the aten ops the trace counts as this one (its library routine's)
            gemm = "mm" in same  # a GEMM: BLAS reached through NumPy, SciPy or ctypes counts too
            for node in ast.walk(self.tree):
                line = getattr(node, "lineno", 0)
                if isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
                    for dotted in self.resolve(node):
                        text = _shown(node, 80)
                        if not dotted.startswith("?"):
                            if _reaches(dotted, target):
                                add(line, f, _is(text, dotted, target))
                            elif op_of(dotted) in same:  # the trace counts it as this op when the answer runs
                                add(line, f, f"could be {target}: {text} runs the same {_routine(same)} "
                                             f"(aten::{op_of(dotted)}), which the run-time trace counts as it",
                                    certain=False)
                            elif gemm and isinstance(node, ast.Attribute | ast.Name):
                                blas = _blas_function(dotted)
                                if blas:
                                    add(line, f, f"{text} is {blas}, the routine {target} runs "
                                                 "(a GEMM through another library)", certain=blas != "numpy.einsum")
                        elif _reaches(dotted[1:], target) or dotted[1:] == f.strip():
                            add(line, f, f"could be {target}: {text}, a name this file never binds "
                                         "(a * import may bring it)", certain=False)
                if isinstance(node, ast.Call) and (method_of_tensor or same):
                    got = self._receiver(node)
                    method = module_ops.op_base(got[1]) if got else ""
                    if got and (method == last and method_of_tensor or method in same) \
                            and not any(_reaches(d, target) for d in self.resolve(node.func)):
                        receiver = got[0]
                        kind = self.kinds.kind(receiver)
                        shown = _shown(receiver, 60)
                        if kind == TENSOR and method == last:  # x.topk(k): the tensor method of a forbidden torch function
                            add(line, f, f"the tensor method .{got[1]}() is {target} ({shown} is a tensor)")
                        elif kind == TENSOR:
                            add(line, f, f"could be {target}: the tensor method .{got[1]}() runs the same "
                                         f"{_routine(same)}, which the run-time trace counts as it", certain=False)
                        elif kind == NDARRAY and gemm and method in ("dot", "vdot"):
                            add(line, f, f"NumPy's .{got[1]}() on {shown} is a BLAS GEMM, the routine {target} runs")
                        elif kind not in NOT_TENSOR and method == last and method_of_tensor:
                            add(line, f, f"could be {target}: .{last}() on {shown}, which the code does not show "
                                         "to be a tensor", certain=False)
                if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and "matmul" in same:
                    sides = [self.kinds.kind(node.left), self.kinds.kind(node.right)]
                    if TENSOR in sides and target == "torch.matmul":
                        add(line, f, "the @ operator on a tensor is torch.matmul")
                    elif TENSOR in sides:
                        add(line, f, f"could be {target}: the @ operator on a tensor is torch.matmul, the same "
                                     f"{_routine(same)}, which the run-time trace counts as it", certain=False)
                    elif NDARRAY in sides:
                        add(line, f, f"the @ operator on a NumPy array is a BLAS GEMM, the routine {target} runs")
                    elif not all(k in NOT_TENSOR for k in sides):
                        add(line, f, f"could be {target}: the @ operator on operands the code does not show "
                                     "to be tensors", certain=False)
                if gemm and isinstance(node, ast.Attribute) and _BLAS_SYMBOL.fullmatch(node.attr):
                    add(line, f, f"calls the BLAS routine {node.attr} (a GEMM, the routine {target} runs)")
                if isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Call)) and id(node) not in self.docstrings:
                    text = fold_string(node)
                    if not text:
                        continue
                    native = _native_call(text, target, same)
                    if native:
                        add(line + native[0] - 1, f, f"named in a string: {native[1]}")
                    elif gemm and _BLAS_SYMBOL.fullmatch(text.strip()):
                        add(line, f, f"names the BLAS routine {text.strip()} (a GEMM, the routine {target} runs)")
                    elif any("." in name and _names(name, text) for name in {f.strip(), target}):
                        add(line, f, "named in a string (code built from text, or C++ calling the same op)")
                    elif "." not in target and _names(target, text):  # a bare word: any name of the answer's too
                        add(line, f, f"could be {target}: named in a string", certain=False)
        return sorted(found.values(), key=lambda h: (h.line, h.forbidden))


def _shown(node: ast.AST, width: int) -> str:
    """An expression as the answer wrote it, cut to ``width``."""
    try:
        return ast.unparse(node)[:width]
    except RecursionError:  # nested deeper than Python's stack
        return f"the expression at line {getattr(node, 'lineno', '?')}"


def _names(name: str, text: str) -> bool:
    """Whether ``text`` names ``name`` as a whole (torch.max, not torch.max_pool2d or mytorch.max)."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the file binds anywhere: imports, assignments, loop and
    ``with`` targets, parameters, functions and classes."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _reaches(dotted: str, target: str) -> bool:
    """Whether a name resolved through the file's imports is the forbidden op, as
    the run-time trace sees it: the same aten op however it is reached
    (``torch.ops.aten.X`` and its overloads, ``torch._C._VariableFunctions``,
    ``torch._VF``, the tensor method, ``torch._C._nn``)."""
    if dotted == target or dotted.startswith(target + "."):
        return True
    own = module_ops.aten_name(target)
    if own is not None and op_of(dotted) == own:
        return True
    # a bare name (chunk_kda) is the function of that name in the module it is imported from
    return "." not in target and "." in dotted and dotted.rsplit(".", 1)[-1] == target


def _is(text: str, dotted: str, target: str) -> str:
    """How a resolved name reaches the forbidden op, for the hit's message."""
    if text == target:
        return f"calls {target}"
    if dotted == target or dotted.startswith(target + ".") or "." not in target:
        return f"{text} is {target}"
    return f"{text} is {target} (aten::{op_of(dotted)})"


# the dunders of an operator and the aten op they run
_DUNDER_OPS = {"__matmul__": "matmul", "__rmatmul__": "matmul", "__imatmul__": "matmul"}


def op_names(target: str) -> frozenset[str]:
    """The aten ops the run-time trace counts as the forbidden torch op (itself and the
    ops running its library routine, engine/verify/module/ops.py); empty for no torch op."""
    return module_ops.targets([target]).get(target, frozenset())


def op_of(dotted: str) -> str | None:
    """The aten op a resolved name is, through any of torch's namespaces for it and
    whatever follows it (``torch.ops.aten.mm.default``, ``torch._VF.mm.__call__``)."""
    if not dotted.startswith("torch."):
        return None
    parts = dotted.split(".")
    for n in range(len(parts), 1, -1):
        op = module_ops.aten_name(".".join(parts[:n]))
        if op is not None:
            return _DUNDER_OPS.get(op, module_ops.op_base(op))
    return None


def _routine(same: frozenset[str]) -> str:
    if "mm" in same:
        return "GEMM"
    if "bmm" in same:
        return "batched GEMM"
    if same & module_ops.SCALED_GEMM:
        return "FP8 GEMM"
    if same & module_ops.CONV:
        return "convolution"
    if same & module_ops.SDPA:
        return "attention routine"
    return "op"


# -- the same routine through another library ----------------------------------------------

# NumPy's (and CuPy's) functions that call BLAS's GEMM/GEMV; einsum does only when asked to optimise
_ARRAY_GEMM = {"dot", "matmul", "tensordot", "inner", "vdot", "multi_dot", "einsum"}
# BLAS's matrix-product symbols as a C library exports them (ctypes) or SciPy binds them
_BLAS_SYMBOL = re.compile(r"cblas_[sdcz](gemm|gemv|symm|hemm)(_batch\w*)?|[sdcz](gemm|gemv)_|"
                          r"cublas\w*(gemm|gemv|matmul)\w*|mkl_\w*gemm\w*|dnnl_[sdcz]?gemm\w*", re.I)


def _blas_function(dotted: str) -> str | None:
    """The library's name of a GEMM a resolved name is (``numpy.dot``, SciPy's ``sgemm``), or None."""
    parts = dotted.split(".")
    if parts[0] in ("numpy", "cupy") and parts[-1] in _ARRAY_GEMM and len(parts) <= 3:
        return f"{parts[0]}.{parts[-1]}" if parts[-1] != "einsum" else "numpy.einsum"
    if dotted.startswith(("scipy.linalg.blas.", "scipy.linalg.cython_blas.")) and re.fullmatch(r"[sdcz](gemm|gemv)", parts[-1]):
        return f"SciPy's BLAS {parts[-1]}"
    if dotted == "scipy.linalg.get_blas_funcs":
        return "SciPy's BLAS lookup"
    return None


# -- C++ and CUDA sources ----------------------------------------------------------------------

_NATIVE_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".cuh", ".h", ".hpp", ".hxx", ".c")
# torch's C++ names of the GEMM routine beyond the aten ops' (at::cuda::blas::gemm, at::native::cpublas::gemm)
_CPP_GEMM = ("gemm", "bgemm", "gemm_and_bias", "scaled_gemm")
_CUDNN = {"convolution": re.compile(r"\bcudnnConvolution\w*(Forward|Backward\w*)\b|\bcudnnConvolutionBiasActivationForward\b"),
          "attention routine": re.compile(r"\bcudnnMultiHeadAttn\w*")}
_CUBLAS = re.compile(r"\b(cublas\w*(gemm|gemv|matmul)\w*)", re.I)
_CPU_BLAS = re.compile(r"\b(cblas_[sdcz](gemm|gemv)\w*|[sdcz]gemm_|mkl_\w*gemm\w*|dnnl_[sdcz]?gemm\w*)\s*\(")
_FP8_TYPES = re.compile(r"CUDA_R_8F_E[45]M[23]|__nv_fp8|float8_e[45]m")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _uncommented(text: str) -> str:
    """C++ text with its comments blanked (newlines kept, so lines still count)."""
    return _COMMENTS.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def _native_call(text: str, target: str, same: frozenset[str]) -> tuple[int, str] | None:
    """Where C++/CUDA ``text`` calls the library routine the forbidden ``target`` stands
    for: an ``at::``/``torch::``/``aten::`` op the trace counts as it (at::mm, at::cpu::mm,
    torch::matmul, at::_ops::mm::call), torch's own GEMM entry points, a cuBLAS GEMM, a
    cuDNN convolution or attention, a CPU BLAS's GEMM: (line in ``text``, what), or None."""
    code = _uncommented(text)
    last = target.rsplit(".", 1)[-1]
    names = set(same) | {last}
    routine = _routine(same)
    if "mm" in same:
        names |= set(_CPP_GEMM)
    patterns = [(re.compile(r"\b(?:at|torch|aten)(?:::\w+)*?::("
                            + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")\b"),
                 lambda m: f"C++ calls {m.group()}, " + (target if m.group(1) == last else f"the same {routine} as {target}"))]
    if "mm" in same or "bmm" in same or same & module_ops.SCALED_GEMM and _FP8_TYPES.search(code):
        patterns.append((_CUBLAS, lambda m: f"C++ calls cuBLAS's {m.group(1)}, the {routine} {target} runs"))
    patterns += [(pattern, lambda m: f"C++ calls cuDNN's {m.group()}, the {routine} {target} runs")
                 for what, pattern in _CUDNN.items() if routine == what]
    if "mm" in same:
        patterns.append((_CPU_BLAS, lambda m: f"C++ calls BLAS's {m.group(1)}, the GEMM {target} runs"))
    for pattern, say in patterns:
        found = pattern.search(code)
        if found:
            return code.count("\n", 0, found.start()) + 1, say(found)
    return None


def native_hits(rel: str, text: str, forbidden: list[str]) -> list[Hit]:
    """The forbidden library routines a C++/CUDA source calls (``_native_call``), one hit each."""
    hits = []
    for f in forbidden:
        if " " in f.strip():
            continue
        target = _canonical(f.strip())
        found = _native_call(text, target, op_names(target))
        if found:
            hits.append(Hit(rel, found[0], f, found[1]))
    return hits


def native_sources(folder: Path) -> dict[str, str]:
    """The answer's C++/CUDA sources as text (what ``load`` or a build script compiles)."""
    out = {}
    for path in sorted(Path(folder).rglob("*")):
        rel = path.relative_to(folder)
        if path.suffix in _NATIVE_SUFFIXES and path.is_file() and not any(p.startswith(".") for p in rel.parts) \
                and "__pycache__" not in rel.parts:
            out[rel.as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return out


def fold_string(node: ast.AST, depth: int = 0) -> str | None:
    """A string expression's value when it is built from constants only:
    literals, ``+``, f-strings without fields, ``"sep".join([...])``."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = fold_string(node.left, depth + 1), fold_string(node.right, depth + 1)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = [fold_string(v, depth + 1) for v in node.values]
        return "".join(parts) if all(p is not None for p in parts) else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" \
            and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
        sep = fold_string(node.func.value, depth + 1)
        parts = [fold_string(e, depth + 1) for e in node.args[0].elts]
        if sep is not None and all(p is not None for p in parts):
            return sep.join(parts)
    return None


# -- what the answer needs to run ----------------------------------------------------------

_GPU_TEXT = [(r"^\s*(import|from)\s+triton\b", "imports Triton"),
             (r"cpp_extension|load_inline", "builds a C++/CUDA extension"),
             (r"__global__", "holds a CUDA kernel")]


def gpu_needs(files: dict[str, str]) -> list[str]:
    """Why the answer cannot run without an NVIDIA GPU (inline CUDA, Triton, a
    tensor put on ``cuda``), read from its code; empty for plain torch."""
    reasons = []
    for rel, source in sorted(files.items()):
        try:
            tree = ast.parse(source)
        except SyntaxError:  # not Python as a whole (a published run with its .cu appended): read as text
            for pattern, what in _GPU_TEXT:
                found = re.search(pattern, source, re.M)
                if found:
                    reasons.append(f"{rel}:{source.count(chr(10), 0, found.start()) + 1} {what} (read as text: "
                                   "the file does not parse)")
            continue
        for node in ast.walk(tree):
            line = getattr(node, "lineno", 0)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for m in modules:
                    if m.split(".")[0] == "triton":
                        reasons.append(f"{rel}:{line} imports Triton")
                    if m.startswith("torch.utils.cpp_extension"):
                        reasons.append(f"{rel}:{line} builds a C++/CUDA extension (torch.utils.cpp_extension)")
            elif isinstance(node, ast.Attribute) and node.attr in ("load_inline", "cpp_extension"):
                reasons.append(f"{rel}:{line} builds a C++/CUDA extension ({node.attr})")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" \
                    and not isinstance(node.func.value, ast.Name):
                reasons.append(f"{rel}:{line} moves a tensor to the GPU (.cuda())")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"cuda(:\d+)?", node.value):
                reasons.append(f"{rel}:{line} names the device {node.value!r}")
    return list(dict.fromkeys(reasons))


# -- tolerance and comparison ---------------------------------------------------------------

def tolerance(deck: str, dtype: str, atol: float, rtol: float, table: dict | None = None,
              case: dict | None = None, defaults: dict | None = None) -> tuple[float, float]:
    """(atol, rtol) for ``dtype`` as the deck looks it up: the stress case's,
    else the problem's per-dtype override, else the deck's default. KernelBench-Hard's
    default is the table the challenge holds (``[module.default_tolerance]``, its
    correctness.py's), else the one this harness knew when the challenge holds none;
    an unknown dtype gets the float32 entry. KernelBench's is ``atol``/``rtol``, and
    ``dtype`` is the problem's precision (its eval looks the tolerance up by precision,
    whatever an output's dtype)."""
    v = _entry({**(table or {}), **(case or {})}, dtype)  # the case's entries over the problem's, as merged there
    if v is not None:
        return v
    if deck == HARD:
        for source in (defaults, HARD_TOLERANCE):
            v = _entry(source or {}, dtype) or _entry(source or {}, "float32")
            if v is not None:
                return v
    return float(atol), float(rtol)


def _entry(source: dict, dtype: str) -> tuple[float, float] | None:
    """One dtype's entry of a tolerance table: a number (atol = rtol) or {atol, rtol} (a missing
    one is 0), under either spelling of the dtype, as the deck reads them."""
    v = source.get(f"torch.{dtype}", source.get(dtype))
    if v is None:
        return None
    if isinstance(v, dict):
        return float(v.get("atol", 0)), float(v.get("rtol", 0))
    if isinstance(v, (tuple, list)):
        return float(v[0]), float(v[1])
    return float(v), float(v)


def precision_dtype(precision: str) -> str:
    """The dtype name of a KernelBench precision (``fp32`` -> float32), which its eval
    looks the tolerance up by."""
    return {"fp16": "float16", "float16": "float16", "bf16": "bfloat16", "bfloat16": "bfloat16"}.get(
        (precision or "").lower(), "float32")


def compare(ref, out, atol: float, rtol: float, deck: str = HARD) -> tuple[bool, str]:
    """One output against the reference's, as the deck compares it, with the worst
    element named. KernelBench-Hard (its correctness.py): shape, any NaN or Inf in the
    answer's output fails, exact for zero tolerance, else allclose in float32.
    KernelBench (its eval): ``torch.allclose`` on the outputs as they are (NaN never
    close; Inf close only to the same Inf)."""
    import torch

    if tuple(ref.shape) != tuple(out.shape):
        return False, f"shape {tuple(out.shape)}, expected {tuple(ref.shape)}"
    if deck == KB:
        if torch.allclose(ref, out.to(ref.dtype), atol=atol, rtol=rtol):
            return True, f"within atol={atol:g} rtol={rtol:g}"
        return False, _worst(ref.double(), out.double(), atol, rtol)
    if out.is_floating_point() or out.is_complex():
        if torch.isnan(out.float()).any():
            return False, "output contains NaN"
        if torch.isinf(out.float()).any():
            return False, "output contains Inf"
    if atol == 0 and rtol == 0:
        if torch.equal(ref, out):
            return True, "exact"
        return False, f"exact match required; {int((ref != out).sum())} elements differ"
    r, o = ref.float(), out.float()
    if torch.allclose(r, o, atol=atol, rtol=rtol):
        return True, f"within atol={atol:g} rtol={rtol:g}"
    return False, _worst(r, o, atol, rtol)


def _worst(r, o, atol: float, rtol: float) -> str:
    import torch

    diff = (r - o).abs().nan_to_num(nan=float("inf"))
    bad = ~torch.isclose(r, o, atol=atol, rtol=rtol)
    worst = int(diff.argmax())
    idx = tuple(int(i) for i in torch.unravel_index(torch.tensor(worst), diff.shape))
    return (f"{int(bad.sum())}/{diff.numel()} elements beyond atol={atol:g} rtol={rtol:g}; "
            f"worst at {idx}: {float(o.reshape(-1)[worst]):.6g} vs {float(r.reshape(-1)[worst]):.6g}")


def gathered_indices(x, ref_values, indices, dim: int, atol: float, rtol: float, deck: str = HARD,
                     distinct: bool = False) -> tuple[bool, str]:
    """An index output compared as KernelBench-Hard's check.py compares one (its top-k):
    the indices in range along ``dim`` of the input ``x``, then ``x`` gathered at them
    against the reference's values, within the tolerance; which of equal values an index
    names (a tie broken another way) does not matter. ``distinct``: no index twice in a
    row (the deck's property stress asks it; its check.py does not)."""
    import torch

    idx = indices.to(torch.int64)
    size = x.shape[dim]
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= size):
        return False, f"indices out of range [{int(idx.min())}, {int(idx.max())}] for a dimension of {size}"
    if distinct and idx.numel():
        rows = idx.movedim(dim, -1).reshape(-1, idx.shape[dim])
        twice = sum(int(torch.unique(row).numel() != row.numel()) for row in rows)
        if twice:
            return False, f"{twice} row(s) name an index twice"
    try:
        gathered = torch.gather(x, dim, idx)
    except RuntimeError as exc:
        return False, f"the input cannot be gathered at these indices: {' '.join(str(exc).split())[:160]}"
    ok, msg = compare(ref_values.float(), gathered.float(), atol, rtol, deck)
    return ok, msg if ok else f"the input's values at the returned indices: {msg}"


def kernelbench_trial_seeds(seed: int, trials: int) -> list[int]:
    """KernelBench's correctness-trial seeds, drawn as its eval draws them."""
    import torch

    gen = torch.Generator().manual_seed(int(seed))
    return [int(torch.randint(0, 2**32 - 1, (1,), generator=gen).item()) for _ in range(int(trials))]


# -- figures ----------------------------------------------------------------------------------

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.Mod: operator.mod}


def eval_formula(expr: str, names: dict) -> float:
    """A deck's bytes or flops formula ("2 * M * N * K") over a shape's names:
    numbers, names, + - * / // % ** and parentheses only."""
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise ValueError(f"unknown name {node.id!r} in {expr!r}")
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -ev(node.operand) if isinstance(node.op, ast.USub) else ev(node.operand)
        raise ValueError(f"unsupported expression in {expr!r}")

    return float(ev(ast.parse(str(expr), mode="eval")))


# Published dense peaks (GB/s, TFLOPS per precision) by the name the driver reports.
DEVICE_PEAKS = {
    "H100 PCIe": (2039.0, {"fp8": 1513.0, "bf16": 756.0, "fp16": 756.0, "tf32": 378.0, "fp32": 51.0}),
    "H100 NVL": (3900.0, {"fp8": 1671.0, "bf16": 835.0, "fp16": 835.0, "tf32": 418.0, "fp32": 60.0}),
    "H100 80GB HBM3": (3350.0, {"fp8": 1979.0, "bf16": 989.0, "fp16": 989.0, "tf32": 494.0, "fp32": 67.0}),
    "H100 SXM": (3350.0, {"fp8": 1979.0, "bf16": 989.0, "fp16": 989.0, "tf32": 494.0, "fp32": 67.0}),
    "H200": (4800.0, {"fp8": 1979.0, "bf16": 989.0, "fp16": 989.0, "tf32": 494.0, "fp32": 67.0}),
    "B200": (8000.0, {"fp8": 4500.0, "bf16": 2250.0, "fp16": 2250.0, "tf32": 1100.0, "fp32": 80.0}),
    "A100-SXM4-80GB": (2039.0, {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0, "fp32": 19.5}),
}


def precision_key(precision: str) -> str:
    p = (precision or "").lower()
    for key in ("fp8", "fp16", "tf32", "fp32"):
        if p.startswith(key):
            return key
    return "bf16"


def device_peak(device_name: str, precision: str) -> tuple[str, float, float | None] | None:
    """(matched name, GB/s, TFLOPS or None) of a device by the name its driver reports."""
    for name, (gbps, tflops) in DEVICE_PEAKS.items():
        if name.lower() in (device_name or "").lower():
            return name, gbps, tflops.get(precision_key(precision))
    return None


def peak_fraction(regime: str, flops: float | None, nbytes: float | None, ms: float,
                  peak_gbps: float | None, peak_tflops: float | None) -> float | None:
    """The deck's figure: achieved TFLOPS / peak for a compute-bound problem, GB/s / peak otherwise."""
    if ms <= 0:
        return None
    if regime == "compute":
        if flops is None or not peak_tflops:
            return None
        return flops / (ms * 1e-3) / 1e12 / peak_tflops
    if nbytes is None or not peak_gbps:
        return None
    return nbytes / (ms * 1e-3) / 1e9 / peak_gbps


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    if not values:
        return None
    return math.exp(sum(math.log(max(v, 1e-9)) for v in values) / len(values))


# On the CPU, a problem whose one call moves more than this (inputs and weights) is not
# run: the decks size their problems for a GPU, where the CPU takes minutes or runs out
# of memory (KernelBench's level-1 ReLU has 6 GiB of inputs).
CPU_CALL_BYTES = 1 << 30


def call_bytes(reference: Path, shapes: Path | None = None) -> int | None:
    """The most bytes one call holds, inputs (``get_inputs()``) and the module's
    parameters and buffers, over the deck's shapes: made on torch's meta device,
    so nothing is allocated. None where the reference cannot say on meta."""
    import torch
    from benchtui.verify.binding import load_module

    try:
        ref = load_module(reference, f"benchtui_size_{abs(hash(str(reference)))}")
        shape_list = [None]
        if shapes is not None and shapes.is_file():
            shape_list = list(getattr(load_module(shapes, f"benchtui_size_shapes_{abs(hash(str(shapes)))}"),
                                      "SHAPES", [])) or [None]
        most = 0
        for shape in shape_list:
            for k, v in (shape or {}).items():
                setattr(ref, k, v)
            with torch.device("meta"):
                inputs = list(ref.get_inputs())
                model = ref.Model(*ref.get_init_inputs())
            tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
            tensors += list(model.parameters()) + list(model.buffers())
            most = max(most, sum(t.numel() * t.element_size() for t in tensors))
        return most
    except Exception:  # the reference's own code: where it cannot say on meta, running it will
        return None


def answer_sources(folder: Path) -> dict[str, str]:
    """The answer's Python files as text (never imported here)."""
    out = {}
    for path in sorted(Path(folder).rglob("*.py")):
        if path.is_file() and "__pycache__" not in path.parts and not any(p.startswith(".") for p in path.relative_to(folder).parts):
            out[path.relative_to(folder).as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return out
