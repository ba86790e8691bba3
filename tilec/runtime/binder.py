"""The launch binder: ``fn[grid](...)``'s fast path, a function generated once per kernel with the kernel's own
signature, so that Python binds the arguments in C and a cached launch runs straight-line code.

A call with every parameter given and no launch option goes through the *plain* binder: it probes each specialised
argument in place (numpy arrays through word views of memory, ``targets/arguments.py: array_fields``; i32 ints by
value; anything else through ``args.probe``), looks the flat tuple of the probes and the constexprs up in the
kernel's launch cache, and calls the variant's launch entry (``targets/entry.py``) with the arguments as they are:
``single`` when ``fn[grid]`` found the grid to be one program, else ``any`` with the normalised grid. A call with
launch options (``num_warps=...``) goes to the *options* binder, the same code with the options in the key; a call
missing a parameter, naming an unknown one or giving too many goes to the general path
(``JITFunction._general_launch``), which names what is wrong; a cache miss (a new specialisation, a read-only array,
a type without a probe) goes to ``JITFunction._fast_miss``, which compiles if needed, launches and caches the key.

Per specialised parameter the key holds three entries. A numpy array's are its dtype, its flags word and its
address's low four bits: a read-only array and a misaligned pointer get keys of their own (the miss path decides on
them, so both the refusal of read-only memory where the kernel writes and the 16-byte alignment specialisation
hold), while the key stays flat and each entry is read with no arithmetic beyond one ``& 15``. An i32 int's are
its specialisation (``"i32"``, ``"i32:16"``, ``"i32:1"``) and two Nones; any other value's are its keyer's key
and two Nones.

The *native way* comes first where the launcher offers one (``targets/entry.py: native``; the CPU's, for numpy
arrays, ints and floats: ``targets/cpu/fastcall.py``). Its keyer describes the specialised arguments in one native
call; that description, the constexprs and the other keys as above (``NATIVE_KEY`` first) find the variant's
native launch function, which reads the arguments and runs the grid in one more call. A launch of the Python way
whose arguments the keyer describes stores that key for its variant, beside its Python key (which keeps alive
what the description stands for: the dtypes), and from then on launches the native way. Anything the native way
does not take (other kinds of arguments, a grid not checked ahead, a value that does not fit its parameter, a
scratch area held by another thread) goes the Python way, which is the same as before.
"""
from __future__ import annotations

import numpy as np

from ..errors import for_user
from ..targets.arguments import array_fields
from ..targets.entry import after_native
from ..targets.grid import SINGLE, CheckedGrid, normalize_grid
from ..targets.options import Options
from .args import KEYERS, describer, probe

#: the keywords a launch takes besides the kernel's parameters: the options every backend shares (``Options``), the
#: target, a stage file to compile from and the architecture (the backend's own options: ``tilec.compile``)
LAUNCH_OPTIONS = (*Options.names(), "target", "ir_override", "arch")
_LAUNCH_OPTIONS = frozenset(LAUNCH_OPTIONS)

#: the binder's default for a parameter without one: seen, the call goes to the general path (which names it)
MISSING = object()
NO_OPTIONS = (None,) * len(LAUNCH_OPTIONS)
#: the first item of the launch cache's native keys, which no key of the Python way starts with
NATIVE_KEY = object()

_BINDER = """
def {name}({params}):
    if _tl_extra or _tl_kw{missing}:
        try:
            return {divert}
        except _tl_LOCATED as e:
            raise _tl_for_user(e)  # raised here: the user's launch line and this frame, nothing between
{watched}    _tl_nk = _tl_key = None
{native}    try:
{probes}
        _tl_key = ({key}{globals_key})
        _tl_single, _tl_any, _tl_host, _tl_kernel, _tl_nat = _tl_cache[_tl_key]
    except (KeyError, TypeError, ValueError, OverflowError):
        try:
            return _tl_miss(_tl_key, _tl_grid, ({values}), ({option_values}))
        except _tl_LOCATED as e:
            raise _tl_for_user(e)
{register}    try:
        if _tl_grid is _tl_SINGLE:
            if _tl_host:
                _tl_single({host_runtime})
            else:
                _tl_single({runtime})
            return _tl_kernel
        _tl_g = _tl_grid
        if type(_tl_g) is not _tl_Checked:
            if callable(_tl_g):
                _tl_g = _tl_g({{{named}}})
            _tl_g = _tl_grid3(_tl_g, {name!r})
            if _tl_g is None:
                return _tl_kernel
        if _tl_host:
            _tl_any(_tl_g, {host_runtime})
        else:
            _tl_any(_tl_g, {runtime})
    except _tl_LOCATED as e:
        raise _tl_for_user(e)
    return _tl_kernel
"""

#: the plain binder's native way (``targets/entry.py: native``), once a variant has given it a keyer: the keyer's
#: key of the specialised arguments, with the rest of the key as the Python way has it, finds the variant's native
#: launch function, which runs the grid; anything it does not run goes the Python way below
_NATIVE = """\
    if _tl_keyof is not None and type(_tl_grid) is _tl_Checked:
        _tl_nk = _tl_keyof({specialised})
        if _tl_nk is not None:
            try:
                _tl_n = _tl_cache[_tl_NK, _tl_nk, {rest}{globals_key}]
            except (KeyError, TypeError, ValueError, OverflowError):
                _tl_n = None
            if _tl_n is not None:
                try:
                    _tl_r = _tl_n[0](_tl_grid, {runtime})
                    if not _tl_r or _tl_after(_tl_n, _tl_r, _tl_grid, [{runtime}]):
                        return _tl_n[2]
                except _tl_LOCATED as e:
                    raise _tl_for_user(e)
"""

#: the Python way's launch of a variant that has (or may have) a native way: ``JITFunction._native_way`` makes it
#: and stores the native key, and this launch already takes it
_REGISTER = """\
    if _tl_nat is not None and type(_tl_grid) is _tl_Checked:
        _tl_n = _tl_native(_tl_key, _tl_nk, ({specialised}), ({rest}{globals_key}))
        if _tl_n is not None:
            try:
                _tl_r = _tl_n[0](_tl_grid, {runtime})
                if not _tl_r or _tl_after(_tl_n, _tl_r, _tl_grid, [{runtime}]):
                    return _tl_kernel
            except _tl_LOCATED as e:
                raise _tl_for_user(e)
"""


def key_nospec(v):
    """The key of a ``do_not_specialize`` parameter's value."""
    return KEYERS[type(v)](v) if type(v) is not int else describer(v, False)(v)[0]


def probe_source(i, name):
    """The binder's probe of specialised parameter ``name``: sets ``_tl_d{i}, _tl_k{i}, _tl_a{i}`` (its three key
    entries) and ``_tl_h{i}`` (what a launcher that takes addresses gets: a numpy array's data address, else the
    value)."""
    if array_fields is None:
        return f"        _tl_d{i}, _tl_h{i} = _tl_probe({name})\n        _tl_k{i} = None"
    return f"""\
        if type({name}) is _tl_nd:
            _tl_i = id({name}) >> 3
            _tl_h{i} = _tl_D[_tl_i]
            _tl_d{i} = {name}.dtype
            _tl_k{i} = _tl_F[_tl_i]
            _tl_a{i} = _tl_h{i} & 15
        elif type({name}) is int and -2147483648 <= {name} <= 2147483647:
            _tl_h{i} = {name}
            _tl_d{i} = "i32:1" if {name} == 1 else ("i32:16" if {name} & 15 == 0 else "i32")
            _tl_k{i} = _tl_a{i} = None
        else:
            _tl_d{i}, _tl_h{i} = _tl_probe({name})
            _tl_k{i} = _tl_a{i} = None"""


def _tuple(items):
    return "".join(f"{x}, " for x in items)


def _source(jf, with_options: bool) -> str:
    decl, key, probes, host, missing, rest, specialised = [], [], [], {}, [], [], []
    for i, p in enumerate(jf.params):
        decl.append(f"{p.name}=_tl_default{i}" if p.has_default else f"{p.name}=_tl_M")
        if not p.has_default:
            missing.append(f" or {p.name} is _tl_M")
        if p.is_constexpr:
            key.append(p.name)
            rest.append(p.name)
        elif p.specialize:  # probed once: the key, and (host launchers) the array's address
            probes.append(probe_source(i, p.name))
            key += [f"_tl_d{i}", f"_tl_k{i}", f"_tl_a{i}"]
            host[i] = f"_tl_h{i}"
            specialised.append(p.name)
        else:
            key.append(f"_tl_kn({p.name})")
            rest.append(f"_tl_kn({p.name})")
    names = [p.name for p in jf.params]
    params = ["_tl_grid", *decl, "*_tl_extra"]
    if with_options:
        params += [f"{o}=None" for o in LAUNCH_OPTIONS]
        key += list(LAUNCH_OPTIONS)
        divert = f"_tl_general(_tl_grid, _tl_extra, _tl_kw, ({_tuple(names)}), ({_tuple(LAUNCH_OPTIONS)}))"
        option_values = _tuple(LAUNCH_OPTIONS)
    else:
        divert = f"_tl_options(_tl_grid, {_tuple(names)}*_tl_extra, **_tl_kw)"
        option_values = "*_tl_NO_OPTIONS,"
    watched = bool(jf.watch_now())
    runtime = ", ".join(names[i] for i in jf._runtime_idx)
    globals_key = "_tl_gk, " if watched else ""
    parts = dict(specialised=", ".join(specialised), rest=_tuple(rest), globals_key=globals_key, runtime=runtime)
    native = "" if with_options else _NATIVE.format(**parts)
    register = "" if with_options else _REGISTER.format(**dict(parts, specialised=_tuple(specialised)))
    return _BINDER.format(
        name=jf.__name__, missing="".join(missing), divert=divert, params=", ".join(params + ["**_tl_kw"]),
        key=_tuple(key), globals_key=globals_key, values=_tuple(names), option_values=option_values,
        named=", ".join(f"{n!r}: {n}" for n in names), runtime=runtime, native=native, register=register,
        watched="    _tl_gk = _tl_globals()\n" if watched else "",
        host_runtime=", ".join(host.get(i, names[i]) for i in jf._runtime_idx),
        probes="\n".join(probes) or "        pass")


def make_binder(jf, located):
    """The launch fast path for ``jf`` (the plain binder, which hands calls with options to the options binder), or
    None when the signature does not suit (``*args``, keyword-only parameters, names that clash with launch
    options or the binder's own). ``located``: the exception classes that reach the user through ``for_user``.

    Where the kernel reads globals (``watched_globals.py``) the key ends with their values (``_tl_globals()``); a
    kernel learns that at its first compile, and :func:`rebuild_binder` then gives the same binder functions the
    new code, so launchers made before (``launch = k[grid]``) keep working."""
    params = list(jf.signature.parameters.values())
    for p in params:
        if (p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.name in _LAUNCH_OPTIONS
                or p.name.startswith("_tl_") or not p.name.isidentifier()):
            return None
    if not jf.__name__.isidentifier():
        return None
    ns = {"_tl_cache": jf._fast_cache, "_tl_kn": key_nospec, "_tl_miss": jf._fast_miss, "_tl_grid3": normalize_grid,
          "_tl_probe": probe, "_tl_nd": np.ndarray, "_tl_M": MISSING,
          "_tl_general": jf._general_launch, "_tl_LOCATED": located, "_tl_for_user": for_user,
          "_tl_SINGLE": SINGLE, "_tl_Checked": CheckedGrid, "_tl_NO_OPTIONS": NO_OPTIONS,
          "_tl_globals": jf.globals_key, "_tl_keyof": None, "_tl_NK": NATIVE_KEY, "_tl_after": after_native,
          "_tl_native": jf._native_way}
    if array_fields is not None:
        ns["_tl_D"], ns["_tl_F"] = array_fields
    ns.update({f"_tl_default{i}": p.default for i, p in enumerate(jf.params) if p.has_default})
    binders = []
    for with_options in (True, False):
        ns["_tl_options"] = binders[0] if binders else None
        src = _source(jf, with_options)
        tag = "options binder" if with_options else "binder"
        exec(compile(src, f"<tilec launch {tag} of {jf.__qualname__}>", "exec"), ns)
        binders.append(ns.pop(jf.__name__))
    jf._binder_parts = (ns, binders)
    return binders[1]


def rebuild_binder(jf):
    """Regenerate ``jf``'s binders (its watched globals changed from none to some or back) in place: the
    functions keep their identity and take the new code."""
    parts = getattr(jf, "_binder_parts", None)
    if parts is None:
        return
    ns, binders = parts
    for with_options, old in zip((True, False), binders):
        tag = "options binder" if with_options else "binder"
        exec(compile(_source(jf, with_options), f"<tilec launch {tag} of {jf.__qualname__}>", "exec"), ns)
        old.__code__ = ns.pop(jf.__name__).__code__
