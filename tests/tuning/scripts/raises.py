"""Fails at run time: the traceback should start at this script, as under plain python."""


def inner():
    raise RuntimeError("boom from the script")


inner()
