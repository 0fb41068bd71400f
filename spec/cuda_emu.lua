--- Run a generated fused kernel on the CPU: the CUDA source from ck.map_source, compiled by g++ with a prelude
-- that emulates the few CUDA features the generator uses (thread indices, __ldg, __syncthreads and warp
-- shuffles through std::barrier, one OS thread per CUDA thread when a kernel synchronises). The parameter
-- block is the one ck.map_source describes, so the index arithmetic, layouts and reductions of the real
-- kernels are checked here against the host evaluator, without a GPU.
local E = {}

local PRELUDE = [[
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <math.h>
struct ck_u3 { unsigned x, y, z; };
static thread_local ck_u3 threadIdx;
static ck_u3 blockIdx, blockDim, gridDim;
static std::barrier<> *ck_block_bar;
static std::barrier<> *ck_warp_bar[32];
static double ck_shfl[32][32];
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
#define __shared__ static
static inline void __syncthreads() { ck_block_bar->arrive_and_wait(); }
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __shfl_down_sync(unsigned, T v, int s) {
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  std::memcpy(&ck_shfl[w][lane], &v, sizeof(T));
  ck_warp_bar[w]->arrive_and_wait();
  T r = v;
  if (lane + s < 32) std::memcpy(&r, &ck_shfl[w][lane + s], sizeof(T));
  ck_warp_bar[w]->arrive_and_wait();
  return r;
}
static inline double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }
static inline long long __double_as_longlong(double x) { long long d; std::memcpy(&d, &x, 8); return d; }
static inline float __uint_as_float(unsigned x) { float f; std::memcpy(&f, &x, 4); return f; }
static inline unsigned __float_as_uint(float x) { unsigned u; std::memcpy(&u, &x, 4); return u; }
template <class F> static void ck_launch_fn(F f, unsigned grid, unsigned block) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b) {
    blockIdx = {b, 0, 0};
    for (unsigned t = 0; t < block; ++t) { threadIdx = {t, 0, 0}; f(); }
  }
}
template <class P> static void ck_launch(void (*k)(P), const P &p, unsigned grid, unsigned block, bool sync) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < grid; ++b) {
    blockIdx = {b, 0, 0};
    if (!sync) {
      for (unsigned t = 0; t < block; ++t) { threadIdx = {t, 0, 0}; k(p); }
      continue;
    }
    std::barrier<> bb(block);
    ck_block_bar = &bb;
    std::vector<std::barrier<> *> wb;
    for (unsigned w = 0; w < block / 32; ++w) wb.push_back(ck_warp_bar[w] = new std::barrier<>(32));
    std::vector<std::thread> th;
    for (unsigned t = 0; t < block; ++t) th.emplace_back([&, t] { threadIdx = {t, 0, 0}; k(p); });
    for (auto &x : th) x.join();
    for (auto *x : wb) delete x;
  }
}
]]

local CT = {f32 = "float", f64 = "double", i32 = "int", i64 = "long long", u32 = "unsigned int", i16 = "short",
  i8 = "signed char", u8 = "unsigned char", bool = "unsigned char", f16 = "unsigned short", bf16 = "unsigned short"}
local HALF = {f16 = "h", bf16 = "b"} -- stored as bits: written and read through the program's own ckx_d2h/ckx_h2f

local function cquote(v)
  if v ~= v then return "NAN" elseif v == math.huge then return "INFINITY" elseif v == -math.huge then return "-INFINITY" end
  return ("%.17g"):format(v)
end

--- The element buffer a strided view reads through: buffer[sum(c_d * stride_d)] = a[c].
local function view_buffer(a)
  local shape, strides, flat = a:shape(), a:strides(), a:to("host"):flat()
  local size = 1
  for d = 1, #shape do
    if shape[d] == 0 then size = 0 break end
    size = size + (shape[d] - 1) * strides[d]
  end
  local buf = {}
  for i = 1, size do buf[i] = 0 end
  local idx = {}
  for d = 1, #shape do idx[d] = 0 end
  for i = 1, #flat do
    local off = 0
    for d = 1, #shape do off = off + idx[d] * strides[d] end
    buf[off + 1] = flat[i]
    for d = #shape, 1, -1 do
      idx[d] = idx[d] + 1
      if idx[d] < shape[d] then break end
      idx[d] = 0
    end
  end
  return buf
end

local function compile_and_run(text)
  local path = os.tmpname()
  local f = io.open(path .. ".cpp", "w")
  f:write(text)
  f:close()
  local ok = os.execute(("g++ -std=c++20 -O0 -pthread -w -o %s.bin %s.cpp 2>%s.log"):format(path, path, path))
  if not ok then
    local l = io.open(path .. ".log"):read("a")
    error("emulation build failed (" .. path .. ".cpp):\n" .. l:sub(1, 3000))
  end
  local p = io.popen(path .. ".bin")
  local out = {}
  for line in p:lines() do
    local name, rest = line:match("^(%S+)(.*)$")
    local vals = {}
    for v in rest:gmatch("%S+") do vals[#vals + 1] = tonumber(v) or (v:find("nan") and 0 / 0) or (v:find("-inf") and -math.huge) or math.huge end
    out[tonumber(name) or name] = vals
  end
  p:close()
  os.remove(path); os.remove(path .. ".cpp"); os.remove(path .. ".bin"); os.remove(path .. ".log")
  return out
end

local function ck_is_array(a) return type(a) == "userdata" and (require "cukern").is_array(a) end

local function available()
  if E.ok ~= nil then return E.ok end
  local f = io.open("/tmp/cukern_emu_probe.cpp", "w")
  f:write("#include <barrier>\nint main() { std::barrier<> b(1); b.arrive_and_wait(); }\n")
  f:close()
  E.ok = os.execute("g++ -std=c++20 -pthread -o /tmp/cukern_emu_probe /tmp/cukern_emu_probe.cpp >/dev/null 2>&1") == true
  return E.ok
end
E.available = available

--- Run `src` (with `info` from ck.map_source) on the inputs; outs: {name = contiguous host array} in the order
-- of the output parameters. Returns the outputs' values as flat Lua lists, by name.
function E.run(src, info, inputs, outs)
  local lines = {PRELUDE, "namespace k1 {\n", src, "\n}\n"}
  if info.finisher then lines[#lines + 1] = "namespace k2 {\n" .. info.finisher .. "\n}\n" end
  lines[#lines + 1] = "int main() {\n"
  local slots, bufs = {}, {}
  local function buffer(name, dtype, values)
    if bufs[name] then return end
    bufs[name] = true
    local vals = {}
    for i, v in ipairs(values) do
      if type(v) == "boolean" then v = v and 1 or 0 end
      if HALF[dtype] then vals[i] = ("k1::ckx_d2%s(%s)"):format(HALF[dtype], cquote(v))
      elseif dtype ~= "f32" and dtype ~= "f64" then
        vals[i] = v == math.mininteger and "(-9223372036854775807LL - 1)" or ("%dLL"):format(math.tointeger(v) or 0)
      else vals[i] = cquote(v) end
    end
    if #vals == 0 then vals[1] = "0" end
    lines[#lines + 1] = ("  alignas(64) static %s b_%s[] = {%s};\n"):format(CT[dtype], name, table.concat(vals, ", "))
  end
  for i, p in ipairs(info.params) do
    if p.kind == "i64" then slots[i] = ("(uint64_t)(int64_t)%dLL"):format(p.value)
    elseif p.kind == "f64" then
      lines[#lines + 1] = ("  double d%d = %s;\n"):format(i, cquote(p.value))
      slots[i] = ("u64_of(d%d)"):format(i)
    elseif p.kind == "input" then
      local a = inputs[p.value]
      buffer("in_" .. p.value, a:dtype(), view_buffer(a))
      slots[i] = ("(uint64_t)(uintptr_t)b_in_%s"):format(p.value)
    elseif p.kind == "output" then
      local o = outs[p.value]
      local vals = {}
      for j = 1, o:numel() do vals[j] = 0 / 0 end
      if o:dtype() == "i32" then for j = 1, o:numel() do vals[j] = -2147483648 end
      elseif CT[o:dtype()] and o:dtype() ~= "f32" and o:dtype() ~= "f64" and not HALF[o:dtype()] then
        for j = 1, o:numel() do vals[j] = 77 end -- poison of the integer dtypes
      end
      buffer("out_" .. p.value, o:dtype(), vals)
      slots[i] = ("(uint64_t)(uintptr_t)b_out_%s"):format(p.value)
    else
      lines[#lines + 1] = ("  static double ws[%d];\n"):format(math.max(1, info.grid))
      slots[i] = "(uint64_t)(uintptr_t)ws"
    end
  end
  lines[2] = "static inline uint64_t u64_of(double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; }\nnamespace k1 {\n"
  lines[#lines + 1] = ("  uint64_t slots[] = {%s};\n"):format(table.concat(slots, ", "))
  lines[#lines + 1] = "  k1::CkP p; static_assert(sizeof p == sizeof slots, \"parameter block\"); std::memcpy(&p, slots, sizeof p);\n"
  local sync = src:find("__syncthreads", 1, true) or src:find("__shfl", 1, true)
  lines[#lines + 1] = ("  ck_launch(k1::%s, p, %d, %d, %s);\n"):format(info.entry, info.grid, info.block, sync and "true" or "false")
  if info.finisher then
    local fentry = info.finisher:match("void __launch_bounds__%(256%) (ck_rfin_%x+)")
    local len, ident = info.params[2].value, info.params[5].value
    lines[#lines + 1] = ("  k2::CkF f = {ws, %d, %s, %s, (void *)b_out_out};\n"):format(info.grid, cquote(len), cquote(ident))
    lines[#lines + 1] = ("  ck_launch(k2::%s, f, 1, 256, true);\n"):format(fentry)
  end
  for name, o in pairs(outs) do
    local dt = o:dtype()
    local fmt, val = " %.17g", "(double)b_out_" .. name .. "[j]"
    if HALF[dt] then val = ("(double)k1::ckx_%s2f(b_out_%s[j])"):format(HALF[dt], name)
    elseif dt ~= "f32" and dt ~= "f64" then fmt, val = " %lld", "(long long)b_out_" .. name .. "[j]" end
    lines[#lines + 1] = ("  printf(\"%s\");\n  for (unsigned j = 0; j < %d; ++j) printf(\"%s\", %s);\n  printf(\"\\n\");\n")
      :format(name, o:numel(), fmt, val)
  end
  lines[#lines + 1] = "  return 0;\n}\n"
  return compile_and_run(table.concat(lines))
end

--- Run a raw kernel (no __syncthreads) on the CPU: args are arrays (passed as CkArray<T> descriptors, the
-- way ck.kernel passes "f32[]"; {array = a} for "const f32[]") or numbers {value, "float"|"double"|"int"}. Returns each array
-- argument's values afterwards (flat, logical order), by position.
function E.run_raw(src, entry, grid, block, args)
  local lines = {PRELUDE, (require "cukern").kernel_header(), "\n", src, "\nint main() {\n"}
  local call = {}
  local arrays = {}
  for i, a in ipairs(args) do
    local const = false
    if type(a) == "table" and a.array then a, const = a.array, true end
    arrays[i] = ck_is_array(a) and a or nil
    if ck_is_array(a) then
      local buf = view_buffer(a)
      local vals = {}
      for j, v in ipairs(buf) do vals[j] = cquote(v) end
      if #vals == 0 then vals[1] = "0" end
      local T = CT[a:dtype()]
      lines[#lines + 1] = ("  alignas(64) static %s b%d[] = {%s};\n"):format(T, i, table.concat(vals, ", "))
      lines[#lines + 1] = ("  CkArray<%s> a%d{};\n  a%d.data = b%d; a%d.numel = %d; a%d.ndim = %d;\n"):format(T, i, i, i, i,
        a:numel(), i, a:ndim())
      for d, n in ipairs(a:shape()) do
        lines[#lines + 1] = ("  a%d.shape[%d] = %d; a%d.strides[%d] = %d;\n"):format(i, d - 1, n, i, d - 1, a:strides()[d])
      end
      call[i] = const and ("*(CkArray<const %s> *)&a%d"):format(T, i) or ("a" .. i)
    else
      call[i] = ("(%s)%s"):format(a[2], cquote(a[1]))
    end
  end
  lines[#lines + 1] = ("  ck_launch_fn([&] { %s(%s); }, %d, %d);\n"):format(entry, table.concat(call, ", "), grid, block)
  for i = 1, #args do
    if arrays[i] then
      -- print the view's elements in logical order
      lines[#lines + 1] = ("  printf(\"%d\"); for (long long j = 0; j < a%d.numel; ++j) printf(\" %%.17g\", (double)a%d[j]); printf(\"\\n\");\n")
        :format(i, i, i)
    end
  end
  lines[#lines + 1] = "  return 0;\n}\n"
  return compile_and_run(table.concat(lines))
end

return E
