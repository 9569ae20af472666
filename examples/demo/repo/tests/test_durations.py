import unittest

from durations import format_duration, parse_duration


class ParseDurationTests(unittest.TestCase):
    def test_single_digit_units(self):
        self.assertEqual(parse_duration("5s"), 5)
        self.assertEqual(parse_duration("2m"), 120)
        self.assertEqual(parse_duration("1h"), 3600)

    def test_rejects_empty(self):
        with self.assertRaises(ValueError):
            parse_duration("  ")

    def test_rejects_garbage(self):
        with self.assertRaises(ValueError):
            parse_duration("ten minutes")


class FormatDurationTests(unittest.TestCase):
    def test_round_trip_small(self):
        for text in ["5s", "2m", "1h", "1h2m3s"]:
            self.assertEqual(format_duration(parse_duration(text)), text)

    def test_zero(self):
        self.assertEqual(format_duration(0), "0s")


if __name__ == "__main__":
    unittest.main()
