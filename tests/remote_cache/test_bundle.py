"""A remote entry is one bundle: every artifact, its checksum, the metadata and the key; anything but the whole,
intact value stored under that key is refused."""
import zlib

import pytest
from hypothesis import given, strategies as st

from tilec.cache import entry

stages = st.dictionaries(st.sampled_from(["tir", "gir", "llir", "ptx", "cubin", "asm", "plan", "x"]),
                         st.one_of(st.text(max_size=300), st.binary(max_size=300)), min_size=1)
metas = st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: not k.startswith("_")),
                        st.one_of(st.integers(), st.text(max_size=20), st.lists(st.integers(), max_size=3)),
                        max_size=5)
KEY = "5e" * 32


@given(stages, metas)
def test_round_trip(asm, meta):
    assert entry.unpack(KEY, entry.pack(KEY, "k", asm, meta)) == (asm, meta)


@given(stages, metas, st.data())
def test_any_changed_byte_is_refused(asm, meta, data):
    value = bytearray(entry.pack(KEY, "k", asm, meta))
    i = data.draw(st.integers(0, len(value) - 1))
    value[i] ^= data.draw(st.integers(1, 255))
    with pytest.raises(ValueError):
        entry.unpack(KEY, bytes(value))


@given(stages, st.data())
def test_any_truncation_is_refused(asm, data):
    value = entry.pack(KEY, "k", asm, {})
    n = data.draw(st.integers(0, len(value) - 1))
    with pytest.raises(ValueError):
        entry.unpack(KEY, value[:n])


def test_an_entry_under_another_key_is_refused():
    value = entry.pack(KEY, "k", {"tir": "a"}, {})
    with pytest.raises(ValueError, match="another key"):
        entry.unpack("6f" * 32, value)


def test_a_value_that_decompresses_past_the_limit_is_refused(monkeypatch):
    """A value whose checksum is right (anyone can compute one) but whose body inflates beyond any kernel's size
    is not inflated whole."""
    monkeypatch.setattr(entry, "_MAX_BODY", 1 << 16)
    body = zlib.compress(b"\0" * (1 << 20))
    value = entry.MAGIC + entry.digest(body).encode() + b"\n" + body
    with pytest.raises(ValueError, match="too large"):
        entry.unpack(KEY, value)


@pytest.mark.parametrize("value", [b"", b"tilec", None, "text", entry.MAGIC + b"0" * 64 + b"\n"])
def test_not_an_entry(value):
    with pytest.raises(ValueError):
        entry.unpack(KEY, value)
