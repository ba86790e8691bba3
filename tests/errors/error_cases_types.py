"""Error corpus: operations on the wrong element types, pointers misused, compile-time values that are not,
and calls between @jit functions that do not fit."""
from tilec import CompilationError

from error_corpus import Case

INT_LAUNCH = "k[(1,)](xi, yi, 16, BLOCK=16)"

CASES = [
    Case("floordiv_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = x // 2.0  # <-
        """, CompilationError, '// needs integer operands, got tl.float32 and tl.float32', caret="x // 2.0"),
    Case("bitwise_and_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = x & 1  # <-
        """, CompilationError, 'invalid operands of type tl.float32 and tl.int32 for a bitwise operator', caret="x & 1"),
    Case("invert_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = ~x  # <-
        """, CompilationError, '~ needs an integer operand, got tl.float32', caret="~x"),
    Case("shift_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = x << 1  # <-
        """, CompilationError, 'invalid operands of type tl.float32 and tl.int32 for a bitwise operator', caret="x << 1"),
    Case("pointer_plus_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            p = X + 1.5  # <-
        """, CompilationError, 'cannot add a floating-point offset (tl.float32) to a pointer', caret="X + 1.5"),
    Case("pointer_times_int", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            p = X * 2  # <-
        """, CompilationError, 'cannot use a pointer (*fp32) here', caret="X * 2"),
    Case("pointer_plus_pointer", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            p = X + Y  # <-
        """, CompilationError, 'cannot add two pointers', caret="X + Y"),
    Case("negate_pointer", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            p = -X  # <-
        """, CompilationError, 'cannot negate a pointer', caret="-X"),
    Case("compare_pointer_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            c = X < 1.5  # <-
        """, CompilationError, 'cannot compare a pointer and a floating-point value (tl.float32)', caret="X < 1.5"),
    Case("float_mask", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(X + offs, mask=offs * 1.0)  # <-
        """, CompilationError, 'load mask must be a boolean (int1) tensor, got tl.float32', caret="tl.load"),
    Case("int_mask", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(X + offs, 1.0, mask=offs)  # <-
        """, CompilationError, 'store mask must be a boolean (int1) tensor, got tl.int32', caret="tl.store"),
    Case("exp_of_int", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = tl.exp(x)  # <-
        """, CompilationError, 'exp expects fp32 or fp64, got int32', launch=INT_LAUNCH, caret="tl.exp"),
    Case("sqrt_of_half", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK)).to(tl.float16)
            y = tl.sqrt(x)  # <-
        """, CompilationError, 'sqrt expects fp32 or fp64, got fp16', caret="tl.sqrt"),
    Case("div_mixed_signedness", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.load(X + tl.arange(0, BLOCK))
            b = a.to(tl.uint32)
            c = a / b  # <-
        """, CompilationError, 'Cannot use /, //, or % with tl.int32 and tl.uint32 because they have different signedness', launch=INT_LAUNCH, caret="a / b"),
    Case("mod_mixed_signedness", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.load(X + tl.arange(0, BLOCK))
            c = a % a.to(tl.uint8)  # <-
        """, CompilationError, 'Cannot use /, //, or % with tl.int32 and tl.uint8', launch=INT_LAUNCH, caret="a % a"),
    Case("pow_of_ints", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.load(X + tl.arange(0, BLOCK))
            c = a ** 2  # <-
        """, CompilationError, '** needs floating-point operands, got tl.int32', launch=INT_LAUNCH, caret="a ** 2"),
    Case("negative_scalar_with_unsigned", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.load(X + tl.arange(0, BLOCK)).to(tl.uint32)
            c = a + (-1)  # <-
        """, CompilationError, 'cannot combine an unsigned tl.uint32 tensor with the negative scalar -1', launch=INT_LAUNCH, caret="a + (-1)"),
    Case("scalar_out_of_range", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.load(X + tl.arange(0, BLOCK)).to(tl.int8)
            c = a + 1000  # <-
        """, CompilationError, 'scalar 1000 is out of range for tl.int8', launch=INT_LAUNCH, caret="a + 1000"),
    Case("atomic_and_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.atomic_and(X + tl.arange(0, BLOCK), 1.0)  # <-
        """, CompilationError, 'atomic_and does not support tl.float32', caret="tl.atomic_and"),
    Case("atomic_bad_sem", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.atomic_add(X + tl.arange(0, BLOCK), 1.0, sem="eventually")  # <-
        """, CompilationError, 'atomic sem must be one of', caret="tl.atomic_add"),
    Case("atomic_bad_scope", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.atomic_add(X + tl.arange(0, BLOCK), 1.0, scope="planet")  # <-
        """, CompilationError, 'atomic scope must be one of', caret="tl.atomic_add"),
    Case("xor_sum_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            tl.store(Y, tl.xor_sum(x, 0))  # <-
        """, CompilationError, 'xor_sum needs integers, got tl.float32', caret="tl.xor_sum"),
    Case("store_through_const", """
        @tilec.jit
        def k(X: tl.const, Y, n, BLOCK: tl.constexpr):
            tl.store(X + tl.arange(0, BLOCK), 1.0)  # <-
        """, CompilationError, 'Cannot store to a constant pointer', caret="tl.store"),
    Case("load_from_int", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = tl.load(n)  # <-
        """, CompilationError, 'load needs a pointer, got tl.int32', caret="tl.load"),
    Case("store_to_int", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.store(n, 1.0)  # <-
        """, CompilationError, 'store needs a pointer, got tl.int32', caret="tl.store"),
    Case("dot_int16", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((16, 16), tl.int16)
            c = tl.dot(a, a)  # <-
        """, CompilationError, 'integer dot needs int8 operands, got tl.int16', caret="tl.dot"),
    Case("dot_mixed_dtypes", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((16, 16), tl.float16)
            b = tl.zeros((16, 16), tl.float32)
            c = tl.dot(a, b)  # <-
        """, CompilationError, 'dot operands must share one dtype, got tl.float16 and tl.float32', caret="tl.dot"),
    Case("dot_acc_dtype", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((16, 16), tl.float32)
            acc = tl.zeros((16, 16), tl.int32)
            c = tl.dot(a, a, acc)  # <-
        """, CompilationError, 'dot acc has dtype tl.int32, expected tl.float32', caret="tl.dot"),
    Case("dot_out_dtype_int", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((16, 16), tl.float16)
            c = tl.dot(a, a, out_dtype=tl.int32)  # <-
        """, CompilationError, 'dot out_dtype must be a floating-point dtype, got tl.int32', caret="tl.dot"),
    Case("dot_bad_precision", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((16, 16), tl.float32)
            c = tl.dot(a, a, input_precision="tf64")  # <-
        """, CompilationError, "input_precision must be one of ('tf32', 'tf32x3', 'ieee'), got 'tf64'", caret="tl.dot"),
    Case("dot_precision_and_tf32", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((16, 16), tl.float32)
            c = tl.dot(a, a, input_precision="ieee", allow_tf32=True)  # <-
        """, CompilationError, 'pass only one of input_precision and allow_tf32', caret="tl.dot"),
    Case("cast_to_number", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = x.to(3)  # <-
        """, CompilationError, 'cast target must be a dtype, got 3', caret="x.to"),
    Case("bitcast_width", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = x.to(tl.int16, bitcast=True)  # <-
        """, CompilationError, 'cannot bitcast tl.float32 (32 bits) to tl.int16 (16 bits)', caret="x.to"),
    Case("rounding_on_upcast", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = x.to(tl.float64, fp_downcast_rounding="rtz")  # <-
        """, CompilationError, 'fp_downcast_rounding is only for floating-point down-casts', caret="x.to"),
    Case("unknown_rounding", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = x.to(tl.float16, fp_downcast_rounding="up")  # <-
        """, CompilationError, "fp_downcast_rounding must be 'rtne' or 'rtz', got 'up'", caret="x.to"),
    Case("float_to_pointer", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            p = x.to(tl.pointer_type(tl.float32))  # <-
        """, CompilationError, 'cannot cast tl.float32 to *fp32', caret="x.to"),
    Case("full_dtype_string", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            z = tl.full((BLOCK,), 1.0, "float32")  # <-
        """, CompilationError, "full needs a dtype, got 'float32'", caret="tl.full"),
    Case("umulhi_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = tl.umulhi(x, x)  # <-
        """, CompilationError, 'umulhi needs integer operands, got tl.float32', caret="tl.umulhi"),
    Case("histogram_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            h = tl.histogram(x, 4)  # <-
        """, CompilationError, 'histogram needs a 1-d integer tensor', caret="tl.histogram"),
    Case("gather_float_index", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            g = tl.gather(x, x, 0)  # <-
        """, CompilationError, 'gather index must be an integer tensor, got tl.float32', caret="tl.gather"),
    Case("join_mixed_dtypes", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            j = tl.join(x, x.to(tl.int32))  # <-
        """, CompilationError, 'join needs two tensors of one dtype, got tl.float32 and tl.int32', caret="tl.join"),
    Case("where_pointer_and_float", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            p = tl.where(offs < n, X + offs, 1.5)  # <-
        """, CompilationError, 'cannot select between a pointer and a floating-point value (tl.float32)', caret="tl.where"),
    Case("sum_of_pointers", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            s = tl.sum(X + tl.arange(0, BLOCK), axis=0)  # <-
        """, CompilationError, 'sum needs numbers, got pointers', caret="tl.sum"),
    Case("if_on_tile", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            if x > 0:  # <-
                tl.store(Y, 1.0)
        """, CompilationError, 'a runtime `if` needs a scalar condition, got a tensor of shape [16]', caret="if"),
    Case("while_on_tile", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            while x < 10.0:  # <-
                x = x + 1.0
        """, CompilationError, 'a while condition must be a scalar', caret="x < 10.0"),
    Case("loop_changes_type", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            acc = tl.zeros((BLOCK,), tl.float32)
            for i in range(n):  # <-
                acc = acc.to(tl.float16)
        """, CompilationError, "Loop-carried variable acc has initial type <[16], fp32> but is re-assigned to <[16], fp16> in loop! Please make sure that the type stays consistent.", caret="for"),
    Case("loop_changes_shape", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            acc = tl.zeros((BLOCK,), tl.float32)
            for i in range(n):  # <-
                acc = tl.sum(acc, axis=0)
        """, CompilationError, "Loop-carried variable acc has initial type <[16], fp32> but is re-assigned to fp32 in loop!", caret="for"),
    Case("branches_disagree", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            if n > 0:  # <-
                v = tl.zeros((BLOCK,), tl.float32)
            else:
                v = tl.zeros((BLOCK,), tl.int32)
            tl.store(X + tl.arange(0, BLOCK), v)
        """, CompilationError, "Mismatched type for v (variable 'v'): type <[16], fp32> in the then-branch but <[16], int32>", caret="if"),
    Case("program_id_axis_3", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            p = tl.program_id(3)  # <-
        """, CompilationError, 'program_id axis must be 0, 1, or 2 but got 3', caret="tl.program_id"),
    Case("program_id_runtime_axis", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            p = tl.program_id(n)  # <-
        """, CompilationError, 'program_id axis must be 0, 1, or 2', caret="tl.program_id"),
    Case("static_assert_false", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.static_assert(BLOCK % 32 == 0, "BLOCK must be a multiple of 32")  # <-
        """, CompilationError, 'static_assert failed: BLOCK must be a multiple of 32', caret="tl.static_assert"),
    Case("static_assert_runtime", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.static_assert(n > 0)  # <-
        """, CompilationError, 'static_assert needs a compile-time condition', caret="tl.static_assert"),
    Case("assume_false", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.assume(BLOCK < 8)  # <-
        """, CompilationError, 'tl.assume of a condition that is false at compile time', caret="tl.assume"),
    Case("helper_constexpr_from_runtime_used_as_shape", """
        @tilec.jit
        def ramp(K: tl.constexpr):
            return tl.arange(0, K)  # <-

        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.store(X + ramp(n), 1.0)
        """, CompilationError, "arange", caret="tl.arange"),
    Case("helper_too_many_arguments", """
        @tilec.jit
        def twice(x):
            return x * 2

        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.store(X, twice(1.0, 2.0))  # <-
        """, CompilationError, 'call to twice: too many positional arguments', caret="twice"),
    Case("helper_unknown_keyword", """
        @tilec.jit
        def twice(x):
            return x * 2

        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.store(X, twice(x=1.0, y=2.0))  # <-
        """, CompilationError, "call to twice: got an unexpected keyword argument 'y'", caret="twice"),
    Case("helper_returns_in_loop", """
        @tilec.jit
        def first(x, n):
            for i in range(n):
                return x  # <-
            return x

        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.store(X, first(1.0, n))
        """, CompilationError, 'a return with a value inside a loop is not supported', caret="return"),
    Case("helper_inconsistent_returns", """
        @tilec.jit
        def pick(x, n, BLOCK: tl.constexpr):
            if n > 0:  # <-
                return x
            return tl.zeros((BLOCK,), tl.int32)

        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.store(X + tl.arange(0, BLOCK), pick(tl.zeros((BLOCK,), tl.float32), n, BLOCK))
        """, CompilationError, "Inconsistent return types: type <[16], fp32> in the then-branch but <[16], int32>",
        caret="if"),
    Case("helper_recursion", """
        @tilec.jit
        def forever(x):
            return forever(x)  # <-

        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.store(X, forever(1.0))
        """, CompilationError, 'recursive call to forever is not supported', caret="forever"),
    Case("call_kernel_argument", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = n(1)  # <-
        """, CompilationError, 'cannot call a tensor (int32)', caret="n(1)"),
    Case("reduce_combine_not_jit", """
        def add(a, b):
            return a + b

        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            s = tl.reduce(x, 0, add)  # <-
        """, CompilationError, 'cannot call add: it is a plain Python function', caret="add)"),
]
