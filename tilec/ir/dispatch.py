"""``OpTable``: what a backend does for each op, keyed by op class (the backends' lowering registries).

Lookup follows the op's class hierarchy, so registering ``BinaryOp`` covers every binary op and a subclass can be
given its own entry. Each backend keeps its own table; nothing is keyed by op-name strings."""
from __future__ import annotations


class OpTable:
    def __init__(self, what: str):
        self.what = what
        self.entries: dict[type, object] = {}
        self._cache: dict[type, object] = {}

    def register(self, *op_classes):
        """Decorator: the decorated function handles ``op_classes`` (and their subclasses without their own)."""
        def deco(fn):
            for c in op_classes:
                if c in self.entries:
                    raise ValueError(f"two {self.what} entries for {c.__name__}")
                self.entries[c] = fn
            self._cache.clear()
            return fn
        return deco

    def lookup(self, op):
        """The entry for ``op`` (an operation), or None."""
        return self.lookup_class(type(op))

    def lookup_class(self, cls):
        """The entry for op class ``cls``: its own, else its nearest base class's; None when there is none."""
        try:
            return self._cache[cls]
        except KeyError:
            pass
        fn = next((self.entries[c] for c in cls.__mro__ if c in self.entries), None)
        self._cache[cls] = fn
        return fn
