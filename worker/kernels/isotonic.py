"""Exact isotonic regression on a partial order, by recursive minimum cuts.

Solves ``min_x 1/2 ||x - y||^2  s.t.  x_i <= x_j`` for every edge ``(i, j)`` of a directed
graph (a partial order, or a preorder if the graph has cycles): the projection onto the
ordering constraints of :mod:`worker.projection` when they are not disjoint chains.

The partitioning theorem (Hochbaum & Queyranne, *Minimum cut algorithms for convex closure
problems*, Operations Research 51(5), 2003; for least squares also Spouge, Wan & Wilbur,
JOTA 117(3), 2003): for a block B whose restricted problem is solved next, let
``mu = mean(y_B)`` and S a maximum-weight *closure* of B (closed under successors inside B)
for the weights ``y_v - mu``. The optimum on B has ``x_v > mu`` exactly on the minimal such
S, no edge inside B leaves S, and B splits into the independent problems on S and B \\ S.
Splitting from B = all vertices until every maximum closure is empty gives the exact solution,
constant and equal to ``mean(y_B)`` on every final block.

A maximum closure is the source side of a minimum cut in the network source -> v with capacity
``y_v - mu`` (where positive), v -> sink with capacity ``mu - y_v`` (where positive) and an
uncapacitated arc along every edge. On a final block the maximum flow saturates every source
arc, and its flows on the edges are KKT multipliers ``lambda >= 0`` with
``y_v - x_v = sum_out lambda - sum_in lambda``: the certificate the caller checks.

Maximum flows use Dinic's algorithm (blocking flows on BFS level graphs). The residual network
is a set of preallocated arrays with each node's arcs stored together (compressed rows), so
the breadth-first and depth-first passes read memory in order rather than chase a linked
list (measured: docs/guarantees.md#the-exact-projection):

* ``start`` (n + 3,): node u's arcs are ``start[u]:start[u + 1]``; ``target``: the arc's head;
  ``cap``: residual capacity; ``reverse``: the index of the arc's reverse; ``edge``: the input
  edge of a forward edge arc, -1 for source/sink arcs and for reverse arcs.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def isotonic_on_order(y, tails, heads):
    """Project ``y`` onto ``{x : x[tails[e]] <= x[heads[e]] for every e}``.

    Parameters
    ----------
    y : ndarray of float64, shape (n,)
        Point to project.
    tails, heads : ndarray of int64, shape (k,)
        Edge e says ``x[tails[e]] <= x[heads[e]]``; vertices in ``0..n-1``.

    Returns
    -------
    x : ndarray of float64, shape (n,)
        The projection: on each final block, the block's mean of ``y``.
    multipliers : ndarray of float64, shape (k,)
        Each edge's flow in its block's last maximum flow (zero between blocks): the KKT
        multipliers of the constraints ``x_tail - x_head <= 0``.
    """
    n = y.shape[0]
    out_start, out_edges = _out_adjacency(tails, n)
    x = np.empty(n)
    multipliers = np.zeros(tails.shape[0])
    solve_blocks(y, heads, out_start, out_edges, _flow_network(n, tails.shape[0]),
                 np.arange(n), np.array([0]), np.array([n]), x, multipliers)
    return x, multipliers


#: Rounds of merging before :func:`isotonic_from` solves the whole order at once.
MERGE_ROUNDS = 32


@njit(cache=True)
def isotonic_from(y, tails, heads, previous):
    """:func:`isotonic_on_order`'s ``x`` for ``y``, started from the level sets of a point
    ``previous`` near the answer (the projection of a nearby point, e.g. the last step's).

    The vertices are grouped by their value in ``previous`` (equal values, one group) and
    the regression is solved within each group alone, edges between groups ignored: a
    relaxation, so when its solution also holds every edge between groups it is the
    solution. Otherwise the groups joined by violated edges are merged (each connected set
    of them one group) and solved again, until none is violated (after
    :data:`MERGE_ROUNDS` rounds, every group is merged: the whole order). Within a group the
    minimum cuts run on that group only, so a step that moves the point little costs cuts on
    its level sets instead of about log2(levels) cuts over every vertex. Merging only what a
    violation joins keeps the groups small, where merging every group whose value in
    ``previous`` lies between a violated edge's ends made them large (measured:
    docs/guarantees.md#the-primal-dual-method-the-answer-and-the-bound-together).

    Parameters
    ----------
    y : ndarray of float64, shape (n,)
        Point to project.
    tails, heads : ndarray of int64, shape (k,)
        Edge e says ``x[tails[e]] <= x[heads[e]]``.
    previous : ndarray of float64, shape (n,)
        The point whose level sets seed the groups.

    Returns
    -------
    ndarray of float64, shape (n,)
        The projection, as :func:`isotonic_on_order` gives it.
    """
    n, k = y.shape[0], tails.shape[0]
    out_start, out_edges = _out_adjacency(tails, n)
    network = _flow_network(n, k)
    order = np.argsort(previous, kind="mergesort")
    bounds = [0]
    for i in range(1, n):
        if previous[order[i]] != previous[order[i - 1]]:
            bounds.append(i)
    bounds.append(n)
    groups = np.array(bounds)
    x, scratch = np.empty(n), np.zeros(k)
    solve_blocks(y, heads, out_start, out_edges, network, order, groups[:-1], groups[1:], x,
                 scratch)
    group_of = np.empty(n, dtype=np.int64)
    for rounds in range(MERGE_ROUNDS + 1):
        for g in range(groups.shape[0] - 1):
            group_of[order[groups[g]:groups[g + 1]]] = g
        parent = np.arange(groups.shape[0] - 1)    # a forest of groups, joined by violations
        violated = False
        for e in range(k):
            if x[tails[e]] > x[heads[e]]:
                a, b = _root(parent, group_of[tails[e]]), _root(parent, group_of[heads[e]])
                parent[max(a, b)] = min(a, b)
                violated = True
        if not violated:
            return x
        if rounds == MERGE_ROUNDS:
            parent[:] = 0
        order, groups, dirty = _merged(order, groups, parent)
        solve_blocks(y, heads, out_start, out_edges, network, order, groups[dirty],
                     groups[dirty + 1], x, scratch)
    return x


@njit(cache=True)
def _root(parent, g):
    """The root of group ``g``'s tree in the forest ``parent``, halving the path to it."""
    while parent[g] != g:
        parent[g] = parent[parent[g]]
        g = parent[g]
    return g


@njit(cache=True)
def _merged(order, groups, parent):
    """The groups (vertices ``order[groups[g]:groups[g + 1]]``) merged by the trees of
    ``parent``: the new order and bounds, each tree's vertices together in the order of its
    first group, and the indices of the new groups made of more than one old one."""
    count, n = groups.shape[0] - 1, order.shape[0]
    index, merged = -np.ones(count, dtype=np.int64), np.empty(count, dtype=np.int64)
    found = 0
    for g in range(count):
        r = _root(parent, g)
        if index[r] < 0:
            index[r], found = found, found + 1
        merged[g] = index[r]
    bounds, parts = np.zeros(found + 1, dtype=np.int64), np.zeros(found, dtype=np.int64)
    for g in range(count):
        bounds[merged[g] + 1] += groups[g + 1] - groups[g]
        parts[merged[g]] += 1
    bounds = np.cumsum(bounds)
    fill, reordered = bounds[:-1].copy(), np.empty(n, dtype=order.dtype)
    for g in range(count):
        length = groups[g + 1] - groups[g]
        reordered[fill[merged[g]]:fill[merged[g]] + length] = order[groups[g]:groups[g + 1]]
        fill[merged[g]] += length
    return reordered, bounds, np.flatnonzero(parts > 1)


@njit(cache=True)
def solve_blocks(y, heads, out_start, out_edges, network, order, starts, stops, x,
                 multipliers):
    """The isotonic regression of ``y`` restricted to each block ``order[starts[b]:stops[b]]``
    separately (edges between blocks ignored), by recursive minimum cuts (module docstring).

    Parameters
    ----------
    y : ndarray of float64, shape (n,)
        Point to project.
    heads, out_start, out_edges : ndarray of int64
        The edges' heads (k,) and the edges grouped by tail (:func:`_out_adjacency`).
    network : tuple
        The flow network's arrays (:func:`_flow_network`).
    order : ndarray of int64, shape (n,)
        The vertices, each block's contiguous; permuted in place within each block.
    starts, stops : ndarray of int64, shape (b,)
        The blocks' limits in ``order``, disjoint.
    x : ndarray of float64, shape (n,)
        Filled on every block's vertices: each final block's mean of ``y``.
    multipliers : ndarray of float64, shape (k,)
        Filled on the edges inside final blocks: their last maximum flow's (module docstring).
    """
    n = y.shape[0]
    eps = 1e-13 * max(1.0, np.max(np.abs(y))) if n > 0 else 0.0
    start, target, cap, reverse, edge = network
    local = np.full(n, -1, dtype=np.int64)
    begins, ends = [0], [0]
    begins.pop()
    ends.pop()
    for b in range(starts.shape[0]):
        if stops[b] > starts[b]:
            begins.append(starts[b])
            ends.append(stops[b])
    while len(begins) > 0:
        begin, end = begins.pop(), ends.pop()
        size = end - begin
        block = order[begin:end]
        mu = np.mean(y[block])
        local[block] = np.arange(size)
        arcs, big = _build(block, local, y, mu, heads, out_start, out_edges, network)
        _max_flow(start, target, cap, reverse, size + 2, size, size + 1, eps)
        closure = _levels(start, target, cap, size + 2, size, eps)[:size] >= 0
        count = int(closure.sum())
        if count == 0 or count == size:
            x[block] = mu
            for a in range(arcs):
                if edge[a] >= 0:
                    multipliers[edge[a]] = big - cap[a]
        else:
            order[begin:end] = np.concatenate((block[closure], block[~closure]))
            begins.append(begin)
            ends.append(begin + count)
            begins.append(begin + count)
            ends.append(end)
        local[block] = -1


@njit(cache=True)
def closure_flow(supply, tails, heads):
    """The edge flows that leave the least imbalance: one maximum flow of ``supply`` along
    the edges.

    Minimizes ``sum_v |supply_v - sum_out lambda + sum_in lambda|`` over ``lambda >= 0``: a
    source arc to every vertex of positive supply, a sink arc from every vertex of negative
    supply, an uncapacitated arc tail -> head per edge; the least imbalance is
    ``sum |supply| - 2 * max flow``. It is the dual of the minimum-weight closure
    ``min {-supply . w : w_tail <= w_head, -1 <= w <= 1}`` (the LP the dual certificate
    refits its constraint multipliers with, :mod:`worker.candidates.dual_certificate`), one
    flow where :func:`isotonic_on_order` runs one per block it splits.

    Parameters
    ----------
    supply : ndarray of float64, shape (n,)
        Each vertex's supply (negative: demand).
    tails, heads : ndarray of int64, shape (k,)
        The edges; vertices in ``0..n-1``.

    Returns
    -------
    ndarray of float64, shape (k,)
        Each edge's flow lambda_e >= 0, tail to head.
    """
    n = supply.shape[0]
    out_start, out_edges = _out_adjacency(tails, n)
    eps = 1e-13 * max(1.0, np.max(np.abs(supply))) if n > 0 else 0.0
    network = _flow_network(n, tails.shape[0])
    start, target, cap, reverse, edge = network
    block = np.arange(n)
    arcs, big = _build(block, block, supply, 0.0, heads, out_start, out_edges, network)
    _max_flow(start, target, cap, reverse, n + 2, n, n + 1, eps)
    flows = np.zeros(tails.shape[0])
    for a in range(arcs):
        if edge[a] >= 0:
            flows[edge[a]] = max(big - cap[a], 0.0)
    return flows


@njit(cache=True)
def _flow_network(n, k):
    """Arrays of a flow network on n vertices, a source and a sink, with room for k order
    edges and n source or sink arcs, each with its reverse (module docstring): (start
    (n + 3,), target, cap, reverse, edge (2 (k + n),))."""
    arcs = 2 * (k + n)
    return (np.empty(n + 3, dtype=np.int64), np.empty(arcs, dtype=np.int32),
            np.empty(arcs), np.empty(arcs, dtype=np.int32), np.empty(arcs, dtype=np.int64))


@njit(cache=True)
def _out_adjacency(tails, n):
    """Edges grouped by tail: ``out_edges[out_start[v]:out_start[v + 1]]``, shapes (n+1,), (k,)."""
    out_start = np.zeros(n + 1, dtype=np.int64)
    for v in tails:
        out_start[v + 1] += 1
    out_start = np.cumsum(out_start)
    fill = out_start[:-1].copy()
    out_edges = np.empty(tails.shape[0], dtype=np.int64)
    for e in range(tails.shape[0]):
        out_edges[fill[tails[e]]] = e
        fill[tails[e]] += 1
    return out_start, out_edges


@njit(cache=True)
def _build(block, local, y, mu, heads, out_start, out_edges, network):
    """Fill the residual network of ``block`` (local nodes, source = size, sink = size + 1):
    the source's arc to every node of positive supply ``y - mu``, every node of negative
    supply's arc to the sink, an uncapacitated arc along every edge inside the block, each
    with its reverse, stored by tail (module docstring).

    Returns ``(arcs, big)``: the number of arcs used and the capacity standing for "infinite"
    on edge arcs (more than the total supply, so never saturated).
    """
    start, target, cap, reverse, edge = network
    size = block.shape[0]
    source, sink = size, size + 1
    supply = y[block] - mu
    big = 1.0 + np.sum(np.maximum(supply, 0.0))
    degree = np.zeros(size + 3, dtype=np.int64)
    for i in range(size):
        if supply[i] != 0.0:
            degree[i + 1] += 1
            degree[(source if supply[i] > 0.0 else sink) + 1] += 1
        v = block[i]
        for p in range(out_start[v], out_start[v + 1]):
            j = local[heads[out_edges[p]]]
            if j >= 0:
                degree[i + 1] += 1
                degree[j + 1] += 1
    start[:size + 3] = np.cumsum(degree)
    fill = start[:size + 2].copy()
    for i in range(size):
        if supply[i] > 0.0:
            _add_arc(source, i, supply[i], -1, fill, target, cap, reverse, edge)
        elif supply[i] < 0.0:
            _add_arc(i, sink, -supply[i], -1, fill, target, cap, reverse, edge)
        v = block[i]
        for p in range(out_start[v], out_start[v + 1]):
            e = out_edges[p]
            j = local[heads[e]]
            if j >= 0:
                _add_arc(i, j, big, e, fill, target, cap, reverse, edge)
    return start[size + 2], big


@njit(cache=True, inline="always")
def _add_arc(u, v, capacity, e, fill, target, cap, reverse, edge):
    """Store arc u -> v (capacity, input edge e) and its reverse (capacity 0) at the next free
    places of u's and v's arcs."""
    a, b = fill[u], fill[v]
    fill[u], fill[v] = a + 1, b + 1
    target[a], cap[a], reverse[a], edge[a] = v, capacity, b, e
    target[b], cap[b], reverse[b], edge[b] = u, 0.0, a, -1


@njit(cache=True)
def _levels(start, target, cap, nodes, source, eps):
    """BFS distances from ``source`` along arcs with residual capacity > eps (-1: unreached);
    the nodes reached are the source side of the minimum cut once the flow is maximum."""
    level = np.full(nodes, -1, dtype=np.int64)
    queue = np.empty(nodes, dtype=np.int64)
    level[source], queue[0] = 0, source
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        for a in range(start[u], start[u + 1]):
            v = target[a]
            if cap[a] > eps and level[v] < 0:
                level[v] = level[u] + 1
                queue[tail] = v
                tail += 1
    return level


@njit(cache=True)
def _max_flow(start, target, cap, reverse, nodes, source, sink, eps):
    """Dinic's maximum flow from ``source`` to ``sink``; updates ``cap`` in place."""
    path = np.empty(nodes, dtype=np.int64)
    while True:
        level = _levels(start, target, cap, nodes, source, eps)
        if level[sink] < 0:
            return
        current = start[:nodes].copy()
        depth, u = 0, source
        while True:
            if u == sink:
                pushed = cap[path[0]]
                for i in range(1, depth):
                    pushed = min(pushed, cap[path[i]])
                for i in range(depth):
                    cap[path[i]] -= pushed
                    cap[reverse[path[i]]] += pushed
                depth, u = 0, source
                continue
            a, stop = current[u], start[u + 1]
            while a < stop and (cap[a] <= eps or level[target[a]] != level[u] + 1):
                a += 1
            current[u] = a
            if a < stop:
                path[depth] = a
                depth += 1
                u = target[a]
            elif depth == 0:
                break
            else:
                level[u] = -1                      # dead end: never enter u again this phase
                depth -= 1
                u = target[reverse[path[depth]]]
