-- Introspection (issue 15): what the kernels that ran look like. ck.last_ran().kernels and the rows of
-- ck.variants(op) carry registers, shared memory (static and dynamic), local memory (spills), max threads,
-- block and theoretical occupancy of every kernel of ours a launcher started; library references say so.
-- Host runs launch nothing and carry none of it. The ladders print regs / smem / occupancy columns.
local H = require "spec.helpers"
local ck = H.ck
local bench = require "cukern.bench"

local FIELDS = {"name", "symbol", "registers", "static_smem", "dynamic_smem", "local_bytes", "const_bytes",
                "max_threads", "block", "blocks_per_sm", "occupancy", "ptx_version", "binary_version"}

--- Every field of a kernel record is there and sane; returns the record.
local function check_kernel(k, what)
  for _, f in ipairs(FIELDS) do assert.is_not_nil(k[f], what .. ": field " .. f) end
  assert.is_true(#k.name > 0, what .. ": a name")
  assert.is_true(k.registers > 0 and k.registers <= 255, what .. ": registers " .. k.registers)
  assert.is_true(k.block >= 1 and k.block <= k.max_threads, what .. ": block " .. k.block .. " of " .. k.max_threads)
  assert.is_true(k.occupancy > 0 and k.occupancy <= 1, what .. ": occupancy " .. k.occupancy)
  assert.is_true(k.blocks_per_sm >= 1, what .. ": blocks per SM")
  assert.is_true(k.static_smem >= 0 and k.dynamic_smem >= 0 and k.local_bytes >= 0, what)
  assert.is_true(k.binary_version >= 50, what .. ": binary version " .. k.binary_version)
  return k
end

describe("introspection on the host backend", function()
  it("host runs carry no kernels and no library flag", function()
    local a = H.rand({8, 8}, "f32")
    local _ = a * a
    local ran = ck.last_ran()
    assert.equals("host", ran.name)
    assert.is_nil(ran.kernels)
    assert.is_nil(ran.library)
    ck.sum(a)
    assert.is_nil(ck.last_ran().kernels)
    local _, tran = ck.core.time_op({op = "matmul", a = a, b = a}, 0, 1)
    assert.is_nil(tran.kernels)
  end)

  it("ck.variants rows have no kernels for variants that never ran on a GPU", function()
    if H.has_cuda then return pending("a GPU is present: some variants may have run") end
    for _, op in ipairs {"matmul", "reduce", "transpose", "elementwise"} do
      for _, v in ipairs(ck.variants(op)) do
        assert.is_nil(v.kernels, op .. " " .. v.name)
        assert.is_nil(v.library, op .. " " .. v.name)
      end
    end
  end)

  it("bench.kernel_fields flattens the main kernel and leaves host rows alone", function()
    local host = bench.kernel_fields({ms = 1}, {id = -1, name = "host", note = ""})
    assert.same({ms = 1}, host)
    local k1 = {name = "k1", registers = 40, static_smem = 8192, dynamic_smem = 256, local_bytes = 0, block = 256,
                occupancy = 0.75, symbol = "void k1<float>()"}
    local k2 = {name = "fin", registers = 16, static_smem = 0, dynamic_smem = 0, local_bytes = 8, block = 128,
                occupancy = 1}
    local row = bench.kernel_fields({}, {id = 3, name = "x", note = "", library = false, kernels = {k1, k2}})
    assert.equals(40, row.regs); assert.equals(8448, row.smem); assert.equals(0.75, row.occ); assert.equals(0, row.spill)
    assert.equals(2, #row.kernels)
    assert.equals("fin", row.kernels[2].name)
    assert.is_nil(row.kernels[1].symbol) -- results keep the short record
    assert.is_nil(row.kernel)
    local lib = bench.kernel_fields({}, {id = 0, name = "cublas", note = "", library = true, kernels = {}})
    assert.equals("library", lib.kernel)
    assert.is_nil(lib.regs)
  end)

  it("ladder tables print regs / smem / occ only when a row has them", function()
    local cols = bench.with_kernel_cols({{key = "variant"}, {key = "ms", fmt = "%.3f"}, {key = "error"}}, "error")
    assert.equals("regs", cols[3].key)
    assert.equals("error", cols[#cols].key)
    local host = bench.table({{variant = "host", ms = 1.5}}, cols, false)
    assert.is_nil(host:find("regs", 1, true))
    assert.is_nil(host:find("occ", 1, true))
    local gpu = bench.table({{variant = "smem", ms = 1.5, regs = 38, smem = 8192, occ = 0.5, spill = 0},
                             {variant = "cublas", ms = 1.0, kernel = "library"}}, cols, false)
    local head = gpu:match("^[^\n]+")
    assert.truthy(head:find("regs", 1, true)); assert.truthy(head:find("smem", 1, true))
    assert.truthy(head:find("occ", 1, true))
    assert.truthy(gpu:find("8192", 1, true)); assert.truthy(gpu:find("0.50", 1, true))
  end)

  it("report tables add regs, smem and occupancy columns for results that recorded them", function()
    local results = require "cukern.report_results"
    local tables = require "cukern.report_tables"
    local meta = {device = "NVIDIA H100", backend = "cuda", date = "2026-11-23T10:00:00Z", commit = "abc"}
    local rows = {
      {variant = "cublas", id = 0, m = 64, n = 64, k = 64, dtype = "f32", ms = 1, tflops = 10, kernel = "library"},
      {variant = "smem", id = 3, m = 64, n = 64, k = 64, dtype = "f32", ms = 2, tflops = 5, regs = 38, smem = 8192,
       occ = 0.5, spill = 0},
    }
    local A = results.analyse({meta = meta, ladder = "matmul", rows = rows})
    local md = tables.markdown(A, rows)
    local head = md:match("^[^\n]+")
    assert.truthy(head:find("| regs |", 1, true), head)
    assert.truthy(head:find("occupancy", 1, true), head)
    assert.truthy(md:find("| 8192 |", 1, true), md)
    assert.truthy(md:find("50%", 1, true), md)
    assert.truthy(md:find("library", 1, true), md)
    -- older results without the fields: no such columns
    local old_rows = {{variant = "smem", id = 3, m = 64, n = 64, k = 64, dtype = "f32", ms = 2, tflops = 5}}
    local old = results.analyse({meta = meta, ladder = "matmul", rows = old_rows})
    assert.is_nil(tables.markdown(old, old_rows):find("regs", 1, true))
  end)
end)

describe("introspection on the GPU", function()
  it("matmul smem: its configuration's static shared memory, no dynamic, 32x32 threads", H.gpu(function()
    for _, dt in ipairs {"f32", "f64"} do
      local a, b = H.rand({96, 80}, dt):cuda(), H.rand({80, 72}, dt):cuda()
      local _ = ck.matmul(a, b, {variant = "smem"})
      local ran = ck.last_ran()
      assert.equals("smem", ran.name)
      assert.is_false(ran.library)
      assert.equals(1, #ran.kernels)
      local k = check_kernel(ran.kernels[1], "smem " .. dt)
      assert.equals("matmul_smem_kernel", k.name)
      assert.truthy(k.symbol:find(dt == "f32" and "float" or "double", 1, true), k.symbol)
      assert.equals(2 * 32 * 32 * (dt == "f32" and 4 or 8), k.static_smem) -- As and Bs, TS = 32
      assert.equals(0, k.dynamic_smem)
      assert.equals(32 * 32, k.block)
      -- the ladder row remembers what it launched last
      local row
      for _, v in ipairs(ck.variants("matmul")) do if v.name == "smem" then row = v end end
      assert.is_table(row.kernels)
      assert.same(k, row.kernels[1])
      assert.is_false(row.library)
    end
  end))

  it("small problems: batched by default, one launch of ours each with batching off (tiny matmul: smem; small whole-array sums: rows_warp, single_pass)", H.gpu(function()
    local function mm_ran(a, b, opts)
      local c = ck.matmul(a, b, opts)
      local ran = ck.last_ran() -- before the host reference replaces it
      -- TF32 inputs keep 10 mantissa bits, an f16 result 11: a few 2^-11 relative; f32/f64 exact to ~1e-6
      local loose = (opts and opts.precision == "tf32") or c:dtype() == "f16"
      local tol = loose and 1e-2 or 1e-5
      H.assert_close(c, ck.matmul(a:host(), b:host()), {rtol = tol, atol = tol}, "matmul")
      return ran
    end
    assert.is_true(ck.batching(), "batching is on by default")
    for _, batching in ipairs {true, false} do
      ck.batching(batching)
      local tiny = batching and "batched" or "smem"
      for _, dt in ipairs {"f32", "f64"} do
        local ran = mm_ran(H.rand({8, 8}, dt, "cuda"), H.rand({8, 8}, dt, "cuda"))
        assert.equals(tiny, ran.name)
        assert.equals(batching and "batched_kernel" or "matmul_smem_kernel", check_kernel(ran.kernels[1], "tiny matmul").name)
        assert.equals(tiny, mm_ran(H.rand({64, 64}, dt, "cuda"), H.rand({64, 64}, dt, "cuda")).name)
        -- a batch of products is not for the batch's one-product records: smem
        assert.equals("smem", mm_ran(H.rand({4, 1, 7}, dt, "cuda"), H.rand({7, 3}, dt, "cuda")).name)
        assert.equals("cublas", mm_ran(H.rand({65, 64}, dt, "cuda"), H.rand({64, 64}, dt, "cuda")).name)
        -- a transposed operand would need a copy for smem (and is not dense for the batch): cuBLAS takes it
        assert.equals("cublas", mm_ran(H.rand({8, 8}, dt, "cuda"):t(), H.rand({8, 8}, dt, "cuda")).name)
      end
      assert.equals("cublas", mm_ran(H.rand({8, 8}, "f32", "cuda"), H.rand({8, 8}, "f32", "cuda"), {precision = "tf32"}).name)
      assert.equals("cublas", mm_ran(H.rand({8, 8}, "f16", "cuda"), H.rand({8, 8}, "f16", "cuda")).name)
      -- whole-array reductions by size: up to 4096 elements batched; with batching off <= 2 KiB rows_warp,
      -- <= 16 KiB single_pass; then CUB
      local function small(name) return batching and "batched" or name end
      for _, c in ipairs {{{4, 4}, "f32", small "rows_warp"}, {{512}, "f32", small "rows_warp"},
                          {{256}, "f64", small "rows_warp"}, {{513}, "f32", small "single_pass"},
                          {{4096}, "f32", small "single_pass"}, {{4097}, "f32", "cub"}, {{100000}, "f32", "cub"}} do
        for _, op in ipairs {"sum", "max", "mean"} do
          local x = H.rand(c[1], c[2], "cuda")
          local got = ck[op](x)
          local ran = ck.last_ran()
          assert.equals(c[3], ran.name, op .. " " .. c[2] .. " " .. #c[1])
          if c[3] ~= "cub" then check_kernel(ran.kernels[1], op) end
          H.assert_close(got, ck[op](x:host()), {rtol = 1e-4, atol = 1e-4}, op .. " " .. c[3])
        end
      end
      -- fill and dense elementwise ops: batched, or the contiguous rung
      local a, b = H.rand({4, 4}, "f32", "cuda"), H.rand({4, 4}, "f32", "cuda")
      a:fill(2)
      H.assert_close(a, ck.full({4, 4}, 2), {rtol = 0, atol = 0}, "fill")
      local d = a + b
      assert.equals(batching and "batched" or "contiguous", ck.last_ran().name)
      assert.equals(batching and "batched_kernel" or "ew_contiguous_kernel", check_kernel(ck.last_ran().kernels[1], "a + b").name)
      H.assert_close(d, b:host() + 2, {rtol = 1e-6, atol = 1e-6}, "a + b")
    end
    ck.batching(true)
  end))

  it("library references say so: cuBLAS lists no kernel, CUB lists only our store kernel", H.gpu(function()
    local a = H.rand({64, 64}, "f32"):cuda()
    local _ = ck.matmul(a, a, {variant = "cublas"})
    local ran = ck.last_ran()
    assert.is_true(ran.library)
    assert.same({}, ran.kernels)
    -- a sum goes from CUB straight into the output: no kernel of ours
    local x = H.rand({1000}, "f32"):cuda()
    ck.sum(x, nil, {variant = "cub"})
    ran = ck.last_ran()
    assert.equals("cub", ran.name)
    assert.is_true(ran.library)
    assert.same({}, ran.kernels)
    -- a mean goes through a workspace and our store kernel (the division by the length)
    ck.mean(x, nil, {variant = "cub"})
    ran = ck.last_ran()
    assert.equals("cub", ran.name)
    assert.is_true(ran.library)
    assert.equals(1, #ran.kernels)
    assert.equals("red_store_kernel", check_kernel(ran.kernels[1], "cub store").name)
  end))

  it("two-pass launches record both kernels", H.gpu(function()
    -- one long row: Harris 1 cuts it into chunks (one block each), then finishes the partials
    local x = H.rand({1, 1 << 20}, "f32"):cuda()
    ck.sum(x, 2, {variant = "interleaved_divergent"})
    local ran = ck.last_ran()
    assert.equals("interleaved_divergent", ran.name)
    assert.is_true(#ran.kernels >= 2, "kernels: " .. #ran.kernels)
    for i, k in ipairs(ran.kernels) do check_kernel(k, "kernel " .. i) end
    assert.equals("red_acc_rows_kernel", ran.kernels[#ran.kernels].name)
  end))

  it("every rung of every ladder that ran records its kernels", H.gpu(function()
    local checked = 0
    local function each(op, run)
      for _, v in ipairs(ck.variants(op)) do
        for _, dt in ipairs(op == "matmul" and v.dtypes or {"f32"}) do
          local ok = pcall(run, v, dt)
          local ran = ck.last_ran()
          if ok and ran.name == v.name then -- ran as asked (else the case is not this rung's)
            local what = ("%s %s %s"):format(op, v.name, dt)
            assert.is_boolean(ran.library, what)
            if not ran.library then assert.is_true(#ran.kernels >= 1, what .. ": no kernel noted") end
            for i, k in ipairs(ran.kernels) do check_kernel(k, what .. " kernel " .. i) end
            checked = checked + 1
          end
        end
      end
    end
    local x = H.rand({128, 128}, "f32"):cuda()
    each("matmul", function(v, dt)
      local a = x:to(dt)
      return ck.matmul(a, a, {variant = v.name})
    end)
    each("reduce", function(v) return ck.sum(x, v.name == "cols" and 1 or 2, {variant = v.name}) end)
    each("transpose", function(v) return ck.transpose(x, {variant = v.name}) end)
    each("elementwise", function(v) return ck.add(x, x, {variant = v.name}) end)
    assert.is_true(checked >= 25, "rungs checked: " .. checked)
  end))

  it("attributes are cached: asking again gives the same record", H.gpu(function()
    local x = H.rand({4096}, "f32"):cuda()
    local _ = x + x
    local k1 = ck.last_ran().kernels[1]
    local k2 = ck.last_ran().kernels[1]
    assert.same(k1, k2)
    check_kernel(k1, "add")
  end))

  it("run-time kernels: k:launch and ck.map fill ck.last_ran() with the same record as k:info", H.gpu(function()
    local src = [[extern "C" __global__ void twice(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= 2.0f;
}]]
    local k = ck.kernel(src, "twice", {"f32*", "i32"})
    local v = ck.ones(1000, {device = "cuda"})
    k:launch(8, 128, v, 1000)
    local ran = ck.last_ran()
    assert.equals("kernel", ran.name)
    assert.equals(1, #ran.kernels)
    local r = check_kernel(ran.kernels[1], "twice")
    assert.equals("twice", r.name)
    assert.equals(128, r.block)
    local info = k:info(128)
    for _, f in ipairs(FIELDS) do assert.equals(info[f], r[f], f) end
    ck.map("a * x + y", {a = 2, x = v, y = v})
    ran = ck.last_ran()
    assert.equals("map", ran.name)
    check_kernel(ran.kernels[1], "map")
  end))
end)
