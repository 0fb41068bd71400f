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
ck.empty_cache()
print(bad == 0 and "issue35_sanitize: all ok" or ("issue35_sanitize: %d mismatches"):format(bad))
os.exit(bad == 0 and 0 or 1)
