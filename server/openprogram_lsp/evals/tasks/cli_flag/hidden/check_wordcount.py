import subprocess
import sys
import unittest


def run(*args):
    out = subprocess.run([sys.executable, "wordcount.py", "sample.txt", *args],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")[:-1]


class WordcountTest(unittest.TestCase):
    def test_default_unchanged(self):
        self.assertEqual(run("--top", "3"), ["3 the", "2 and", "2 cat"])

    def test_reverse(self):
        self.assertEqual(run("--reverse"),
                         ["1 a", "1 dog", "1 end", "2 and", "2 cat", "3 the"])

    def test_reverse_with_top(self):
        self.assertEqual(run("--reverse", "--top", "2"), ["1 a", "1 dog"])
