"""Error corpus: launches that do not fit the kernel (arguments, grids, launch options). These errors are about
the call, not a kernel line: they name the kernel and the parameter, with no source location."""
from tilec import CompilationError

from error_corpus import Case

COPY = """
    @tilec.jit
    def k(X, Y, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)
    """


def launch(name, launch, error, message, source=COPY, **kw):
    return Case(name, source, error, message, launch=launch, located=False, **kw)


CASES = [
    # -- arguments ---------------------------------------------------------------------------------------------
    launch("missing_argument", "k[(1,)](x, y, BLOCK=16)", TypeError, "k() missing a value for parameter 'n'"),
    launch("too_many_arguments", "k[(1,)](x, y, 16, 16, 7)", TypeError, 'k() takes 4 arguments but 5 were given'),
    launch("unknown_keyword", "k[(1,)](x, y, 16, BLOCK=16, bogus=3)", TypeError, "k() got an unexpected keyword argument 'bogus'"),
    launch("argument_given_twice", "k[(1,)](x, y, 16, BLOCK=16, n=3)", TypeError, "k() got multiple values for argument 'n'"),
    launch("missing_constexpr", "k[(1,)](x, y, 16)", TypeError, "k() missing a value for parameter 'BLOCK'"),
    launch("string_for_pointer", "k[(1,)]('x', y, 16, BLOCK=16)", TypeError, "k: parameter 'X': unsupported argument type builtins.str"),
    launch("list_for_pointer", "k[(1,)]([1.0, 2.0], y, 16, BLOCK=16)", TypeError, "k: parameter 'X': unsupported argument type builtins.list"),
    launch("object_for_pointer", "k[(1,)](object(), y, 16, BLOCK=16)", TypeError, "k: parameter 'X': unsupported argument type builtins.object"),
    launch("complex_scalar", "k[(1,)](x, y, 3 + 4j, BLOCK=16)", TypeError, "k: parameter 'n': unsupported argument type builtins.complex"),
    launch("int_too_large", "k[(1,)](x, y, 2 ** 70, BLOCK=16)", OverflowError, "k: parameter 'n': integer argument 1180591620717411303424 does not fit in 64 bits"),
    launch("array_for_constexpr", "k[(1,)](x, y, 16, BLOCK=np.zeros(3))", TypeError, "k: constexpr parameter 'BLOCK' needs a compile-time value"),
    launch("called_directly", "k(x, y, 16, BLOCK=16)", RuntimeError, 'k is a @tilec.jit kernel: launch it as k[grid](...)'),
    launch("read_only_output", "y.flags.writeable = False\nk[(1,)](x, y, 16, BLOCK=16)", TypeError, "k: parameter 'Y' is written by the kernel, but its argument (ndarray) is read-only memory"),
    launch("broadcast_view_output", "k[(1,)](x, np.broadcast_to(np.zeros(1, np.float32), (64,)), 16, BLOCK=16)",
           TypeError, "k: parameter 'Y' is written by the kernel, but its argument (ndarray) is read-only memory"),
    Case("constexpr_not_power_of_two", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)  # <-
        """, CompilationError, "arange's range must be a power of 2, got 12", launch="k[(1,)](x, y, 16, BLOCK=12)",
         caret="tl.arange"),
    # -- grids -------------------------------------------------------------------------------------------------
    launch("grid_float", "k[(1.5,)](x, y, 16, BLOCK=16)", ValueError, 'k: grid dimension 0 must be an int, got 1.5 (float); use tilec.cdiv'),
    launch("grid_negative", "k[(-1,)](x, y, 16, BLOCK=16)", ValueError, 'k: grid dimension 0 is negative (-1)'),
    launch("grid_string", "k[('2',)](x, y, 16, BLOCK=16)", ValueError, "k: grid dimension 0 must be an int, got '2' (str)"),
    launch("grid_bool", "k[(True,)](x, y, 16, BLOCK=16)", ValueError, 'k: grid dimension 0 must be an int, got True (bool)'),
    launch("grid_too_large", "k[(2 ** 31,)](x, y, 16, BLOCK=16)", ValueError, 'k: grid dimension 0 is 2147483648, over the limit of 2147483647'),
    launch("grid_second_dim_too_large", "k[(1, 65536)](x, y, 16, BLOCK=16)", ValueError, 'k: grid dimension 1 is 65536, over the limit of 65535'),
    launch("grid_four_dims", "k[(1, 1, 1, 1)](x, y, 16, BLOCK=16)", ValueError, 'k: the grid must have 1 to 3 dimensions, got (1, 1, 1, 1)'),
    launch("grid_empty", "k[()](x, y, 16, BLOCK=16)", ValueError, 'k: the grid must have 1 to 3 dimensions, got ()'),
    launch("grid_none", "k[None](x, y, 16, BLOCK=16)", ValueError, 'k: grid dimension 0 must be an int, got None (NoneType)'),
    launch("grid_callable_float", "k[lambda meta: (meta['n'] / 16,)](x, y, 16, BLOCK=16)", ValueError, 'k: grid dimension 0 must be an int, got 1.0 (float)'),
    launch("grid_callable_raises", "k[lambda meta: (meta['N'],)](x, y, 16, BLOCK=16)", KeyError, "'N'"),
    # -- launch options ----------------------------------------------------------------------------------------
    launch("misspelled_option", "k[(1,)](x, y, 16, BLOCK=16, num_warpz=4)", TypeError, "k() got an unexpected keyword argument 'num_warpz'"),
    Case("bad_default_precision", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((16, 16), tl.float32)
            c = tl.dot(a, a)  # <-
            tl.store(Y + tl.arange(0, 16), tl.sum(c, axis=1))
        """, CompilationError, "input_precision must be one of ('tf32', 'tf32x3', 'ieee'), got 'tf64'",
         launch="k[(1,)](x, y, 16, BLOCK=16, default_dot_input_precision='tf64')", caret="tl.dot"),
    launch("run_without_grid", "k.run(x, y, 16, BLOCK=16)", TypeError, "missing 1 required keyword-only argument: 'grid'"),
    launch("warmup_missing_argument", "k.warmup(x, y, BLOCK=16)", TypeError, "k() missing a value for parameter 'n'"),
    launch("warmup_string_for_pointer", "k.warmup('x', y, 16, BLOCK=16)", TypeError,
           "k: parameter 'X': unsupported argument type builtins.str"),
]
