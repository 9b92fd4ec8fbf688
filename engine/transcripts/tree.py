"""Sessions stored as a tree (id / parent id): active path and side branches.

Parsers turn each line into a Node holding that line's entries; this module
links the nodes, walks from the active leaf to the root, and collects the
other leaves as branches. Robust to what real files contain: raw lines
without ids, missing parents, duplicate ids and even cycles.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from benchtui.transcripts.model import W_ORPHAN, Branch, Entry, TranscriptWarning


@dataclass
class Node:
    id: str | None
    parent_id: str | None
    line: int
    entries: list[Entry] = field(default_factory=list)


def _path_to_root(node: Node, parent: dict[int, Node | None]) -> list[Node]:
    path, seen = [], set()
    cur: Node | None = node
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        path.append(cur)
        cur = parent.get(id(cur))
    path.reverse()
    return path


def build(nodes: list[Node], warnings: list[TranscriptWarning], leaf: Node | None = None
          ) -> tuple[list[Entry], list[Branch]]:
    """(active path entries, branches with the active one first). ``leaf`` defaults to the last node."""
    linked: list[Node] = []
    for node in nodes:
        if node.id is None and linked:
            linked[-1].entries.extend(node.entries)  # an id-less line rides with its predecessor
        else:
            linked.append(node)
    if not linked:
        return [], []
    by_id: dict[str, Node] = {}
    for node in linked:
        if node.id is not None and node.id not in by_id:
            by_id[node.id] = node
    parent: dict[int, Node | None] = {}
    has_child: set[int] = set()
    for i, node in enumerate(linked):
        p: Node | None = None
        if node.parent_id is not None:
            p = by_id.get(node.parent_id)
            if p is None or p is node:
                warnings.append(TranscriptWarning(
                    node.line, W_ORPHAN,
                    f"parent {node.parent_id!r} not found; attached to the previous entry"))
                p = linked[i - 1] if i > 0 else None
        parent[id(node)] = p
        if p is not None:
            has_child.add(id(p))

    if leaf is None or id(leaf) not in parent:
        leaf = linked[-1]
    active_nodes = _path_to_root(leaf, parent)
    active_ids = {id(n) for n in active_nodes}
    active = [e for n in active_nodes for e in n.entries]
    for i, e in enumerate(active):
        e.index = i
    branches = [Branch(leaf_id=leaf.id, active=True, fork_id=None, entries=active)]

    for node in linked:
        if id(node) in has_child or id(node) in active_ids:
            continue
        path = _path_to_root(node, parent)
        shared = 0
        while shared < len(path) and id(path[shared]) in active_ids:
            shared += 1
        position = sum(len(n.entries) for n in path[:shared])
        own: list[Entry] = []
        for n in path[shared:]:
            for e in n.entries:
                e.index = position
                position += 1
                own.append(e)
        fork = path[shared - 1].id if shared else None
        branches.append(Branch(leaf_id=node.id, active=False, fork_id=fork, entries=own))
    return active, branches
