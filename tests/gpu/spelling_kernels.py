"""Kernels that write the same tensor-core work the other common ways: operands transposed in the kernel
(``tl.trans``, ``.T``: ``x @ W.T``), 8-bit inputs, batched 3-d dots, attention with ``k.T``. Shared by the
structural tests (``test_stage_operands.py``) and the GPU tests (``test_operand_spellings.py``)."""
import tilec
import tilec.language as tl


@tilec.jit
def mm_spelled(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, TRANS_A: tl.constexpr, TRANS_B: tl.constexpr,
               ACC: tl.constexpr):
    """C = A @ B. TRANS_A: A^T is what is stored and loaded ([BK, BM], then ``tl.trans``); TRANS_B: W = B^T is
    stored ([BN, BK] loaded, then ``.T``: ``x @ W.T``). Masked on every edge."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=ACC)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        if TRANS_A:
            at = tl.load(a_ptr + kk[:, None] * stride_ak + rm[None, :] * stride_am,
                         mask=(kk[:, None] < K) & (rm[None, :] < M), other=0)
            a = tl.trans(at)
        else:
            a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :] * stride_ak,
                        mask=(rm[:, None] < M) & (kk[None, :] < K), other=0)
        if TRANS_B:
            w = tl.load(b_ptr + rn[:, None] * stride_bn + kk[None, :] * stride_bk,
                        mask=(rn[:, None] < N) & (kk[None, :] < K), other=0)
            b = w.T
        else:
            b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :] * stride_bn,
                        mask=(kk[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc, out_dtype=ACC)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@tilec.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, BATCH, M, N, K, BT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, ACC: tl.constexpr):
    """Batched 3-d dots: BT matrices per program, contiguous [BATCH, M, K] x [BATCH, K, N], masked."""
    rb = tl.program_id(0) * BT + tl.arange(0, BT)
    rm = tl.program_id(1) * BM + tl.arange(0, BM)
    rn = tl.program_id(2) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BT, BM, BN), dtype=ACC)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rb[:, None, None] * M * K + rm[None, :, None] * K + kk[None, None, :],
                    mask=(rb[:, None, None] < BATCH) & (rm[None, :, None] < M) & (kk[None, None, :] < K), other=0)
        b = tl.load(b_ptr + rb[:, None, None] * K * N + kk[None, :, None] * N + rn[None, None, :],
                    mask=(rb[:, None, None] < BATCH) & (kk[None, :, None] < K) & (rn[None, None, :] < N), other=0)
        acc = tl.dot(a, b, acc, out_dtype=ACC)
    tl.store(c_ptr + rb[:, None, None] * M * N + rm[None, :, None] * N + rn[None, None, :], acc,
             mask=(rb[:, None, None] < BATCH) & (rm[None, :, None] < M) & (rn[None, None, :] < N))


@tilec.jit
def attn_kt_kernel(Q, K, V, Out, sm_scale, stride_h, stride_m, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, TRANS: tl.constexpr):
    """Attention forward with K loaded [BLOCK_N, D] as stored and transposed in the kernel (TRANS 1:
    ``tl.trans(k)``, 2: ``k.T``), or loaded pre-transposed by pointer arithmetic (TRANS 0)."""
    start_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :], mask=offs_m[:, None] < N_CTX, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        cols = start_n + offs_n
        if TRANS == 0:
            kt = tl.load(K + base + cols[None, :] * stride_m + offs_d[:, None], mask=cols[None, :] < N_CTX, other=0.0)
        else:
            k = tl.load(K + base + cols[:, None] * stride_m + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
            kt = tl.trans(k) if TRANS == 1 else k.T
        qk = tl.dot(q, kt) * sm_scale
        qk = tl.where(cols[None, :] < N_CTX, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + cols[:, None] * stride_m + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_ij
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16),
             mask=offs_m[:, None] < N_CTX)
