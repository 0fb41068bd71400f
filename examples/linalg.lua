-- Linear algebra in cukern (issue 34), MATLAB/NumPy names beside ours (docs/api.md "Linear algebra").
--   lua5.4 examples/linalg.lua            (a GPU if there is one, else the host on LAPACKE)
dofile((arg[0]:match("^(.*)/") or ".") .. "/paths.lua")
local ck = require "cukern"
local dev = ck.has_cuda() and "cuda" or "host"
ck.seed(7)

local A = ck.add(ck.randn(5, 5, {dtype = "f64", device = dev}), ck.mul(ck.eye(5, {dtype = "f64", device = dev}), 3))
local b = ck.randn(5, {dtype = "f64", device = dev})
local x = ck.solve(A, b)                             -- MATLAB: x = A \ b
print("x = A \\ b", x, "residual", ck.norm(ck.sub(ck.matmul(A, x:reshape(5, 1)):reshape(5), b)):item())
local L, U, p = ck.lu(A)                              -- [L, U, p] = lu(A, 'vector')
print("det", ck.det(A):item(), "cond", ck.cond(A):item())
local Q, R = ck.qr(ck.randn(6, 3, {dtype = "f64", device = dev}))  -- [Q, R] = qr(A, 0)
local S = ck.add(ck.matmul(A, A:t()), ck.eye(5, {dtype = "f64", device = dev}))
local C = ck.cholesky(S)                              -- chol(S, 'lower')
local w, V = ck.eigh(S)                               -- [V, D] = eig(S)
local Us, s, Vs = ck.svd(A)                           -- [U, S, V] = svd(A)
print("eigenvalues", w, "singular values", s)
-- a batch of 1000 small systems in one call (cuBLAS batched on a GPU)
local As = ck.add(ck.randn(1000, 8, 8, {device = dev}), ck.mul(ck.eye(8, {device = dev}), 4))
local xs = ck.solve(As, ck.randn(1000, 8, 1, {device = dev}))
print("batched", xs:shape()[1], "solutions;", ck.last_ran().name, ck.last_ran().note)
-- singular systems are errors that name the pivot
print(pcall(ck.solve, ck.ones(3, 3, {dtype = "f64", device = dev}), ck.ones(3, {dtype = "f64", device = dev})))
for _, v in ipairs(ck.variants("lu")) do print("LU rung", v.id, v.name, v.summary) end
assert(L and U and p and Q and R and C and V and Us and Vs)
