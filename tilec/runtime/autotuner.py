"""``@tilec.autotune`` and ``@tilec.heuristics``: choosing meta-parameters per launch, with Triton's interface.

Both wrap a kernel (a ``JITFunction`` or another wrapper) and forward ``run(*args, grid=..., **kwargs)`` down the
stack with extra keyword arguments, so they stack in either order. The autotuner times each candidate ``Config``
once per *key* (the values of the named arguments plus the dtypes of array arguments), keeps the fastest in
``.cache`` and launches with it from then on. Tuning launches the kernel for real, so arguments named in
``reset_to_zero`` are zeroed before every timed run and those in ``restore_value`` are snapshotted before and put
back after each one: the caller's outputs end up as if only the final launch had happened.
"""
from __future__ import annotations

import builtins
import functools
import hashlib
import inspect
import json
import math
import os
import sys
import tempfile
import time
import warnings

import numpy as np

from .. import cache
from . import compile_ahead, misses
from ..compiler import default_target
from ..errors import BackendError, CompilationError, LaunchError
from ..targets.options import Options
from ..testing import do_bench as default_bench
from ..version import __version__

# Compile options of other Triton backends that configs carry among their meta-parameters (AMD's, for instance);
# tilec's backends have no such knobs, so these are dropped unless the kernel has a parameter of that name.
FOREIGN_OPTIONS = frozenset({"waves_per_eu", "matrix_instr_nonkdim", "kpack", "instruction_sched_variant",
                             "schedule_hint", "enable_fp_fusion_hip"})

# Exceptions that mean "this config cannot run here" (skipped while tuning) rather than a bug in the caller.
SKIPPABLE = (CompilationError, BackendError, LaunchError)


class Config:
    """One candidate: meta-parameter values (``kwargs``) plus launch options; ``pre_hook(nargs)`` runs before
    each launch with this config (nargs: every argument by name, the config's values included)."""

    def __init__(self, kwargs, num_warps=Options.num_warps, num_stages=Options.num_stages, num_ctas=Options.num_ctas,
                 maxnreg=None, pre_hook=None, ir_override=None):
        self.ir_override = ir_override  # a stage file (``k.tir``, ``k.gir``, ``k.llir``, ``k.ptx``): stage_files.py
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook

    def all_kwargs(self) -> dict:
        """What the launch receives: the meta-parameters and every launch option that is set."""
        opts = {"num_warps": self.num_warps, "num_ctas": self.num_ctas, "num_stages": self.num_stages,
                "maxnreg": self.maxnreg, "ir_override": self.ir_override}
        return {**self.kwargs, **{k: v for k, v in opts.items() if v is not None}}

    def _fields(self):
        return (tuple(sorted(self.kwargs.items())), self.num_warps, self.num_stages, self.num_ctas, self.maxnreg,
                self.pre_hook, self.ir_override)

    def __eq__(self, other):
        return isinstance(other, Config) and self._fields() == other._fields()

    def __hash__(self):
        try:
            return hash(self._fields())
        except TypeError:
            return id(self)

    def __str__(self):
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}", f"num_stages: {self.num_stages}",
                  f"maxnreg: {self.maxnreg}"]
        return ", ".join(parts)

    def __repr__(self):
        return f"Config({self.kwargs!r}, num_warps={self.num_warps}, num_stages={self.num_stages})"


class KernelInterface:
    """``kernel[grid](*args, **kwargs)`` for every launchable object: forwards to ``run``."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    def __call__(self, *args, **kwargs):
        name = getattr(self, "__name__", "kernel")
        raise RuntimeError(f"{name} is a kernel: launch it as {name}[grid](...)")


def _arg_names(fn) -> list:
    """Parameter names of the innermost kernel (wrappers keep ``arg_names``; a JITFunction has ``_names``)."""
    names = getattr(fn, "arg_names", None)
    if names is None:
        names = getattr(fn, "_names", None)
    if names is None:
        names = list(inspect.signature(getattr(fn, "fn", fn)).parameters)
    return list(names)


def _base_fn(fn):
    while not hasattr(fn, "_names") and hasattr(fn, "fn"):
        fn = fn.fn
    return fn


# -- array helpers: torch tensors, numpy arrays and tilec's CUDA device arrays alike -------------------------------
def _zero(a):
    if hasattr(a, "zero_"):
        a.zero_()
    elif hasattr(a, "copy_from_numpy"):
        a.copy_from_numpy(np.zeros(a.shape, a.dtype))
    else:
        a[...] = 0


def _snapshot(a):
    if hasattr(a, "clone"):
        return a.clone()
    return a.numpy() if hasattr(a, "copy_from_numpy") else a.copy()


def _restore(a, saved):
    if hasattr(a, "copy_"):
        a.copy_(saved)
    elif hasattr(a, "copy_from_numpy"):
        a.copy_from_numpy(saved)
    else:
        a[...] = saved


def _progress_enabled() -> bool:
    """A one-line progress bar while tuning, only on a terminal (``TILEC_AUTOTUNE_PROGRESS=0`` turns it off)."""
    if os.environ.get("TILEC_AUTOTUNE_PROGRESS", "1") in ("0", "false", "False"):
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _print_enabled() -> bool:
    return "1" in (os.environ.get("TILEC_PRINT_AUTOTUNING"), os.environ.get("TRITON_PRINT_AUTOTUNING"))


class Autotuner(KernelInterface):
    def __init__(self, fn, arg_names, configs, key, reset_to_zero=None, restore_value=None, pre_hook=None,
                 post_hook=None, prune_configs_by=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None,
                 cache_results=False):
        self.fn = fn
        self.base_fn = _base_fn(fn)
        self.base_fn_params = frozenset(_arg_names(self.base_fn))
        self.arg_names = list(arg_names)
        self.configs = list(configs) if configs else [Config({})]
        self.keys = list(key)
        self.cache: dict = {}
        self.configs_timings = None
        self.best_config = None
        self.bench_time = 0.0
        self.nargs = None
        self.reset_to_zero = list(reset_to_zero or [])
        self.restore_value = list(restore_value or [])
        for name in self.reset_to_zero + self.restore_value:
            if name not in self.arg_names:
                raise ValueError(f"autotune: '{name}' is not a parameter of {self.base_fn.__name__} "
                                 f"(parameters: {', '.join(self.arg_names)})")
        unknown = [k for k in self.keys if k not in self.arg_names]
        if unknown:
            warnings.warn(f"autotune: key names {unknown} are not parameters of {self.base_fn.__name__}; they are "
                          f"ignored, so changing them does not retune", stacklevel=3)
        self._restore_copies: dict = {}
        self._user_pre_hook = pre_hook is not None
        self.pre_hook = pre_hook or self._default_pre_hook
        self.post_hook = post_hook or self._default_post_hook
        prune_configs_by = prune_configs_by or {}
        self.perf_model = prune_configs_by.get("perf_model")
        self.configs_top_k = prune_configs_by.get("top_k", 1.0)
        self.early_config_prune = prune_configs_by.get("early_config_prune")
        if do_bench is None:
            do_bench = functools.partial(default_bench, warmup=25 if warmup is None else warmup,
                                         rep=100 if rep is None else rep)
        self.do_bench = do_bench
        self.cache_results = cache_results or os.environ.get("TILEC_CACHE_AUTOTUNING") == "1"
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)
        self._prepared_configs: dict = {}  # id(config) -> (config, its fields, its kwargs, what run() needs)

    def _launch_kwargs(self, config) -> dict:
        """What a launch with ``config`` passes down: its values and options, less other backends' options and
        ``num_ctas=1`` (the only value tilec's backends have, and not every backend takes the option)."""
        kw = config.all_kwargs()
        base = self.base_fn_params
        return {k: v for k, v in kw.items()
                if (k not in FOREIGN_OPTIONS or k in base) and not (k == "num_ctas" and v == 1 and k not in base)}

    # -- hooks ---------------------------------------------------------------------------------------------------
    def _default_pre_hook(self, nargs, reset_only=False):
        for name in self.reset_to_zero:
            _zero(nargs[name])
        if not reset_only:
            self._restore_copies = {name: _snapshot(nargs[name]) for name in self.restore_value}

    def _default_post_hook(self, nargs, exception=None):
        for name, saved in self._restore_copies.items():
            _restore(nargs[name], saved)
        self._restore_copies = {}

    # -- choosing ------------------------------------------------------------------------------------------------
    def _key(self, all_args: dict) -> tuple:
        """The named arguments' values, then the dtype of every array argument (a new dtype retunes)."""
        key = [all_args[k] for k in self.keys if k in all_args]
        for name in self.arg_names:
            dt = getattr(all_args.get(name), "dtype", None)
            if dt is not None:
                key.append(str(dt))
        return tuple(key)

    def prune_configs(self, kwargs: dict) -> list:
        pruned = self.configs
        if self.early_config_prune is not None:
            pruned = list(self.early_config_prune(self.configs, self.nargs, **kwargs))
            if not pruned:
                raise ValueError(f"autotune: early_config_prune left no configs for {self.base_fn.__name__}")
        if self.perf_model is not None:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = builtins.max(1, int(len(self.configs) * top_k))
            elif not isinstance(top_k, int):
                raise TypeError("autotune: prune_configs_by['top_k'] must be an int or a float <= 1.0")
            if len(pruned) > top_k:
                est = {c: self.perf_model(**self.nargs, **kwargs, **c.all_kwargs()) for c in pruned}
                pruned = sorted(est, key=est.get)[:top_k]
        return pruned

    def _check_conflicts(self, config, kwargs):
        clash = sorted(k for k in config.kwargs if k in kwargs)
        if clash:
            raise ValueError(f"{self.base_fn.__name__}: meta-parameters {clash} are set both by the caller and by "
                             f"the autotune configs; drop them from the call")

    def _bench(self, *args, config, **meta):
        """Timings [median, p20, p80] in ms of one config (inf when it cannot compile/run here)."""
        self._check_conflicts(config, meta)
        current = dict(meta, **self._launch_kwargs(config))
        full_nargs = {**self.nargs, **current}

        def kernel_call():
            if config.pre_hook:
                config.pre_hook(full_nargs)
            self.pre_hook(full_nargs)
            try:
                self.fn.run(*args, **current)
            except Exception as e:
                try:
                    self.post_hook(full_nargs, exception=e)
                finally:
                    raise
            self.post_hook(full_nargs, exception=None)

        # compile outside the timed region (and so that a config that cannot compile is told apart), after the
        # config's pre_hook: it may set what the variant depends on (a host descriptor's block shape)
        if config.pre_hook:
            config.pre_hook(full_nargs)
        self.fn.run(*args, **{**current, "warmup": True})
        t = self.do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))
        return list(t) if isinstance(t, (list, tuple)) else [t, t, t]

    def _compile_ahead(self, args, kwargs, pruned):
        """The configs' variants compiled in parallel processes, where that pays (``compile_ahead.py``): a dry run
        of each config's warmup finds what the timing loop would compile. Anything that goes wrong here is left
        to the timing loop, which compiles in this process and handles failures as always."""
        if misses.recording() is not None or getattr(self.base_fn, "interpret", False):
            return  # an autotuner inside another's dry run, or nothing compiled at all
        with misses.collecting() as found:
            for config in pruned:
                try:
                    self._check_conflicts(config, kwargs)
                    current = dict(kwargs, **self._launch_kwargs(config))
                    if config.pre_hook:  # as the timing loop does before it compiles
                        config.pre_hook({**self.nargs, **current})
                    self.fn.run(*args, **{**current, "warmup": True})
                except Exception:  # noqa: BLE001  (reported by the timing loop, in order)
                    pass
        try:
            compile_ahead.compile_ahead(found)
        except Exception:  # noqa: BLE001  (workers are only a speed-up)
            pass

    # -- results kept on disk (cache_results=True) ------------------------------------------------------------
    def _disk_path(self, key, pruned):
        """One file per (kernel source, tuning key, candidate configs, target): any change retunes."""
        payload = repr((getattr(self.base_fn, "cache_key", self.base_fn.__name__), key, [str(c) for c in pruned],
                        str(default_target()), __version__))
        digest = hashlib.sha256(payload.encode()).hexdigest()
        return os.path.join(cache.cache_dir(), "autotune", digest[:2], digest + ".json")

    def _load_result(self, path, pruned):
        try:
            with open(path) as f:
                data = json.load(f)
            best = pruned[data["best"]]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return None
        self.configs_timings = {c: t for c, t in zip(pruned, data.get("timings", []))}
        self.bench_time = 0.0
        return best

    def _store_result(self, path, pruned, best, timings):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = {"best": pruned.index(best), "configs": [str(c) for c in pruned],
                "timings": [[None if math.isinf(v) or math.isnan(v) else v for v in timings[c]] for c in pruned]}
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)  # readers see the old file or the whole new one

    def _tune(self, args, kwargs, key):
        pruned = self.prune_configs(kwargs)
        name = self.base_fn.__name__
        path = self._disk_path(key, pruned) if self.cache_results and len(pruned) > 1 else None
        if path is not None:
            best = self._load_result(path, pruned)
            if best is not None:
                self.cache[key] = best
                return best
        if len(pruned) == 1:  # nothing to compare
            self.cache[key] = pruned[0]
            self.configs_timings = {pruned[0]: [math.nan] * 3}
            self.bench_time = 0.0
            return pruned[0]
        progress = _progress_enabled() and len(pruned) > 1
        t0 = time.perf_counter()
        self._compile_ahead(args, kwargs, pruned)
        timings, errors = {}, []
        for i, config in enumerate(pruned):
            try:
                timings[config] = self._bench(*args, config=config, **kwargs)
                note = f"{timings[config][0]:.4f} ms"
            except SKIPPABLE as e:
                timings[config] = [math.inf] * 3
                errors.append((config, e))
                note = f"skipped ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
            if _print_enabled():  # the details, one line per config
                print(f"[tilec autotune] {name} {i + 1}/{len(pruned)} {{{config}}}: {note}", file=sys.stderr,
                      flush=True)
            elif progress:  # one line, rewritten in place
                done = (i + 1) * 20 // len(pruned)
                sys.stderr.write(f"\r[tilec autotune] {name} [{'#' * done}{'.' * (20 - done)}] "
                                 f"{i + 1}/{len(pruned)}")
                sys.stderr.flush()
        if progress and not _print_enabled():
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
        self.bench_time = time.perf_counter() - t0
        if len(errors) == len(pruned):
            cfg, err = errors[0]
            err.add_note(f"autotune: every config of {name} failed; this error is from {{{cfg}}}")
            raise err
        best = builtins.min(timings, key=lambda c: timings[c][0])
        self.cache[key] = best
        self.configs_timings = timings
        if path is not None:
            try:
                self._store_result(path, pruned, best, timings)
            except OSError:
                pass  # a read-only cache costs a retune next time, nothing more
        return best

    def run(self, *args, **kwargs):
        self.nargs = nargs = dict(zip(self.arg_names, args))
        if len(self.configs) > 1:
            key = self._key({**nargs, **kwargs})
            config = self.cache.get(key)
            if config is None:
                self._tune(args, {k: v for k, v in kwargs.items() if k not in ("warmup",)}, key)
                config = self.cache[key]
                # the real launch below starts from zeroed outputs, as the timed runs did
                if not self._user_pre_hook:
                    self.pre_hook({**nargs, **kwargs, **config.all_kwargs()}, reset_only=True)
                if _print_enabled():
                    print(f"Autotuning kernel {self.base_fn.__name__} finished after {self.bench_time:.2f}s; "
                          f"best config: {config}", flush=True)
        else:
            config = self.configs[0]
        self.best_config = config
        all_kwargs, launch_kwargs, meta_names = self._prepared(config)
        if not meta_names.isdisjoint(kwargs):
            self._check_conflicts(config, kwargs)
        if config.pre_hook is not None:
            config.pre_hook({**nargs, **kwargs, **all_kwargs})
        ret = self.fn.run(*args, **kwargs, **launch_kwargs)
        self.nargs = None
        return ret

    def _prepared(self, config) -> tuple:
        """(``config.all_kwargs()``, what its launch passes down, its meta-parameter names), kept per config and
        made again when the config's fields change: a launch that reuses a tuned config (every launch after the
        first) pays a lookup, not three dicts."""
        fields = (config.num_warps, config.num_stages, config.num_ctas, config.maxnreg, config.ir_override)
        got = self._prepared_configs.get(id(config))
        if got is None or got[0] is not config or got[1] != fields or got[2] != config.kwargs:
            if len(self._prepared_configs) > 4 * len(self.configs) + 64:
                self._prepared_configs.clear()
            got = self._prepared_configs[id(config)] = (
                config, fields, dict(config.kwargs),
                (config.all_kwargs(), self._launch_kwargs(config), frozenset(config.kwargs)))
        return got[3]

    def warmup(self, *args, **kwargs):
        """Compile every (pruned) config without launching."""
        self.nargs = dict(zip(self.arg_names, args))
        out = []
        pruned = self.prune_configs(kwargs)
        if len(pruned) > 1:
            self._compile_ahead(args, kwargs, pruned)
        for config in pruned:
            out.append(self.fn.warmup(*args, **kwargs, **self._launch_kwargs(config)))
        self.nargs = None
        return out


def autotune(configs, key, prune_configs_by=None, reset_to_zero=None, restore_value=None, pre_hook=None,
             post_hook=None, warmup=None, rep=None, use_cuda_graph=False, do_bench=None, cache_results=False):
    """Decorator: tune ``configs`` per distinct values of the ``key`` arguments (see the module docstring).

    ``prune_configs_by``: ``{'early_config_prune': f(configs, nargs, **kwargs) -> configs,
    'perf_model': f(**nargs, **kwargs, **config) -> estimated time, 'top_k': int or fraction}``.
    ``do_bench(fn, quantiles=...)`` replaces the timer; ``warmup``/``rep`` (ms) tune the default one.
    """
    def deco(fn):
        return Autotuner(fn, _arg_names(fn), configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench, cache_results=cache_results)
    return deco


class Heuristics(KernelInterface):
    """Meta-parameters computed from the arguments: ``values[name](args_by_name) -> value``."""

    def __init__(self, fn, arg_names, values):
        self.fn = fn
        self.base_fn = _base_fn(fn)
        self.arg_names = list(arg_names)
        self.values = dict(values)
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)

    def _fill(self, args, kwargs):
        for name, heur in self.values.items():
            kwargs[name] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return kwargs

    def run(self, *args, **kwargs):
        return self.fn.run(*args, **self._fill(args, kwargs))

    def warmup(self, *args, **kwargs):
        return self.fn.warmup(*args, **self._fill(args, kwargs))


def heuristics(values):
    """Decorator: ``@heuristics({'BLOCK': lambda args: next_power_of_2(args['n'])})``."""
    def deco(fn):
        return Heuristics(fn, _arg_names(fn), values)
    return deco
