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
is a set of preallocated arrays, arcs in pairs ``(a, a ^ 1)`` with the forward arc even:

* ``first`` (n + 2,): first arc leaving each node (-1: none); ``following`` (2 (k + n),): next
  arc of the same tail; ``target``: the arc's head; ``cap``: residual capacity; ``edge``: the
  input edge of a forward edge arc, -1 for source/sink arcs.
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
    eps = 1e-13 * max(1.0, np.max(np.abs(y))) if n > 0 else 0.0
    first, following, target, cap, edge = _flow_network(n, tails.shape[0])
    order = np.arange(n)
    local = np.full(n, -1, dtype=np.int64)
    x = np.empty(n)
    multipliers = np.zeros(tails.shape[0])
    starts, stops = [0], [n]
    while len(starts) > 0:
        start, stop = starts.pop(), stops.pop()
        size = stop - start
        block = order[start:stop]
        mu = np.mean(y[block])
        local[block] = np.arange(size)
        arcs, big = _build(block, local, y, mu, heads, out_start, out_edges,
                           first, following, target, cap, edge)
        _max_flow(first, following, target, cap, size + 2, size, size + 1, eps)
        closure = _source_side(first, following, target, cap, size + 2, size, eps)[:size]
        count = int(closure.sum())
        if count == 0 or count == size:
            x[block] = mu
            for a in range(0, arcs, 2):
                if edge[a] >= 0:
                    multipliers[edge[a]] = big - cap[a]
        else:
            order[start:stop] = np.concatenate((block[closure], block[~closure]))
            starts.append(start)
            stops.append(start + count)
            starts.append(start + count)
            stops.append(stop)
        local[block] = -1
    return x, multipliers


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
    first, following, target, cap, edge = _flow_network(n, tails.shape[0])
    block = np.arange(n)
    arcs, big = _build(block, block, supply, 0.0, heads, out_start, out_edges,
                       first, following, target, cap, edge)
    _max_flow(first, following, target, cap, n + 2, n, n + 1, eps)
    flows = np.zeros(tails.shape[0])
    for a in range(0, arcs, 2):
        if edge[a] >= 0:
            flows[edge[a]] = max(big - cap[a], 0.0)
    return flows


@njit(cache=True)
def _flow_network(n, k):
    """Empty arc lists of a flow network on n vertices, a source and a sink, with room for
    k order edges and 2 n source and sink arcs, each with its reverse: (first (n + 2,),
    following, target, cap, edge (2 (k + n),))."""
    arcs = 2 * (k + n)
    return (np.empty(n + 2, dtype=np.int64), np.empty(arcs, dtype=np.int64),
            np.empty(arcs, dtype=np.int64), np.empty(arcs), np.empty(arcs, dtype=np.int64))


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
def _build(block, local, y, mu, heads, out_start, out_edges, first, following, target, cap,
           edge):
    """Fill the residual network of ``block`` (local nodes, source = size, sink = size + 1).

    Returns ``(arcs, big)``: the number of arcs used and the capacity standing for "infinite"
    on edge arcs (more than the total supply, so never saturated).
    """
    size = block.shape[0]
    first[:size + 2] = -1
    supply = y[block] - mu
    big = 1.0 + np.sum(np.maximum(supply, 0.0))
    arcs = 0
    for i in range(size):
        if supply[i] > 0.0:
            arcs = _add_arc(size, i, supply[i], -1, arcs, first, following, target, cap, edge)
        elif supply[i] < 0.0:
            arcs = _add_arc(i, size + 1, -supply[i], -1, arcs, first, following, target, cap,
                            edge)
        v = block[i]
        for p in range(out_start[v], out_start[v + 1]):
            e = out_edges[p]
            j = local[heads[e]]
            if j >= 0:
                arcs = _add_arc(i, j, big, e, arcs, first, following, target, cap, edge)
    return arcs, big


@njit(cache=True, inline="always")
def _add_arc(u, v, capacity, e, arcs, first, following, target, cap, edge):
    """Append arc u -> v (capacity) and its reverse (capacity 0); return the arc count."""
    target[arcs], cap[arcs], edge[arcs] = v, capacity, e
    following[arcs], first[u] = first[u], arcs
    target[arcs + 1], cap[arcs + 1], edge[arcs + 1] = u, 0.0, -1
    following[arcs + 1], first[v] = first[v], arcs + 1
    return arcs + 2


@njit(cache=True)
def _levels(first, following, target, cap, nodes, source, eps):
    """BFS distances from ``source`` along arcs with residual capacity > eps (-1: unreached)."""
    level = np.full(nodes, -1, dtype=np.int64)
    queue = np.empty(nodes, dtype=np.int64)
    level[source], queue[0] = 0, source
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        a = first[u]
        while a >= 0:
            v = target[a]
            if cap[a] > eps and level[v] < 0:
                level[v] = level[u] + 1
                queue[tail] = v
                tail += 1
            a = following[a]
    return level


@njit(cache=True)
def _max_flow(first, following, target, cap, nodes, source, sink, eps):
    """Dinic's maximum flow from ``source`` to ``sink``; updates ``cap`` in place."""
    path = np.empty(nodes, dtype=np.int64)
    while True:
        level = _levels(first, following, target, cap, nodes, source, eps)
        if level[sink] < 0:
            return
        current = first[:nodes].copy()
        depth, u = 0, source
        while True:
            if u == sink:
                pushed = cap[path[0]]
                for i in range(1, depth):
                    pushed = min(pushed, cap[path[i]])
                for i in range(depth):
                    cap[path[i]] -= pushed
                    cap[path[i] ^ 1] += pushed
                depth, u = 0, source
                continue
            a = current[u]
            while a >= 0 and (cap[a] <= eps or level[target[a]] != level[u] + 1):
                a = following[a]
            current[u] = a
            if a >= 0:
                path[depth] = a
                depth += 1
                u = target[a]
            elif depth == 0:
                break
            else:
                level[u] = -1                      # dead end: never enter u again this phase
                depth -= 1
                u = target[path[depth] ^ 1]


@njit(cache=True)
def _source_side(first, following, target, cap, nodes, source, eps):
    """Nodes reachable from ``source`` in the residual network, as a bool array (nodes,)."""
    return _levels(first, following, target, cap, nodes, source, eps) >= 0
