export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
T0=$(date +%s); t() { echo "== $1 $(( $(date +%s) - T0 ))s"; }
TILEC_CACHE_DIR=/tmp/tcg timeout 60 python3 benchmarks/gpu_spellings.py --only "grouped" 2>&1 | tail -3; t grouped
for s in tilec triton; do for n in "fp16 A@B" "attn D64 trans(k)"; do timeout 30 python3 .peer/ctime.py $s "$n" 2>&1 | tail -1; done; done; t ctime
OUT=$OUT TUT_BUDGET=$(( 560 - ($(date +%s) - T0) )) bash .tutorials/run_tutorials.sh 2>&1 | tail -60
