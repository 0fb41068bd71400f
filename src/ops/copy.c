/*
 * copy.c — copies between layouts, dtypes and devices; contiguous(); reading and writing raw values.
 *
 * On one device a copy is an elementwise COPY (which also casts). On CUDA a permuted dense source goes
 * through the tiled transpose (ck_copy_permuted) instead, and a contiguous same-dtype copy is a memcpy.
 * Between devices the data crosses once, contiguous, in the destination's dtype: packed and cast on the side
 * that has the source, moved by one memcpy (host <-> device) or one peer copy (cuda:i -> cuda:j, ordered on both
 * devices' streams by ck_memcpy_peer), then placed into a strided destination on the side that has it.
 * host:i <-> host:j is a host copy (the host devices share memory; only the arrays' labels differ).
 */
#include <stdio.h>
#include <string.h>

#include "ck_internal.h"
#include "ew_ops.h"

/* Reading or writing values on the host synchronises: refused while a graph is being captured. */
static ck_status not_capturing(ck_ctx *ctx, const char *what) {
  if (!ck_capturing(ctx)) return CK_OK;
  return ck_error(ctx, CK_ERR_ARG, "%s: cannot move values between the host and the device while a graph is "
                                   "being captured (ck.graph records device work only)", what);
}

// ---------------------------------------------------------------- same-device copies

static void copy_desc(ck_ew_desc *d, const ck_tensor *dst, const ck_tensor *src) {
  memset(d, 0, sizeof *d);
  d->op = CK_EW_COPY;
  d->ndim = dst->ndim;
  d->numel = ck_numel(dst);
  d->out_dtype = dst->dtype;
  d->out = ck_data(dst);
  d->a_dtype = src->dtype;
  d->a = ck_data(src);
  d->b_dtype = dst->dtype;
  for (int i = 0; i < dst->ndim; ++i) {
    d->shape[i] = dst->shape[i];
    d->out_st[i] = dst->stride[i];
    d->a_st[i] = src->shape[i] == 1 ? 0 : src->stride[i];
  }
}

ck_status ck_host_copy(ck_ctx *ctx, ck_tensor *dst, const ck_tensor *src) {
  ck_ew_desc d;
  if (ck_numel(dst) == 0) return CK_OK;
  copy_desc(&d, dst, src);
  return ck_host_elementwise(ctx, &d);
}

/* Names a copy in an error: "copy (variant) dst <- src", formatted only when one is raised. */
typedef struct {
  const char *how;
  const ck_tensor *dst, *src;
} copy_what;

static void describe_copy(const void *ud, char *buf, size_t n) {
  const copy_what *w = (const copy_what *)ud;
  char a[96], b[96];
  snprintf(buf, n, "copy (%s) %s <- %s", w->how, ck_describe(w->dst, a, sizeof a), ck_describe(w->src, b, sizeof b));
}

static ck_status cuda_copy(ck_ctx *ctx, ck_tensor *dst, const ck_tensor *src) {
  ck_status st;
  /* small copies join the batch (the elementwise `batched` variant); the rest are one memcpy */
  const bool batch = ck_batch_active(ctx) && ck_numel(dst) <= CK_BATCH_MAX_ELEMS;
  if (!batch && dst->dtype == src->dtype && ck_is_contiguous(dst) && ck_is_contiguous(src))
    return ck_memcpy(ctx, ck_data(dst), ck_data(src), (size_t)ck_numel(dst) * ck_dtype_size(dst->dtype),
                     cudaMemcpyDeviceToDevice, false, "copy (memcpy)");
  if (!batch && dst->dtype == src->dtype) {
    st = ck_copy_permuted(ctx, dst, src);
    if (st != CK_NOT_APPLICABLE) return st;
  }
  ck_ew_desc d;
  ck_ran ran;
  copy_desc(&d, dst, src);
  ck_ew_order(&d);
  const int *order = ck_active_order(ctx, ck_ew_variants, ck_ew_nvariants, ck_ew_preferred);
  const ck_variant *v = ck_pick_variant(ctx, "copy", ck_ew_variants, ck_ew_nvariants, NULL, order, dst->dtype, &d, &ran);
  if (!v) return CK_ERR_UNSUPPORTED;
  const copy_what w = {v->name, dst, src};
  const ck_launch_req r = {.fn = v->launch, .arg = &d, .joins_batch = (v->flags & CK_VF_BATCHED) != 0,
                           .describe = describe_copy, .describe_ud = &w};
  return ck_submit(ctx, &r);
}

/* cuda:i -> cuda:j (i != j): pack and cast on the source device, one peer copy, place on the destination. */
static ck_status peer_copy(ck_ctx *ctx, ck_tensor *dst, const ck_tensor *src) {
  ck_status st;
  ck_tensor s = {0}, d = {0};
  const ck_device dd = ck_dev(dst), sd = ck_dev(src);
  if ((st = ck_to(ctx, &s, src, sd, dst->dtype))) goto cleanup; /* (a view when it is already packed) */
  ck_tensor *target = dst;
  if (!ck_is_contiguous(dst)) {
    if ((st = ck_empty(ctx, &d, dst->dtype, dst->ndim, dst->shape, dd))) goto cleanup;
    target = &d;
  }
  if ((st = ck_memcpy_peer(ctx, ck_data(target), dd, ck_data(&s), sd, (size_t)ck_numel(dst) * ck_dtype_size(dst->dtype))))
    goto cleanup;
  if (target == &d && !(st = ck_use_device(ctx, dd))) st = cuda_copy(ctx, dst, &d);
cleanup: /* (s goes back to sd's cache: sd's stream waits for the peer copy, so no new work there overwrites it first) */
  ck_release(&s);
  ck_release(&d);
  return st;
}

/* Copies that involve a complex dtype, as copies of real views (so every device and layout path below serves
 * them unchanged): complex <- complex is pairs <- pairs (c64 <-> c128 casts the components); complex <- real
 * writes the real parts and zeros the imaginary ones; real <- complex takes the real parts (NumPy's astype,
 * which warns; MATLAB's real()). */
static ck_status complex_copy(ck_ctx *ctx, ck_tensor *dst, const ck_tensor *src) {
  ck_status st;
  ck_tensor d = {0}, s = {0}, part = {0};
  const bool dc = ck_dtype_is_complex(dst->dtype), sc = ck_dtype_is_complex(src->dtype);
  if (dc && sc) {
    if (!(st = ck_pair_view(ctx, &d, dst)) && !(st = ck_pair_view(ctx, &s, src))) st = ck_copy(ctx, &d, &s);
  } else if (dc) {
    if (!(st = ck_pair_view(ctx, &d, dst)) && !(st = ck_view_select(ctx, &part, &d, d.ndim - 1, 0)) &&
        !(st = ck_copy(ctx, &part, src))) {
      ck_release(&part);
      if (!(st = ck_view_select(ctx, &part, &d, d.ndim - 1, 1))) st = ck_ew_generate(ctx, CK_EW_FILL, &part, 0, 0);
    }
  } else {
    if (!(st = ck_pair_view(ctx, &s, src)) && !(st = ck_view_select(ctx, &part, &s, s.ndim - 1, 0))) st = ck_copy(ctx, dst, &part);
  }
  ck_release(&d);
  ck_release(&s);
  ck_release(&part);
  return st;
}

// ---------------------------------------------------------------- public

ck_status ck_copy(ck_ctx *ctx, ck_tensor *dst, const ck_tensor *src) {
  ck_status st = CK_OK;
  char s1[96], s2[96];
  ck_tensor tmp = {0}, tmp2 = {0};
  if ((st = ck_check_live(ctx, "copy", dst)) || (st = ck_check_live(ctx, "copy", src))) return st;
  if (dst->ndim != src->ndim || memcmp(dst->shape, src->shape, sizeof(int64_t) * (size_t)dst->ndim) != 0)
    return ck_error(ctx, CK_ERR_SHAPE, "copy: shapes differ (destination %s, source %s)",
                    ck_shape_str(dst->ndim, dst->shape, s1, sizeof s1), ck_shape_str(src->ndim, src->shape, s2, sizeof s2));
  int64_t n = ck_numel(dst);
  if (n == 0) return CK_OK;
  if ((st = ck_check_writable(ctx, "copy", dst))) return st;
  if (ck_dtype_is_complex(dst->dtype) || ck_dtype_is_complex(src->dtype)) return complex_copy(ctx, dst, src);
  const ck_device dd = ck_dev(dst), sd = ck_dev(src);
  if (ck_unsafe_alias(dst, src)) { /* overlapping views (a:copy_(a:t()), shifted ranges): read a snapshot */
    if ((st = ck_empty(ctx, &tmp, src->dtype, src->ndim, src->shape, sd)) || (st = ck_copy(ctx, &tmp, src))) goto cleanup;
    st = ck_copy(ctx, dst, &tmp);
    goto cleanup;
  }
  if (dd.kind == CK_HOST && sd.kind == CK_HOST) return ck_host_copy(ctx, dst, src);
  if (ck_dev_eq(dd, sd)) return (st = ck_use_device(ctx, dd)) ? st : cuda_copy(ctx, dst, src);
  if ((st = not_capturing(ctx, "copy"))) return st;
  if (dd.kind == CK_CUDA && sd.kind == CK_CUDA) return peer_copy(ctx, dst, src);

  size_t bytes = (size_t)n * ck_dtype_size(dst->dtype);
  if (sd.kind == CK_HOST) { /* host -> cuda: cast and pack on the host, one transfer, then place on the device */
    if ((st = ck_empty(ctx, &tmp, dst->dtype, src->ndim, src->shape, CK_DEV_HOST)) || (st = ck_host_copy(ctx, &tmp, src)) ||
        (st = ck_use_device(ctx, dd)))
      goto cleanup;
    /* (tmp is pageable and released below: each transfer waits) */
    if (ck_is_contiguous(dst)) {
      st = ck_memcpy(ctx, ck_data(dst), ck_data(&tmp), bytes, cudaMemcpyHostToDevice, true, "copy host -> cuda");
    } else {
      if ((st = ck_empty(ctx, &tmp2, dst->dtype, dst->ndim, dst->shape, dd)) ||
          (st = ck_memcpy(ctx, ck_data(&tmp2), ck_data(&tmp), bytes, cudaMemcpyHostToDevice, true, "copy host -> cuda")))
        goto cleanup;
      st = cuda_copy(ctx, dst, &tmp2);
    }
  } else { /* cuda -> host: pack on the device in the source dtype, one transfer, cast on the host */
    if ((st = ck_contiguous(ctx, &tmp2, src)) || (st = ck_use_device(ctx, sd))) goto cleanup;
    if (ck_is_contiguous(dst) && dst->dtype == src->dtype) {
      st = ck_memcpy(ctx, ck_data(dst), ck_data(&tmp2), bytes, cudaMemcpyDeviceToHost, true, "copy cuda -> host");
    } else {
      if ((st = ck_empty(ctx, &tmp, src->dtype, src->ndim, src->shape, CK_DEV_HOST)) ||
          (st = ck_memcpy(ctx, ck_data(&tmp), ck_data(&tmp2), (size_t)n * ck_dtype_size(src->dtype),
                          cudaMemcpyDeviceToHost, true, "copy cuda -> host")))
        goto cleanup;
      st = ck_host_copy(ctx, dst, &tmp);
    }
  }
cleanup:
  ck_release(&tmp);
  ck_release(&tmp2);
  return st;
}

ck_status ck_to(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t, ck_device dev, ck_dtype dt) {
  ck_status st;
  if ((st = ck_check_live(ctx, "to", t))) return st;
  /* (a contiguous piece of an expanded view is copied all the same: the result must be writable) */
  if (ck_dev_eq(ck_dev(t), dev) && t->dtype == dt && ck_is_contiguous(t) && !t->shared) {
    ck_view_of(out, t);
    return CK_OK;
  }
  ck_tensor r;
  if ((st = ck_empty(ctx, &r, dt, t->ndim, t->shape, dev))) return st;
  if ((st = ck_copy(ctx, &r, t))) {
    ck_release(&r);
    return st;
  }
  *out = r;
  return CK_OK;
}

ck_status ck_contiguous(ck_ctx *ctx, ck_tensor *out, const ck_tensor *t) {
  ck_status st;
  if ((st = ck_check_live(ctx, "contiguous", t))) return st;
  return ck_to(ctx, out, t, ck_dev(t), t->dtype);
}

/* A tensor header over caller memory (host), for ck_read/ck_write. */
static void wrap_host(ck_tensor *w, ck_storage *s, const ck_tensor *like, void *buf) {
  memset(s, 0, sizeof *s);
  s->refs = 1 << 30; /* never released */
  s->dev = CK_DEV_HOST;
  s->ptr = buf;
  memset(w, 0, sizeof *w);
  w->st = s;
  w->dtype = like->dtype;
  ck_set_contiguous(w, like->ndim, like->shape);
}

ck_status ck_read(ck_ctx *ctx, const ck_tensor *t, void *buf) {
  ck_status st;
  if ((st = ck_check_live(ctx, "read", t)) || (st = not_capturing(ctx, "read"))) return st;
  ck_storage s;
  ck_tensor w;
  wrap_host(&w, &s, t, buf);
  return ck_copy(ctx, &w, t);
}

ck_status ck_write(ck_ctx *ctx, ck_tensor *t, const void *buf) {
  ck_status st;
  if ((st = ck_check_live(ctx, "write", t)) || (st = not_capturing(ctx, "write"))) return st;
  ck_storage s;
  ck_tensor w;
  wrap_host(&w, &s, t, (void *)buf);
  return ck_copy(ctx, t, &w);
}
