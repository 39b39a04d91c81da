"""In-place twins of the user's functions that return ``np.array([...])``, a tuple, a vector expression or a matrix.

Most users write a right-hand side that ends in ``return np.array([e0, e1,
...])``.  Compiled, that array is allocated on every evaluation, and on a
small system the allocation costs more than the arithmetic (Kepler with
RK4: about twice the time of a step in place).  :func:`in_place_twin`
rewrites such a function's source into a twin that writes ``e0, e1, ...``
straight into a row of the kernels' work matrix:

.. code-block:: python

    def f(t, y, mu):                   def twin(W, dst, start, t, y, mu):
        ...                                ...
        return np.array([a, b])            e0 = a
                                           e1 = b
                                           if W.shape[1] - start != 2:
                                               return False
                                           W[dst, start + 0] = e0
                                           W[dst, start + 1] = e1
                                           return True

which the compiled backend calls in place of the function (the Python
backend keeps calling the original).  The numbers are the same: every
element is evaluated, in order, before any is written, as before; each is
converted to the state's dtype once, as :func:`~odekit.kernels.evaluation.store`
converts the array (integers and floats to a complex state alike; an
integer array's elements are the integers themselves); and what ``store``
refuses, Numba refuses to compile in the twin -- a complex element for a
real state, an element that is an array -- so that such a function keeps
the ordinary path.  Anything the rewrite does not recognise keeps it too.
A returned tuple ``(e0, e1, ...)`` gets the same twin: ``store`` makes an
array of it, which compiled costs an allocation as well.  A returned vector
expression of the state, such as ``-mu * x / r3``, gets a twin that loops
over the components (see :func:`_elementwise`).  A Jacobian that returns
``np.array([[...], ...])`` gets a twin that writes the matrix's entries
(:func:`in_place_matrix_twin`).
"""

import ast
import functools
import inspect
import textwrap
import types

import numpy as np

PREFIX = "_odekit_"        # the twin's own names; a function that uses such names is not rewritten


@functools.lru_cache(maxsize=256)
def in_place_twin(fun, second_order=False, flat=True):
    """``twin(W, dst, start, *params)`` writing ``fun(*params)``'s array into ``W[dst, start:]``, or None.

    A function may declare its twin, written by hand, as its attribute
    ``in_place_twin`` (the zoo's N-body force does): that one is taken as it
    is, also for a state of more than one dimension (``flat`` False), which
    it then reads flat.  The rest of this applies to the others, whose state
    must be one-dimensional.

    Only a plain Python function is rewritten: no closure, no decorator,
    no generator, nested function or lambda, with a single ``return``, its
    last statement, of ``np.array([...])`` or a tuple (see :func:`_elements`),
    or of an elementwise expression of the state (:func:`_elementwise`):
    ``fun(t, y, ...)``'s ``y``, or with ``second_order`` ``fun(t, x, v,
    ...)``'s ``x`` and ``v``.  The twin returns False, as ``store`` does,
    when the row's length is not the array's.
    """
    declared = getattr(fun, "in_place_twin", None)
    if declared is not None or not flat:
        return declared

    def writes(definition, last):
        return (_writes(last, fun) if _elements(last.value, fun) is not None else
                _elementwise_writes(last, fun, _states(definition, second_order)))
    return _rewritten(fun, writes, ("W", "dst", "start"))


@functools.lru_cache(maxsize=256)
def in_place_matrix_twin(fun):
    """``twin(J, *params)`` writing the matrix ``fun(*params)`` returns into ``J``, or None.

    For a Jacobian that ends in ``return np.array([[e00, e01, ...], [e10,
    ...], ...])``, rows of one length, as most small ones do: compiled,
    that matrix was allocated, and freed, at every Jacobian (a Rosenbrock
    method takes one a step).  The rules are :func:`in_place_twin`'s: every
    element evaluated in order before any is written, what
    :func:`~odekit.kernels.evaluation.store_matrix` refuses left for Numba
    to refuse, and False when ``J`` is not of the matrix's shape.
    """
    return _rewritten(fun, lambda definition, last: _matrix_writes(last, fun), ("J",))


def _rewritten(fun, writes, leading):
    """``fun`` with its ``return`` replaced by ``writes(definition, last)`` (None: not rewritten) and the
    parameters ``leading`` first, or None when its source is not a plain function's (see :func:`in_place_twin`)."""
    code = getattr(fun, "__code__", None)
    if not isinstance(fun, types.FunctionType) or code.co_freevars or fun.__name__ == "<lambda>":
        return None
    try:
        source = textwrap.dedent(inspect.getsource(fun))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):       # no source (the REPL, exec) or not a whole definition
        return None
    ast.increment_lineno(tree, code.co_firstlineno - 1)   # the twin's errors name the user's lines
    definition = tree.body[0] if len(tree.body) == 1 else None
    if not _rewritable(definition, fun) or not _same_names(_function_code(tree, fun), code):
        return None             # the source on disk is not the function's (edited since it was imported)
    statements = writes(definition, definition.body[-1])
    if statements is None:
        return None
    definition.args.posonlyargs[:0] = [ast.copy_location(ast.arg(PREFIX + name), definition) for name in leading]
    definition.body[-1:] = statements
    twin = types.FunctionType(_function_code(tree, fun), fun.__globals__, fun.__name__, fun.__defaults__)
    twin.__kwdefaults__ = fun.__kwdefaults__
    twin.__qualname__ = f"{fun.__qualname__} (in place)"
    return twin


def _rewritable(definition, fun):
    """Whether ``definition`` (the parsed source of ``fun``) ends in its one ``return``, of :func:`_elements`."""
    if not isinstance(definition, ast.FunctionDef) or definition.decorator_list or definition.name != fun.__name__:
        return False
    returns = [node for node in ast.walk(definition) if isinstance(node, ast.Return)]
    if returns != [definition.body[-1]] or definition.body[-1].value is None:
        return False
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Yield, ast.YieldFrom,
              ast.Global, ast.Nonlocal)
    for node in ast.walk(definition):
        if node is not definition and isinstance(node, nested):
            return False
        if isinstance(node, ast.Name) and node.id.startswith(PREFIX):
            return False
    return True


def _elements(value, fun):
    """The elements of a returned ``np.array([e0, ...])``, ``np.array((e0, ...))`` or ``(e0, ...)``; else None.

    ``np`` is whatever name ``fun``'s module gives NumPy (or ``array``, NumPy's
    ``array`` imported alone).  Starred elements and nested lists or tuples
    (a matrix: see :func:`_matrix_writes`) are not recognised.
    """
    literal = _array_literal(value, fun)
    if literal is None and not isinstance(value, ast.Tuple):      # (a list returned as it is is no array)
        return None
    return _scalars(value if literal is None else literal)


def _array_literal(value, fun):
    """The list or tuple that ``np.array(...)`` is called with in ``value``, or None."""
    if (isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords and _is_array(value.func, fun)
            and isinstance(value.args[0], (ast.List, ast.Tuple))):
        return value.args[0]
    return None


def _scalars(node):
    """The elements of the list or tuple ``node``, none of them starred, a list or a tuple; else None."""
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return None
    if any(isinstance(e, (ast.Starred, ast.List, ast.Tuple)) for e in node.elts):
        return None
    return node.elts


def _is_array(func, fun):
    """Whether the called ``func`` is ``np.array`` in ``fun``'s module, not shadowed by a local name."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr == "array":
        name, target = func.value.id, np
    elif isinstance(func, ast.Name):
        name, target = func.id, np.array
    else:
        return False
    return fun.__globals__.get(name) is target and name not in fun.__code__.co_varnames


def _writes(last, fun):
    """The statements that replace ``return np.array([...])`` (``last``): evaluate all, check the length, write."""
    elements = _elements(last.value, fun)
    m = len(elements)
    names = [f"{PREFIX}e{k}" for k in range(m)]
    lines = [f"{name} = 0" for name in names]       # placeholders for the user's expressions
    lines += [f"if {PREFIX}W.shape[1] - {PREFIX}start != {m}:", "    return False"]
    lines += [f"{PREFIX}W[{PREFIX}dst, {PREFIX}start + {k}] = {name}" for k, name in enumerate(names)]
    lines += ["return True"]
    return _placed(lines, last, elements)


def _matrix_writes(last, fun):
    """The statements that replace ``return np.array([[...], ...])`` (``last``): evaluate all, check the shape,
    write; None for any other return."""
    literal = _array_literal(last.value, fun)
    rows = [] if literal is None else [_scalars(row) for row in literal.elts]
    if not rows or any(row is None for row in rows) or len({len(row) for row in rows}) != 1:
        return None
    m, k = len(rows), len(rows[0])
    names = [f"{PREFIX}e{i}_{j}" for i in range(m) for j in range(k)]
    lines = [f"{name} = 0" for name in names]       # placeholders for the user's expressions
    lines += [f"if {PREFIX}J.shape[0] != {m} or {PREFIX}J.shape[1] != {k}:", "    return False"]
    lines += [f"{PREFIX}J[{i}, {j}] = {PREFIX}e{i}_{j}" for i in range(m) for j in range(k)]
    lines += ["return True"]
    return _placed(lines, last, [element for row in rows for element in row])


def _placed(lines, last, values):
    """``lines`` parsed, standing where ``last`` stood, their first ``len(values)`` statements assigning ``values``."""
    statements = ast.parse("\n".join(lines)).body
    for statement in statements:
        for node in ast.walk(statement):
            ast.copy_location(node, last)
    for statement, value in zip(statements, values):
        statement.value = value
    return statements


# --- a returned vector expression, element by element -------------------------------------------
# ``return -mu * x / r3`` of a state ``x`` is written as a loop over the state's
# components of the same arithmetic on ``x[k]``: for one-dimensional arrays of the
# state's length and scalars, NumPy's broadcasting is exactly that.  Only
# arithmetic and NumPy's elementwise functions are accepted; every part that does
# not involve the state is evaluated once, before the loop, in the original's
# order.  A name the rewrite takes for a scalar that is an array (from args, or
# computed) makes the element an array, which Numba refuses to write into the
# state: the function then keeps the ordinary path.

ELEMENTWISE = frozenset((
    "abs", "absolute", "negative", "sqrt", "cbrt", "square", "exp", "exp2", "expm1", "log", "log2", "log10",
    "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
    "arctanh", "conj", "conjugate", "sign", "floor", "ceil",
))
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def _states(definition, second_order):
    """The names of the state's parameters (``y``, or ``x`` and ``v``) when the body never rebinds them; else ()."""
    params = [a.arg for a in definition.args.posonlyargs + definition.args.args]
    states = params[1:3] if second_order else params[1:2]
    if len(states) < (2 if second_order else 1):
        return ()
    stored = {n.id for n in ast.walk(definition) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return () if stored & set(states) else tuple(states)


def _elementwise_writes(last, fun, states):
    """The statements that write ``return <vector expression>`` (``last``) element by element; None if not one."""
    hoisted = []
    element = _elementwise(last.value, fun, states, hoisted) if states else None
    if element is None or not any(isinstance(n, ast.Subscript) and getattr(n.slice, "id", "") == PREFIX + "k"
                                  for n in ast.walk(element)):
        return None
    names = [name for name, _ in hoisted]
    lines = [f"{name} = 0" for name in names]
    lines += [f"for {PREFIX}k in range({PREFIX}W.shape[1] - {PREFIX}start):",
              f"    {PREFIX}W[{PREFIX}dst, {PREFIX}start + {PREFIX}k] = 0", "return True"]
    statements = _placed(lines, last, [value for _, value in hoisted])
    statements[len(names)].body[0].value = element
    return statements


def _elementwise(node, fun, states, hoisted):
    """``node`` with each state ``y`` read as ``y[k]`` and its parts free of the state hoisted; None if not
    elementwise."""
    mentions = any(isinstance(n, ast.Name) and n.id in states for n in ast.walk(node))
    if not mentions or _is_component(node, states):
        if isinstance(node, (ast.Constant, ast.Name)):
            return node
        name = f"{PREFIX}s{len(hoisted)}"
        hoisted.append((name, node))
        return ast.copy_location(ast.Name(name, ast.Load()), node)
    if isinstance(node, ast.Name):
        index = ast.Name(PREFIX + "k", ast.Load())
        return ast.copy_location(ast.Subscript(ast.Name(node.id, ast.Load()), index, ast.Load()), node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ARITHMETIC):
        left = _elementwise(node.left, fun, states, hoisted)
        right = left and _elementwise(node.right, fun, states, hoisted)
        return right and ast.copy_location(ast.BinOp(left, node.op, right), node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _elementwise(node.operand, fun, states, hoisted)
        return operand and ast.copy_location(ast.UnaryOp(node.op, operand), node)
    if (isinstance(node, ast.Call) and not node.keywords and isinstance(node.func, ast.Attribute)
            and node.func.attr in ELEMENTWISE and isinstance(node.func.value, ast.Name)
            and fun.__globals__.get(node.func.value.id) is np and node.func.value.id not in fun.__code__.co_varnames):
        args = []
        for arg in node.args:
            args.append(_elementwise(arg, fun, states, hoisted))
            if args[-1] is None:
                return None
        return ast.copy_location(ast.Call(node.func, args, []), node)
    return None


def _is_component(node, states):
    """``y[3]``: one component of the state, a scalar."""
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in states
            and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int)


def _function_code(tree, fun):
    """The code object of the one function defined in ``tree``, compiled in ``fun``'s file."""
    module = compile(ast.fix_missing_locations(tree), fun.__code__.co_filename, "exec")
    (code,) = [c for c in module.co_consts if isinstance(c, types.CodeType)]
    return code


def _same_names(code, original):
    """Whether two code objects have the same arguments, local and global names, and constants."""
    return all(getattr(code, a) == getattr(original, a)
               for a in ("co_argcount", "co_kwonlyargcount", "co_varnames", "co_names", "co_consts"))
