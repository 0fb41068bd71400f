# cukern — build, test, benchmark.
#   make            build cukern/core.so (gcc for src/, nvcc for kernels/)
#   make test       install what is missing (Debian, as root), build, run every spec; ends "N passed, N failed"
#   make demo       the main job: every kernel ladder (GPU if present, else host), report under bench/results
#   make repl       lua5.4 -i with ck = require "cukern" from this checkout
#   make gpu-check  on the GPU host: sm_90a build, all specs, all ladders, results/logs to $OUT
#   make install    (luarocks calls this) copies core.so and lua/cukern/*.lua to INST_LIBDIR / INST_LUADIR
# Variables honoured: CUDA_HOME, CUDA_ARCH, LUA_INCDIR, LUA_LIBDIR, LIBFLAG, CFLAGS, NVCCFLAGS, INST_LIBDIR, INST_LUADIR.

CUDA_HOME ?= $(firstword $(wildcard /usr/local/cuda /usr/local/cuda-13.0 /usr/lib/cuda))
NVCC      ?= $(CUDA_HOME)/bin/nvcc
LUA       ?= lua5.4
LUA_INCDIR ?= $(firstword $(wildcard /usr/include/lua5.4 /usr/local/include/lua5.4 /usr/local/include))
# Debian's luaconf.h includes lua5.4-deb-multiarch.h from the multiarch include dir beside LUA_INCDIR.
LUA_MULTIARCH := $(addprefix -I,$(sort $(wildcard $(dir $(LUA_INCDIR))x86_64-linux-gnu $(dir $(LUA_INCDIR))$(shell gcc -print-multiarch 2>/dev/null))))
LIBFLAG   ?= -shared
CFLAGS    ?= -O2
# sm_90a (Hopper) unless told otherwise; CUDA_ARCH=sm_86 etc. for other GPUs.
CUDA_ARCH ?= 90a
GENCODE   ?= -gencode arch=compute_$(CUDA_ARCH),code=sm_$(CUDA_ARCH)
NVCCFLAGS ?= -O3 -lineinfo
WERROR    ?=

BUILD := build
# The C core in layers, each a folder of src/ (docs/architecture.md): core (context, memory, arrays, the one launch
# function, the tables, the registry) < host (the oracles) < ops (the dispatcher, the op definitions, copies) <
# fused (expressions, map, run-time kernels) and io (file formats) < lua (the binding, the only code that sees
# lua.h). kernels/ (device code and its launchers) is below them all and includes nothing from src/.
LAYERS := core host ops fused io dist linalg
LAYER_INC := $(addprefix -Isrc/,$(LAYERS))
CK_CFLAGS := $(CFLAGS) -std=c11 -fPIC -Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter $(WERROR) \
             -Isrc $(LAYER_INC) -Ikernels -I$(CUDA_HOME)/include
CK_NVFLAGS := $(NVCCFLAGS) -std=c++17 $(GENCODE) -Xcompiler -fPIC -Xcompiler -Wall -Ikernels \
              --expt-relaxed-constexpr $(if $(WERROR),-Werror all-warnings)
LDLIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcublasLt -lnvrtc -lcudart_static -lstdc++ -lpthread -ldl -lrt -lm

# The binding (src/lua/: lcukern.c, l_array.c, l_ops.c, ...) is the only code built against lua.h.
BIND_SRC := $(wildcard src/lua/*.c)
CORE_SRC := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c)) $(wildcard kernels/*.c kernels/*/*.c)
CU_SRC   := $(wildcard kernels/*/*.cu)
OBJ := $(patsubst %.c,$(BUILD)/%.o,$(CORE_SRC) $(BIND_SRC)) $(patsubst %.cu,$(BUILD)/%.o,$(CU_SRC))

.PHONY: all test check bench demo report repl gpu-check install clean deps
all: cukern/core.so

cukern/core.so: $(OBJ)
	@mkdir -p cukern
	$(CC) $(LIBFLAG) -o $@ $(OBJ) $(LDLIBS)

$(BUILD)/src/lua/%.o: src/lua/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CK_CFLAGS) -Isrc/lua -I$(LUA_INCDIR) $(LUA_MULTIARCH) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CK_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(CK_NVFLAGS) -MMD -MP -c $< -o $@

-include $(OBJ:.o=.d)

# Debian packages the tests need; installed only when missing (needs root, as on CI). Fragments add to DEBS.
DEBS := lua5.4 liblua5.4-dev lua-busted

# Optional parts bring their own flags, rules and test packages (mk/io.mk for file formats, mk/sanitize.mk for
# the sanitizer build, mk/embed.mk for the embedding example); each is a small makefile fragment in mk/.
-include $(sort $(wildcard mk/*.mk))

deps:
	@missing=""; for p in $(DEBS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	    echo "installing$$missing"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	  else echo "note: missing Debian packages:$$missing (not root or no apt-get; continuing)"; fi; \
	fi
	@test -x "$(NVCC)" || { echo "CUDA toolkit not found (set CUDA_HOME); cukern needs nvcc and cuBLAS to build"; exit 1; }

test: deps
	$(MAKE) -j$$(nproc 2>/dev/null || echo 2) all WERROR=-Werror
	@sh spec/run.sh

check: test

bench demo: deps all
	$(LUA) examples/demo.lua

repl: all
	LUA_PATH="./lua/?.lua;./lua/?/init.lua;;" LUA_CPATH="./?.so;;" $(LUA) -i -e 'ck = require "cukern"'

report:
	$(LUA) examples/report.lua bench/results bench/results --readme

gpu-check:
	bash .ci/gpu-check

install: cukern/core.so
	mkdir -p $(INST_LIBDIR)/cukern $(INST_LUADIR)/cukern
	cp cukern/core.so $(INST_LIBDIR)/cukern/
	cp lua/cukern/*.lua $(INST_LUADIR)/cukern/

clean:
	rm -rf $(BUILD) cukern
