export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TILEC_CACHE_DIR=/tmp/tc
T0=$(date +%s); t() { echo "== $1 $(( $(date +%s) - T0 ))s"; }
nvidia-smi -L
R='--only fp16_A@B'
TILEC_EXPERIMENT_KEEP_MULWIDE=1 TILEC_CACHE_DIR=/tmp/tck timeout 150 python3 benchmarks/gpu_spellings.py --only "fp16 A@B" --only "fp16 trans(A)@B" --only "fp16 bias+leaky" --only "fp16 x@W.T" --only "fp16 block ptr" --only "attn D64 trans(k)" 2>&1 | tail -9; t keep_mulwide
timeout 330 python3 benchmarks/gpu_spellings.py --csv $OUT/spellings.csv > $OUT/spellings.txt 2>&1; tail -40 $OUT/spellings.txt; t full_table
TILEC_EXPERIMENT_KEEP_MULWIDE=1 TILEC_CACHE_DIR=/tmp/tck2 timeout 60 python3 benchmarks/gpu.py --quick 2>&1 | tail -14; t gpu_keep
timeout 60 python3 benchmarks/gpu.py --quick 2>&1 | tail -14; t gpu_new
