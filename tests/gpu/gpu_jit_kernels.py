"""@tilec.jit kernels shared by the GPU tests (PTX-only and on-device) and the timing script."""
import tilec
import tilec.language as tl


@tilec.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@tilec.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + offs, num / den, mask=mask)


@tilec.jit
def softmax2d_kernel(out_ptr, in_ptr, n_rows, n_cols, stride, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """ROWS rows per program: reductions along axis 1 of a 2-d tile."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    offs = rows[:, None] * stride + cols[None, :]
    x = tl.load(in_ptr + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=1)[:, None]
    num = tl.exp(x)
    den = tl.sum(num, axis=1)
    tl.store(out_ptr + offs, num / den[:, None], mask=mask)


@tilec.jit
def col_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, stride, ROWS: tl.constexpr, COLS: tl.constexpr):
    """Sum over axis 0 of an [n_rows, n_cols] array, COLS columns per program, looping over row blocks."""
    cols = tl.program_id(0) * COLS + tl.arange(0, COLS)
    acc = tl.zeros((COLS,), dtype=tl.float32)
    for r0 in range(0, n_rows, ROWS):
        rows = r0 + tl.arange(0, ROWS)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + cols, acc, mask=cols < n_cols)


@tilec.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr = "tf32"):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision=PREC)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilec.jit
def transpose_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N), other=0.0)
    y = tl.trans(x)
    tl.store(out_ptr + rn[:, None] * M + rm[None, :], y, mask=(rn[:, None] < N) & (rm[None, :] < M))


@tilec.jit
def math_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    y = tl.exp(x) * 0.25 + tl.log(tl.abs(x) + 1.0) - tl.sqrt(tl.abs(x)) + tl.sin(x) * tl.cos(x) \
        + tl.erf(x) + tl.sigmoid(x) + tl.rsqrt(tl.abs(x) + 1.0) + tl.floor(x) + tl.exp2(x * 0.5) \
        + tl.log2(tl.abs(x) + 2.0) + tl.maximum(x, 0.5) + tl.minimum(x, -0.5)
    tl.store(out_ptr + offs, y, mask=mask)


@tilec.jit
def while_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Counts halvings until below 1 (a data-dependent while loop on a scalar) per program; exercises scf."""
    pid = tl.program_id(0)
    v = tl.load(x_ptr + pid)
    count = 0
    while v >= 1.0:
        v = v * 0.5
        count += 1
    if pid < n:
        tl.store(out_ptr + pid, count)


@tilec.jit
def cast_kernel(x_ptr, out16_ptr, outi_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out16_ptr + offs, x.to(tl.float16), mask=mask)
    tl.store(outi_ptr + offs, x.to(tl.int32), mask=mask)


@tilec.jit
def _combine_max_abs(a, b):
    return tl.maximum(tl.abs(a), tl.abs(b))


@tilec.jit
def grid3d_kernel(x_ptr, out_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    """out[z, y, :] = (x[z, y, :] * 2 if the row's flag else x + 1), then the row's max |.| in the last column
    block position; exercises program_id on 3 axes, if/else yielding tiles, a custom reduce and bool loads."""
    px, py, pz = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    ny = tl.num_programs(1)
    row = (pz * ny + py) * n
    offs = px * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row + offs, mask=mask, other=0.0)
    flag = tl.load(flag_ptr + pz * ny + py)
    if flag:
        y = x * 2.0
    else:
        y = x + 1.0
    m = tl.reduce(tl.where(mask, y, 0.0), 0, _combine_max_abs)
    y = tl.where(offs == n - 1, m, y)
    tl.store(out_ptr + row + offs, y, mask=mask)


@tilec.jit
def print_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.device_print("x=", x)


@tilec.jit
def cumsum_argmax_kernel(x_ptr, cs_ptr, am_ptr, n_cols, stride, BLOCK: tl.constexpr):
    """Per row: the running sum and the index of the maximum (a two-operand reduce)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    cs = tl.cumsum(tl.where(mask, x, 0.0), axis=0)
    tl.store(cs_ptr + row * stride + cols, cs, mask=mask)
    tl.store(am_ptr + row, tl.argmax(x, axis=0))


@tilec.jit
def layer_norm_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    """Row layer norm in three passes over the row (loops with scalar loop-carried pointers, scalar stores)."""
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * tl.load(W + cols, mask=mask) + tl.load(B + cols, mask=mask)
        tl.store(Y + cols, y.to(Y.dtype.element_ty), mask=mask)


@tilec.jit
def flip_rows_kernel(X, Z, N: tl.constexpr):
    """Each program reverses one row of ``N`` elements (``tl.flip``: one gather op)."""
    o = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(Z + o, tl.flip(tl.load(X + o)))


@tilec.jit
def gather2d_kernel(X, I, Z, M: tl.constexpr, N: tl.constexpr, P: tl.constexpr, Q: tl.constexpr,
                    AX: tl.constexpr):
    """``Z = take_along_axis(X, I, AX)`` for an ``M x N`` source and a ``P x Q`` index, one pair per program."""
    pid = tl.program_id(0)
    x = tl.load(X + pid * M * N + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    io = pid * P * Q + tl.arange(0, P)[:, None] * Q + tl.arange(0, Q)[None, :]
    tl.store(Z + io, tl.gather(x, tl.load(I + io), AX))
