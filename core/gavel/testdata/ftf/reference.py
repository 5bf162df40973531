#!/usr/bin/env python3
"""Reference optima of finish-time fairness (issue 11) by an independent LP solver.

Gavel's definition (dissertation §5.4.2; Gavel's isolated.py and finish_time_fairness.py):
rho(m, X) = (t_m + r_m / throughput(m, X)) / (t_isolated_m + r_m / throughput(m, X_isolated)),
with X_isolated giving job m the time fraction N_j / (n * s_m) on every worker type j
(1/n of the type's N_j GPUs, s_m at a time), the row scaled down to sum to 1 where it
exceeds it. The testdata instances have no elapsed time (t_m = t_isolated_m = 0), so
rho(m, X) = throughput(m, X_isolated) / throughput(m, X), and
min_X max_m rho(m, X) = 1 / max_X min_m throughput(m, X) / throughput(m, X_isolated):
one LP, "maximize z subject to throughput(m, X) >= z * iso_m", solved here with HiGHS
(scipy.optimize.linprog(method="highs")) instead of the Go policy's Newton search over
tangent LPs with core/lp. The agnostic variant sees every usable worker type as
throughput 1 and spreads each job's time over the types in proportion to their sizes
(X_mj * N_j0 = X_mj0 * N_j), as the Go policy does.

Run from the repository root:  /usr/bin/python3 core/gavel/testdata/ftf/reference.py
(Debian's python3-scipy; it writes core/gavel/testdata/ftf/reference.json).
"""
import gzip, json, os, platform, sys
import numpy as np
import scipy
from scipy.optimize import linprog
from scipy.sparse import lil_matrix

HERE = os.path.dirname(os.path.abspath(__file__))
INSTANCES = os.path.join(HERE, "..", "instances")
FILES = [
    "paper_example_3job.json",
    "sim_k80-36_p100-36_v100-36_N64_seed0.json",
    "sim_k80-36_p100-36_v100-36_N256_seed0_multigpu.json.gz",
    "sim_k80-36_p100-36_v100-36_N2048_seed0.json.gz",
]


def load(name):
    path = os.path.join(INSTANCES, name)
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def optimum(inst, agnostic):
    N = inst["num_workers"]
    k, n = len(N), len(inst["jobs"])
    T = np.array(inst["throughputs"], dtype=float)
    s = [job["scale_factor"] for job in inst["jobs"]]
    if agnostic:
        T = (T > 0).astype(float)
    usable = [[T[m][j] > 0 and s[m] <= N[j] for j in range(k)] for m in range(n)]
    iso = []
    for m in range(n):
        x = [N[j] / (n * s[m]) for j in range(k)]
        total = sum(x)
        tput = sum(x[j] * T[m][j] for j in range(k))
        iso.append(tput / total if total > 1 else tput)
    var = {}
    for m in range(n):
        for j in range(k):
            if usable[m][j]:
                var[m, j] = len(var)
    z = len(var)
    rows, b = [], []
    A = lil_matrix((n + k + n, z + 1))
    r = 0
    for m in range(n):  # z*iso_m - throughput(m, X) <= 0
        for j in range(k):
            if usable[m][j]:
                A[r, var[m, j]] = -T[m][j]
        A[r, z] = iso[m]
        b.append(0.0); r += 1
    for j in range(k):  # sum_m s_m X_mj <= N_j
        for m in range(n):
            if usable[m][j]:
                A[r, var[m, j]] = s[m]
        b.append(float(N[j])); r += 1
    for m in range(n):  # sum_j X_mj <= 1
        for j in range(k):
            if usable[m][j]:
                A[r, var[m, j]] = 1.0
        b.append(1.0); r += 1
    eq = []
    if agnostic:
        for m in range(n):
            js = [j for j in range(k) if usable[m][j]]
            for j in js[1:]:
                eq.append((m, js[0], j))
    Aeq = None
    if eq:
        Aeq = lil_matrix((len(eq), z + 1))
        for i, (m, j0, j) in enumerate(eq):
            Aeq[i, var[m, j]] = N[j0]
            Aeq[i, var[m, j0]] = -N[j]
    c = np.zeros(z + 1); c[z] = -1.0
    res = linprog(c, A_ub=A.tocsr(), b_ub=b, A_eq=None if Aeq is None else Aeq.tocsr(),
                  b_eq=None if Aeq is None else np.zeros(len(eq)),
                  bounds=[(0, None)] * (z + 1), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        sys.exit(f"{inst.get('name')}: HiGHS status {res.status}: {res.message}")
    return 1.0 / res.x[z]


def main():
    out = {
        "how": "core/gavel/testdata/ftf/reference.py: one LP per instance and variant, "
               "maximize z s.t. throughput(m,X) >= z*throughput(m,X_isolated); rho* = 1/z*",
        "solver": f"HiGHS via scipy {scipy.__version__} linprog(method='highs'), "
                  f"feasibility tolerances 1e-10, Python {platform.python_version()}",
        "note": "paper_example_3job.json has no num_steps; with no elapsed time rho does not depend on them",
        "optima": {},
    }
    for name in FILES:
        inst = load(name)
        key = name.split(".json")[0]
        out["optima"][key] = {"finish_time_fairness_perf": optimum(inst, False),
                              "finish_time_fairness": optimum(inst, True)}
        print(key, out["optima"][key], flush=True)
    with open(os.path.join(HERE, "reference.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
