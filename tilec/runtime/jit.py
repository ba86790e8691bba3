"""``@tilec.jit`` and ``JITFunction``: binding launch arguments, specialising, caching compiled kernels, and
launching ``fn[grid](*args, **constexprs_and_options)``.

The per-launch path is kept small: ``fn[grid]`` is the launch binder (``binder.py``, generated once per kernel with
the kernel's own signature) with the grid bound by ``functools.partial`` (no Python frame in between) and checked
once (``targets/grid.py: checked_grid``). It forms a key from the arguments, finds the compiled variant's launch
entry with one dict lookup and calls it. Anything the binder does not recognise (a new argument type, a missing or
unknown argument) goes to the general path here, which reports errors and compiles.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import threading

import numpy as np

from .. import knobs
from ..compiler import ASTSource, target_for
from ..errors import BoundsError, CompilationError, ConfigurationError, DeviceAssertionError, LaunchError, for_user
from ..ir.evaluator import EvaluationError
from ..frontend.function import PLAIN_PARAMETERS_ONLY, KernelFunction
from ..frontend.source import replace_source
from ..language.core import constexpr, dtype
from ..pipeline import compile_source
from . import aggregates, interpreter, misses
from .args import KEYERS, TOO_WIDE, describer, host_value
from .binder import LAUNCH_OPTIONS, MISSING, NATIVE_KEY, make_binder, rebuild_binder
from .watched_globals import references, watch_of
from ..targets import arguments
from ..targets.arguments import array_fields
from ..targets.entry import entries, native
from ..targets.grid import checked_grid, normalize_grid
from .specialize import describe, hashable as _hashable

_LAUNCH_OPTIONS = frozenset(LAUNCH_OPTIONS)
#: errors about the user's kernel or launch: they reach the user without tilec's frames and chained exceptions
#: (``TILEC_DEBUG=1`` keeps them)
_LOCATED = (CompilationError, BoundsError, DeviceAssertionError, EvaluationError, ConfigurationError,
            # launch errors: their messages name the kernel and the argument; the user's launch line is the place
            LaunchError, TypeError, ValueError, OverflowError)
_EMPTY = inspect.Parameter.empty


class KernelLauncher:
    """``fn[grid]`` for kernels without a binder (or interpreted): holds the grid until the call."""
    __slots__ = ("fn", "grid")

    def __init__(self, fn, grid):
        self.fn, self.grid = fn, grid

    def __call__(self, *args, **kwargs):
        fn = self.fn
        binder = fn._binder
        try:
            if binder is not None and not fn.interpret:
                try:
                    return binder(self.grid, *args, **kwargs)
                except TypeError as e:
                    if e.__traceback__.tb_next is not None:  # raised inside the launch, not by binding the call
                        raise
                except OverflowError as e:
                    if not _too_wide(e):
                        raise  # else the general path reports it, naming the parameter
            return fn._run(args, self.grid, False, kwargs)
        except _LOCATED as e:
            raise for_user(e)


class JITFunction(KernelFunction):
    """A kernel (or a helper called from kernels) that can be launched. Compiled variants are cached per
    specialisation key in ``self.cache``; ``cache_key`` identifies the source for the on-disk cache."""

    def __init__(self, fn, do_not_specialize=(), noinline=False, debug=None, interpret=None):
        super().__init__(fn, do_not_specialize, noinline)
        self.interpret = knobs.flag("TILEC_INTERPRET") if interpret is None else interpret
        self.debug = debug
        self._names = [p.name for p in self.params]
        self._index = {p.name: i for i, p in enumerate(self.params)}
        self._is_cx = [p.is_constexpr for p in self.params]
        self._spec = [p.specialize for p in self.params]
        self._runtime_idx = [i for i, p in enumerate(self.params) if not p.is_constexpr]
        self.cache: dict = {}
        self._lock = threading.Lock()
        self._cache_key = None
        self._watch = None  # the globals its code reads (watched_globals.py), found at the first launch
        self._fast_cache: dict = {}
        self._param_set = frozenset(p.name for p in self.params)
        self._binder = make_binder(self, _LOCATED)  # unused while ``interpret`` is set

    # -- source and hashing -------------------------------------------------------------------------------------
    def _unsafe_update_src(self, new_src: str):
        """Replace the kernel's source text (Triton's hook, used by test suites that patch kernel templates)."""
        replace_source(self, new_src)

    def callees(self):
        """@jit functions this one's source names (through globals, closures or module attributes)."""
        out = []
        for _, _, v in references(self):
            if isinstance(v, JITFunction) and v is not self and v not in out:
                out.append(v)
        return out

    # -- watched globals ----------------------------------------------------------------------------------------
    def watch_now(self):
        """The watched globals as last found (None before the first launch or compile)."""
        return self._watch

    def globals_key(self):
        """The current values of the globals this kernel's code reads (None when it reads none)."""
        w = self._watch
        if w is None:
            w = self._refresh_watch()
        return w.key() if w else None

    def _refresh_watch(self):
        """Find the watched globals again (first launch, after a compile); a change regenerates the binder."""
        new = watch_of(self)
        old = self._watch
        if new != old:
            self._watch = new
            self._cache_key = None
            if bool(new) != bool(old):
                self._fast_cache.clear()
                rebuild_binder(self)
        return new

    @property
    def cache_key(self) -> str:
        """Hash of this function's source and, transitively, the sources of the @jit functions it calls, with the
        current values of the globals they read (so the on-disk cache never returns code built for old ones)."""
        values = self.globals_key()  # first: finding the watched globals again may reset the sources' hash
        if self._cache_key is None:
            h = hashlib.sha256()
            seen = set()
            stack = [self]
            while stack:
                f = stack.pop()
                if id(f) in seen:
                    continue
                seen.add(id(f))
                h.update(f"{f.__module__}.{f.__qualname__}\n{f.src}\n{f.noinline}\n".encode())
                stack.extend(sorted(f.callees(), key=lambda c: c.__qualname__))
            self._cache_key = h.hexdigest()
        if values is None:
            return self._cache_key
        return hashlib.sha256(f"{self._cache_key}\n{values!r}".encode()).hexdigest()

    # -- launching ------------------------------------------------------------------------------------------------
    def __getitem__(self, grid):
        # a loop launching with the same grid object gets the same launcher back, unbuilt; so does one that builds
        # an equal one-int grid each time (``k[(cdiv(n, B),)]``: checking and binding it again costs microseconds)
        last = self._last_launcher
        if last is not None and (last[0] is grid or type(grid) is tuple and len(grid) == 1
                                 and type(grid[0]) is int and last[0] == grid):
            return last[1]
        if self._binder is not None and not self.interpret:  # the binder itself, no Python frame in between
            launcher = functools.partial(self._binder, checked_grid(grid))
        else:
            launcher = KernelLauncher(self, grid)
        self._last_launcher = (grid, launcher)
        return launcher

    @property
    def interpret(self) -> bool:
        return self._interpret_on

    @interpret.setter
    def interpret(self, on):
        self._interpret_on = on
        self._last_launcher = None  # launchers choose the binder or the interpreter when made

    def _bind(self, args, kwargs):
        """Values of every parameter in order (defaults applied); clear errors naming the kernel."""
        if not self.plain_parameters:  # *args and the like: the compiler's own located error, not a binding one
            raise self.source.error(self.source.tree, PLAIN_PARAMETERS_ONLY)
        n = len(self.params)
        if len(args) == n and not kwargs:
            return list(args)
        if len(args) > n:
            raise TypeError(f"{self.__name__}() takes {n} arguments but {len(args)} were given")
        values = list(args) + [_EMPTY] * (n - len(args))
        index = self._index
        for k, v in kwargs.items():
            i = index.get(k)
            if i is None:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument '{k}'")
            if values[i] is not _EMPTY:
                raise TypeError(f"{self.__name__}() got multiple values for argument '{k}'")
            values[i] = v
        if any(v is _EMPTY for v in values):
            for i, p in enumerate(self.params):
                if values[i] is _EMPTY:
                    if not p.has_default:
                        raise TypeError(f"{self.__name__}() missing a value for parameter '{p.name}'")
                    values[i] = p.default
        return values

    def specialize(self, values):
        """(cache key, runtime values, ASTSource) for bound parameter values."""
        params = self.params
        constexprs = {}
        runtime_params, runtime_vals = [], []
        for p, v in zip(params, values):
            if p.is_constexpr or v is None:
                v = v.value if isinstance(v, constexpr) else v
                if not _compile_time_value(v):
                    raise TypeError(f"{self.__name__}: constexpr parameter '{p.name}' needs a compile-time value "
                                    f"(number, bool, str, None, tl dtype or @jit function), got {type(v).__name__}")
                constexprs[p.name] = v
            elif aggregates.is_aggregate(v):  # a tuple or descriptor: its structure specialises, its leaves run
                constexprs[p.name], holes = aggregates.pack(p.name, v, p.specialize)
                runtime_params += [h for h, _ in holes]
                runtime_vals += [x for _, x in holes]
            else:
                runtime_params.append(p)
                runtime_vals.append(v)
        key, sig, attrs = describe(runtime_params, runtime_vals)
        ckey = (key, tuple((k, _hashable(v)) for k, v in constexprs.items()))
        sig = dict({p.name: sig.get(p.name, "constexpr") for p in params}, **sig)
        return ckey, runtime_vals, ASTSource(self, sig, constexprs, attrs)

    def run(self, *args, grid, warmup=False, **kwargs):
        try:
            if not warmup and self._binder is not None and not self.interpret:
                try:
                    return self._binder(grid, *args, **kwargs)
                except TypeError as e:
                    if e.__traceback__.tb_next is not None:
                        raise
                except OverflowError as e:
                    if not _too_wide(e):
                        raise
            return self._run(args, grid, warmup, kwargs)
        except _LOCATED as e:
            raise for_user(e)

    def _run(self, args, grid, warmup, kwargs):
        """The general launch path: binds with tilec's own errors, compiles on a miss, launches."""
        options = None
        if kwargs:
            if "extern_libs" in kwargs and "extern_libs" not in self._param_set:
                kwargs.pop("extern_libs")  # Triton's libdevice path: tilec's math library is built in
            # a kernel parameter named like a launch option (a constexpr ``num_stages``) takes the value, as in Triton
            for k in [k for k in kwargs if k in _LAUNCH_OPTIONS and k not in self._param_set]:
                if options is None:
                    options = {}
                options[k] = kwargs.pop(k)
        values = self._bind(args, kwargs)
        if self.interpret:
            if warmup:  # compile-time checks only, as a compiled warmup: nothing runs
                interpreter.check(self, values, options or {}, self.debug_enabled((options or {}).get("debug")),
                                  launching=False)
                return None
            return self._interpret(grid, values, options or {})
        kernel = self._variant(values, options or {})
        if warmup:
            return kernel
        return self._launch(kernel, grid, values)

    def _general_launch(self, grid, extra, kw, values, options):
        """The binder's call that is not a plain one (a missing or unknown argument, too many): the general path
        binds it again from what the binder received, with tilec's own messages."""
        if extra:  # every parameter was given positionally, and more
            args, kwargs = tuple(values) + tuple(extra), dict(kw)
        else:
            args = ()
            kwargs = {n: v for n, v in zip(self._names, values) if v is not MISSING}
            kwargs.update(kw)
        kwargs.update({o: v for o, v in zip(LAUNCH_OPTIONS, options) if v is not None})
        try:
            return self._run(args, grid, False, kwargs)
        except _LOCATED as e:
            raise for_user(e)

    def _fast_miss(self, fkey, grid, values, options):
        """The binder's miss: the general path finds (or compiles) the variant; the binder's key then maps to its
        launch entries. ``fkey`` is None when some argument has no cheap keyer (it is then never cached)."""
        options = {k: v for k, v in zip(LAUNCH_OPTIONS, options) if v is not None}
        values = list(values)
        watch = self._watch
        kernel = self._variant(values, options)
        if self._watch is not watch:  # found or changed the watched globals: the binder's key has changed too
            fkey = None
        self._launch(kernel, grid, values)  # first: arguments it refuses (read-only memory) never get a cached key
        if fkey is not None:
            runtime = [values[i] for i in self._runtime_idx]
            if any(aggregates.is_aggregate(v) for v in runtime):
                self._cache_spread(fkey, kernel, runtime)
                return kernel
            keep = tuple(j for j, v in enumerate(runtime) if v is not None)
            if not any(type(v) in _NP_SCALARS for v in runtime):
                launcher = kernel.launcher
                host = getattr(launcher, "takes_addresses", False)
                # the binder's probe passes exact numpy arrays of specialised parameters as their addresses
                addressed = tuple(j for j, (i, v) in enumerate(zip(self._runtime_idx, runtime))
                                  if host and type(v) is np.ndarray and self._spec[i] and array_fields is not None)
                keep = None if len(keep) == len(runtime) else keep
                single, every = entries(launcher, len(runtime), keep, addressed=addressed)
                # a native way, if any, is made at the variant's first cached launch (``_native_way``): a program
                # that launches a kernel once never builds one
                later = keep is None and getattr(launcher, "native", None) is not None
                self._fast_cache[fkey] = (single, every, host, kernel, _LATER if later else None)
        return kernel

    def _cache_spread(self, fkey, kernel, runtime):
        """The binder's key for a launch with aggregate arguments (host descriptors, tuples): entries for their
        leaves, behind a step that spreads them (never the native way, nor addresses for host launchers)."""
        flat = aggregates.expand(runtime)
        if any(type(v) in _NP_SCALARS for v in flat):
            return
        keep = tuple(j for j, v in enumerate(flat) if v is not None)
        keep = None if len(keep) == len(flat) else keep
        single, every = aggregates.spreading(*entries(kernel.launcher, len(flat), keep), runtime)
        self._fast_cache[fkey] = (single, every, False, kernel, None)

    def _native_way(self, key, nk, specialised, rest):
        """The binder's Python way found ``key``'s variant, which has or may have a native way
        (``targets/entry.py: native``): make it if not yet made, store the native key of this launch's arguments
        (``nk``, the keyer's, or None where the binder had no keyer yet; ``rest``: the rest of the key) and return
        its cache entry; None where there is no native way for these arguments (the variant's entry then says so,
        and its launches stop asking)."""
        entry = self._fast_cache.get(key)
        if entry is None:  # (the cache was cleared meanwhile)
            return None
        single, every, host, kernel, nat = entry
        ns = self._binder_parts[0]
        if nat is _LATER:
            way = native(kernel.launcher, len(self._runtime_idx))
            nat = way and way[1]
            if way is not None:  # the binder takes the native way from now on
                ns["_tl_keyof"] = way[0]
        if nat is not None and nk is None and ns["_tl_keyof"] is not None:
            nk = ns["_tl_keyof"](*specialised)
        if nat is None or nk is None:
            self._fast_cache[key] = (single, every, host, kernel, None)
            return None
        self._fast_cache[key] = (single, every, host, kernel, nat)
        hit = self._fast_cache[(NATIVE_KEY, nk) + rest] = (nat, kernel.launcher, kernel, key)
        return hit

    def _check_writable(self, kernel, values):
        """A parameter the kernel stores or atomically updates through must be writable memory."""
        self.check_writable(kernel.metadata.get("written_params") or (), values)

    def check_writable(self, written, values):
        """Refuse read-only memory for the runtime parameters at indices ``written`` (the interpreter checks
        the same before running)."""
        if not written:
            return
        runtime = aggregates.expand(values[i] for i in self._runtime_idx)
        names = [n for i in self._runtime_idx for n in aggregates.leaf_names(self._names[i], values[i])]
        for j in written:
            if j < len(runtime):
                info = arguments.inspect(runtime[j])
                if info is not None and not info.writable:
                    raise TypeError(f"{self.__name__}: parameter '{names[j]}' is written by the kernel, but its "
                                    f"argument ({type(runtime[j]).__name__}) is read-only memory "
                                    "(a read-only array or memmap, or a stride-0 broadcast view): pass a writable copy")

    def _launch(self, kernel, grid, values):
        self._check_writable(kernel, values)
        if callable(grid):
            grid = grid(dict(zip(self._names, values)))
        g = _grid3(grid, self.__name__)
        if g is not None:
            kernel.launcher(g, [v if type(v) not in _NP_SCALARS else host_value(v) for v in
                                aggregates.expand(values[i] for i in self._runtime_idx) if v is not None])
        return kernel

    def _fast_key(self, values):
        """The in-memory cache key: per parameter, the constexpr value or the argument's description."""
        key = []
        for cx, spec, v in zip(self._is_cx, self._spec, values):
            if cx:
                key.append(v.value if type(v) is constexpr else v)
                continue
            k = KEYERS.get(type(v)) if spec else None
            try:
                if k is not None:
                    key.append(k(v))
                    continue
                d = describer(v, spec)
                k = KEYERS.get(type(v)) if spec else None  # made with the describer: later calls key through it,
                key.append(k(v) if k is not None else d(v)[0])  # so this one must too (one variant, one load)
            except (TypeError, ValueError, OverflowError) as e:
                p = self.params[len(key)]
                raise type(e)(f"{self.__name__}: parameter '{p.name}': {e}") from None
        try:
            hash(tuple(key))
        except TypeError:
            key = [_hashable(k) for k in key]
        return tuple(key)

    def _variant(self, values, options):
        """The compiled variant for bound ``values`` and launch ``options``, compiled on a miss."""
        key = self._fast_key(values)
        if options:
            key = (key, tuple(sorted(options.items())))
        gkey = self.globals_key()
        if gkey is not None:
            key = (key, gkey)
        kernel = self.cache.get(key)
        return kernel if kernel is not None else self._compile(values, options, key)

    def _compile(self, values, options, okey):
        found = misses.recording()
        if found is not None:  # the autotuner gathering what its configs need: recorded, compiled later
            _, _, src = self.specialize(values)
            opts = {k: v for k, v in options.items() if k != "target"}
            opts["debug"] = self.debug_enabled(opts.get("debug"))
            found.append((self, src, options.get("target") or target_for(aggregates.expand(values)), opts))
            return None
        with self._lock:
            kernel = self.cache.get(okey)
            if kernel is None:
                _, _, src = self.specialize(values)
                opts = {k: v for k, v in options.items() if k != "target"}
                opts["debug"] = self.debug_enabled(opts.get("debug"))
                kernel = compile_source(src, options.get("target") or target_for(aggregates.expand(values)), opts)
                self.cache[okey] = kernel
        self._refresh_watch()  # a callee rebound to another function brings the globals it reads
        return kernel

    def debug_enabled(self, launch_debug=None) -> bool:
        """Debug builds (device_assert checked): the launch's ``debug=``, else the decorator's, else TILEC_DEBUG."""
        for d in (launch_debug, self.debug):
            if d is not None:
                return bool(d)
        return knobs.flag("TILEC_DEBUG")

    def warmup(self, *args, grid=(1,), **kwargs):
        """Compile (no launch) for these arguments; returns the CompiledKernel."""
        try:
            return self.run(*args, grid=grid, warmup=True, **kwargs)
        except _LOCATED as e:
            raise for_user(e)

    def _interpret(self, grid, values, options):
        if callable(grid):
            grid = grid(dict(zip(self._names, values)))
        grid = normalize_grid(grid, self.__name__)
        if grid is None:
            return None
        interpreter.run(self, grid, values, debug=self.debug_enabled(options.get("debug")), options=options)

    def __call__(self, *args, **kwargs):
        if interpreter.is_interpreting():  # a @jit function called from an interpreted kernel
            return interpreter.interpreted_function(self)(*args, **kwargs)
        raise RuntimeError(f"{self.__name__} is a @tilec.jit kernel: launch it as {self.__name__}[grid](...)")

    def __repr__(self):
        return f"JITFunction({self.__module__}:{self.__qualname__})"


_NP_SCALARS = frozenset({np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                         np.float16, np.float32, np.float64})


_grid3 = normalize_grid
_LATER = object()  # a cached variant's native way, not made yet (``JITFunction._native_way``)


def _too_wide(e: OverflowError) -> bool:
    """An int argument no parameter type holds, found by the binder's keyer before anything ran."""
    return str(e).startswith(TOO_WIDE)


def _compile_time_value(v) -> bool:
    if v is None or isinstance(v, (bool, int, float, str, dtype, JITFunction)):
        return True
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return True
    if isinstance(v, tuple):
        return all(_compile_time_value(x) for x in v)
    return callable(v) and getattr(v, "__tilec_builtin__", False)


def jit(fn=None, *, do_not_specialize=(), noinline=False, debug=None, interpret=None, repr=None, **_ignored):
    """Decorator: ``@tilec.jit`` or ``@tilec.jit(do_not_specialize=["n"], noinline=True)``; ``interpret=True``
    (or ``TILEC_INTERPRET=1`` when the function is decorated) runs launches in the numpy interpreter;
    ``repr(specialization)`` names each compiled variant (see ``frontend/source.py:kernel_name``)."""
    def deco(f):
        jf = JITFunction(f, do_not_specialize=do_not_specialize, noinline=noinline, debug=debug, interpret=interpret)
        jf.repr = repr
        return jf
    return deco(fn) if fn is not None else deco
