export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TILEC_CACHE_DIR=/tmp/tc
T0=$(date +%s); t() { echo "== $1 $(( $(date +%s) - T0 ))s"; }
nvidia-smi -L
timeout 60 python3 -m pytest -q -n 0 -m gpu -rxXs -p no:cacheprovider tests/gpu/test_launch_devices.py -k current_stream 2>&1 | tail -3; t streamtest
B='--only fp16 A@B --only fp16 trans(A)@B --only fp16 bias+leaky --only fp16 x@W.T --only fp16 persistent --only fp16 block ptr'
timeout 200 python3 benchmarks/gpu_spellings.py --only "fp16 A@B" --only "fp16 trans(A)@B" --only "fp16 bias+leaky" --only "fp16 x@W.T" --only "fp16 persistent" --only "fp16 block ptr" 2>&1 | tail -9; t bench_prefer_shared
sed -i 's/^    check(d.cuFuncSetCacheConfig/    pass  # check(d.cuFuncSetCacheConfig/' tilec/targets/cuda/driver.py; grep -n "pass  # check" tilec/targets/cuda/driver.py
timeout 200 python3 benchmarks/gpu_spellings.py --only "fp16 A@B" --only "fp16 trans(A)@B" --only "fp16 bias+leaky" --only "fp16 x@W.T" --only "fp16 persistent" --only "fp16 block ptr" 2>&1 | tail -9; t bench_default
