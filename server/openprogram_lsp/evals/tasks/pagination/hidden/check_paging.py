import unittest

from paging import page, page_count

ITEMS = list(range(1, 24))  # 23 items


class PagingTest(unittest.TestCase):
    def test_first_page(self):
        self.assertEqual(page(ITEMS, 1, 10), list(range(1, 11)))

    def test_last_page(self):
        self.assertEqual(page_count(ITEMS, 10), 3)
        self.assertEqual(page(ITEMS, 3, 10), [21, 22, 23])

    def test_every_item_once(self):
        got = [x for n in range(1, page_count(ITEMS, 5) + 1) for x in page(ITEMS, n, 5)]
        self.assertEqual(got, ITEMS)

    def test_empty_and_exact(self):
        self.assertEqual(page_count([], 10), 1)
        self.assertEqual(page_count(list(range(20)), 10), 2)
