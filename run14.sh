export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TILEC_CACHE_DIR=/tmp/tc
T0=$(date +%s); t() { echo "== $1 $(( $(date +%s) - T0 ))s"; }
nvidia-smi -L; which ncu
timeout 60 python3 -m pytest -q -n 0 -rxXs -p no:cacheprovider tests/gpu/test_launch_devices.py -k current_stream 2>&1 | tail -3; t streamtest
for side in tilec triton; do for c in "fp16 trans(A)@B" "fp16 A@B"; do
  f=$OUT/ncu_$(echo "$c" | tr -cd 'a-zA-Z0-9')_$side.txt
  timeout 120 ncu -k regex:matmul_kernel --launch-skip 2 --launch-count 1 --section SourceCounters --section MemoryWorkloadAnalysis_Tables --section LaunchStats --section Occupancy --metrics lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum,smsp__sass_inst_executed_op_ldgsts.sum,lts__t_sectors_srcunit_tex_op_write.sum \
     python3 benchmarks/profile_spelling.py "$c" --side $side > "$f" 2>&1
  echo "--- $c $side"; grep -E "lts__t_sectors_srcunit_tex_op_read.sum|lookup_miss|bank_conflicts|inst_executed.sum|duration|ldgsts|op_write|Waves Per SM|Achieved Occupancy|Block Limit Shared|Dynamic Shared|Registers Per" "$f" | sed 's/  */ /g'
done; done; t ncu
