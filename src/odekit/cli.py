"""The ``odekit`` command: list methods, solve a zoo problem and summarise it."""

import argparse
import sys
import time

import numpy as np

from . import methods, problems, solve
from .methods import method as lookup_method


def main(argv=None):
    parser = argparse.ArgumentParser(prog="odekit", description="Time integrators for physics-based simulation.")
    sub = parser.add_subparsers(dest="command", required=True)

    listing = sub.add_parser("methods", help="list the registered methods")
    listing.add_argument("--markdown", action="store_true",
                         help="as docs/methods.md: the table, then each method's facts")

    s = sub.add_parser("solve", help="solve a problem from the zoo and print a summary")
    s.add_argument("problem", help=f"one of: {', '.join(problems.PROBLEMS)}")
    s.add_argument("--method", default="dp54", help="a registered method (see `odekit methods`)")
    step = s.add_mutually_exclusive_group()
    step.add_argument("--h", type=float, help="fixed step size")
    step.add_argument("--rtol", type=float, help="relative tolerance (adaptive)")
    s.add_argument("--atol", type=float, default=1e-9, help="absolute tolerance (adaptive)")
    s.add_argument("--t-end", type=float, help="end of the span (default: the problem's)")
    s.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a problem parameter, e.g. -p e=0.9 (repeatable)")
    s.add_argument("--backend", default="auto", choices=("auto", "numba", "python"))

    args = parser.parse_args(argv)
    try:
        if args.command == "methods":
            sys.stdout.write(methods().document() if args.markdown else f"{methods()}\n")
            return 0
        return _solve(args)
    except (ValueError, TypeError) as exc:
        print(f"odekit: error: {exc}", file=sys.stderr)
        return 2


def _solve(args):
    params = dict(_param(p) for p in args.param)
    if args.t_end is not None:
        params["t_end"] = args.t_end
    prob = problems.problem(args.problem, **params)
    m = lookup_method(args.method)
    options = {"h": args.h} if args.h is not None else {"rtol": args.rtol or 1e-6, "atol": args.atol}
    start = time.perf_counter()
    sol = solve(prob, m, backend=args.backend, **options)
    elapsed = time.perf_counter() - start
    print(summary(sol, elapsed))
    return 0 if sol.success else 1


def _param(text):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise ValueError(f"--param must look like NAME=VALUE, got {text!r}")
    try:
        return name, float(value)
    except ValueError:
        raise ValueError(f"--param {name} must be a number, got {value!r}") from None


def summary(sol, elapsed=None):
    """A few lines a person can read: work, error, drift of each invariant."""
    st = sol.stats
    lines = [
        f"{sol.problem.name} with {sol.method.name} ({sol.method.title}), backend {sol.backend}",
        f"  t = {sol.t[0]:g} .. {sol.t[-1]:g}   status {sol.status.name}: {sol.message}",
        f"  steps {st.naccepted} accepted, {st.nrejected} rejected; f-evaluations {st.nfev}"
        + (f"; Jacobians {st.njev}, LU {st.nlu}" if st.njev else ""),
    ]
    if elapsed is not None:
        lines.append(f"  wall time {elapsed:.3f} s (including compilation on a first run)")
    if sol.problem.exact is not None:
        final = np.asarray(sol.problem.exact(sol.t[-1]))
        err = float(np.max(np.abs(sol.y[-1] - final.reshape(sol.y[-1].shape))))
        lines.append(f"  final error against the exact solution: {err:.3e}")
    for name, values in sol.invariants().items():
        ref = values[0]
        scale = abs(ref) if ref != 0 else 1.0
        drift = np.abs(values - ref) / scale
        kind = "relative" if ref != 0 else "absolute"
        lines.append(f"  {name} drift ({kind}): max {drift.max():.3e}, final {drift[-1]:.3e}")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
