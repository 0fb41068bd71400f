# mk/alloc_test.mk — the caching device allocator's own C test (spec/c/alloc_test.c, round 3 session 10): storage.c
# compiled with a fake device heap in place of cudaMalloc/cudaFree, so its carving of small blocks, segments, free
# lists and empty_cache are checked without a GPU (spec/alloc_spec.lua runs it in make test).
#   make alloc-test        build build/spec/alloc_test and run it ("ok - ..." lines, then PASSED or FAILED)
#   make alloc-test-asan   the same with -fsanitize=address,undefined
ALLOC_TEST := $(BUILD)/spec/alloc_test
ALLOC_TEST_ASAN := $(BUILD)/spec/alloc_test_asan
ALLOC_TEST_DEPS := spec/c/alloc_test.c src/core/storage.c src/core/ck_internal.h src/core/ck.h
ALLOC_TEST_FLAGS := $(CFLAGS) -g -std=c11 -Wall -Wextra -Wno-unused-parameter $(WERROR) -Isrc $(LAYER_INC) -Ikernels \
                    -I$(CUDA_HOME)/include

$(ALLOC_TEST): $(ALLOC_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(ALLOC_TEST_FLAGS) -o $@ spec/c/alloc_test.c

$(ALLOC_TEST_ASAN): $(ALLOC_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -O2 -O3,$(ALLOC_TEST_FLAGS)) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	  -fno-sanitize-recover=all -o $@ spec/c/alloc_test.c

.PHONY: alloc-test alloc-test-asan
alloc-test: $(ALLOC_TEST)
	$(ALLOC_TEST)

alloc-test-asan: $(ALLOC_TEST_ASAN)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(ALLOC_TEST_ASAN)
