-- Every rung of the FFT ladder and both ways of ck.conv on small cases, checked against the host, for
-- compute-sanitizer (lab/issue35-gpu.sh stage sanitize): c64 and c128, lengths each rung takes, rows and columns,
-- rfft/irfft (cuFFT), conv2 direct and fft. Prints one line per check; exits 1 on a mismatch.
package.path = "./lua/?.lua;./lua/?/init.lua;" .. package.path
package.cpath = "./?.so;" .. package.cpath
local ck = require "cukern"
ck.default_device("host") -- the references are host results; the GPU side says "cuda"
local bad = 0
local function close(name, got, ref, tol)
  local d = 0
  for _, part in ipairs {"real", "imag"} do
    local g, r = got:to("host"), ref
    if g:dtype():match("^c") then g, r = g[part](g), r[part](r) elseif part == "imag" then break end
    d = math.max(d, (g:to("f64") - r:to("f64")):abs():max():item())
  end
  local ok = d <= tol
  if not ok then bad = bad + 1 end
  print(("%-44s %s (max diff %.3g)"):format(name, ok and "ok" or "MISMATCH", d))
end
ck.seed(35)
for _, v in ipairs(ck.variants("fft")) do
  for _, dt in ipairs {"c64", "c128"} do
    local real = dt == "c64" and "f32" or "f64"
    for _, n in ipairs {1, 8, 64, 1000, 4096} do
      local h = ck.complex(ck.rand({3, n}, {dtype = real}), ck.rand({3, n}, {dtype = real}))
      local ok, y = pcall(ck.fft, h:to("cuda"), nil, 2, {variant = v.name, norm = "ortho"})
      if ok then close(("fft %s %s n=%d (ran %s)"):format(v.name, dt, n, ck.last_ran().name), y, ck.fft(h, nil, 2, {norm = "ortho"}), 1e-3)
      else bad = bad + 1; print(v.name, n, y) end
    end
  end
end
local h = ck.complex(ck.rand({40, 6}), ck.rand({40, 6}))
close("fft along dim 1 (columns, cuFFT)", ck.fft(h:to("cuda"), nil, 1), ck.fft(h, nil, 1), 1e-3)
local x = ck.rand({5, 99})
close("rfft n=99", ck.rfft(x:to("cuda")), ck.rfft(x), 1e-3)
close("irfft n=99", ck.irfft(ck.rfft(x:to("cuda")), 99), x, 1e-4)
local a, k = ck.rand({70, 50}), ck.rand({9, 7})
for _, mode in ipairs {"full", "same", "valid"} do
  for _, variant in ipairs {"direct", "fft"} do
    close(("conv2 %s %s"):format(variant, mode), ck.conv2(a:to("cuda"), k:to("cuda"), {mode = mode, variant = variant}),
      ck.conv2(a, k, {mode = mode, variant = "direct"}), 1e-3)
  end
end
-- the fused complex ops (kernels/complex/), every rung, odd sizes and offsets, sums along each dim; and eig (Xgeev)
for _, v in ipairs(ck.variants("complex")) do
  for _, dt in ipairs {"c64", "c128"} do
    local real = dt == "c64" and "f32" or "f64"
    for _, n in ipairs {1, 7, 1000, 65537} do
      local a = ck.complex(ck.rand({n + 1}, {dtype = real}), ck.rand({n + 1}, {dtype = real}))
      local b = ck.complex(ck.rand({n + 1}, {dtype = real}) + 0.5, ck.rand({n + 1}, {dtype = real}))
      local ha, hb = a:narrow(1, 2, n + 1), b:narrow(1, 1, n) -- one at an odd offset
      local ga, gb = a:to("cuda"):narrow(1, 2, n + 1), b:to("cuda"):narrow(1, 1, n)
      for _, fn in ipairs {"add", "mul", "div"} do
        local ok, g = pcall(ck.core.complex_op, fn, ga, gb, nil, nil, nil, v.name)
        if ok then close(("complex %s %s %s n=%d"):format(v.name, fn, dt, n), g, ck.core.complex_op(fn, ha, hb), 1e-3)
        else print(("complex %s %s n=%d: %s"):format(v.name, fn, n, tostring(g):sub(1, 90))) end
      end
      local ok, g = pcall(ck.core.complex_op, "exp", ga, nil, nil, nil, nil, v.name)
      if ok then close(("complex %s exp %s n=%d"):format(v.name, dt, n), g, ck.core.complex_op("exp", ha), 1e-3) end
    end
    local z = ck.complex(ck.rand({37, 300}, {dtype = real}), ck.rand({37, 300}, {dtype = real}))
    for _, d in ipairs {1, 2} do
      local ok, g = pcall(ck.core.complex_op, "sum", z:to("cuda"), nil, nil, d, false, v.name)
      if ok then close(("complex %s sum dim %d %s"):format(v.name, d, dt), g, ck.core.complex_op("sum", z, nil, nil, d, false), 1e-2) end
    end
  end
end
for _, dt in ipairs {"f32", "f64"} do
  local A = ck.rand({3, 20, 20}, {dtype = dt})
  local wg = ck.eigvals(A:to("cuda"))
  local s = ck.sum(ck.abs(wg:to("host"):to("c128"))):item()
  local ok = s == s
  if not ok then bad = bad + 1 end
  print(("eig (Xgeev) %s batch 3 of 20x20 %s"):format(dt, ok and "ok" or "NaN"))
end
ck.empty_cache()
print(bad == 0 and "issue35_sanitize: all ok" or ("issue35_sanitize: %d mismatches"):format(bad))
os.exit(bad == 0 and 0 or 1)
