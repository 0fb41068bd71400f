# mk/dist_store.mk — the rendezvous store of several processes (src/dist/: plain C + POSIX threads and sockets,
# no CUDA, no Lua) and its launcher bin/ckrun; included by the Makefile. The store is built here on its own, with
# its test, so it is checked without a GPU and without the rest of cukern:
#   make store-test           spec/c/store_test*.c + src/dist/store*.c, dist_env.c -> build/spec/store_test, run (file and tcp
#                             stores, several forked ranks each; "ok - ..." / "not ok - ..." lines, nonzero on any)
#   make store-test-asan      the same built with -fsanitize=address,undefined (leaks checked in every rank)
#   make store-test-valgrind  the normal build under valgrind --leak-check=full (when valgrind is installed)
#   make ckrun-test           bin/ckrun with small Lua scripts (spec/ckrun_test.sh; needs lua5.4)
# (only the store's files: the rest of src/dist/ (ck.nccl, ck.dist: coll*.c, pcomm.c, nccl_dl.c) is part of the core
# library and includes ck.h)
DIST_SRC  := $(wildcard src/dist/store*.c) src/dist/dist_env.c
DIST_HDR  := src/dist/store.h src/dist/store_int.h
STORE_TEST_SRC := $(wildcard spec/c/store_test*.c)
STORE_TEST_FLAGS := $(CFLAGS) -g -std=c11 -Wall -Wextra -Wpedantic -Wshadow $(WERROR) -Isrc/dist -Ispec/c
STORE_TEST_LIBS  := -lpthread -lm
STORE_TEST := $(BUILD)/spec/store_test
STORE_TEST_ASAN := $(BUILD)/spec/store_test_asan

$(STORE_TEST): $(STORE_TEST_SRC) $(DIST_SRC) $(DIST_HDR) spec/c/store_test.h
	@mkdir -p $(dir $@)
	$(CC) $(STORE_TEST_FLAGS) -o $@ $(STORE_TEST_SRC) $(DIST_SRC) $(STORE_TEST_LIBS)

$(STORE_TEST_ASAN): $(STORE_TEST_SRC) $(DIST_SRC) $(DIST_HDR) spec/c/store_test.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -O2 -O3,$(STORE_TEST_FLAGS)) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	  -fno-sanitize-recover=all -o $@ $(STORE_TEST_SRC) $(DIST_SRC) $(STORE_TEST_LIBS)

.PHONY: store-test store-test-asan store-test-valgrind ckrun-test
store-test: $(STORE_TEST)
	$(STORE_TEST)

store-test-asan: $(STORE_TEST_ASAN)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(STORE_TEST_ASAN)

# every rank is a forked child, which valgrind follows without --trace-children; any leak or error fails the run
store-test-valgrind: $(STORE_TEST)
	@command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 1; }
	STORE_TEST_TIMEOUT=60 valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
	  --error-exitcode=99 $(STORE_TEST)

ckrun-test:
	LUA=$(LUA) sh spec/ckrun_test.sh
