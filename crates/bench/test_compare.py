"""The guard of compare.py on figures made up for it: a row that spends more CPU per call than
the landed figure allows fails and is named; a guard file that cannot be read is one clear line.

    python3 -m unittest crates/bench/test_compare.py
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

STDIO = ("stdio", "valid", 16)
STATELESS = ("http-stateless", "valid", 16)


def guard_with(cpu_ratio: float = 1.2, floor: float = 0.5) -> dict:
    return {
        "settings": {"rounds": 3, "seconds": 2, "warmup": 0.5, "profile": "ci"},
        "rows": [
            {"transport": "stdio", "call": "valid", "c": 16, "floor": floor, "landed": {"cpu_ratio": cpu_ratio}},
            {"transport": "http-stateless", "call": "valid", "c": 16, "floor": floor},
        ],
    }


def medians(row, cpu_ratio: float, ratio: float = 1.0) -> dict:
    figures = {"calls_per_s": 1000.0, "cpu_us_per_call": 20.0 * cpu_ratio, "ratio": ratio, "cpu_ratio": cpu_ratio}
    return {(row, "framework"): figures, (row, "raw rmcp"): {**figures, "cpu_us_per_call": 20.0, "cpu_ratio": 1.0}}


def failures(guard: dict, rows, figures: dict) -> tuple[list, str]:
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        failed = compare.guard_failures(guard, rows, figures)
    return failed, said.getvalue()


class Guard(unittest.TestCase):
    def test_more_cpu_than_the_landed_figure_allows_fails_and_names_the_row(self):
        failed, said = failures(guard_with(1.2), [STDIO], medians(STDIO, 1.2 * 1.15))
        self.assertEqual(failed, [STDIO])
        self.assertIn("stdio valid c=16", said)
        self.assertIn("+15 % against the landed 1.20×", said)
        self.assertIn("a regression over 10 %", said)

    def test_within_ten_percent_or_faster_passes(self):
        for cpu_ratio in (1.2 * 1.09, 1.2, 0.8):
            failed, said = failures(guard_with(1.2), [STDIO], medians(STDIO, cpu_ratio))
            self.assertEqual(failed, [], said)

    def test_a_row_without_a_landed_figure_is_held_to_its_floor(self):
        failed, _ = failures(guard_with(floor=0.9), [STATELESS], medians(STATELESS, 3.0, ratio=0.95))
        self.assertEqual(failed, [])
        failed, said = failures(guard_with(floor=0.9), [STATELESS], medians(STATELESS, 1.0, ratio=0.85))
        self.assertEqual(failed, [STATELESS])
        self.assertIn("http-stateless valid c=16: the framework makes 0.85× raw rmcp's calls/s, below the floor", said)

    def test_the_landed_figures_are_written_back_and_read_again(self):
        with tempfile.TemporaryDirectory() as dir:
            path = os.path.join(dir, "guard.json")
            guard = guard_with(1.2)
            with contextlib.redirect_stderr(io.StringIO()):
                compare.update_guard(path, guard, [STDIO, STATELESS], {**medians(STDIO, 1.3), **medians(STATELESS, 0.9)})
            again = compare.load_guard(path)
            self.assertEqual(again["rows"][0]["landed"]["cpu_ratio"], 1.3)
            self.assertEqual(again["rows"][1]["landed"]["cpu_ratio"], 0.9)

    def test_a_guard_file_that_cannot_be_read_is_one_line_saying_where(self):
        cases = {
            "not json": "not JSON: Expecting value at line 1, column 1",
            "[]": "expected an object",
            json.dumps({"rows": []}): "settings: expected an object",
            json.dumps({**guard_with(), "rows": []}): "rows: expected a list of rows",
            json.dumps({**guard_with(), "rows": [{"transport": "pigeon", "call": "valid", "c": 16, "floor": 1}]}):
                'rows[0]: no such row ["pigeon", "valid", 16]',
            json.dumps({**guard_with(), "rows": [guard_with()["rows"][0]] * 2}): "rows[1]: stdio valid c=16 is listed twice",
            json.dumps({**guard_with(), "rows": [{**guard_with()["rows"][0], "floor": "high"}]}):
                'rows[0].floor: expected a number of at least 0, found "high"',
            json.dumps({**guard_with(), "rows": [{**guard_with()["rows"][0], "landed": {"cpu_ratio": -1}}]}):
                "rows[0].landed.cpu_ratio: expected a number of at least 0.001, found -1",
            json.dumps({**guard_with(), "settings": {"rounds": 1.5, "seconds": 2, "warmup": 0, "profile": "ci"}}):
                "settings.rounds: expected an integer of at least 1, found 1.5",
            json.dumps({**guard_with(), "settings": {"rounds": 3, "seconds": 2, "warmup": 0, "profile": "../x"}}):
                'settings.profile: expected the name of a cargo profile, found "../x"',
        }
        with tempfile.TemporaryDirectory() as dir:
            path = os.path.join(dir, "guard.json")
            for text, expected in cases.items():
                with open(path, "w") as file:
                    file.write(text)
                with self.assertRaises(compare.GuardError) as raised:
                    compare.load_guard(path)
                self.assertIn(expected, str(raised.exception))
                self.assertTrue(str(raised.exception).startswith(path), str(raised.exception))
            with self.assertRaises(compare.GuardError) as raised:
                compare.load_guard(os.path.join(dir, "missing.json"))
            self.assertIn("cannot be read", str(raised.exception))

    def test_the_repository_guard_file_reads(self):
        guard = compare.load_guard(os.path.join(compare.ROOT, "crates", "bench", "guard.json"))
        self.assertTrue(compare.guard_rows(guard))


if __name__ == "__main__":
    unittest.main()
