/*
 * 09_memcpy.cu — the bandwidth bound of the transpose ladder (bench only, never a transpose).
 *
 * Idea: a transpose reads and writes every byte once, exactly like a copy; cudaMemcpyAsync device to
 * device of the same bytes is the speed no transpose can beat, so the ladder reports every step as a
 * percentage of it measured in the same run (the seed's copyGmem plays this role). It is NOT a transpose:
 * the registry row carries CK_VF_BENCH_ONLY, is never in ck_transpose_preferred, and ck_transpose refuses
 * it by name or id (see src/op_transpose.c). Its id is the last one (9) so that steps 0-8 keep the
 * ladder's numbering.
 * Launch: one cudaMemcpyAsync of batch * rows * cols * elem_size bytes on the context's stream.
 * Limits: in and out each one dense block (row-major rows x cols matrices, batch strides dense).
 * Operands: in rows x cols, out cols x rows (bytes only), per batch matrix (ck_tr_desc).
 */
#include "tr_common.cuh"

// ---------------------------------------------------------------- launcher

/* Element strides of one side form one dense row-major block of nbatch x inner x outer? */
static bool dense(const ck_tr_desc *d, bool out_side) {
  const int64_t nrow = out_side ? d->cols : d->rows, ncol = out_side ? d->rows : d->cols;
  const int64_t rs = out_side ? d->out_rs : d->in_rs, cs = out_side ? d->out_cs : d->in_cs;
  if (ncol > 1 && cs != 1) return false;
  if (nrow > 1 && rs != ncol) return false;
  int64_t want = nrow * ncol;
  for (int k = d->nb - 1; k >= 0; --k) {
    const int64_t st = out_side ? d->bout_st[k] : d->bin_st[k];
    if (d->bshape[k] > 1 && st != want) return false;
    want *= d->bshape[k];
  }
  return true;
}

extern "C" const char *ck_transpose_memcpy_supports(const void *desc) {
  const ck_tr_desc *d = (const ck_tr_desc *)desc;
  const char *why = tr_supports_common(d);
  if (why) return why;
  if (!dense(d, false) || !dense(d, true)) return "bench-only bound: needs dense input and output";
  return NULL;
}

extern "C" int ck_transpose_memcpy(const void *desc, const ck_env *env) {
  const ck_tr_desc *d = (const ck_tr_desc *)desc;
  if (tr_empty(d)) return 0;
  const size_t bytes = (size_t)tr_nbatch(d) * (size_t)d->rows * (size_t)d->cols * (size_t)d->elem_size;
  return (int)cudaMemcpyAsync(d->out, d->in, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)env->stream);
}
