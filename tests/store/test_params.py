"""Named SQL parameters: numbered once in the order they first appear, and given by name."""

import pytest

from service.store.params import named

STATEMENT = named(
    "UPDATE t SET a = :a::jsonb, b = :b WHERE id = :id AND a IS NOT NULL AND :b::int > 0"
    " AND x[:b::int] = y[1:2]"
)


def test_each_name_is_numbered_once_and_casts_and_slices_are_left_alone() -> None:
    assert STATEMENT.sql == (
        "UPDATE t SET a = $1::jsonb, b = $2 WHERE id = $3 AND a IS NOT NULL AND $2::int > 0"
        " AND x[$2::int] = y[1:2]"
    )
    assert STATEMENT.names == ("a", "b", "id")


def test_values_come_in_the_statement_order_whatever_the_order_given() -> None:
    assert STATEMENT.args(id=7, b=None, a="{}") == ("{}", None, 7)


def test_a_missing_name_is_refused() -> None:
    with pytest.raises(TypeError, match=r"missing: \['id'\]; unknown: \[\]"):
        STATEMENT.args(a="{}", b=1)


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(TypeError, match=r"missing: \[\]; unknown: \['c'\]"):
        STATEMENT.args(a="{}", b=1, id=7, c=2)


def test_a_statement_mixing_numbers_with_names_is_refused_when_compiled() -> None:
    with pytest.raises(ValueError, match="numbered"):
        named("SELECT :a, $2")
