"""Error corpus: tile shapes that do not fit (broadcasting, ranks, axes, block sizes, dot shapes) and sizes that
must be known at compile time."""
from tilec import CompilationError

from error_corpus import Case

CASES = [
    Case("broadcast_mismatch", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.arange(0, BLOCK)
            b = tl.arange(0, 2 * BLOCK)
            c = a + b  # <-
        """, CompilationError, 'cannot broadcast shapes [16] and [32]: dimension 0 is 16 vs 32', caret="a + b"),
    Case("broadcast_2d_mismatch", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((BLOCK, 4), tl.float32)
            b = tl.zeros((BLOCK, 8), tl.float32)
            c = a * b  # <-
        """, CompilationError, 'cannot broadcast shapes [16, 4] and [16, 8]: dimension 1 is 4 vs 8', caret="a * b"),
    Case("arange_not_power_of_two", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            r = tl.arange(0, 24)  # <-
        """, CompilationError, "arange's range must be a power of 2, got 24", caret="tl.arange"),
    Case("arange_runtime_end", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            r = tl.arange(0, n)  # <-
        """, CompilationError, "arange's arguments must be compile-time ints (tl.constexpr)", caret="tl.arange"),
    Case("arange_reversed", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            r = tl.arange(8, 4)  # <-
        """, CompilationError, "arange's end (4) must be greater than its start (8)", caret="tl.arange"),
    Case("arange_float_bounds", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            r = tl.arange(0.0, 16.0)  # <-
        """, CompilationError, "arange's arguments must be compile-time ints (tl.constexpr), got 0.0, 16.0", caret="tl.arange"),
    Case("zeros_runtime_shape", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            z = tl.zeros((n,), tl.float32)  # <-
        """, CompilationError, 'shape element 0 must be a compile-time int', caret="tl.zeros"),
    Case("zeros_not_power_of_two", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            z = tl.zeros((BLOCK, 12), tl.float32)  # <-
        """, CompilationError, 'shape element 1 must be a power of 2, got 12', caret="tl.zeros"),
    Case("tile_too_big", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            z = tl.zeros((BLOCK, BLOCK), tl.float32)  # <-
        """, CompilationError, 'numel (4194304) exceeds triton maximum tensor numel (1048576)', launch="k[(1,)](x, y, 16, BLOCK=2048)", caret="tl.zeros"),
    Case("reshape_wrong_size", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = tl.reshape(x, (4, 8))  # <-
        """, CompilationError, 'cannot reshape [16] (16 elements) to [4, 8]', caret="tl.reshape"),
    Case("reshape_runtime_shape", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK))
            y = tl.reshape(x, (n, 2))  # <-
        """, CompilationError, "reshape's shape must be compile-time ints", caret="tl.reshape"),
    Case("permute_wrong_rank", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK, 4), tl.float32)
            y = tl.permute(x, (1, 0, 2))  # <-
        """, CompilationError, 'trans dims [1, 0, 2] are not a permutation of 2 dimensions', caret="tl.permute"),
    Case("permute_repeated_axis", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK, 4), tl.float32)
            y = tl.permute(x, (0, 0))  # <-
        """, CompilationError, 'trans dims [0, 0] are not a permutation of 2 dimensions', caret="tl.permute"),
    Case("expand_dims_duplicate_axes", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            y = tl.expand_dims(x, (0, 0))  # <-
        """, CompilationError, 'expand_dims received duplicate axes', caret="tl.expand_dims"),
    Case("expand_dims_out_of_range", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            y = tl.expand_dims(x, 3)  # <-
        """, CompilationError, 'invalid axis 3. Expected -2 <= axis < 2', caret="tl.expand_dims"),
    Case("broadcast_to_smaller", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            y = tl.broadcast_to(x, (8,))  # <-
        """, CompilationError, 'cannot broadcast shape [16] to [8] (dimension 0)', caret="tl.broadcast_to"),
    Case("index_past_rank", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            y = x[:, :, None, 1]  # <-
        """, CompilationError, 'invalid axis 2. Expected -2 <= axis < 2', caret="x[:, :, None, 1]"),
    Case("sum_axis_out_of_range", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK, 4), tl.float32)
            s = tl.sum(x, axis=2)  # <-
        """, CompilationError, 'reduction axis 2 out of range for shape [16, 4]', caret="tl.sum"),
    Case("max_negative_axis_out_of_range", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            s = tl.max(x, axis=-2)  # <-
        """, CompilationError, 'reduction axis -2 out of range for shape [16]', caret="tl.max"),
    Case("argmin_axis_out_of_range", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            s = tl.argmin(x, axis=1)  # <-
        """, CompilationError, 'reduction axis 1 out of range for shape [16]', caret="tl.argmin"),
    Case("cumsum_axis_out_of_range", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            s = tl.cumsum(x, axis=3)  # <-
        """, CompilationError, 'scan axis 3 out of range for shape [16]', caret="tl.cumsum"),
    Case("reduce_runtime_axis", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            s = tl.sum(x, axis=n)  # <-
        """, CompilationError, 'out of range for shape [16]', caret="tl.sum"),
    Case("reduce_scalar", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X)
            s = tl.sum(x, axis=0)  # <-
        """, CompilationError, 'cannot reduce a scalar', caret="tl.sum"),
    Case("cumsum_scalar", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X)
            s = tl.cumsum(x, axis=0)  # <-
        """, CompilationError, 'cannot scan a scalar', caret="tl.cumsum"),
    Case("split_odd_last_dim", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            a, b = tl.split(x)  # <-
        """, CompilationError, 'split needs a tensor whose last dimension is 2, got shape [16]', caret="tl.split"),
    Case("sort_dim_out_of_range", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            y = tl.sort(x, dim=1)  # <-
        """, CompilationError, 'sort: axis 1 out of range for a tensor of shape [16]', caret="tl.sort"),
    Case("topk_runtime_k", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            y = tl.topk(x, n)  # <-
        """, CompilationError, 'topk: k must be a compile-time int in [1, 16]', caret="tl.topk"),
    Case("cat_different_shapes", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((BLOCK,), tl.float32)
            b = tl.zeros((2 * BLOCK,), tl.float32)
            c = tl.cat(a, b)  # <-
        """, CompilationError, 'cat needs two tensors of one shape, got [16] and [32]', caret="tl.cat"),
    Case("join_different_shapes", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((BLOCK,), tl.float32)
            b = tl.zeros((2 * BLOCK,), tl.float32)
            c = tl.join(a, b)  # <-
        """, CompilationError, 'cannot broadcast shapes [16] and [32]', caret="tl.join"),
    Case("dot_of_vectors", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((BLOCK,), tl.float32)
            c = tl.dot(a, a)  # <-
        """, CompilationError, 'dot needs two 2-d (or 3-d) tensors, got shapes [16] and [16]', caret="tl.dot"),
    Case("dot_inner_mismatch", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((16, 32), tl.float32)
            b = tl.zeros((16, 16), tl.float32)
            c = tl.dot(a, b)  # <-
        """, CompilationError, 'dot shape mismatch: [16, 32] @ [16, 16] (inner dimensions 32 and 16 differ)', caret="tl.dot"),
    Case("dot_batch_mismatch", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((2, 16, 16), tl.float32)
            b = tl.zeros((4, 16, 16), tl.float32)
            c = tl.dot(a, b)  # <-
        """, CompilationError, 'dot batch dimensions differ: 2 and 4', caret="tl.dot"),
    Case("dot_acc_shape", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((16, 16), tl.float32)
            acc = tl.zeros((16, 32), tl.float32)
            c = tl.dot(a, a, acc)  # <-
        """, CompilationError, 'dot acc has shape [16, 32], expected [16, 16]', caret="tl.dot"),
    Case("dot_too_small", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a = tl.zeros((8, 16), tl.float32)
            c = tl.dot(a, tl.trans(a))  # <-
        """, CompilationError, 'dot needs every dimension >= 16, got M=8, N=8, K=16', caret="tl.dot",
        xfail="documented difference: compiled dots need every dimension >= 16, the interpreter takes any size"),
    Case("store_lower_rank_value", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            r = tl.arange(0, 4)
            ptrs = X + r[:, None] * 4 + r[None, :]
            tl.store(ptrs, tl.zeros((4,), tl.float32))  # <-
        """, CompilationError, 'Cannot broadcast, rank mismatch: store of a value of shape [4] through pointers of shape [4, 4]', caret="tl.store"),
    Case("store_value_too_long", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.store(X + tl.arange(0, BLOCK), tl.zeros((2 * BLOCK,), tl.float32))  # <-
        """, CompilationError, 'cannot broadcast shape [32] to [16] (dimension 0)', caret="tl.store"),
    Case("load_mask_shape", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.load(X + tl.arange(0, BLOCK), mask=tl.arange(0, 2 * BLOCK) < n)  # <-
        """, CompilationError, 'cannot broadcast shapes [16] and [32]', caret="tl.load"),
    Case("load_other_shape", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(X + offs, mask=offs < n, other=tl.zeros((2 * BLOCK,), tl.float32))  # <-
        """, CompilationError, 'cannot broadcast shape [32] to [16] (dimension 0)', caret="tl.load"),
    Case("where_shapes", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            c = tl.arange(0, BLOCK) < n
            w = tl.where(c, tl.zeros((2 * BLOCK,), tl.float32), 1.0)  # <-
        """, CompilationError, 'cannot broadcast shapes [16] and [32]', caret="tl.where"),
    Case("static_range_runtime", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            for i in tl.static_range(n):  # <-
                tl.store(X + i, 1.0)
        """, CompilationError, 'static_range bounds must be compile-time ints', caret="tl.static_range"),
    Case("range_float_bound", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            for i in range(2.5):  # <-
                tl.store(X, 1.0)
        """, CompilationError, 'range bounds must be integer scalars, got fp32', caret="for"),
    Case("range_zero_step", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            for i in range(0, n, 0):  # <-
                tl.store(X, 1.0)
        """, CompilationError, 'range step must not be zero', caret="for"),
    Case("histogram_of_2d", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK, 2), tl.int32)
            h = tl.histogram(x, 4)  # <-
        """, CompilationError, 'histogram needs a 1-d integer tensor, got <[16, 2], int32>', caret="tl.histogram"),
    Case("gather_rank_mismatch", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            x = tl.zeros((BLOCK,), tl.float32)
            i = tl.zeros((BLOCK, 2), tl.int32)
            g = tl.gather(x, i, 0)  # <-
        """, CompilationError, 'gather: src [16] and index [16, 2] need one rank', caret="tl.gather"),
    Case("block_ptr_rank_mismatch", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            bp = tl.make_block_ptr(X, shape=(n, n), strides=(n, 1), offsets=(0,), block_shape=(BLOCK, BLOCK),  # <-
                                   order=(1, 0))
        """, CompilationError, 'make_block_ptr: shape, strides, offsets and block_shape need 2 entries each', caret="tl.make_block_ptr"),
]
