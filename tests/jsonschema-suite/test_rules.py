"""Unit tests of rules.py, run by run.sh before the suite:

    python3 -m unittest discover -s tests/jsonschema-suite -p 'test_*.py'
"""

from __future__ import annotations

import unittest

from rules import Line, bare, field_lines, is_generic, policy, resolve, wrong


class Generic(unittest.TestCase):
    def test_saying_nothing_specific(self) -> None:
        for text in [
            "Missing required field. You sent: (missing). Expected a value.",
            "Matches none of the allowed shapes. You sent: 'x'. Expected one of: a value; a value.",
            "Not allowed here. You sent: 1. Expected a value that is not a value.",
            "No item matches. You sent: array(0). Expected at least 1 item that is a value.",
            "Invalid value. You sent: 1. Expected a value as the schema describes.",
        ]:
            self.assertTrue(is_generic(text), text)

    def test_specific(self) -> None:
        for text in [
            "Matches more than one of the allowed shapes. You sent: 3. Expected a value matching exactly one of them.",
            "Fails the schema's 'x-even' rule. You sent: 3. Expected a value that satisfies 'x-even': true.",
            "Not allowed here. You sent: 'root'. Expected a value that is not exactly 'root'.",
            "Invalid value. You sent: 'x'. Expected one of 'a value', 'b'.",
            "Invalid type. You sent: 'a value'. Expected an integer.",
            "More items than the schema describes. You sent: array(3). Expected at most 2 items.",
        ]:
            self.assertFalse(is_generic(text), text)


class Policy(unittest.TestCase):
    UNKNOWN = "Unrecognized key 'bar'. You sent: 2. Expected only the known fields 'foo'; remove it."

    def test_a_key_named_nowhere(self) -> None:
        self.assertEqual(policy([Line("value.bar", self.UNKNOWN)], {"properties": {"foo": {}}}), "unknown-key")

    def test_a_key_named_in_a_subschema_or_by_a_pattern(self) -> None:
        for schema in [
            {"allOf": [{"properties": {"bar": {}}}]},
            {"$defs": {"x": {"patternProperties": {"^b": {}}}}},
            {"patternProperties": {"(": {}}},  # not a Python regex: counted as naming it
        ]:
            self.assertIsNone(policy([Line("value.bar", self.UNKNOWN)], schema), schema)

    def test_formats_and_mixtures(self) -> None:
        date = Line("value", "Invalid date format. You sent: '1'. Expected a date as YYYY-MM-DD, like 2026-01-31.")
        self.assertEqual(policy([date], {"format": "date"}), "format")
        self.assertIsNone(policy([date, Line("value.bar", self.UNKNOWN)], {}))
        self.assertIsNone(policy([], {}))


ARGUMENTS = {"value": {"a.b": {"c": [1, 2.5, "x"]}, "o": {"k": 1}, "foo\nbar": True}}


class Wrong(unittest.TestCase):

    def test_paths_with_dots_and_escapes(self) -> None:
        self.assertEqual(resolve(ARGUMENTS, "value.a.b.c.1"), 2.5)
        self.assertEqual(resolve(ARGUMENTS, "value.foo\\nbar"), True)
        self.assertEqual(bare("x" * 60), "x" * 47 + "...")

    def test_lines(self) -> None:
        good = [
            Line("value.a.b.c.0", "Too small. You sent: 1. Expected at least 2."),
            Line("value.a.b.c.1", "Not a multiple of 2. You sent: 2.5. Expected a multiple of 2."),
            Line("value.a.b.c", "Too few items. You sent: array(3). Expected at least 4 items."),
            Line("value.a.b.c.2", "Too short. You sent: 'x'. Expected at least 2 characters."),
            Line("value.o", 'Too many properties. You sent: {"k":1}. Expected at most 0 properties.'),
            Line("value.o", "Invalid key. You sent: 'k'. Expected every key to be exactly 'j'."),
            Line("value.o.j", "Missing required field. You sent: (missing). Expected an integer."),
            Line("(root)", 'Too many properties. You sent: {"value":{}}. Expected at most 0 properties.'),
            Line("value.a.b.c.1", "This integer is beyond the integers this server carries exactly. You sent: a number."),
        ]
        for line in good:
            self.assertIsNone(wrong(line, ARGUMENTS), line)
        bad = [
            Line("value.nope", "Invalid type. You sent: 1. Expected a string."),
            Line("value.a.b.c.0", "Too small. You sent: 2. Expected at least 3."),
            Line("value.o", "This field is not accepted. You sent: 1. Expected the field removed."),
            Line("value.a.b.c.0.x", "Missing required field. You sent: (missing). Expected a value."),
            Line("value.a.b.c.2", "Too short. You sent: a number. Expected at least 2 characters."),
        ]
        for line in bad:
            self.assertIsNotNone(wrong(line, ARGUMENTS), line)


class Envelope(unittest.TestCase):
    def test_field_lines(self) -> None:
        text = (
            '<validation_error action="suite.g1">\n<field name="value.a">Too small. You sent: 1. Expected at'
            " least 2.</field>\n<field>Bad &amp; wrong.</field>\n<recovery>Fix the fields above.</recovery>\n"
            "</validation_error>"
        )
        lines = field_lines(text)
        expected = ["value.a: Too small. You sent: 1. Expected at least 2.", "(root): Bad & wrong."]
        self.assertEqual([str(line) for line in lines or []], expected)
        self.assertIsNone(field_lines('<tool_error code="TIMEOUT"><message>m</message></tool_error>'))
        self.assertIsNone(field_lines("plain text"))


if __name__ == "__main__":
    unittest.main()
