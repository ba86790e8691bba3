"""``tilec.torch.op``: a function that launches tilec kernels, registered as a torch custom operator.

``torch.library.custom_op`` does the registering (the schema is inferred from the type hints, exactly as there);
tilec adds the fake implementation derived from the declared outputs (``outputs.py``), the autograd hook, and a
check of each eager call's outputs against the declaration. Dynamo, AOTAutograd, Inductor and ``torch.export``
see one opaque operator node: they never trace into the launch, so there is no graph break and no warning, and
CUDA graphs capture the launch like any other kernel on the current stream.
"""
from __future__ import annotations

import functools
import inspect

import torch

from .outputs import check_outputs, fake_outputs, normalize


def op(name: str, fn=None, /, *, out=None, mutates_args=(), fake=None, backward=None, setup_context=None,
       device_types=None, schema=None, tags=None, check: bool = True):
    """Register ``fn`` (or the decorated function) as the torch operator ``name`` ("namespace::op_name").

    ``out``: the outputs, ``tilec.torch.like(...)`` or a tuple of them (None: the operator returns nothing and
    writes its ``mutates_args``). ``fake``: a fake implementation of one's own instead (then ``out`` is not
    used). ``backward``/``setup_context``: the autograd formula, as for ``torch.library.register_autograd``.
    ``check``: compare each eager call's outputs with ``out`` (shape, dtype, device, strides).
    The remaining arguments are ``torch.library.custom_op``'s. Returns the operator (callable, and with
    ``register_fake``/``register_autograd``/``register_kernel`` as any custom operator has)."""
    if fn is None:
        return functools.partial(op, name, out=out, mutates_args=mutates_args, fake=fake, backward=backward,
                                 setup_context=setup_context, device_types=device_types, schema=schema, tags=tags,
                                 check=check)
    outs, as_tuple = normalize(out)
    sig = inspect.signature(fn)
    for o in outs:
        if o.param not in sig.parameters:
            raise TypeError(f"{name}: {o.describe()} names no parameter of {fn.__name__} "
                            f"(its parameters: {', '.join(sig.parameters)})")
    if fake is None and not outs and not mutates_args:
        raise TypeError(f"{name}: declare what it returns (out=tilec.torch.like(...)), or what it writes "
                        "(mutates_args=...), or give fake=")
    if setup_context is not None and backward is None:
        raise TypeError(f"{name}: setup_context= without backward=")

    def arguments(args, kwargs) -> dict:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    body = fn
    if check and outs:
        qualified = name

        @functools.wraps(fn)
        def body(*args, **kwargs):
            result = fn(*args, **kwargs)
            check_outputs(qualified, outs, as_tuple, arguments(args, kwargs), result)
            return result

    opdef = torch.library.custom_op(name, body, mutates_args=mutates_args, device_types=device_types,
                                    schema=schema, tags=tags)
    if fake is None:
        @functools.wraps(fn)
        def fake(*args, **kwargs):
            return fake_outputs(outs, as_tuple, arguments(args, kwargs))
    opdef.register_fake(fake)
    if backward is not None:
        opdef.register_autograd(backward, setup_context=setup_context)
    return opdef
