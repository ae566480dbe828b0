import pathlib
import unittest

from shop.invoice import invoice_line
from shop.pricing import order_total
from shop.report import revenue


class RenameTest(unittest.TestCase):
    def test_new_name_works(self):
        self.assertEqual(order_total([(10, 2)]), 24.0)
        self.assertEqual(invoice_line("ann", [(5, 1)]), "ann: 6.00")
        self.assertEqual(revenue([[(10, 1)], [(5, 2)]]), 24.0)

    def test_old_name_is_gone(self):
        for path in pathlib.Path("shop").glob("*.py"):
            self.assertNotIn("calc_total", path.read_text(), path)
