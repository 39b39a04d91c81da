"""Cloth at one step per frame: Baraff & Witkin's implicit mass-spring sheet.

A square sheet pinned at two corners falls from the horizontal and swings
(:func:`odekit.problems.cloth`).  Its springs are so stiff that an explicit
method would need steps below a millisecond; an implicit one takes a whole
frame, ``h = 1/60`` s, per step.  Writes one PNG per frame and an animated
GIF of them all::

    python examples/cloth.py --n 32 --frames 150 --solver cg --out cloth-frames

The default method, ``linearized_euler``, is Baraff & Witkin's step: one
Newton iteration of backward Euler per frame.  ``--method backward_euler``
iterates Newton to convergence at a fixed step, which today does not
converge at ``h = 1/60`` s.

``--solver`` picks the integrator's ``linear_solver``: ``cg`` runs
conjugate gradients on the velocity system ``I - h A_v - h^2 A_x``; without
it, sparse LU (the default for force Jacobians) solves the same system.
"""

import argparse
import math
import pathlib
import time

import matplotlib

matplotlib.use("Agg")        # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.animation import PillowWriter  # noqa: E402

import odekit  # noqa: E402
from odekit.problems import cloth, cloth_stretch  # noqa: E402

FPS = 60


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=32, help="particles per side (default 32)")
    parser.add_argument("--frames", type=int, default=150, help="frames at 60 per second (default 150)")
    parser.add_argument("--method", default="linearized_euler", help="an implicit method (default linearized_euler)")
    parser.add_argument("--solver", default=None, help="linear_solver of the integrator, e.g. cg (default: its own)")
    parser.add_argument("--out", default="cloth-frames", help="directory for the PNGs and cloth.gif")
    return parser.parse_args()


def draw(ax, x, n, size, t):
    """The sheet as a wireframe of its grid lines, in fixed axes so that frames line up."""
    ax.cla()
    X, Y, Z = (x[:, k].reshape(n, n) for k in range(3))
    ax.plot_wireframe(X, Y, Z, color="tab:blue", linewidth=0.6)
    ax.scatter(X[0, [0, -1]], Y[0, [0, -1]], Z[0, [0, -1]], color="tab:red", s=20)   # the pins
    ax.set(xlim=(-0.1 * size, 1.1 * size), ylim=(-0.6 * size, 0.6 * size), zlim=(-1.1 * size, 0.1 * size),
           xlabel="x (m)", ylabel="y (m)", zlabel="z (m)", title=f"t = {t:.2f} s")
    ax.set_box_aspect((1.2, 1.2, 1.2))
    ax.view_init(elev=15, azim=-60)


def main():
    args = arguments()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    problem = cloth(n=args.n, t_end=args.frames / FPS)
    size = problem.x0[:, 0].max()
    # linear_solver only when asked for, so that the script also runs with the integrator's default
    options = {} if args.solver is None else {"linear_solver": args.solver}
    integrator = odekit.Integrator(problem, args.method, h=1 / FPS, **options)
    energy = problem.invariants["energy"]

    fig = plt.figure(figsize=(5, 5))
    ax = fig.add_subplot(projection="3d")
    writer = PillowWriter(fps=FPS // 2)       # half speed: the fall is quick
    start = time.perf_counter()
    with writer.saving(fig, out / "cloth.gif", dpi=80):
        for frame in range(args.frames + 1):
            if frame:
                integrator.advance_to(frame / FPS)
            x, v = integrator.x, integrator.v
            draw(ax, x, args.n, size, integrator.t)
            fig.savefig(out / f"frame{frame:04d}.png", dpi=80)
            writer.grab_frame()
            if frame % 30 == 0:
                print(f"t = {integrator.t:5.2f} s  energy {energy(integrator.t, x, v):7.4f} J  "
                      f"max stretch {100 * cloth_stretch(x, *problem.args):5.2f} %")
    stats = integrator.stats
    seconds = time.perf_counter() - start
    print(f"{args.frames} frames of {args.n}x{args.n} particles with {args.method} in {seconds:.1f} s "
          f"({1000 * seconds / max(1, args.frames):.0f} ms per frame, drawing included); {stats}")
    print(f"wrote {args.frames + 1} PNGs and cloth.gif to {out}/; explicit methods would need "
          f"h < {2 * math.sqrt(problem.args[4] / problem.args[2].max()):.1e} s")


if __name__ == "__main__":
    main()
