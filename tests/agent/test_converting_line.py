"""A value whose type or format changed where it is made: the suspect is the added line that
converts or formats it in a way no removed line did, not the first line of the hunk (a
property's name, an import of the formatter)."""

from agent.models.changes import converting_line


def test_the_getter_that_now_formats_the_date_is_the_suspect():
    added = [
        (2, "const { formatInTimeZone } = require('date-fns-tz');"),
        (5, "const STUDIO_TZ = process.env.STUDIO_TZ || 'Europe/Madrid';"),
        (11, "    startsAt: {"),
        (12, "      type: DataTypes.DATE,"),
        (15, "      get() {"),
        (16, "        const raw = this.getDataValue('startsAt');"),
        (17, "  return raw && formatInTimeZone(raw, STUDIO_TZ, \"yyyy-MM-dd'T'HH:mm:ssXXX\");"),
        (18, "      },"),
    ]
    removed = ["    startsAt: { type: DataTypes.DATE, allowNull: false },"]
    line, _ = converting_line(added, removed)
    assert line == 17


def test_a_new_conversion_call_is_the_suspect_and_an_old_one_is_not():
    removed = ["    amount = int(row['amount'])"]
    added = [(7, "    amount = int(row['amount'])"), (8, "    due = str(row['due'])")]
    assert converting_line(added, removed) == (8, "due = str(row['due'])")
    assert converting_line([(7, "    amount = int(row['total'])")], removed) is None
