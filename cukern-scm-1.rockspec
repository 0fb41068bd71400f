package = "cukern"
version = "scm-1"
source = {url = "git+file:///cukern"}
description = {
  summary = "GPU arrays for Lua 5.4 with ladders of CUDA kernel variants (matmul, reduce, transpose, elementwise)",
  detailed = [[
cukern gives device arrays in the spirit of MATLAB/Octave gpuArray: dtype, shape, strides, views that share
storage. Every op is backed by a ladder of CUDA kernel variants plus the library reference (cuBLAS, CUB), and
a host (CPU) backend that runs the same API without a GPU and is the oracle every variant is checked against.
Needs the CUDA toolkit (nvcc, cuBLAS) to build; runs on the host backend where there is no GPU.]],
  license = "MIT",
}
dependencies = {"lua >= 5.4, < 5.5"}
build = {
  type = "make",
  build_variables = {
    CFLAGS = "$(CFLAGS)",
    LIBFLAG = "$(LIBFLAG)",
    LUA_LIBDIR = "$(LUA_LIBDIR)",
    LUA_INCDIR = "$(LUA_INCDIR)",
    LUA = "$(LUA)",
  },
  install_variables = {
    INST_LIBDIR = "$(LIBDIR)",
    INST_LUADIR = "$(LUADIR)",
  },
}
