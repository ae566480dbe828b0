import unittest

from textutils import slugify, title_case


class SlugifyTest(unittest.TestCase):
    def test_examples(self):
        self.assertEqual(slugify("  Hello, World! "), "hello-world")
        self.assertEqual(slugify("A--B"), "a-b")
        self.assertEqual(slugify("Release 2.0 (final)"), "release-2-0-final")
        self.assertEqual(slugify("---"), "")
        self.assertEqual(slugify("café au lait"), "caf-au-lait")

    def test_existing_function_kept(self):
        self.assertEqual(title_case("hello world"), "Hello World")
