"""Shared constants of the kernels: status codes, state-array slots, work rows.

The kernels keep their run state in two small arrays (floats ``fs`` and
integers ``ist``) and one work matrix ``W`` that the Python side owns.  Writing progress into them step
by step is what lets a run that stops half-way -- an exception in the user's
function, a full output buffer -- resume or report without losing anything.
Module-level integers are compile-time constants for Numba.
"""

# --- status codes -----------------------------------------------------------
# Final statuses (also the public ``odekit.Status`` values).
SUCCESS = 0
MAX_STEPS = -1
STEP_UNDERFLOW = -2
NONFINITE = -3
BAD_SHAPE = -4
NEWTON_FAILED = -5
FUNCTION_ERROR = -6          # raised by the user's function (set in Python)
MEMORY_LIMIT = -7            # the recorded output would not fit in memory (set in Python)
INTERRUPTED = -8             # Ctrl-C between two slices of the run (set in Python)
EVENTS_ACCUMULATE = -9       # events with an affect follow each other ever closer (Zeno behaviour)
MAX_EVENTS = -10             # the run logged as many events as it was allowed
EVENT = 3                    # a terminal event stopped the run: a success
# Reasons a kernel call returns before the run is over.
PAUSED = 1                   # the requested number of steps was taken
BUFFER_FULL = 2              # the Python side grows the output and resumes
# A failed attempt that no smaller step cures: the driver stops with NONFINITE at once.
JAC_NONFINITE = -11          # the user's Jacobian holds inf or nan (see evaluation.jacobian)

# --- float state ``fs`` --------------------------------------------------------
T = 0            # current time
H = 1            # next step to try (signed); the fixed step for fixed control
T_END = 2        # where this kernel call stops
T0 = 3           # origin of the fixed-step grid t0 + k h
ERR_PREV = 4     # previous accepted error norm (PI control)
T_FAIL = 5       # time of the evaluation that failed
CARRY_H = 6      # a step's private memory (leapfrog's half-step velocity, Radau's
                 # stage polynomial) is from a step of this size; 0 = invalid
LU_HG = 7        # h * g of the factored Newton matrix I - h g J; 0 = no valid factors
NEWTON_RATE = 8  # largest contraction rate of Newton's method in the last step
CARRY_T = 9      # ... that started at this time
STEP_FACTOR = 10  # the step factor a self-controlled method asks for after its attempt
H_PREV = 11      # size of the previous accepted step (predictive control); 0 = none yet
NEWTON_DRAG = 12  # the controller's safety is divided by 1 + this after the attempt's Newton
                  # iterations (control.newton_drag); 0 = not lowered
T_EVENT = 13     # time of the last event whose affect changed the state (nan: none yet)
H_LO = 14        # smallest and largest |h| accepted in the current block of SPREAD_BLOCK steps
H_HI = 15        # (not counting a step cut to t_end, nor one after a rejection): driver.keep_spread
H_LO_DONE = 16   # ... and in the last whole block; 0 = none yet
H_HI_DONE = 17
STEP_ERR = 18    # the error norm a self-controlled method measured of its attempt (the driver's en)
FS_FAMILY = 19   # first of the slots a family keeps to itself (its module names them)
FS_SIZE = FS_FAMILY + 4

# --- integer state ``ist`` ---------------------------------------------------
NFEV = 0         # right-hand-side (or force) evaluations
NJEV = 1         # Jacobian evaluations
NLU = 2          # LU factorisations
NACCEPT = 3      # accepted steps
NREJECT = 4      # rejected steps
HAVE_F = 5       # 1 when ``f`` holds the derivative at the current state
NOUT = 6         # rows written to the output buffers
NDENSE = 7       # steps written to the dense-output buffers
KSTEP = 8        # fixed steps taken since T0
MAX_ACCEPT = 9   # stop with MAX_STEPS when NACCEPT reaches this
PAUSE_AFTER = 10  # stop with PAUSED after this many accepted steps in a call
TEVAL_NEXT = 11  # index of the next requested output time
LAST_FAIL = 12   # code of the last failed step attempt (adaptive runs)
RECORD = 13      # what to record: RECORD_NONE, RECORD_STEPS or RECORD_TEVAL
JAC_REUSE = 14   # 1 when the Jacobian in J may serve the next step (simplified Newton)
SAVE_EVERY = 15  # RECORD_STEPS writes every SAVE_EVERY-th accepted step
SINCE_SAVE = 16  # accepted steps since the last one written
NEVENT = 17      # events logged
EV_READY = 18    # 1 when the event state's G[G_LEFT] holds g at the current state
IST_FAMILY = 19  # first of the slots a family keeps to itself (its module names them)
IST_SIZE = IST_FAMILY + 4

RECORD_NONE = 0
RECORD_STEPS = 1  # every accepted step
RECORD_TEVAL = 2  # the interpolated state at each requested time

# --- rows of the work matrix ``W`` --------------------------------------------
# Every vector a kernel touches is a row of one matrix, named by its index.
# A compiled loop that made array views instead (``K[i]``, ``y[:n]``) would pay
# an atomic reference count for each, which Numba cannot optimise away across
# a call of the user's function: it cost more than the arithmetic of an RK4
# step on a small system.
Y = 0            # the state at fs[T]
F = 1            # f at the state, valid when ist[HAVE_F] is 1
YNEW = 2         # the result of the step being tried
FNEW = 3         # f there, when the step provides it
ERR = 4          # the step's error estimate
YHALF = 5        # step doubling: the state after the first half step
FHALF = 6        # and f there
YFULL = 7        # step doubling: the result of the whole step
STAGE = 8        # first of the family's own rows: stages, then work rows
FAMILY_ROWS = 7  # work rows a family may use after its stages

# --- controller parameters ``ctrl`` ------------------------------------------
FIXED = 0
EMBEDDED = 1
DOUBLING = 2
SELF = 3         # the method chooses its own step (and order): variable-order BDF

C_KIND = 0       # FIXED, EMBEDDED, DOUBLING or SELF
C_EXPONENT = 1   # k in err ~ h^k: the local order of the error estimate
C_SAFETY = 2
C_FMIN = 3
C_FMAX = 4
C_BETA1 = 5
C_BETA2 = 6
C_HMIN = 7
C_HMAX = 8
C_ORDER = 9      # order p of the method (step doubling divides by 2^p - 1)
C_NEWTON = 10    # Newton tolerance as a fraction of the error tolerance
C_HAS_JAC = 11   # 1 when the user's Jacobian is used, 0 for finite differences
C_HOLD = 12      # keep h when the controller would grow it by a factor in [1, C_HOLD]
C_AUTONOMOUS = 13  # 1 when f does not depend on t: Rosenbrock methods skip f_t
C_PREDICTIVE = 14  # 1: Gustafsson's predictive correction of the accepted step's factor
C_LU_CHANGE = 15   # keep the LU factors of I - c J while c changes by less than this fraction (0: refactor)
C_SIZE = 16
