"""The tensor-core kernels of the spelling benchmark (``gpu_spellings.py``), in Triton spelling, loaded once by
Triton and once by tilec: the same matmul and attention written each way a kernel author writes them (operands
transposed in the kernel, ``x @ W.T``, fp8, int8, epilogues, block pointers, persistent loops, descriptors,
batched 3-d dots, grouped GEMM) so that no spelling falls off the fast path unnoticed."""
import triton
import triton.language as tl


@triton.jit
def _tile_ids(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """Grouped program order (the matmul tutorial's): GROUP_M row blocks share their column blocks in L2."""
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * num_n
    group = pid // per_group
    first_m = group * GROUP_M
    group_size = min(num_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % per_group) % group_size)
    pid_n = (pid % per_group) // group_size
    return pid_m, pid_n


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, TRANS_A: tl.constexpr, TRANS_B: tl.constexpr, EPILOGUE: tl.constexpr,
                  ACC_ARG: tl.constexpr, OUT_DTYPE: tl.constexpr, ACC_DTYPE: tl.constexpr, OTHER: tl.constexpr):
    """C = A @ B. TRANS_A: A is given as its transpose A^T [K, M] (strides of A^T), loaded [BK, BM] and
    ``tl.trans``-ed; TRANS_B: B is given as W [N, K] (``x @ W.T``), loaded [BN, BK] and transposed with ``.T``.
    EPILOGUE 1: + bias[n], leaky relu. ACC_ARG: ``tl.dot(a, b, acc)`` (else ``acc += tl.dot(a, b)``). OTHER: the
    masked-off value in the inputs' kind (0.0 for floats, 0 for integers)."""
    pid = tl.program_id(0)
    pid_m, pid_n = _tile_ids(pid, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    if TRANS_A:
        a_ptrs = a_ptr + offs_k[:, None] * stride_ak + offs_m[None, :] * stride_am
    else:
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    if TRANS_B:
        b_ptrs = b_ptr + offs_n[:, None] * stride_bn + offs_k[None, :] * stride_bk
    else:
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC_DTYPE)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        kleft = K - k * BLOCK_K
        if TRANS_A:
            a = tl.trans(tl.load(a_ptrs, mask=offs_k[:, None] < kleft, other=OTHER))
        else:
            a = tl.load(a_ptrs, mask=offs_k[None, :] < kleft, other=OTHER)
        if TRANS_B:
            b = tl.load(b_ptrs, mask=offs_k[None, :] < kleft, other=OTHER).T
        else:
            b = tl.load(b_ptrs, mask=offs_k[:, None] < kleft, other=OTHER)
        if ACC_ARG:
            acc = tl.dot(a, b, acc, out_dtype=ACC_DTYPE)
        else:
            acc += tl.dot(a, b, out_dtype=ACC_DTYPE)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    if EPILOGUE == 1:
        bias = tl.load(bias_ptr + offs_n).to(tl.float32)
        acc = acc + bias[None, :]
        acc = tl.where(acc >= 0, acc, 0.01 * acc)
    c = acc.to(OUT_DTYPE)
    cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn, c, mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def block_ptr_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                            stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                            BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """The block-pointer spelling (``make_block_ptr`` / ``advance``)."""
    pid = tl.program_id(0)
    pid_m, pid_n = _tile_ids(pid, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (stride_am, stride_ak), (pid_m * BLOCK_M, 0), (BLOCK_M, BLOCK_K), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, stride_bn), (0, pid_n * BLOCK_N), (BLOCK_K, BLOCK_N), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_bp, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_bp, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_bp = tl.advance(a_bp, (0, BLOCK_K))
        b_bp = tl.advance(b_bp, (BLOCK_K, 0))
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, stride_cn), (pid_m * BLOCK_M, pid_n * BLOCK_N),
                             (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(c_bp, acc.to(tl.float16), boundary_check=(0, 1))


@triton.jit
def persistent_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                             stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    """The persistent spelling: one program per SM walks the tiles (``tl.range(pid, tiles, NUM_SMS)``)."""
    start = tl.program_id(0)
    num_tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    for tile in tl.range(start, num_tiles, NUM_SMS, flatten=False):
        pid_m, pid_n = _tile_ids(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :] * stride_cn, acc.to(tl.float16),
                 mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def desc_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, TRANS_B: tl.constexpr):
    """In-kernel tensor descriptors (the copy engine on sm_90). TRANS_B: B given as W [N, K], loaded [BN, BK]
    and transposed (``x @ W.T`` as Triton's persistent-matmul tutorial writes it)."""
    pid = tl.program_id(0)
    pid_m, pid_n = _tile_ids(pid, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K])
    if TRANS_B:
        b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BLOCK_N, BLOCK_K])
    else:
        b_desc = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BLOCK_M, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        if TRANS_B:
            b = b_desc.load([pid_n * BLOCK_N, k * BLOCK_K]).T
        else:
            b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def grouped_matmul_kernel(a_ptrs_ptr, b_ptrs_ptr, c_ptrs_ptr, sizes_ptr, lds_ptr, group_count,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          NUM_SMS: tl.constexpr):
    """Grouped GEMM (Triton's tutorial 08 spelling): several independent problems, their pointers and sizes in
    device arrays, walked by a fixed number of programs."""
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_count):
        gm = tl.load(sizes_ptr + g * 3)
        gn = tl.load(sizes_ptr + g * 3 + 1)
        gk = tl.load(sizes_ptr + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_N)
        num_tiles = num_m_tiles * num_n_tiles
        while tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles:
            k = gk
            lda = tl.load(lds_ptr + g * 3)
            ldb = tl.load(lds_ptr + g * 3 + 1)
            ldc = tl.load(lds_ptr + g * 3 + 2)
            a_ptr = tl.load(a_ptrs_ptr + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(b_ptrs_ptr + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(c_ptrs_ptr + g).to(tl.pointer_type(tl.float16))
            tile_in_gemm = tile_idx - last_problem_end
            tile_m = tile_in_gemm // num_n_tiles
            tile_n = tile_in_gemm % num_n_tiles
            offs_am = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_bn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
            offs_k = tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(k, BLOCK_K)):
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
                acc += tl.dot(a, b)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * ldb
            c = acc.to(tl.float16)
            offs_cm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
            offs_cn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
            tl.store(c_ptr + ldc * offs_cm[:, None] + offs_cn[None, :], c)
            tile_idx += NUM_SMS
        last_problem_end = last_problem_end + num_tiles


@triton.jit
def batched_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_ab, stride_am, stride_ak, stride_bb, stride_bk,
                          stride_bn, stride_cb, stride_cm, stride_cn, BATCH_TILE: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Batched 3-d dots: each program multiplies BATCH_TILE small matrices at once (``tl.dot`` on 3-d tiles)."""
    pid_b = tl.program_id(0)
    pid_m = tl.program_id(1)
    pid_n = tl.program_id(2)
    offs_b = pid_b * BATCH_TILE + tl.arange(0, BATCH_TILE)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_b[:, None, None] * stride_ab + offs_m[None, :, None] * stride_am + \
        offs_k[None, None, :] * stride_ak
    b_ptrs = b_ptr + offs_b[:, None, None] * stride_bb + offs_k[None, :, None] * stride_bk + \
        offs_n[None, None, :] * stride_bn
    acc = tl.zeros((BATCH_TILE, BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_b[:, None, None] * stride_cb + offs_m[None, :, None] * stride_cm + \
        offs_n[None, None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16))


@triton.jit
def attn_fwd_kernel(Q, K, V, Out, sm_scale, stride_h, stride_m, N_CTX,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                    K_SPELLING: tl.constexpr):
    """Flash-attention forward (online softmax). K_SPELLING 0: K loaded pre-transposed by pointer arithmetic
    ([D, BN]); 1: loaded [BN, D] and ``tl.trans``-ed; 2: loaded [BN, D], ``k.T``."""
    start_m = tl.program_id(0)
    off_h = tl.program_id(1)  # batch * heads, flattened
    base = off_h.to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :], mask=offs_m[:, None] < N_CTX, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX) if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        if K_SPELLING == 0:
            k = tl.load(K + base + cols[None, :] * stride_m + offs_d[:, None], mask=cols[None, :] < N_CTX, other=0.0)
            qk = tl.dot(q, k)
        elif K_SPELLING == 1:
            k = tl.load(K + base + cols[:, None] * stride_m + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
            qk = tl.dot(q, tl.trans(k))
        else:
            k = tl.load(K + base + cols[:, None] * stride_m + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
            qk = tl.dot(q, k.T)
        keep = cols[None, :] < N_CTX
        if CAUSAL:
            keep = keep & (offs_m[:, None] >= cols[None, :])
        qk = tl.where(keep, qk * qk_scale, -1.0e6)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + cols[:, None] * stride_m + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16),
             mask=offs_m[:, None] < N_CTX)


@triton.jit
def attn_bwd_dkdv_kernel(Q, K, V, DO, DK, DV, Lse, Delta, sm_scale, stride_h, stride_m, N_CTX,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Attention backward, dK and dV for one block of keys (non-causal): walks the queries, recomputing
    P^T = exp(K Q^T - lse) from the forward's log-sum-exp, then dV += P^T dO, dS^T = P^T (V dO^T - delta),
    dK += dS^T Q. Operands reach the dots transposed in the kernel (``tl.trans``) the way kernel authors write
    it."""
    start_n = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * stride_h
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    k = tl.load(K + base + offs_n[:, None] * stride_m + offs_d[None, :])
    v = tl.load(V + base + offs_n[:, None] * stride_m + offs_d[None, :])
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    lse_base = tl.program_id(1) * N_CTX
    for start_m in range(0, N_CTX, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)
        q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :])
        do = tl.load(DO + base + offs_m[:, None] * stride_m + offs_d[None, :])
        lse = tl.load(Lse + lse_base + offs_m)
        delta = tl.load(Delta + lse_base + offs_m)
        qkT = tl.dot(k, tl.trans(q)) * (sm_scale * 1.44269504)
        pT = tl.math.exp2(qkT - lse[None, :])
        dv += tl.dot(pT.to(tl.float16), do)
        dpT = tl.dot(v, tl.trans(do))
        dsT = pT * (dpT - delta[None, :])
        dk += tl.dot(dsT.to(tl.float16), q)
    tl.store(DK + base + offs_n[:, None] * stride_m + offs_d[None, :], (dk * sm_scale).to(tl.float16))
    tl.store(DV + base + offs_n[:, None] * stride_m + offs_d[None, :], dv.to(tl.float16))
