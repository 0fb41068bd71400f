--- The FFT against NumPy and GNU Octave (issue 35): cukern writes its inputs to files (.npy with complex values for
-- NumPy; the real and imaginary parts as f64 in a .mat for Octave, whose .mat writer cukern does not have for complex
-- yet), the peer transforms them with its own FFT (NumPy's pocketfft, Octave's FFTW) and writes the results, and
-- cukern's transforms of the same arrays agree on both devices: |y - y_peer| <= 8 eps (log2 n + 1) sqrt(n) max|x|
-- (spec/fft_spec.lua's bound; c128, eps = 2^-53).
local H = require "spec.helpers"
local ck = H.ck

local DIR = H.tmpdir()
local function P(name) return DIR .. "/" .. name end
local sh = H.sh
local PYTHON = sh("/usr/bin/python3 -c 'import numpy'") and "/usr/bin/python3" or nil
local OCTAVE = sh("command -v octave-cli") and "octave-cli" or (sh("command -v octave") and "octave" or nil)
local HAVE_MAT = ck.io_formats().mat
local LENGTHS = {1, 7, 16, 97, 1000, 1024, 4097}

local function run(cmd, script, name)
  local f = assert(io.open(P(name), "w"))
  f:write(script)
  f:close()
  local ok, out = sh(cmd)
  assert(out:find("PEER%-DONE"), name .. " failed (seed " .. H.seed .. ", exit ok " .. tostring(ok) .. "):\n" .. out)
end

local function maxdiff(a, b)
  local d = 0
  for _, part in ipairs {"real", "imag"} do
    local x, y = a:to("host"), b:to("host")
    if x:dtype():match("^c") then x = x[part](x) elseif part == "imag" then break end
    if y:dtype():match("^c") then y = y[part](y) end
    d = math.max(d, ck.max(ck.abs(ck.sub(x:to("f64"), y:to("f64"))):contiguous():reshape(-1), 1):item())
  end
  return d
end

local function tol(n) return 8 * 2 ^ -53 * (math.log(n, 2) + 1) * math.sqrt(n) + 1e-15 end

local function inputs()
  local xs = {}
  for i, n in ipairs(LENGTHS) do
    xs[i] = ck.complex(H.rand({3, n}, "f64"), H.rand({3, n}, "f64"))
  end
  return xs, ck.complex(H.rand({6, 10}, "f64"), H.rand({6, 10}, "f64")), H.rand({4, 9}, "f64")
end

for _, dev in ipairs(H.devices()) do
  local wrap = dev == "cuda" and H.gpu or function(f) return f end
  describe("the FFT against NumPy and Octave on " .. dev, function()
    it("numpy.fft gives the same fft, ifft, rfft, irfft and fft2 of .npy files cukern wrote", wrap(function()
      if not PYTHON then return pending("python3-numpy is not installed here (`make deps` installs it)") end
      local xs, m, r = inputs()
      for i, x in ipairs(xs) do ck.save(P(("x%d.npy"):format(i)), x) end
      ck.save(P("m.npy"), m)
      ck.save(P("r.npy"), r)
      run(("cd '%s' && %s peer.py"):format(DIR, PYTHON), ([[
import numpy as np
for i in range(1, %d):
    x = np.load('x%%d.npy' %% i)
    np.save('f%%d.npy' %% i, np.fft.fft(x, axis=1))
    np.save('b%%d.npy' %% i, np.fft.ifft(x, axis=1, norm='ortho'))
np.save('m2.npy', np.fft.fft2(np.load('m.npy')))
r = np.load('r.npy')
np.save('r1.npy', np.fft.rfft(r, axis=1))
np.save('r2.npy', np.fft.irfft(np.fft.rfft(r, axis=1), 9, axis=1))
print('PEER-DONE')
]]):format(#xs + 1), "peer.py")
      for i, x in ipairs(xs) do
        local n, g = LENGTHS[i], x:to(dev)
        local d = maxdiff(ck.fft(g), ck.load(P(("f%d.npy"):format(i))))
        assert(d <= tol(n), ("fft n=%d differs from NumPy by %.3g"):format(n, d))
        d = maxdiff(ck.ifft(g, {norm = "ortho"}), ck.load(P(("b%d.npy"):format(i))))
        assert(d <= tol(n), ("ifft ortho n=%d differs from NumPy by %.3g"):format(n, d))
      end
      assert(maxdiff(ck.fft2(m:to(dev)), ck.load(P("m2.npy"))) <= tol(60), "fft2")
      assert(maxdiff(ck.rfft(r:to(dev)), ck.load(P("r1.npy"))) <= tol(9), "rfft")
      assert(maxdiff(ck.irfft(ck.rfft(r:to(dev)), 9), ck.load(P("r2.npy"))) <= tol(9), "irfft")
    end))

    it("GNU Octave's fft (FFTW) gives the same transforms", wrap(function()
      if not OCTAVE then return pending("octave is not installed here (`make test` installs it from Debian)") end
      if not HAVE_MAT then return pending("this build has no .mat support (libmatio)") end
      local xs = inputs()
      local vars = {}
      for i, x in ipairs(xs) do
        vars["re" .. i], vars["im" .. i] = x:real():contiguous(), x:imag():contiguous()
      end
      ck.save(P("in.mat"), vars)
      run(("cd '%s' && %s --no-gui -q --norc script.m"):format(DIR, OCTAVE), ([[
load('in.mat');
names = {};
for i = 1:%d
  y = fft(eval(sprintf('re%%d', i)) + 1i * eval(sprintf('im%%d', i)), [], 2);
  eval(sprintf('fr%%d = real(y); fi%%d = imag(y);', i, i));
  names = [names, {sprintf('fr%%d', i), sprintf('fi%%d', i)}];
end
save('-v7', 'out.mat', names{:});
disp('PEER-DONE');
]]):format(#xs), "script.m")
      local o = ck.load(P("out.mat"))
      for i, x in ipairs(xs) do
        local n = LENGTHS[i]
        local y = ck.fft(x:to(dev)):to("host")
        local d = math.max(maxdiff(y:real():contiguous(), o["fr" .. i]), maxdiff(y:imag():contiguous(), o["fi" .. i]))
        assert(d <= tol(n), ("fft n=%d differs from Octave by %.3g"):format(n, d))
      end
    end))
  end)
end
