"""text_table: the one layout of odekit's printed tables (registry, shootout, analysis, stiffness)."""

from odekit.formatting import text_table


def test_columns_are_as_wide_as_their_widest_cell_and_two_spaces_apart():
    text = text_table([("rk4", "4", "yes"), ("velocity_verlet", "2", "")], ("method", "order", "FSAL"))
    assert text.splitlines() == [
        "method           order  FSAL",
        "---------------  -----  ----",
        "rk4              4      yes",
        "velocity_verlet  2",               # no trailing blanks where the last cells are empty
    ]


def test_right_aligned_columns_keep_their_name_left_aligned():
    text = text_table([("euler", "0.005"), ("rk4", "0.1")], ("method", "h"), right={1})
    assert text.splitlines() == ["method  h", "------  -----", "euler   0.005", "rk4       0.1"]


def test_without_a_header_there_is_no_rule_and_every_line_is_indented():
    assert text_table([("euler", "0.7639"), ("dp54", "any")], indent="    ") == "    euler  0.7639\n    dp54   any"


def test_an_empty_table_is_its_header_and_rule_or_nothing():
    assert text_table([], ("method", "order")) == "method  order\n------  -----"
    assert text_table([]) == ""
