"""A dropped guard for a missing value is the fault where the value it tested is now used
bare: the suspect line is that line of the hunk, not its first line, in SQL and in code."""

from agent.models.changes import unguarded_line


def test_the_query_line_that_lost_its_null_test_is_the_suspect():
    removed = [
        'return list("centerId = ?1 and hiredOn <= ?2 and (leftOn is null or leftOn >= ?2)",'
        " centerId, day);"
    ]
    added = [
        (13, '    private static final String WORKING_AT = """'),
        (14, "            from Coach c"),
        (15, "            where c.centerId = :center"),
        (16, "              and c.hiredOn <= :day"),
        (17, "              and c.leftOn >= :day"),
        (18, '            """;'),
        (23, '        return find(WORKING_AT, Parameters.with("center", centerId)).list();'),
    ]
    assert unguarded_line(added, removed) == (17, "and c.leftOn >= :day")


def test_a_sum_that_lost_its_coalesce_is_the_suspect():
    removed = ["'SELECT COALESCE(SUM(importe), 0) FROM multas WHERE socio_id = ?'"]
    added = [
        (21, "    public function pendientePorSocio(int $socioId, int $bibliotecaId)"),
        (24, "            'SELECT SUM(m.importe) FROM multas m'"),
        (25, "            . ' JOIN prestamos p ON p.id = m.prestamo_id'"),
    ]
    assert unguarded_line(added, removed) == (24, "'SELECT SUM(m.importe) FROM multas m'")


def test_optional_chaining_dropped_points_at_the_bare_read():
    removed = ["  const city = order.customer?.address?.city;"]
    added = [(7, "  const { customer } = order;"), (8, "  const city = customer.address.city;")]
    assert unguarded_line(added, removed) == (8, "const city = customer.address.city;")


def test_no_guard_lost_or_no_bare_use_gives_nothing():
    assert unguarded_line([(3, "x = a ?? b")], ["x = a ?? c"]) is None
    assert unguarded_line([(3, "return None")], ["if user is None: return None"]) is None
