"""Small kernels the tuning tests launch with different meta-parameters."""
import tilec
import tilec.language as tl


@tilec.jit
def scale_add(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    """out = alpha * x + out: launched twice it counts twice, so tuning must not leave extra runs behind."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    o = tl.load(out_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + o, mask=mask)


@tilec.jit
def copy_even(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    """out = x; the EVEN variant (no masks) is only right when BLOCK divides n."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs))
    else:
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@tilec.jit
def row_sum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    """One program per row: out[row] = sum(x[row, :n_cols]) with one tile of BLOCK >= n_cols."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))
