"""The typed bundles the kernels take: problem arrays, run configuration, mutable state.

They are namedtuples so numba compiles them as plain structs (no jitclass); mutable scalars
live in the small ``counters`` (int64) and ``scalars`` (float64) arrays, indexed by the
constants below.
"""

from __future__ import annotations

from collections import namedtuple

ProblemArrays = namedtuple("ProblemArrays", [
    "kind", "quadratic", "l2", "l1",                 # int, bool, float, float
    "x_indptr", "x_indices", "x_data", "labels",     # examples, CSR (n, d), labels (n,)
    "x_width",                                       # W > 0: row i is entries iW..iW+W-1
    "x_entries",                                     # stored entries before padding
    "x_weights",                                     # weights c of mean 1 (n,); (0,): all 1
    "x_cumulative",                                  # c's running sums to its last c > 0
    "q_indptr", "q_indices", "q_data", "linear",     # Q, CSR (d, d), c (d,)
    "a_indptr", "a_indices", "a_data", "rhs",        # constraints, CSR (m, d), b (m,)
    "a_width", "a_entries",                          # as x_width, x_entries, for A
    "a_scale",                                       # c > 0: row i is c (w_a - w_b), 2 entries
    "rhs_zero",                                      # every b_i is 0: a check reads no b_i
    "group_ptr",                                     # groups: constraints ptr[g]..ptr[g+1]-1
    "lower", "upper",                                # the box W, (d,) each
])

RunConfig = namedtuple("RunConfig", [
    "mode",            # MODE_FULL, MODE_LIGHT or MODE_PLAIN
    "gamma", "eta_w", "eta_p",
    "strong_convexity",  # lambda > 0: eta_w / (lambda t) steps; 0: eta_w / sqrt(t)
    "k_f", "k_g", "k_p",  # fixed minibatch sizes; 0 means automatic (paper §5.2)
    "lazy",            # lazy (sublinear) p-update instead of the dense O(G) one
    "nu",              # decay of the variance averages (paper §6.1: 0.999)
    "cost_f", "cost_g",  # operation counts of one f sample and one group check
    "step_rule",       # STEP_SCHEDULE, or a warm-up rule of eta_w "auto": STEP_DOG, STEP_ADAGRAD
])

KernelState = namedtuple("KernelState", [
    "w", "acc", "last",                  # iterate (d,), lazy running sum (d,), its stamps (d,)
    "gbuf", "touch_mark", "touched",     # step direction (d,), marks and list of touched coords
    "cbuf", "ctouch_mark", "ctouched",   # constraint part of the step, same layout
    "log_w", "stamp", "mu",              # p: log weights (G,), their time stamps, remembered mu
    "tree", "vlist", "vpos",             # sum tree over mu == 0 groups; list of mu > 0 groups
    "weights", "pmark", "sampled", "sampled_viol",  # scratch (G,)
    "counters", "scalars", "rng",
    "example_rng",                       # the RNG state the iteration's example draws start at
    "origin",                            # the first iterate w(1) (d,): warm-up distances
    "squares",                           # AdaGrad: per-coordinate sums of squared steps (d,)
    "p_weight", "p_factor",              # dense p: exp(u_j - shift) and exp(rate mu_j) (G,)
    "check_mark", "check_value", "check_row",  # the iteration each group was last checked
                                         # in, its maximum and most violated row then (G,)
])

MODE_FULL = 0
MODE_LIGHT = 1
MODE_PLAIN = 2

# step rules (kernels/iteration.py, algorithms/step_rule.py)
STEP_SCHEDULE = 0    # eta_w / sqrt(t), or eta_w / (lambda t) when strongly convex
STEP_DOG = 1         # distance over gradients: eta_w r_t / sqrt(sum |g_s|^2)
STEP_ADAGRAD = 2     # diagonal AdaGrad: eta_w (u_j - l_j) / sqrt(2 sum g_sj^2) per coordinate
STEP_ADAGRAD_NORM = 3  # the games' theta-player: eta_w / sqrt(sum |g_s|^2), eta_w a diameter

# counters (int64)
ITERATION = 0        # t of the next iteration, 1-based
CHECKS = 1           # constraint checks so far (an aggregated group of s counts s)
GRADIENT_SAMPLES = 2  # stochastic subgradients of f drawn so far
N_VIOLATED = 3       # length of vlist
AVERAGE_START = 4    # first iterate included in the running average
K_G_TOTAL = 5        # sum of k_g over iterations (for the mean minibatch size)
K_P_TOTAL = 6        # sum of k_p over iterations
P_SYNCED = 7         # dense p: the iteration its weights were last recomputed from u
N_COUNTERS = 8

# scalars (float64)
SHIFT = 0            # common offset of the log weights (lazy and dense p)
VF_NUM, VF_DEN = 1, 2
VG_NUM, VG_DEN = 3, 4
VP_NUM, VP_DEN = 5, 6
NEEDS_RESCALE = 7
GRADIENT_SUM = 8     # warm-up: sum of the squared norms of the steps' directions
DISTANCE2 = 9        # warm-up: squared distance of the iterate from the origin
RADIUS = 10          # warm-up: the largest distance from the origin so far (at least r_eps)
P_RATE = 11          # dense p: the eta_p gamma its factors were computed with (NaN: none yet)
N_SCALARS = 12
