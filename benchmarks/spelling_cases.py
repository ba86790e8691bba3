"""The spellings of the tensor-core benchmark as data: which kernel of ``gpu_spelling_kernels.py``, its runtime
parameters with the values a launch gives them (so both compilers specialise alike: pointers 16-byte aligned,
ints divisible by 16, ints equal to 1), its constexprs, warps and stages, and the problem it computes.
``tc_codegen.py`` compiles them without a GPU; ``gpu_spellings.py`` runs them."""
from dataclasses import dataclass, field


@dataclass
class Case:
    name: str
    kernel: str
    params: list            # (name, type, value): type "*fp16"/"i32"..., value for ints (None for pointers)
    constexprs: dict
    num_warps: int = 8
    num_stages: int = 3
    problem: dict = field(default_factory=dict)   # what gpu_spellings.py builds the inputs from

    @property
    def signature(self):
        return {n: t for n, t, v in self.params if not (t[0] != "*" and v == 1)}

    def tilec_attrs(self):
        out = {}
        for n, t, v in self.params:
            if t[0] == "*" or (v is not None and v % 16 == 0):
                out[n] = {"divisibility": 16}
        return out

    def triton_attrs(self, fn):
        return {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in self.tilec_attrs()}

    def __post_init__(self):
        # Triton specialises ints equal to 1 as constexprs; so does this description for both compilers
        for n, t, v in self.params:
            if t[0] != "*" and v == 1:
                self.constexprs[n] = 1


def _mm_params(M, N, K, dt, out_dt="*fp16", trans_a=False, trans_b=False):
    sa = (1, M) if trans_a else (K, 1)          # (stride_am, stride_ak) of A, or of A given as A^T [K, M]
    sb = (1, K) if trans_b else (N, 1)          # (stride_bk, stride_bn) of B, or of B given as W [N, K]
    return [("a_ptr", dt, None), ("b_ptr", dt, None), ("c_ptr", out_dt, None), ("bias_ptr", "*fp16", None),
            ("M", "i32", M), ("N", "i32", N), ("K", "i32", K), ("stride_am", "i32", sa[0]),
            ("stride_ak", "i32", sa[1]), ("stride_bk", "i32", sb[0]), ("stride_bn", "i32", sb[1]),
            ("stride_cm", "i32", N), ("stride_cn", "i32", 1)]


def matmul(name, M=4096, N=4096, K=4096, dt="*fp16", out_dt="*fp16", bm=128, bn=128, bk=64, warps=8, stages=3,
           trans_a=False, trans_b=False, epilogue=0, acc_arg=True, group=8):
    out_name = {"*fp16": "float16", "*bf16": "bfloat16", "*fp32": "float32", "*i32": "int32"}[out_dt]
    return Case(name, "matmul_kernel", _mm_params(M, N, K, dt, out_dt, trans_a, trans_b),
                dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, TRANS_A=int(trans_a), TRANS_B=int(trans_b),
                     EPILOGUE=epilogue, ACC_ARG=int(acc_arg), OUT_DTYPE=("tl", out_name),
                     ACC_DTYPE=("tl", "int32" if dt == "*i8" else "float32"), OTHER=0 if dt == "*i8" else 0.0),
                warps, stages, dict(M=M, N=N, K=K, dt=dt, out=out_dt, trans_a=trans_a, trans_b=trans_b,
                                    epilogue=epilogue))


def _plain_mm(M, N, K):
    return [("a_ptr", "*fp16", None), ("b_ptr", "*fp16", None), ("c_ptr", "*fp16", None), ("M", "i32", M),
            ("N", "i32", N), ("K", "i32", K), ("stride_am", "i32", K), ("stride_ak", "i32", 1),
            ("stride_bk", "i32", N), ("stride_bn", "i32", 1), ("stride_cm", "i32", N), ("stride_cn", "i32", 1)]


def attention(name, D, causal, spelling, B=4, H=32, S=4096):
    params = [("Q", "*fp16", None), ("K", "*fp16", None), ("V", "*fp16", None), ("Out", "*fp16", None),
              ("sm_scale", "fp32", 0.125), ("stride_h", "i32", S * D), ("stride_m", "i32", D), ("N_CTX", "i32", S)]
    return Case(name, "attn_fwd_kernel", params,
                dict(HEAD_DIM=D, BLOCK_M=128, BLOCK_N=64, CAUSAL=int(causal),
                     K_SPELLING=spelling), 4 if D <= 64 else 8, 3, dict(B=B, H=H, S=S, D=D, causal=causal))


CASES = [
    matmul("fp16 A@B", ),
    matmul("fp16 x@W.T", trans_b=True),
    matmul("fp16 trans(A)@B", trans_a=True),
    matmul("fp16 acc+=dot", acc_arg=False),
    matmul("fp16 bias+leaky", epilogue=1),
    matmul("bf16 A@B", dt="*bf16", out_dt="*bf16"),
    matmul("tf32 A@B", dt="*fp32", out_dt="*fp32", bk=32),
    matmul("fp8e4 x@W.T", dt="*fp8e4nv", bk=128, trans_b=True),
    matmul("fp8e4 A@B", dt="*fp8e4nv", bk=128),
    matmul("int8 A@B", dt="*i8", out_dt="*i32", bk=128),
    matmul("int8 x@W.T", dt="*i8", out_dt="*i32", bk=128, trans_b=True),
    matmul("fp16 masked K=4000", K=4000),
    matmul("fp16 ragged 4000", M=4000, N=4000),
    matmul("fp16 64x64 tiles", bm=64, bn=64, warps=4),
    matmul("fp16 decode M=16", M=16, N=8192, K=8192, bm=16, bn=64, bk=128, warps=4, stages=4, group=1),
    Case("fp16 block ptr", "block_ptr_matmul_kernel", _plain_mm(4096, 4096, 4096),
         dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8), problem=dict(M=4096, N=4096, K=4096)),
    Case("fp16 persistent", "persistent_matmul_kernel", _plain_mm(4096, 4096, 4096),
         dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, NUM_SMS=132), problem=dict(M=4096, N=4096, K=4096)),
    Case("fp16 descriptors", "desc_matmul_kernel",
         [("a_ptr", "*fp16", None), ("b_ptr", "*fp16", None), ("c_ptr", "*fp16", None), ("M", "i32", 4096),
          ("N", "i32", 4096), ("K", "i32", 4096)],
         dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, TRANS_B=0), problem=dict(M=4096, N=4096, K=4096)),
    Case("fp16 descriptors x@W.T", "desc_matmul_kernel",
         [("a_ptr", "*fp16", None), ("b_ptr", "*fp16", None), ("c_ptr", "*fp16", None), ("M", "i32", 4096),
          ("N", "i32", 4096), ("K", "i32", 4096)],
         dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, TRANS_B=1),
         problem=dict(M=4096, N=4096, K=4096, trans_b=True)),
    Case("fp16 grouped GEMM (4 problems)", "grouped_matmul_kernel",
         [("a_ptrs_ptr", "*i64", None), ("b_ptrs_ptr", "*i64", None), ("c_ptrs_ptr", "*i64", None),
          ("sizes_ptr", "*i32", None), ("lds_ptr", "*i32", None), ("group_count", "i32", 4)],
         dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, NUM_SMS=132), 8, 3,
         dict(sizes=((2048, 2048, 2048), (1024, 4096, 2048), (4096, 1024, 1024), (512, 512, 4096)))),
    Case("fp16 batched 3-d", "batched_matmul_kernel",
         [("a_ptr", "*fp16", None), ("b_ptr", "*fp16", None), ("c_ptr", "*fp16", None), ("M", "i32", 64),
          ("N", "i32", 64), ("K", "i32", 64), ("stride_ab", "i32", 4096), ("stride_am", "i32", 64),
          ("stride_ak", "i32", 1), ("stride_bb", "i32", 4096), ("stride_bk", "i32", 64), ("stride_bn", "i32", 1),
          ("stride_cb", "i32", 4096), ("stride_cm", "i32", 64), ("stride_cn", "i32", 1)],
         dict(BATCH_TILE=2, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32), 4, 3, dict(batch=16384, M=64, N=64, K=64)),
    attention("attn D64 pre-transposed", 64, False, 0),
    attention("attn D64 trans(k)", 64, False, 1),
    attention("attn D64 k.T causal", 64, True, 2),
    attention("attn D128 pre-transposed", 128, False, 0),
    attention("attn D128 trans(k)", 128, False, 1),
    attention("attn D128 k.T causal", 128, True, 2),
    Case("attn bwd dK/dV D64", "attn_bwd_dkdv_kernel",
         [("Q", "*fp16", None), ("K", "*fp16", None), ("V", "*fp16", None), ("DO", "*fp16", None),
          ("DK", "*fp16", None), ("DV", "*fp16", None), ("Lse", "*fp32", None), ("Delta", "*fp32", None),
          ("sm_scale", "fp32", 0.125), ("stride_h", "i32", 2048 * 64), ("stride_m", "i32", 64),
          ("N_CTX", "i32", 2048)],
         dict(HEAD_DIM=64, BLOCK_M=64, BLOCK_N=128), 8, 2, dict(B=2, H=16, S=2048, D=64)),
]
