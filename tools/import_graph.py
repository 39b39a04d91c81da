"""Which module of a package imports which, and the cycles among them.

    python tools/import_graph.py [--check] [PACKAGE_DIR]      (default: src/odekit)

Reads every ``.py`` file under ``PACKAGE_DIR`` with :mod:`ast` (nothing is
imported) and lists, for each module, the package's modules it imports --
those imported inside a function marked ``*``: a deferred import hides a
cycle from Python but not from the layering.  ``from .pkg import name``
counts as importing ``pkg.name`` when that is a module, else ``pkg``; and
importing ``pkg.mod`` counts as importing ``pkg`` too (Python runs its
``__init__`` first), unless the importer is inside ``pkg``.  The root
package, a facade that imports everything, is left out of that rule.
Then it prints the cycles: each strongly connected component of more than
one module, with one shortest cycle through it.  With ``--check`` the exit
status is 1 when there is a cycle.
"""

import argparse
import ast
import collections
import pathlib
import sys

DEFAULT = pathlib.Path(__file__).resolve().parents[1] / "src" / "odekit"


def modules(root):
    """``{dotted name: path}`` of every module under the package folder ``root``."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name, path, known):
    """``{imported module: deferred?}`` of the module ``name``: the ``known`` modules it imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = {}

    def add(target, deferred):
        parts = target.split(".")
        above = [".".join(parts[:n]) for n in range(2, len(parts))]     # run first; the root aside
        for module in [m for m in above if not name.startswith(m + ".")] + [target]:
            if module in known and module != name:
                found[module] = found.get(module, True) and deferred     # deferred only if every import is

    def visit(node, deferred):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, deferred)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:                          # from . (level 1) is the package itself
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base, deferred)
        inner = deferred or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    return found


def graph(root):
    """``{module: {imported module: deferred?}}`` of the package folder ``root``."""
    known = modules(root)
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return sorted(found)


def shortest_cycle(edges, component):
    """One shortest cycle through the component's first module, as a list ending where it starts."""
    start, inside = component[0], set(component)
    came_from, queue = {}, collections.deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(edges[v]):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if w in inside and w not in came_from:
                came_from[w] = v
                queue.append(w)
    raise AssertionError("a component without a cycle")  # cycles() returns only components with one


def report(edges):
    """The listing and the cycles, as lines of text."""
    def shown(v, w):
        return w + ("*" if edges[v][w] else "")

    lines = [f"{v} -> {', '.join(shown(v, w) for w in sorted(edges[v])) or '(none)'}" for v in sorted(edges)]
    lines.append("(* imported only inside functions)")
    found = cycles(edges)
    lines.append(f"\n{len(found)} import cycle(s)" + (":" if found else ""))
    for i, component in enumerate(found, start=1):
        path = shortest_cycle(edges, component)
        lines.append(f"  {i}. {len(component)} modules: {', '.join(component)}")
        lines.append(f"     e.g. {path[0]}" + "".join(f" -> {shown(v, w)}" for v, w in zip(path, path[1:])))
    return lines, found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", type=pathlib.Path, default=DEFAULT,
                        help="the package's folder (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="exit with status 1 when there is a cycle")
    options = parser.parse_args(argv)
    if not (options.package / "__init__.py").is_file():
        parser.error(f"PACKAGE_DIR must be a package's folder (with __init__.py); got {str(options.package)!r}")
    lines, found = report(graph(options.package))
    print("\n".join(lines))
    return 1 if options.check and found else 0


if __name__ == "__main__":
    sys.exit(main())
