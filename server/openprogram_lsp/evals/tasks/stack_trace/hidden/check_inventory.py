import subprocess
import sys
import unittest

from inventory import STOCK, stock_report


class InventoryTest(unittest.TestCase):
    def test_unknown_item_is_zero(self):
        self.assertEqual(stock_report(["apple", "kiwi"]), "apple: 12\nkiwi: 0")

    def test_stock_not_changed(self):
        stock_report(["kiwi"])
        self.assertNotIn("kiwi", STOCK)

    def test_job_runs(self):
        out = subprocess.run([sys.executable, "job.py"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("kiwi: 0", out.stdout)
