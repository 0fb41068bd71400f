# mk/sanitize.mk — reliability targets (issue 18); included by the Makefile.
#
#   make sanitize      the C core (src/*/*.c, kernels/*.c) built with AddressSanitizer + UndefinedBehaviorSanitizer
#                      into build-asan/stage/cukern/core.so (nvcc objects are the normal, uninstrumented ones),
#                      then every spec, the fuzz (CUKERN_FUZZ_CASES, default 3000) and the bad-input catalogue run
#                      under it with libasan preloaded into lua5.4. Any sanitizer report stops the run with a
#                      non-zero status. CI: `make sanitize` after `make test` (see docs/reliability.md).
#   make fuzz-long     the fuzz with CUKERN_FUZZ_CASES=105000 (>= 100000 run after the known-bug skips;
#                      default build; on a GPU host every variant of
#                      every ladder is drawn for the cuda cases).
#   make gpu-sanitize  on the GPU host: compute-sanitizer memcheck, racecheck, synccheck and initcheck over a
#                      quick all-variant acceptance run (spec/gpu_sanitize.lua: every rung x small and
#                      tail-heavy shapes); logs and one summary line per tool in $(OUT) (or build-asan/gpu).

ASAN_BUILD  := build-asan
ASAN_STAGE  := $(ASAN_BUILD)/stage
ASAN_SAN    := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
ASAN_CFLAGS := $(filter-out -O2 -O3,$(CK_CFLAGS)) -O1 -g -fno-omit-frame-pointer $(ASAN_SAN)
ASAN_OBJ    := $(patsubst %.c,$(ASAN_BUILD)/%.o,$(CORE_SRC) $(BIND_SRC)) $(patsubst %.cu,$(BUILD)/%.o,$(CU_SRC))
LIBASAN     := $(shell $(CC) -print-file-name=libasan.so 2>/dev/null)
# detect_leaks=0: lua5.4, busted and the CUDA libraries keep allocations until exit (the spec suite checks
# our own memory with ck.memory()); everything else stops at the first report.
# protect_shadow_gap=0: the CUDA driver maps memory where ASan keeps its shadow gap (GPU hosts).
ASAN_ENV    := CUKERN_SANITIZE=1 LD_PRELOAD=$(LIBASAN) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=1:protect_shadow_gap=0 \
               UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
FUZZ_LONG_CASES ?= 105000
SANITIZE_FUZZ_CASES ?= 3000
COMPUTE_SANITIZER ?= $(CUDA_HOME)/bin/compute-sanitizer

.PHONY: sanitize sanitize-build sanitize-clean fuzz-long gpu-sanitize

$(ASAN_BUILD)/src/lua/%.o: src/lua/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -Isrc/lua -I$(LUA_INCDIR) $(LUA_MULTIARCH) -MMD -MP -c $< -o $@

$(ASAN_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) $(ASAN_IO_CFLAGS) -MMD -MP -c $< -o $@

-include $(patsubst %.c,$(ASAN_BUILD)/%.d,$(CORE_SRC) $(BIND_SRC))

# The file formats' libraries (mk/io.mk), as in the normal build: without them the sanitizer run would test
# the "this build lacked libzip/libmatio" stubs instead of the .npz/.mat code. (This file is included before
# mk/io.mk, so the flags are read when the recipes run, not here.)
$(ASAN_BUILD)/src/io/io_npz.o: ASAN_IO_CFLAGS = $(IO_ZIP_CFLAGS)
$(ASAN_BUILD)/src/io/io_mat.o: ASAN_IO_CFLAGS = $(IO_MAT_CFLAGS)
$(ASAN_BUILD)/io.found: FORCE_ASAN_IO
	@mkdir -p $(ASAN_BUILD); echo '$(IO_FOUND)' | cmp -s - $@ || echo '$(IO_FOUND)' >$@
$(ASAN_BUILD)/src/io/io_npz.o $(ASAN_BUILD)/src/io/io_mat.o $(ASAN_STAGE)/cukern/core.so: $(ASAN_BUILD)/io.found
.PHONY: FORCE_ASAN_IO
FORCE_ASAN_IO:

$(ASAN_STAGE)/cukern/core.so: $(ASAN_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LIBFLAG) $(ASAN_SAN) -o $@ $(ASAN_OBJ) $(LDLIBS)

# The stage is a checkout whose cukern/core.so is the sanitizer build: lua/, spec/, examples/ are links (src/ and
# kernels/ too, for the specs that read the sources).
sanitize-build: $(ASAN_STAGE)/cukern/core.so
	@for d in lua spec examples bench src kernels bin mk .gpu-lua README.md; do \
	  [ -e $$d ] && ln -sfn ../../$$d $(ASAN_STAGE)/$$d || true; done

sanitize: deps
	$(MAKE) -j$$(nproc 2>/dev/null || echo 2) all
	$(MAKE) -j$$(nproc 2>/dev/null || echo 2) sanitize-build
	@test -f "$(LIBASAN)" || { echo "libasan.so not found (gcc's AddressSanitizer runtime)"; exit 1; }
	cd $(ASAN_STAGE) && $(ASAN_ENV) CUKERN_FUZZ_CASES=$(SANITIZE_FUZZ_CASES) sh spec/run.sh

fuzz-long: all
	CUKERN_FUZZ_CASES=$(FUZZ_LONG_CASES) CUKERN_FUZZ_VERBOSE=1 sh spec/run.sh spec/fuzz_spec.lua

gpu-sanitize: all
	sh spec/gpu_sanitize.sh

sanitize-clean:
	rm -rf $(ASAN_BUILD)

# `make clean` removes the sanitizer build too (a prerequisite added here; the recipe stays the Makefile's)
clean: sanitize-clean
