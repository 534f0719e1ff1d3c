"""Registered studies (``book/registration.md``): :mod:`.transformer`, the registered transformer study (issue 32)."""
