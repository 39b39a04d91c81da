"""Aligned plain-text tables: the one layout every table odekit prints shares.

The registry (``odekit methods``), the shootout, the analysis results and the
stiffness estimate's step limits all print through :func:`text_table`, so a
change of layout is made once.  Each caller formats its own cells (a number's
digits are the caller's business); this module only aligns strings, and
imports nothing of odekit, so any layer may use it.
"""


def text_table(rows, header=None, *, right=(), indent=""):
    """Rows of strings as columns two spaces apart, each line without trailing blanks.

    Parameters
    ----------
    rows : iterable of sequence of str
        The body, one sequence of cells per line, all of the same length.
    header : sequence of str, optional
        Column names: the first line, left-aligned, underlined by a rule of
        dashes as wide as each column.
    right : collection of int
        Indices of the columns whose body cells are right-aligned (numbers
        read best so); their names stay left-aligned.
    indent : str
        Written before every line.

    Returns
    -------
    str
        The lines joined by newlines; empty when there is neither a header
        nor a row.

    Examples
    --------
    >>> print(text_table([("rk4", "4"), ("euler", "1")], ("method", "order"), right={1}))
    method  order
    ------  -----
    rk4         4
    euler       1
    """
    rows = [tuple(row) for row in rows]
    every = rows if header is None else [tuple(header), *rows]
    if not every:
        return ""
    widths = [max(len(row[i]) for row in every) for i in range(len(every[0]))]

    def line(cells, aligned):
        return indent + "  ".join(cell.rjust(w) if aligned and i in right else cell.ljust(w)
                                  for i, (cell, w) in enumerate(zip(cells, widths))).rstrip()

    lines = [line(row, True) for row in rows]
    if header is not None:
        lines[:0] = [line(header, False), indent + "  ".join("-" * w for w in widths)]
    return "\n".join(lines)
