"""Helpers for the beam search suite: the mock LM, probing the answer's own
model class for its calling convention, injecting the mock, and normalising
whatever shape of result an answer returns."""
from __future__ import annotations

import ast
import contextlib
import inspect
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MODEL_PARAM_NAMES = {"model", "lm", "net", "llm", "language_model", "transformer", "network"}
# Method names an answer may call on its model to get logits.
LOGIT_METHODS = ("forward", "logits", "get_logits", "next_token_logits", "next_logits",
                 "predict", "score", "logprobs", "log_probs", "step", "run", "apply",
                 "get_log_probs", "get_logprobs")
# Names published answers call on the model they are handed (qwen36 calls
# ``model.get_log_probs(seq)``) that give the next token's log-probs after the
# last position: the mock always offers them, computing what ``forward`` does
# for the last row, unless probing the answer's own model says otherwise.
LAST_POSITION_METHODS = ("get_log_probs", "get_logprobs", "log_probs", "logprobs", "next_token_logits",
                         "next_logits", "get_next_token_logits")


def log_softmax(z: np.ndarray) -> np.ndarray:
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


class MockCore:
    """A causal 'LM' whose next-token log-probs are a pseudo-random function
    of the whole context (salted with the run's secret seed). ``overrides``
    pins chosen contexts to crafted distributions. ``logprobs`` are
    normalised; ``logits`` are the same plus a constant of the context (a
    different one per context, drawn apart from the log-probs), which
    log_softmax removes: a search that sums them without normalising ranks
    beams of different parents by those constants and picks other beams."""

    def __init__(self, vocab: int, salt: int, eos: int, *, eos_mean: float = 5.0, spread: float = 2.0,
                 overrides: dict | None = None, offsets: dict | None = None, support=None):
        self.vocab, self.salt, self.eos = vocab, salt, eos
        # a large vocabulary's log-probs are drawn only on these ids (the rest far below,
        # all equal): a 152k-token model costs a fill, not 152k normal draws per context
        self.support = None if support is None else np.asarray(support, dtype=np.int64)
        self.eos_mean, self.spread = eos_mean, spread
        self.overrides = {tuple(k): v for k, v in (overrides or {}).items()}
        self.offsets = {tuple(k): float(v) for k, v in (offsets or {}).items()}
        self._cache: dict[tuple, np.ndarray] = {}
        self.calls = 0

    def logprobs(self, context) -> np.ndarray:
        key = context_key(context)
        self.calls += 1
        return self._logprobs(key).copy()  # fresh array: an answer may edit what it gets

    def offset(self, context) -> float:
        """The context's constant in ``logits``: a few nats either way."""
        return self._offset(context_key(context))

    def logits(self, context) -> np.ndarray:
        """What a language model returns: unnormalised next-token scores."""
        key = context_key(context)
        self.calls += 1
        scores = self._logprobs(key)  # first: it draws the context's offset with its log-probs
        return scores + self._offset(key)  # a new array: the cached row stays as it was

    # The keyed forms: the mock's model calls them once per position with prefixes of one
    # key (tuple slices, in C), so no context is converted token by token more than once.
    def _logprobs(self, key: tuple) -> np.ndarray:
        """The cached log-probs of a context key (shared: callers copy or add to it)."""
        hit = self._cache.get(key)
        if hit is None:
            if key in self.overrides:
                hit = crafted(self.overrides[key], self.vocab)
            else:
                rng = np.random.default_rng([self.salt, len(key), *[t % (2**32) for t in key]])
                if self.support is None:
                    z = rng.standard_normal(self.vocab) * self.spread
                else:
                    z = np.full(self.vocab, SPARSE_FLOOR)
                    z[self.support] = rng.standard_normal(len(self.support)) * self.spread
                z[self.eos] = rng.normal(self.eos_mean, 2.0)
                hit = log_softmax(z)
                # drawn after the log-probs' own draws, which it leaves as they were
                self.offsets.setdefault(key, float(rng.normal(0.0, OFFSET_SCALE)))
            self._cache[key] = hit
        return hit

    def _offset(self, key: tuple) -> float:
        offset = self.offsets.get(key)
        if offset is None:  # a crafted context: a stream of its own
            rng = np.random.default_rng([self.salt, 1 << 20, len(key), *[t % (2**32) for t in key]])
            offset = self.offsets[key] = float(rng.normal(0.0, OFFSET_SCALE))
        return offset


def context_key(context) -> tuple:
    """A context as the mock's cache key: its tokens as Python ints, exactly
    ``tuple(int(t) for t in context)`` (what that takes, refuses and yields),
    without a Python-level step per token on the hot paths."""
    if isinstance(context, np.ndarray) and context.ndim == 1 and context.dtype.kind in "iu":
        return tuple(context.tolist())  # the same Python ints int() gives, converted in C
    return tuple(map(int, context))


# Log-prob (before normalising) of the ids outside a sparse mock's support: far below
# every drawn one, so a search's top 2K candidates always come from the support
SPARSE_FLOOR = -40.0
# Spread of the per-context constant in MockCore.logits, in nats: far beyond
# the gaps between a step's best candidates (tenths of a nat), so a missing
# normalisation reorders beams of different parents on every run, and small
# enough that exp() of the logits stays finite for any stable softmax.
OFFSET_SCALE = 4.0
# Method names whose own words promise log-probabilities: the mock returns
# normalised log-probs from them unless probing the answer's model says otherwise.
LOG_PROB_METHODS = ("get_log_probs", "get_logprobs", "log_probs", "logprobs")
# |logsumexp| of a probed output row below this: the method returns log-probs
NORMALISED_TOL = 1e-4


def logsumexp(row) -> float:
    row = np.asarray(row, dtype=np.float64)
    m = float(np.max(row))
    return m + float(np.log(np.exp(row - m).sum())) if np.isfinite(m) else m


def crafted(spec: dict[int, float], vocab: int) -> np.ndarray:
    """Log-probs with the given entries; the rest of the mass spread evenly."""
    out = np.empty(vocab)
    rest = 1.0 - sum(np.exp(v) for v in spec.values())
    out[:] = np.log(rest / (vocab - len(spec)))
    for tok, lp in spec.items():
        out[tok] = lp
    return out


@dataclass
class Convention:
    """How the answer's model is called and what it returns, per method."""
    all_positions: dict[str, bool] = field(default_factory=dict)
    default_all_positions: bool = True
    vocab: int | None = None
    detected_from: str = "default (no model class could be probed)"
    attrs: dict[str, Any] = field(default_factory=dict)
    # per probed method: whether the answer's own model returns normalised log-probs from it
    normalised: dict[str, bool] = field(default_factory=dict)
    # per probed method: the rank of the token array it took (1-D or 2-D; the first that worked)
    token_rank: dict[str, int] = field(default_factory=dict)
    # per probed method: every rank the answer's own model took, with scores of the same kind
    token_ranks: dict[str, set[int]] = field(default_factory=dict)
    # per probed method: its signature (bound: no self), where one could be read
    signatures: dict[str, inspect.Signature] = field(default_factory=dict)
    # the answer's own model the convention was read from (a proxy), for its own checks
    instance: Any = None
    # why a model of the answer's own that was built gave no next-token scores when probed
    unusable: str | None = None

    def log_probs_from(self, name: str) -> bool:
        """Whether the mock's method ``name`` returns normalised log-probs
        (else logits): always where the name promises log-probs (a model of
        the answer's own that breaks that promise is own_model_contract's
        finding, not the search's), else as the answer's own model does where
        it was probed; otherwise logits, what the prompts' model returns."""
        return name in LOG_PROB_METHODS or self.normalised.get(name, False)

    def describe(self) -> str:
        per = ", ".join(f"{m}: {'all-position' if a else 'last-position'}"
                        f"{' log-probs' if self.log_probs_from(m) else ' logits'}"
                        + (f" from {' or '.join(f'{r}-D' for r in sorted(self.token_ranks[m]))} tokens"
                           if self.token_ranks.get(m) else "")
                        for m, a in self.all_positions.items())
        return f"{self.detected_from}; {per or 'all-position logits assumed'}"


VOCAB_ATTRS = ("vocab_size", "vocab", "n_vocab")


class MockLM:
    """The suite's model, presented in the answer's calling convention."""

    def __init__(self, core: MockCore, convention: Convention):
        self._core, self._conv = core, convention
        self.vocab_size = core.vocab  # answers often read it; a probed value overrides
        for name, value in convention.attrs.items():
            setattr(self, name, value)
        for name in VOCAB_ATTRS:  # the mock's own vocabulary, whatever the answer's model had
            if name in convention.attrs:
                setattr(self, name, core.vocab)
        for name in set(convention.all_positions) - {"__call__"}:
            setattr(self, name, self._method(name))
        for name in LAST_POSITION_METHODS:
            if name not in convention.all_positions:
                setattr(self, name, self._method(name))

    def _method(self, name: str):
        def call(tokens, *args, **kwargs):
            return self._run(name, tokens, args, kwargs)
        return call

    def __call__(self, tokens, *args, **kwargs):
        return self._run("__call__", tokens, args, kwargs)

    def forward(self, tokens, *args, **kwargs):
        return self._run("forward", tokens, args, kwargs)

    def _run(self, name: str, tokens, args, kwargs):
        default = False if name in LAST_POSITION_METHODS else self._conv.default_all_positions
        all_pos = self._conv.all_positions.get(name, default)
        arr = np.asarray(tokens)
        # The prompt leaves the model's calling convention to the answer ("1-D or 2-D token
        # arrays ... is your choice; keep it consistent"): where its own model was probed,
        # the mock takes what that model takes and nothing else, as the answer's model would.
        ranks = self._conv.token_ranks.get(name)
        if arr.ndim not in (ranks or (1, 2)):
            said = " or ".join(f"{r}-D" for r in sorted(ranks)) if ranks else "1-D or 2-D"
            raise TypeError(f"the model's {name} was called with a {arr.ndim}-D token array; the answer's own "
                            f"model ({self._conv.detected_from}) takes {said} token arrays: the search must "
                            "call the model as its own model is called")
        self._bind(name, tokens, args, kwargs)
        if arr.ndim == 1:
            return self._row(arr, None, all_pos, name)
        mask = _find_mask(arr, args, kwargs)
        lengths = kwargs.get("lengths", kwargs.get("seq_lens"))
        rows = []
        for i, row in enumerate(arr):
            keep = mask[i] if mask is not None else None
            if lengths is not None and keep is None:
                keep = np.arange(len(row)) < int(np.asarray(lengths)[i])
            rows.append(self._row(row, keep, all_pos, name))
        return np.stack(rows)

    def _bind(self, name: str, tokens, args, kwargs) -> None:
        """Refuse arguments the answer's own model, where it was probed, would refuse: a
        search that passes its model a keyword (or extra positional) its model lacks fails
        on its own model, so it must not succeed on the mock."""
        sig = self._conv.signatures.get(name)
        if sig is None:
            return
        try:
            sig.bind(tokens, *args, **kwargs)
        except TypeError as exc:
            given = ", ".join([f"{len(args) + 1} positional"] + [f"{k}=" for k in kwargs])
            raise TypeError(f"the model's {name} was called with ({given}); the answer's own model "
                            f"({self._conv.detected_from}) is {name}{sig}, which refuses that: {exc}") from None

    def _row(self, row: np.ndarray, keep, all_pos: bool, name: str) -> np.ndarray:
        tokens = context_key(row)
        keep = [True] * len(tokens) if keep is None else [bool(k) for k in keep]
        if not all(keep):
            tokens = tuple(t for t, k in zip(tokens, keep) if k)
        core, log_probs = self._core, self._conv.log_probs_from(name)
        if not all_pos:
            return core.logprobs(tokens) if log_probs else core.logits(tokens)
        if not keep:
            raise ValueError("need at least one array to stack")  # no position to score, as np.stack([]) says
        # a row per position: the scores of the kept prefix so far (zeros before the first kept
        # token); each prefix a slice of the one key, the rows gathered and shifted in whole arrays
        prefixes = [tokens[:n] for n in range(1, len(tokens) + 1)]
        if len(prefixes) == len(keep):  # every position kept (the usual call): row i is prefix i's
            out = np.stack([core._logprobs(c) for c in prefixes])
            if not log_probs:
                out += np.array([core._offset(c) for c in prefixes])[:, None]
            core.calls += len(keep)
            return out
        which = np.cumsum(keep) - 1  # per position: its kept prefix, -1 before the first
        scored = which >= 0
        out = np.zeros((len(keep), core.vocab))
        if prefixes:
            out[scored] = np.stack([core._logprobs(c) for c in prefixes])[which[scored]]
            if not log_probs:
                out[scored] += np.array([core._offset(c) for c in prefixes])[which[scored], None]
        core.calls += int(scored.sum())
        return out


def _find_mask(arr, args, kwargs):
    """An attention/padding mask passed alongside 2-D tokens, if any."""
    values = [v for k, v in kwargs.items() if "mask" in k.lower()] + list(args)
    for v in values:
        try:
            m = np.asarray(v)
        except Exception:
            continue
        if m.shape == arr.shape and (m.dtype == bool or set(np.unique(m).tolist()) <= {0, 1}):
            return m.astype(bool)
    return None


class ReferenceView:
    """The reference's convention (1-D tokens -> (T, V)), last row only needed."""

    def __init__(self, core: MockCore):
        self.core = core

    def __call__(self, tokens):
        return self.core.logprobs(tokens)[None, :]


# -- probing the answer's own model -------------------------------------------

def model_classes(binder) -> list:
    """Answer classes that look like an LM (callable or with forward)."""
    found = []
    for d in binder.defs:
        if d.kind != "class" or not set(d.methods) & ({"__call__"} | set(LOGIT_METHODS)):
            continue
        name = d.name.lower()
        if any(w in name for w in ("beam", "search", "hyp", "test", "config")):
            continue
        rank = 0 if any(w in name for w in ("lm", "model", "transformer", "gpt", "net")) else 1
        found.append((rank, d))
    return [d for _, d in sorted(found, key=lambda x: x[0])]


_CTOR_VALUES = {"vocab_size": 1000, "vocab": 1000, "n_vocab": 1000, "v": 1000, "d_model": 64, "dim": 64,
                "d": 64, "hidden": 64, "hidden_size": 64, "n_embd": 64, "n_heads": 4, "num_heads": 4,
                "heads": 4, "seed": 0, "max_len": 256, "max_seq_len": 256, "context_length": 256,
                "n_layers": 1, "num_layers": 1, "d_ff": 256, "ffn_dim": 256}


def instantiate(cls, budget_s: float = 2.0):
    """Build an instance from defaults and well-known parameter names."""
    sig = inspect.signature(cls)
    kwargs = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not p.empty:
            continue
        if p.name.lower() not in _CTOR_VALUES:
            raise TypeError(f"cannot guess constructor argument {p.name!r}")
        kwargs[p.name] = _CTOR_VALUES[p.name.lower()]
    start = time.perf_counter()
    obj = cls(**kwargs)
    if time.perf_counter() - start > budget_s:
        raise TimeoutError("model construction too slow to probe")
    return obj


def probe(instance, methods: list[str], conv: Convention) -> None:
    """Call each logits method with 1-D, then 2-D tokens; read the output rank. The
    first rank that gives next-token scores sets the method's convention; every rank
    that gives scores of the same kind (all positions or the last) is one it takes."""
    for name in methods:
        fn = instance if name == "__call__" else getattr(instance, name, None)
        if fn is None or not callable(fn):
            continue
        for tokens in (np.array([1, 2, 3]), np.array([[1, 2, 3]])):
            try:
                out = np.asarray(fn(tokens, **extra_arguments(fn, tokens)))
            except Exception:
                continue
            if out.ndim == tokens.ndim + 1 and out.shape[-2] == 3:
                all_pos = True
            elif out.ndim == tokens.ndim:
                all_pos = False
            else:
                continue
            if name in conv.token_ranks:  # the other rank: taken when it gives scores of the same kind
                if all_pos == conv.all_positions[name]:
                    conv.token_ranks[name].add(tokens.ndim)
                continue
            conv.all_positions[name] = all_pos
            conv.vocab = conv.vocab or int(out.shape[-1])
            conv.token_rank[name] = tokens.ndim
            conv.token_ranks[name] = {tokens.ndim}
            with contextlib.suppress(TypeError, ValueError):  # a builtin or C callable: no signature to hold
                conv.signatures[name] = inspect.signature(fn)
            with np.errstate(all="ignore"):
                conv.normalised[name] = abs(logsumexp(out.reshape(-1, out.shape[-1])[-1])) < NORMALISED_TOL
    for attr in ("vocab_size", "vocab", "n_vocab", "d_model", "eos_token_id", "eos_id", "max_len", "max_seq_len"):
        value = getattr(instance, attr, None)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            conv.attrs[attr] = int(value)


def extra_arguments(fn, tokens: np.ndarray) -> dict:
    """Values for required parameters besides the tokens: masks and lengths."""
    try:
        params = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        return {}
    extra = {}
    for p in params:
        if p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if "mask" in p.name.lower():
            extra[p.name] = np.ones(tokens.shape, dtype=np.int64)
        elif "len" in p.name.lower():
            extra[p.name] = np.full(tokens.shape[:-1] or (1,), tokens.shape[-1])
        else:
            raise TypeError(f"cannot guess argument {p.name!r}")
    return extra


def called_methods(source: str) -> set[str]:
    """Attribute names called anywhere in the answer's search code (x.meth(...))."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}


def detect_convention(suite, fn_module, vocab_default: int) -> tuple[Convention, list]:
    """Probe a module-level model instance, else an instance of the answer's
    model class. Returns the convention and the module globals holding models
    as (name, object, class name). The answer lives in its own process: its
    module and classes are proxies, and the look-ups run on its side."""
    binder = suite.binder
    conv = Convention()
    classes = {}
    for d in model_classes(binder):
        try:
            classes[d.name] = binder.load(d)
        except Exception:
            continue
    holders = []
    if fn_module is not None and classes:
        holders = [tuple(x) for x in suite.answer_side("instances", (fn_module, list(classes.values())))]
    try:
        used = called_methods(suite.answer_side("source", fn_module)) if fn_module is not None else set()
    except Exception:
        used = set()
    for cls_name, cls in classes.items():
        methods = ["__call__"] + [m for m in LOGIT_METHODS if hasattr(cls, m) and (m in used or m == "forward")]
        instance = next((v for _, v, kind in holders if kind == cls_name), None)
        source = f"module-level instance of {cls_name}"
        if instance is None:
            try:
                instance = instantiate(cls)
                source = f"probed a fresh {cls_name}"
            except Exception:
                continue
        probe(instance, methods, conv)
        if conv.all_positions:
            conv.detected_from, conv.instance, conv.unusable = source, instance, None
            break
        conv.unusable = conv.unusable or (
            f"{source}: none of {', '.join(methods)} returned next-token scores (one row of V per position, or "
            "for the last one) for the tokens [1, 2, 3] or [[1, 2, 3]]")
    if conv.vocab is None or not 2 < conv.vocab <= 100_000:
        conv.vocab = vocab_default
    return conv, holders


# -- normalising results --------------------------------------------------------

@dataclass
class Beam:
    tokens: list[int]
    score: float | None


def _is_int_seq(x) -> bool:
    if isinstance(x, np.ndarray):
        return x.ndim == 1 and np.issubdtype(x.dtype, np.integer)
    return isinstance(x, (list, tuple)) and all(isinstance(t, (int, np.integer)) and not isinstance(t, bool) for t in x)


def _beam(entry) -> Beam:
    if isinstance(entry, dict):
        toks = next((entry[k] for k in ("tokens", "sequence", "new_tokens", "ids", "token_ids", "seq") if k in entry), None)
        score = next((entry[k] for k in ("score", "normalized_score", "logprob", "log_prob") if k in entry), None)
        return Beam(_ints(toks), None if score is None else float(score))
    if hasattr(entry, "tokens") and not isinstance(entry, np.ndarray):
        return Beam(_ints(entry.tokens), _float_or_none(getattr(entry, "score", None)))
    if isinstance(entry, tuple) and len(entry) == 2 and np.ndim(entry[1]) == 0 and not _is_int_seq(entry):
        return Beam(_ints(entry[0]), float(entry[1]))
    return Beam(_ints(entry), None)


def _ints(x) -> list[int]:
    if x is None:
        raise TypeError("a beam without tokens")
    arr = np.asarray(x)
    if arr.ndim != 1 and arr.size:
        raise TypeError(f"a beam's tokens have shape {arr.shape}")
    return [int(t) for t in arr.tolist()]


def _float_or_none(x):
    return None if x is None else float(x)


def normalise(result, batch: int) -> list[list[Beam]]:
    """Any common result layout -> per item, a list of Beams best first."""
    scores = None
    if isinstance(result, dict):
        seq_key = next((k for k in ("sequences", "tokens", "beams", "outputs", "results") if k in result), None)
        if seq_key is None:
            raise TypeError(f"result dict without sequences: keys {sorted(result)}")
        scores = next((result[k] for k in ("scores", "normalized_scores", "logprobs") if k in result), None)
        result = result[seq_key]
    elif isinstance(result, tuple) and len(result) == 2 and _depth(result[0]) == 3 and _depth(result[1]) == 2:
        result, scores = result  # (sequences B x K x L, scores B x K)
    if isinstance(result, np.ndarray):
        result = [[_strip_pad(r) for r in item] for item in (result if result.ndim == 3 else result[None])]
    items = list(result)
    if batch == 1 and items and (_is_int_seq(items[0]) or isinstance(items[0], (dict, tuple))) and len(items) != 1:
        items = [items]
    if len(items) != batch:
        raise TypeError(f"expected results for {batch} batch items, got {len(items)}")
    out = []
    for i, item in enumerate(items):
        beams = [_beam(e) for e in item]
        if scores is not None:
            for b, s in zip(beams, np.asarray(scores, dtype=float)[i].tolist()):
                b.score = float(s)
        out.append(beams)
    return out


def _depth(x) -> int:
    """Nesting depth along first elements (ragged lists are fine)."""
    depth = 0
    while isinstance(x, (list, tuple, np.ndarray)) and len(x) > 0:
        depth, x = depth + 1, x[0]
    return depth


def _strip_pad(row) -> list[int]:
    row = [int(t) for t in row]
    while row and row[-1] < 0:
        row.pop()
    return row


def strip_eos(tokens: list[int], eos: int) -> tuple[list[int], bool]:
    """Tokens up to the first EOS, and whether an EOS was there."""
    if eos in tokens:
        return tokens[: tokens.index(eos)], True
    return list(tokens), False
