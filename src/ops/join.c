/*
 * join.c — ck.cat and ck.stack as one core call (ck_join): every input checked in one loop (live, one device, the
 * shapes, the promoted dtype), the output allocated once, inputs of another dtype or a non-contiguous layout copied,
 * and one index-op launch (CK_IX_CAT, kernels/index/ix_common.cu's cat copy) per CK_CAT_MAX inputs into the output
 * or a view of it.
 *
 * Why in C: lua/cukern/assembly.lua did all of this per input in Lua — a shape table, six method calls, a
 * formatted "list[i]" for the live check, a reshape view per stacked input, a table per group of 64 — about
 * 0.8 us per input on the host backend (64 tiny inputs: 52 us a call, of which core.cat 2.3 us). On a GPU that
 * time is spent before the launch, with the device idle, so it was most of the gap to a memcpy of the same bytes
 * for 8 and 64 inputs. Here a call costs one pass over pointers; the binding (src/lua/l_ops.c, core.join) reads the
 * list and the dim, and Lua only words the three messages that need its `show` of a value.
 *
 * The messages are the ones assembly.lua raised, with the op's name in front ("cat: list[2] is [2x5] and list[1]
 * is [3x4]; ..."), which errors.call turns into "ck.cat: ..." at the user's line. Nothing is allocated before every
 * input has passed, so a refused call writes nothing.
 */
#include <stdio.h>
#include <string.h>

#include "ck_op.h"

static ck_status release_all(ck_tensor *t, int n, ck_status st) {
  for (int i = 0; i < n; ++i) ck_release(&t[i]);
  return st;
}

ck_status ck_join(ck_ctx *ctx, ck_tensor *out, const ck_tensor *const *list, int64_t n, int dim, bool stack, int dtype,
                  ck_ran *ran) {
  const char *name = stack ? "stack" : "cat";
  char s1[128], s2[128];
  ck_status st;
  if (n < 1) return ck_error(ctx, CK_ERR_ARG, "%s: the list is empty; give at least one array", name);
  const ck_tensor *x0 = list[0];
  const int nd = x0->ndim;
  if (dim < 0 || dim > (stack ? nd : nd - 1)) /* (the binding normalised it: a caller's bug) */
    return ck_error(ctx, CK_ERR_ARG, "%s: dim %d out of range for %d-D inputs", name, dim + 1, nd);
  if (stack && nd == CK_MAX_DIMS)
    return ck_error(ctx, CK_ERR_SHAPE, "%s: stacking %d-D arrays would make %d dims (the most is %d)", name, nd, nd + 1,
                    CK_MAX_DIMS);
  const ck_device dev = ck_dev(x0);
  ck_dtype dt = x0->dtype;
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) { /* as assembly.lua checked them: device, then shape, input by input */
    const ck_tensor *x = list[i];
    if ((st = ck_check_live(ctx, name, x))) return st;
    if (!ck_dev_eq(ck_dev(x), dev)) {
      const ck_devname a = ck_device_name(dev), b = ck_device_name(ck_dev(x));
      return ck_error(ctx, CK_ERR_DEVICE, "%s: list[1] is on %s and list[%lld] on %s; all arrays must be on one device "
                      "(move it first: list[%lld]:to(\"%s\"))", name, a.s, (long long)i + 1, b.s, (long long)i + 1, a.s);
    }
    bool ok = x->ndim == nd;
    for (int k = 0; ok && k < nd; ++k) ok = x->shape[k] == x0->shape[k] || (!stack && k == dim);
    if (!ok) {
      if (stack)
        return ck_error(ctx, CK_ERR_SHAPE, "%s: list[%lld] is %s and list[1] is %s; stack needs arrays of one shape", name,
                        (long long)i + 1, ck_shape_str(x->ndim, x->shape, s1, sizeof s1),
                        ck_shape_str(nd, x0->shape, s2, sizeof s2));
      return ck_error(ctx, CK_ERR_SHAPE, "%s: list[%lld] is %s and list[1] is %s; the shapes must agree except along dim %d",
                      name, (long long)i + 1, ck_shape_str(x->ndim, x->shape, s1, sizeof s1),
                      ck_shape_str(nd, x0->shape, s2, sizeof s2), dim + 1);
    }
    if (__builtin_add_overflow(total, stack ? 1 : x->shape[dim], &total))
      return ck_error(ctx, CK_ERR_SHAPE, "%s: the joined dim would have more than 2^63 elements", name);
    if (x->dtype != dt) dt = ck_promote(dt, x->dtype);
  }
  const ck_dtype odt = dtype >= 0 ? (ck_dtype)dtype : dt;
  if (ck_dtype_is_complex(dt) && !ck_dtype_is_complex(odt))
    return ck_error(ctx, CK_ERR_DTYPE, "%s: the inputs are complex, so the result is too: dtype %s is not c64 or c128 "
                    "(take ck.real or ck.abs first)", name, ck_dtype_name(odt));
  int64_t shape[CK_MAX_DIMS];
  int ond = 0;
  for (int k = 0; k <= nd; ++k) {
    if (stack && k == dim) shape[ond++] = total;
    if (k < nd) shape[ond++] = !stack && k == dim ? total : x0->shape[k];
  }
  if ((st = ck_empty(ctx, out, odt, ond, shape, dev))) return st;
  if (ck_numel(out) == 0) return CK_OK;
  /* complex arrays join as their real pair views (a last dim of 2, which dim never is), as the kernel moves them */
  const bool pair = ck_dtype_is_complex(odt);
  ck_tensor into = {0};
  if (pair && (st = ck_pair_view(ctx, &into, out))) return st;
  const ck_tensor *dst = pair ? &into : out;
  ck_tensor part[CK_CAT_MAX];
  const ck_tensor *ptr[CK_CAT_MAX];
  int64_t off = 0;
  for (int64_t first = 0; first < n && !st; first += CK_CAT_MAX) {
    const int m = (int)(n - first < CK_CAT_MAX ? n - first : CK_CAT_MAX);
    int64_t len = 0;
    int made = 0;
    for (int j = 0; j < m && !st; ++j, ++made) { /* part[j]: list[first + j] as the kernel takes it (a reference) */
      const ck_tensor *x = list[first + j];
      ck_tensor *p = &part[j];
      memset(p, 0, sizeof *p);
      if (x->dtype != odt || !ck_is_contiguous(x)) st = ck_to(ctx, p, x, dev, odt); /* a contiguous copy */
      else ck_view_of(p, x);
      if (!st && stack) { /* a dim of 1 at `dim`: a view of the contiguous part */
        int64_t s[CK_MAX_DIMS];
        for (int k = 0, q = 0; k <= nd; ++k) {
          if (k == dim) s[k] = 1;
          else s[k] = p->shape[q++];
        }
        ck_tensor v = {0};
        st = ck_view_reshape(ctx, &v, p, nd + 1, s);
        ck_release(p);
        *p = v;
      }
      if (!st && pair) {
        ck_tensor v = {0};
        st = ck_pair_view(ctx, &v, p);
        ck_release(p);
        *p = v;
      }
      ptr[j] = p;
      if (!st) len += p->shape[dim];
    }
    if (!st && len > 0) {
      ck_tensor view = {0};
      const bool whole = first == 0 && m == n;
      if (whole || !(st = ck_view_narrow(ctx, &view, dst, dim, off, len))) {
        ck_call c;
        memset(&c, 0, sizeof c);
        c.kind = CK_OP_INDEX;
        c.fn = CK_IX_CAT;
        c.list = ptr;
        c.nlist = m;
        c.a = ptr[0];
        c.dim = dim;
        c.out = whole ? (ck_tensor *)dst : &view;
        st = ck_run(ctx, &c, ran);
      }
      ck_release(&view);
    }
    off += len;
    release_all(part, made, st);
  }
  ck_release(&into);
  if (st) ck_release(out);
  return st;
}
