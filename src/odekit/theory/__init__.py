"""Theory: what can be known of a method or a problem without solving it.

* :mod:`.stability` -- linear stability on Dahlquist's test equation and on
  the harmonic oscillator, exact from the coefficients;
* :mod:`.polynomials` -- the exact polynomial arithmetic and real-root
  isolation it rests on;
* :mod:`.stiffness` -- the Jacobian's spectrum by a short Arnoldi iteration,
  and the advice the Integrator gives before and after a run;
* :mod:`.fitting` -- an order of convergence fitted to measured errors.

This layer sits below the run (:mod:`odekit.integrator`, :func:`odekit.solve`)
and imports nothing that solves; the studies of :mod:`odekit.analysis` and
the plots sit above it.  :mod:`odekit.analysis` re-exports its public names.
"""
