import unittest

from validate import is_valid_email, is_valid_username


class EmailTest(unittest.TestCase):
    def test_valid(self):
        for a in ["ann.lee@mail.example.org", "bob+news@example.com", "C_D%x-y@ex-ample.co",
                  "Ann@Example.COM", "a@b.io"]:
            self.assertTrue(is_valid_email(a), a)

    def test_invalid(self):
        for a in ["x@y", "no-at.example.com", "a@b.c", "a@@b.com", "a b@c.com", "a@b..com",
                  "@example.com", "a@.example.com", "a@example.com\\nx"]:
            self.assertFalse(is_valid_email(a), a)

    def test_username_unchanged(self):
        self.assertTrue(is_valid_username("ann_01"))
        self.assertFalse(is_valid_username("a"))
