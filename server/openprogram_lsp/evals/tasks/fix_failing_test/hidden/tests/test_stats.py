import unittest

from stats import mean, spread


class StatsTest(unittest.TestCase):
    def test_mean_of_integers(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_mean_of_floats(self):
        self.assertAlmostEqual(mean([0.5, 0.25]), 0.375)

    def test_spread(self):
        self.assertEqual(spread([3, 9, 4]), 6)


if __name__ == "__main__":
    unittest.main()
