"""Hidden checks for dflash_verify (see specs/challenges.md).

Contract: ``build_tree_mask(prompt_len, tree_parents)`` -> (P+N, P+N) mask
(boolean, 0/1 or additive) and ``verify_and_accept(prompt_tokens,
tree_tokens, tree_parents, target_model, temperature=0)`` -> the tokens the
cycle appends (flat, ``(accepted, new_token)`` or a dict). The suite injects
its own target model (mock_target.py) whose greedy continuation g is known.
"""
from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
from benchtui.api import InputMutated, Unbound, V, describe_exception, load_module

MASK_NAMES = ("build_tree_mask", "tree_mask", "build_tree_attention_mask", "make_tree_mask",
              "tree_attention_mask", "build_attention_mask")
VERIFY_NAMES = ("verify_and_accept", "verify_accept", "verify_tree", "tree_verify", "verify_draft_tree",
                "verify_tree_draft", "speculative_verify")
SHAPES = ("chain", "fan", "roots", "random", "branchy")


def run(suite) -> None:
    mock = load_module(Path(__file__).with_name("mock_target.py"), "benchtui_dflash_mock_target")
    ref = suite.reference()
    mask_fn, verify_fn = bind(suite)
    T = suite.threshold
    vocab, buckets = int(T("vocab", 32)), int(T("buckets", 1024))
    max_bad = int(T("max_mismatches", 0))

    def new_target(label):
        return mock.TreeTarget(suite.rng(f"target/{label}"), vocab, buckets)

    if mask_fn is not None:
        with suite.check("mask_random_trees", threshold=max_bad, requires=("tree_mask",)) as c:
            check_masks(suite, c, mask_fn, ref, mock)
    if verify_fn is None:
        return
    call = verifier(suite, verify_fn)

    # The golden rule: whatever a cycle appends is a prefix of g. With sibling
    # tokens unique, the right answer is unique, so it must also equal the reference.
    target = new_target("golden")
    rng = suite.rng("golden")
    results = []
    with suite.check("golden_rule", threshold=max_bad, requires=("greedy_exact", "inputs_unchanged")) as c:
        bad = []
        for k in range(int(T("golden_trees", 300))):
            prompt, tokens, parents = random_case(rng, target, SHAPES[k % len(SHAPES)], T)
            g = target.continuation(prompt, len(tokens) + 1)
            got = call(prompt, tokens, parents, target)
            results.append((prompt, tokens, parents, got))
            if not got or got != g[:len(got)]:
                bad.append({"prompt": prompt, "tree_tokens": tokens, "tree_parents": parents, "appended": got,
                            "greedy": g})
        c.value = len(bad)
        c.details["trees"] = len(results)
        if bad:
            c.details["first_violation"] = bad[0]
        if len(bad) > max_bad:
            c.fail(f"{len(bad)} of {len(results)} cycles appended something that is not a prefix of the "
                   f"target's greedy continuation (first: {short(bad[0])})")

    golden_fixed_trees(suite, call, new_target)

    with suite.check("random_trees_match_reference", threshold=max_bad, requires=("longest_path_and_bonus",)) as c:
        c.expect(bool(results), "no tree was verified (see golden_rule)")
        diff = []
        for prompt, tokens, parents, got in results:
            want = ref.verify_and_accept(prompt, tokens, parents, target, 0)
            if got != want:
                diff.append({"tree_tokens": tokens, "tree_parents": parents, "appended": got, "expected": want})
        c.value = len(diff)
        if diff:
            c.details["first_difference"] = diff[0]
        if len(diff) > max_bad:
            c.fail(f"{len(diff)} of {len(results)} trees differ from the reference (first: {short(diff[0])})")

    tokens_per_cycle(suite, results, ref, target)
    crafted_checks(suite, call, new_target)

    with suite.check("three_cycles", requires=("greedy_exact", "multi_cycle")) as c:
        target = new_target("cycles")
        rng = suite.rng("cycles")
        prompt = [int(t) for t in rng.integers(0, vocab, size=4)]
        n_cycles = int(T("cycles", 3))
        context, appended = list(prompt), []
        for k in range(n_cycles):
            tokens, parents = cycle_tree(rng, target, context, k)
            got = call(context, tokens, parents, target)
            appended += got
            context += got
        g = target.continuation(prompt, len(appended))
        c.value, c.threshold = appended, g
        c.expect(appended == g, f"{n_cycles} cycles appended {appended}, the target's greedy continuation is {g}")

    large_vocabulary(suite, call, mock)
    own_target_contract(suite, mask_fn, mock)

    nodes = int(T("speed_nodes", 16))
    target = new_target("speed")

    def make(trial):
        r = suite.rng(f"speed/{trial}")
        return random_case(r, target, "branchy", T, n_nodes=nodes)

    temp = accepts_temperature(verify_fn)
    suite.time("speed", lambda a: verify_fn(*a, target, *temp),
               lambda a: ref.verify_and_accept(*a, target, 0), make)


def tokens_per_cycle(suite, results, ref, target) -> None:
    """What a prompt leaves open is measured, never failed: tokens appended per
    cycle against the most possible for that tree (its longest accepted path
    plus the bonus token, the reference's output), on the golden-rule trees.
    Stopping at the first rejection is still exact greedy decoding; it only
    accepts fewer tokens per cycle."""
    if not results:
        return
    appended = possible = short_trees = 0
    first_short = None
    for prompt, tokens, parents, got in results:
        best = len(ref.verify_and_accept(prompt, tokens, parents, target, 0))
        appended += len(got)
        possible += best
        if len(got) < best:
            short_trees += 1
            if first_short is None:
                first_short = {"tree_tokens": tokens, "tree_parents": parents, "appended": got, "most_possible": best}
    ratio = appended / possible if possible else 0.0
    suite.info("tokens_per_cycle", value=round(ratio, 4),
               message=f"{appended / len(results):.2f} tokens appended per cycle, {possible / len(results):.2f} possible "
                       f"({ratio:.0%}); {short_trees} of {len(results)} trees got fewer than the most possible",
               details={"trees": len(results), "appended": appended, "most_possible": possible,
                        "trees_below_most": short_trees, "first_below_most": first_short})


def bind(suite):
    """(mask_fn, verify_fn); a missing one is recorded as unbound and the other still runs."""
    adapter = suite.adapter()
    if adapter is not None:
        return getattr(adapter, "build_tree_mask", None), adapter.verify_and_accept
    found = {}
    for label, names in (("build_tree_mask", MASK_NAMES), ("verify_and_accept", VERIFY_NAMES)):
        found[label] = suite.find(*names, kind="function")
        if found[label] is None:
            exc = suite.unbound(list(names))
            suite.record(f"bind_{label}", V.UNBOUND, message=str(exc),
                         details={"looked_for": exc.looked_for, "searched": exc.searched})
    if found["build_tree_mask"] is None and found["verify_and_accept"] is None:
        raise Unbound(list(MASK_NAMES + VERIFY_NAMES), suite.binder.searched())
    return found["build_tree_mask"], found["verify_and_accept"]


def accepts_temperature(fn) -> tuple:
    """(0,) when the answer takes a fifth (temperature) argument: always pass it explicitly."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return (0,)
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return (0,)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (0,) if len(positional) >= 5 else ()


def verifier(suite, fn):
    """call(prompt, tokens, parents, target) -> appended tokens as a flat list.
    Lists are checked for in-place changes here: suite.call hashes arrays only."""
    temp = accepts_temperature(fn)

    def call(prompt, tokens, parents, target):
        def guarded(p, t, par):
            before = (list(p), list(t), list(par))
            out = fn(p, t, par, target, *temp)
            if (list(p), list(t), list(par)) != before:
                raise InputMutated("the answer modified prompt_tokens, tree_tokens or tree_parents in place")
            return out

        return appended_tokens(suite.call(guarded, list(prompt), list(tokens), list(parents)))

    return call


def appended_tokens(result) -> list[int]:
    """Normalise: flat list/array, (accepted, new_token), or a dict."""
    if isinstance(result, dict):
        if "tokens" in result:
            return ints(result["tokens"])
        accepted = next((result[k] for k in ("accepted", "accepted_tokens") if k in result), [])
        bonus = next((result[k] for k in ("new_token", "bonus", "bonus_token", "next_token") if k in result), None)
        return ints(accepted) + ([int(bonus)] if bonus is not None else [])
    if isinstance(result, tuple) and len(result) == 2 and not np.isscalar(result[0]):
        accepted, bonus = result
        return ints(accepted) + ([] if bonus is None else ints(bonus) if not np.isscalar(bonus) else [int(bonus)])
    return ints(result)


def ints(x) -> list[int]:
    return [int(t) for t in np.asarray(x).reshape(-1).tolist()]


def short(case: dict) -> str:
    keys = ("tree_tokens", "tree_parents", "appended", "expected", "greedy")
    return ", ".join(f"{k}={case[k]}" for k in keys if k in case)


# -- trees ------------------------------------------------------------------------

def random_parents(rng, n: int, shape: str) -> list[int]:
    parents = []
    for i in range(n):
        if i == 0:
            parents.append(-1)
        elif shape == "chain":
            parents.append(i - 1)
        elif shape == "fan":  # wide: children of the virtual root or of node 0
            parents.append(int(rng.choice([-1, 0])))
        elif shape == "roots":
            parents.append(-1 if rng.random() < 0.5 else int(rng.integers(0, i)))
        elif shape == "branchy":  # mostly deep, some branching
            parents.append(i - 1 if rng.random() < 0.6 else int(rng.integers(-1, i)))
        else:
            parents.append(int(rng.integers(-1, i)))
    return parents


def random_case(rng, target, shape: str, T, prompt=None, n_nodes=None):
    """(prompt, tree_tokens, tree_parents): each node carries the target's
    greedy token for its path with probability p_correct, else another
    token; sibling tokens are unique."""
    vocab = target.vocab
    if prompt is None:
        prompt = [int(t) for t in rng.integers(0, vocab, size=int(rng.integers(1, int(T("max_prompt", 8)) + 1)))]
    n = n_nodes or int(rng.integers(1, int(T("max_nodes", 16)) + 1))
    parents = random_parents(rng, n, shape)
    p_correct = float(T("p_correct", 0.7))
    tokens: list[int] = []
    paths: dict[int, list[int]] = {-1: []}
    used: dict[int, set] = {}
    for i, parent in enumerate(parents):
        taken = used.setdefault(parent, set())
        right = target.next_token(list(prompt) + paths[parent])
        tok = right if rng.random() < p_correct and right not in taken else None
        while tok is None or tok in taken:
            tok = int(rng.integers(0, vocab))
        taken.add(tok)
        tokens.append(tok)
        paths[i] = paths[parent] + [tok]
    return list(prompt), tokens, parents


def check_masks(suite, c, mask_fn, ref, mock) -> None:
    rng = suite.rng("masks")
    T = suite.threshold
    bad = []
    trees = int(T("mask_trees", 200))
    for k in range(trees):
        P = int(rng.integers(1, int(T("max_prompt", 8)) + 1))
        parents = random_parents(rng, int(rng.integers(1, int(T("max_nodes", 16)) + 1)), SHAPES[k % len(SHAPES)])
        want = ref.build_tree_mask(P, parents)
        parents_in = list(parents)
        got = suite.call(mask_fn, P, parents_in)
        if parents_in != parents:
            raise InputMutated("the answer modified tree_parents in place")
        try:
            allowed = mock.allowed_matrix(got, P + len(parents))
        except ValueError as exc:
            bad.append({"prompt_len": P, "tree_parents": parents, "problem": str(exc)})
            continue
        if not np.array_equal(allowed, want):
            r, col = map(int, np.argwhere(allowed != want)[0])
            what = "may attend" if want[r, col] else "must not attend"
            hint = " (the whole mask is inverted)" if np.array_equal(allowed, ~want) else ""
            bad.append({"prompt_len": P, "tree_parents": parents,
                        "problem": f"row {r} {what} to column {col}{hint}"})
    c.value = len(bad)
    if len(bad) > c.threshold:
        c.details["first_mismatch"] = bad[0]
        first = bad[0]
        c.fail(f"{len(bad)} of {trees} masks differ from the reference; first: prompt_len={first['prompt_len']} "
               f"parents={first['tree_parents']}: {first['problem']}")


def cycle_tree(rng, target, context, k):
    """Cycle k's tree, by shape in turn: a right chain; a chain whose second
    node has a wrong child before the right one; a wrong root before the right
    chain. Built from the context's greedy continuation, so every cycle appends
    at least one token under every reading of the prompts and whether an
    answer threads the cycles right does not depend on the seed."""
    g = target.continuation(context, 3)
    x = next(t for t in (int(v) for v in rng.permutation(target.vocab)) if t not in g)
    shapes = (([g[0], g[1], g[2]], [-1, 0, 1]),
              ([g[0], g[1], x, g[2]], [-1, 0, 1, 1]),
              ([x, g[0], g[1]], [-1, -1, 1]))
    tokens, parents = shapes[k % len(shapes)]
    return list(tokens), list(parents)


def golden_fixed_trees(suite, call, new_target) -> None:
    """The golden rule on trees built so that a verifier reading a node's
    prediction from the wrong position always breaks it, whatever the seed:
    a root after an accepted root (read at the previous node's position) and
    a right path starting at the second root (read at a position chosen by
    depth). The prompt is redrawn until no coincidence of the target's tokens
    could hide the fault; every reading of the prompts appends a prefix of g."""
    target = new_target("golden_fixed")
    rng = suite.rng("golden_fixed")
    for _ in range(1000):
        prompt = [int(t) for t in rng.integers(0, target.vocab, size=4)]
        g = target.continuation(prompt, 4)
        x = (g[0] + 1 + int(rng.integers(0, target.vocab - 1))) % target.vocab  # any token but g0
        after_g1 = target.next_token(prompt + [g[1]])  # what follows g1 read as a first token
        after_x = target.next_token(prompt + [x])
        if after_g1 != g[2] and after_x not in (g[0], g[1]) and len(set(g[:3])) == 3 and x not in g[:3]:
            break
    cases = [
        ([g[0], g[1], after_g1], [-1, -1, 1], "a second root after an accepted root, with a child"),
        ([x, g[0], g[1]], [-1, -1, 1], "the right path starting at the second root"),
        ([g[0], x, g[1], g[2]], [-1, -1, 0, 2], "a wrong root between an accepted root and its child"),
    ]
    with suite.check("golden_rule_fixed_trees", threshold=0, requires=("greedy_exact",)) as c:
        bad = []
        for tokens, parents, what in cases:
            got = call(prompt, tokens, parents, target)
            c.details.setdefault("cases", []).append({"tree_tokens": tokens, "tree_parents": parents,
                                                      "appended": got, "greedy": g})
            if not got or got != g[:len(got)]:
                bad.append(f"{what}: appended {got}, the target's greedy continuation is {g} "
                           f"(prompt={prompt}, tree_tokens={tokens}, tree_parents={parents})")
        c.value = len(bad)
        if bad:
            c.fail(f"{len(bad)} of {len(cases)} fixed trees broke the golden rule; " + "; ".join(bad))


def crafted_checks(suite, call, new_target) -> None:
    """The hand-built trees of the spec, each with its exact expected output."""
    target = new_target("crafted")
    rng = suite.rng("crafted")
    prompt = [int(t) for t in rng.integers(0, target.vocab, size=5)]
    g = target.continuation(prompt, 8)

    def other(*avoid):
        """A token different from all of ``avoid``."""
        tok = int(rng.integers(0, target.vocab))
        while tok in avoid:
            tok = int(rng.integers(0, target.vocab))
        return tok

    def expect(c, tokens, parents, want, what):
        got = call(prompt, tokens, parents, target)
        c.details.setdefault("cases", []).append({"tree_tokens": tokens, "tree_parents": parents,
                                                  "appended": got, "expected": want})
        c.value, c.threshold = got, want
        c.expect(got == want, f"{what}: appended {got}, expected {want} "
                              f"(tree_tokens={tokens}, tree_parents={parents})")

    with suite.check("all_correct_chain", requires=("longest_path_and_bonus",)) as c:
        expect(c, g[:4], [-1, 0, 1, 2], g[:5], "a fully correct chain must be accepted plus the bonus token")

    with suite.check("all_correct_chain_accepted", requires=("greedy_exact",)) as c:
        # Universal: every prompt accepts a fully correct chain whole; whether a
        # bonus token follows is left open by some prompts (tokens_per_cycle).
        got = call(prompt, g[:4], [-1, 0, 1, 2], target)
        c.details["cases"] = [{"tree_tokens": g[:4], "tree_parents": [-1, 0, 1, 2], "appended": got}]
        c.value, c.threshold = got, g[:4]
        c.expect(got[:4] == g[:4] and got == g[:len(got)],
                 f"a fully correct chain must be accepted whole: appended {got}, the chain is {g[:4]}")

    with suite.check("wrong_root", requires=("greedy_exact",)) as c:
        w = other(g[0])
        expect(c, [w, g[1]], [-1, 0], g[:1], "a wrong single root appends only the target's own token")

    with suite.check("rejected_node_children_skipped", requires=("subtree_invalidation",)) as c:
        w = other(g[0])
        after_w = target.next_token(prompt + [w])  # matches its parent's prediction, but its parent is rejected
        second = g[1] if g[1] != after_w else other(after_w)
        expect(c, [w, after_w, second], [-1, 0, 0], g[:1], "children of a rejected root must be skipped")
        x = other(g[1])
        after_x = target.next_token(prompt + [g[0], x])
        expect(c, [g[0], x, after_x], [-1, 0, 1], g[:2], "children of a rejected inner node must be skipped")

    with suite.check("wrong_sibling_no_replacement", requires=("longest_path_and_bonus",)) as c:
        x = other(g[1])
        expect(c, [g[0], x, g[1], g[2]], [-1, 0, 0, 2], g[:4],
               "a wrong sibling before the right one must not end the cycle with a replacement")
        expect(c, [g[0], g[1], x, g[2]], [-1, 0, 0, 1], g[:4],
               "a wrong sibling after the right one must not end the cycle with a replacement")

    with suite.check("second_root_path", requires=("longest_path_and_bonus",)) as c:
        x = other(g[0])
        expect(c, [x, g[0], g[1], g[1]], [-1, -1, 0, 1], g[:3], "the right path may start at the second root")

    smallest_inputs(suite, call, target, rng)


def smallest_inputs(suite, call, target, rng) -> None:
    """The smallest trees the contract allows, on a prompt of one token: one
    wrong node, two roots both wrong (everything rejected), one right node.
    Each appends a prefix of g and at least its first token; the wrong ones
    exactly g[0]. Where the prompt asks for the bonus token, the right node
    appends itself and the bonus, g[:2] (a prompt that leaves the bonus open
    allows g[:1]). An empty tree is left open by the published prompt: an
    answer may refuse it (a reading); one that takes it follows the rule for
    every cycle, the accepted path (none) and the bonus token, g[:1], on the
    one-token prompt and on a five-token one (whose first row predicts another
    token than its last)."""
    prompt = [int(rng.integers(0, target.vocab))]
    g = target.continuation(prompt, 3)
    wrong = [t for t in range(target.vocab) if t != g[0]]
    w1, w2 = (int(t) for t in rng.choice(wrong, size=2, replace=False))
    cases = [("one wrong node", [w1], [-1], g[:1]), ("two roots, both wrong", [w1, w2], [-1, -1], g[:1]),
             ("one right node", [g[0]], [-1], None)]
    right_node = None
    with suite.check("smallest_inputs", threshold="a prefix of g; g[0] alone after a rejection",
                     requires=("greedy_exact",)) as c:
        for label, tokens, parents, want in cases:
            got = call(prompt, tokens, parents, target)
            c.details.setdefault("cases", []).append({"case": label, "prompt": prompt, "tree_tokens": tokens,
                                                      "tree_parents": parents, "appended": got, "greedy": g})
            if want is None:
                right_node = got
            ok = got == want if want is not None else got[:1] == g[:1] and got == g[:len(got)]
            c.expect(ok, f"{label} on a one-token prompt: appended {got}, expected "
                         f"{want if want is not None else f'{g[:1]} or {g[:2]}'} (tree_tokens={tokens}, "
                         f"tree_parents={parents}, greedy continuation {g})")
        c.value = f"{len(cases)} cases"
        c.message = "one-token prompt: " + "; ".join(label for label, *_ in cases)
    with suite.check("smallest_inputs_bonus", threshold=f"one right node: {g[:2]}",
                     requires=("longest_path_and_bonus",)) as c:
        c.value = right_node
        c.expect(right_node == g[:2], f"one right node on a one-token prompt appended {right_node}, expected {g[:2]}: "
                                      "the node, accepted, then the bonus token after it")
    # an empty tree on a one-token prompt and on a longer one: the bonus token is read
    # from the last prompt row, which only the longer prompt tells from the first
    long_prompt = [int(t) for t in rng.integers(0, target.vocab, size=5)]
    g_long = target.continuation(long_prompt, 1)
    for _ in range(100):  # a prompt whose first row predicts another token than its last
        if target.next_token(long_prompt[:1]) != g_long[0]:
            break
        long_prompt = [int(t) for t in rng.integers(0, target.vocab, size=5)]
        g_long = target.continuation(long_prompt, 1)
    got_by_prompt = []
    for p, want in ((prompt, g[:1]), (long_prompt, g_long)):
        refused = len(target.refusals)
        try:
            got = call(p, [], [], target)
        except Exception as exc:
            if len(target.refusals) > refused:  # not the answer refusing the tree: the target refusing its call
                got = f"nothing: it called the target as the prompt's target cannot be called ({target.refusals[-1]})"
            elif getattr(exc, "remote_where", None) is not None:  # the answer refuses an input its prompt leaves open
                reading = f"raises {getattr(exc, 'remote_type', type(exc).__name__)}"
                suite.reading("empty_tree", reading,
                              message=f"an empty tree (left open by the published prompt): {reading}")
                return
            got = f"nothing that reads as tokens ({describe_exception(exc)})"
        got_by_prompt.append((p, got, want))
    with suite.check("empty_tree", threshold=f"{g[:1]} and {g_long}, or a refusal",
                     requires=("longest_path_and_bonus",)) as c:
        c.value = [got if isinstance(got, list) else str(got) for _, got, _ in got_by_prompt]
        for p, got, want in got_by_prompt:
            first_row = target.next_token(p[:1])
            hint = (f" (that is the prediction of the first prompt row, {first_row}: the bonus token must be read "
                    "from the last prompt row)" if len(p) > 1 and got == [first_row] else "")
            c.expect(got == want, f"an empty tree on a {len(p)}-token prompt {p}: appended {got}; a cycle appends "
                                  f"the accepted path (none here) and the bonus token, {want}{hint} (refusing an "
                                  "empty tree is allowed)")


def large_vocabulary(suite, call, mock) -> None:
    """The golden rule with a target of a real tokenizer's size (Qwen's 151,936
    tokens) whose greedy tokens are ids of 2^15, 2^16 and beyond, the prompts
    and wrong drafts drawn over the whole vocabulary: a verifier that keeps
    token ids in 16 bits (or sizes anything by a small vocabulary) appends
    something that is not a prefix of the target's greedy continuation. The
    target's logits are drawn on a support of 32 such ids, the rest far below."""
    T = suite.threshold
    vocab = int(T("large_vocab", 151936))
    rng = suite.rng("large-vocab")
    low, high = 1 << 15, 1 << 16
    support = np.unique(np.concatenate([rng.integers(low, high, size=8), rng.integers(high, vocab, size=24)]))
    target = mock.TreeTarget(rng, vocab, int(T("buckets", 1024)), support=support)
    trees = int(T("large_vocab_trees", 6))
    with suite.check("large_vocabulary", threshold=f"a prefix of g with {vocab} tokens", requires=("greedy_exact",)) as c:
        bad, drawn = [], {int(t) for t in support}
        for k in range(trees):
            prompt = [int(t) for t in rng.integers(0, vocab, size=int(rng.integers(1, 5)))]
            prompt, tokens, parents = random_case(rng, target, SHAPES[k % len(SHAPES)], T, prompt=prompt, n_nodes=6)
            g = target.continuation(prompt, len(tokens) + 1)
            got = call(prompt, tokens, parents, target)
            drawn |= set(prompt) | set(tokens)
            if not got or got != g[:len(got)]:
                bad.append({"prompt": prompt, "tree_tokens": tokens, "tree_parents": parents, "appended": got,
                            "greedy": g})
        c.value = len(bad)
        c.details["trees"] = trees
        if bad:
            c.details["first_violation"] = bad[0]
            stray = sorted({t for d in bad for t in d["appended"]} - drawn)
            wrapped = [t for t in stray if any(t % high == d % high or t % low == d % low for d in drawn)]
            why = (f"ids {wrapped[:4]} are the target's ids cut to 16 bits: token ids stored in 16 bits" if wrapped else
                   f"ids {stray[:4]} are neither the target's nor the tree's" if stray else
                   "every id appended is the target's or the tree's: either ids of 2^15 and more lose their value "
                   "before the target sees them (16-bit token ids), or the cycle breaks the golden rule on any "
                   "vocabulary (see golden_rule)")
            c.fail(f"{len(bad)} of {trees} cycles over a {vocab}-token vocabulary (ids above {low - 1}) appended "
                   f"something that is not a prefix of the target's greedy continuation (first: {short(bad[0])}); {why}")


# The answer's own target model: by the names answers give it, then any class
# with forward() whose name says it is a model (never a draft model or a test)
TARGET_NAMES = ("MinimalLM", "TargetModel", "TinyLM", "MinimalTransformer", "TransformerLM", "TargetLM",
                "TinyTransformer", "ToyLM")


def find_target_class(suite):
    cls = suite.find(*TARGET_NAMES, kind="class", methods=("forward",))
    if cls is not None:
        return cls
    for d in suite.binder.defs:
        name = d.name.lower()
        if (d.kind == "class" and "forward" in d.methods and any(w in name for w in ("lm", "model", "transformer"))
                and not any(w in name for w in ("draft", "test", "mock"))):
            return suite.binder.load(d)
    return None


def own_target_contract(suite, mask_fn, mock) -> None:
    """The target model the published prompt asks the answer to write (the
    suite swaps in its own everywhere else), held to what that prompt says it
    returns: one row of finite logits per position of prompt + tree, the same
    for the same input, with the tree mask applied: a row never changes when
    a token it may not attend to changes (a sibling's, or any tree token for a
    prompt row). It runs on a one-token-per-branch tree, with the answer's own
    mask where it builds one (in the format its forward takes)."""
    cls = find_target_class(suite)
    if cls is None:
        # not a skip (a missing backend): nothing of the answer's own to hold to the contract
        suite.not_exercised("own_target_contract", "no target model class of the answer's own found (looked for "
                            f"{', '.join(TARGET_NAMES)} or a *LM / *Model class with forward)", ("own_target",))
        return
    with suite.check("own_target_contract", threshold="(T, V) finite logits, deterministic, masked tokens unseen",
                     requires=("own_target",)) as c, suite.contract_only():
        model = cls()
        name = getattr(cls, "__name__", "its target class")
        prompt, parents = [3, 1, 4], [-1, -1, 0, 1]
        P, T = len(prompt), len(prompt) + len(parents)
        built = suite.call(mask_fn, P, list(parents)) if mask_fn is not None else None
        allowed = mock.allowed_matrix(built, T) if built is not None else None
        if allowed is None or not np.array_equal(allowed, suite.reference().build_tree_mask(P, parents).astype(bool)):
            allowed = suite.reference().build_tree_mask(P, parents).astype(bool)
            built = allowed
        formats = [np.asarray(built), np.where(allowed, 0.0, -np.inf), allowed]

        def logits(tokens):
            last = None
            for mask in formats:
                try:
                    out = np.asarray(suite.call(model.forward, np.array(tokens), mask), dtype=np.float64)
                except Exception as exc:  # another mask format may be the one its forward takes
                    last = exc
                    continue
                formats[:] = [mask]
                return out[0] if out.ndim == 3 and out.shape[0] == 1 else out
            raise last

        tokens = prompt + [5, 9, 2, 6]
        out = logits(tokens)
        what = f"{name}().forward on {T} tokens (prompt {P}, tree parents {parents})"
        c.expect(out.ndim == 2 and out.shape[0] == T, f"{what} returns shape {out.shape}, expected ({T}, V)")
        c.expect(bool(np.all(np.isfinite(out))), f"{what} returns non-finite logits")
        again = logits(tokens)
        c.expect(np.array_equal(again, out), f"{what} is not deterministic: two calls on the same input differ by "
                 f"{float(np.max(np.abs(again - out))):.3g}")
        scale = max(float(np.max(np.abs(out))), 1e-300)
        worst = 0.0
        # node 0's token changes: node 1 (its sibling) and node 3 (node 1's child) may not see it,
        # nor may any prompt row; node 2's token changes: only node 2 sees itself
        for changed, unseen in ((P + 0, [0, 1, 2, P + 1, P + 3]), (P + 2, [0, 1, 2, P + 0, P + 1, P + 3])):
            edited = list(tokens)
            edited[changed] = 7
            diff = np.abs(logits(edited) - out) / scale
            for row in unseen:
                worst = max(worst, float(diff[row].max()))
                c.expect(diff[row].max() <= 1e-9, f"{what}: row {row} changes (by {diff[row].max():.3g} of the "
                         f"largest logit) when the token at position {changed}, which the tree mask hides from it, "
                         "changes: the mask is not applied")
        c.value = worst
        c.message = f"{what}: shape {out.shape}, deterministic, masked tokens unseen"
