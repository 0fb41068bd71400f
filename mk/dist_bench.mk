# mk/dist_bench.mk — the C references for multi-GPU work (bench/c/: nccl_ref, peer_ref). Included by the
# Makefile.
# `make bench-c` builds build/bench/nccl_ref (NCCL all-reduce, one process over every GPU) and build/bench/peer_ref
# (cudaMemcpyPeerAsync between GPUs 0 and 1). They are references, not the library: they link -lnccl directly,
# while cukern itself loads NCCL at run time (src/dist/nccl_dl.c) and never links it.
# NCCL is looked for where the GPU host has it (/usr/include, /usr/lib/x86_64-linux-gnu) and then in the CUDA
# toolkit; NCCL_HOME=/path (with include/ and lib/ or lib64/) overrides both. cudart is linked statically so that
# the only run-time path needed is NCCL's (put first in the rpath, ahead of any other libnccl.so.2). The NCCL
# header found is force-included (-include): a toolkit that ships its own nccl.h in $(CUDA_HOME)/include would
# otherwise win over /usr/include's, and the header would not match the library linked.
# `make nccl-dl-check` builds and runs lab/nccl_dl_check (src/dist/nccl_dl.c on its own; needs no GPU).

NCCL_HOME ?=
NCCL_INC ?= $(patsubst %/nccl.h,%,$(firstword $(wildcard $(if $(NCCL_HOME),$(NCCL_HOME)/include/nccl.h,\
              /usr/include/nccl.h $(CUDA_HOME)/include/nccl.h))))
NCCL_LIB ?= $(patsubst %/libnccl.so,%,$(firstword $(wildcard $(if $(NCCL_HOME),\
              $(NCCL_HOME)/lib/libnccl.so $(NCCL_HOME)/lib64/libnccl.so,\
              /usr/lib/x86_64-linux-gnu/libnccl.so $(CUDA_HOME)/lib64/libnccl.so $(CUDA_HOME)/lib/libnccl.so))))

BENCH_C_CFLAGS := -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wpedantic -Wshadow $(WERROR) \
                  -I$(CUDA_HOME)/include
BENCH_C_LIBS := -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread

.PHONY: bench-c
bench-c: $(BUILD)/bench/nccl_ref $(BUILD)/bench/peer_ref

$(BUILD)/bench/nccl_ref: bench/c/nccl_ref.c bench/c/ref_common.h
	@test -n "$(NCCL_INC)" -a -n "$(NCCL_LIB)" || { echo "NCCL not found (nccl.h: '$(NCCL_INC)'," \
	  "libnccl.so: '$(NCCL_LIB)'); set NCCL_HOME"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_C_CFLAGS) -include $(NCCL_INC)/nccl.h $< -o $@ \
	  -L$(NCCL_LIB) -Wl,-rpath,$(NCCL_LIB) -lnccl $(BENCH_C_LIBS)

$(BUILD)/bench/peer_ref: bench/c/peer_ref.c bench/c/ref_common.h
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_C_CFLAGS) $< -o $@ $(BENCH_C_LIBS)

.PHONY: nccl-dl-check
nccl-dl-check: $(BUILD)/lab/nccl_dl_check
	$(BUILD)/lab/nccl_dl_check
	CUKERN_NCCL_LIB=/nonexistent $(BUILD)/lab/nccl_dl_check

# No -lnccl here: nccl_dl.c finds the library itself; nccl.h only for its types (the toolkit's or NCCL_INC's).
$(BUILD)/lab/nccl_dl_check: lab/nccl_dl_check.c src/dist/nccl_dl.c src/dist/nccl_dl.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -D_POSIX_C_SOURCE=%,$(BENCH_C_CFLAGS)) -Ikernels -Isrc/dist $(if $(NCCL_INC),-I$(NCCL_INC)) \
	  lab/nccl_dl_check.c src/dist/nccl_dl.c -o $@ $(BENCH_C_LIBS)
