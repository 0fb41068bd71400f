/*
 * expr_parse.c — the expression language's front end: errors with a caret line, the lexer, the parser (text
 * to a post-order node array, expr.h) and the check of the inputs table's names.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_map.h"
#include "expr_ops.h"

// ---------------------------------------------------------------- errors

static void caret_lines(char *buf, size_t n, const char *text, int pos) {
  /* one line of the text around pos (at most ~100 characters) with a caret under pos */
  int len = (int)strlen(text), p = pos - 1;
  if (p < 0) p = 0;
  if (p > len) p = len;
  int lo = p, hi = p;
  while (lo > 0 && text[lo - 1] != '\n' && p - lo < 60) --lo;
  while (hi < len && text[hi] != '\n' && hi - p < 40) ++hi;
  int k = snprintf(buf, n, "\n  %.*s\n  ", hi - lo, text + lo);
  for (int i = lo; i < p && k < (int)n - 2; ++i) buf[k++] = text[i] == '\t' ? '\t' : ' ';
  if (k < (int)n - 1) buf[k++] = '^';
  buf[k < (int)n ? k : (int)n - 1] = 0;
}

ck_status ck_expr_error_at(ck_ctx *ctx, const ck_expr *e, ck_status st, int pos, const char *fmt, ...) {
  char msg[512], car[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  caret_lines(car, sizeof car, e->text, pos);
  if (strlen(e->text) > 160) /* the caret line shows the neighbourhood; the whole text would not fit */
    return ck_error(ctx, st, "%s: %s at position %d of the expression%s", e->what, msg, pos, car);
  return ck_error(ctx, st, "%s: %s at position %d of \"%s\"%s", e->what, msg, pos, e->text, car);
}

/* An assigned name that is also an input: found by the parser (the expression reads it) or when binding (the
 * inputs table has it); one message for both, since either way the input would be hidden or overwritten. */
static ck_status assign_clash(ck_ctx *ctx, const ck_expr *e, const char *name, int pos, bool bare) {
  return ck_expr_error_at(ctx, e, CK_ERR_ARG, pos, "'%s' is an input and cannot also be assigned%s", name,
                          bare ? " (a bare expression's result is the output 'out')" : "");
}

// ---------------------------------------------------------------- lexer and parser

enum { TK_END, TK_NUM, TK_NAME, TK_OP };
typedef struct parser {
  ck_ctx *ctx;
  ck_expr *e;
  const char *s;
  int p;       /* current offset */
  int tk, tpos; /* current token kind and its start offset */
  char tname[XNAME_MAX + 1];
  char top[3];
  double tnum;
  int tint;
  const char *const *fixed;
  int nfixed;
  /* assigned names so far (statement roots) */
  xassign *asg;
  int na;
  int depth; /* nesting, bounded so that the C stack is */
  ck_status st;
} parser;

#define PFAIL(P, pos, ...)                                                                                    \
  do {                                                                                                        \
    if (!(P)->st) (P)->st = ck_expr_error_at((P)->ctx, (P)->e, CK_ERR_ARG, (pos), __VA_ARGS__);             \
    return -1;                                                                                                \
  } while (0)

static void next(parser *P) {
  const char *s = P->s;
  while (isspace((unsigned char)s[P->p])) ++P->p;
  P->tpos = P->p;
  char c = s[P->p];
  if (!c) {
    P->tk = TK_END;
    return;
  }
  if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)s[P->p + 1]))) {
    char *end;
    P->tnum = strtod(s + P->p, &end);
    int q = P->p;
    P->tint = 1;
    for (; s + q < end; ++q)
      if (s[q] == '.' || s[q] == 'e' || s[q] == 'E') P->tint = 0;
    P->p = (int)(end - s);
    /* a C suffix (1.0f) is accepted and ignored */
    if (s[P->p] == 'f' || s[P->p] == 'F') {
      P->tint = 0;
      ++P->p;
    }
    P->tk = TK_NUM;
    return;
  }
  if (isalpha((unsigned char)c) || c == '_') {
    int q = P->p, k = 0;
    while (isalnum((unsigned char)s[q]) || s[q] == '_') {
      if (k < XNAME_MAX) P->tname[k++] = s[q];
      ++q;
    }
    P->tname[k] = 0;
    P->p = q;
    P->tk = TK_NAME;
    if (q - P->tpos > XNAME_MAX) { /* cut short, two long names could become one input */
      if (!P->st)
        P->st = ck_expr_error_at(P->ctx, P->e, CK_ERR_ARG, P->tpos + 1, "name '%.20s...' is longer than %d characters",
                                 P->tname, XNAME_MAX);
      P->tk = TK_END; /* the parser stops; the first error stands */
    }
    return;
  }
  static const char *two[] = {"<=", ">=", "==", "!=", "&&", "||"};
  for (size_t i = 0; i < sizeof two / sizeof *two; ++i)
    if (c == two[i][0] && s[P->p + 1] == two[i][1]) {
      memcpy(P->top, two[i], 3);
      P->p += 2;
      P->tk = TK_OP;
      return;
    }
  P->top[0] = c;
  P->top[1] = 0;
  P->p += 1;
  P->tk = TK_OP;
}

static bool is_op(parser *P, const char *op) { return P->tk == TK_OP && !strcmp(P->top, op); }

static const char *tok_desc(parser *P, char *buf, size_t n) {
  switch (P->tk) {
  case TK_END: return "the end";
  case TK_NUM: snprintf(buf, n, "number %.*s", P->p - P->tpos, P->s + P->tpos); return buf;
  case TK_NAME: snprintf(buf, n, "'%s'", P->tname); return buf;
  default: snprintf(buf, n, "'%s'", P->top); return buf;
  }
}

static int add_node(parser *P, int op, int a, int b, int c, int pos) {
  ck_expr *e = P->e;
  if (e->n == e->cap) {
    int nc = e->cap ? 2 * e->cap : 32;
    xnode *nn = realloc(e->nodes, (size_t)nc * sizeof *nn);
    if (!nn) PFAIL(P, pos, "out of host memory");
    e->nodes = nn;
    e->cap = nc;
  }
  if (e->n >= 4096) PFAIL(P, pos, "expression too long (4096 nodes)");
  xnode *x = &e->nodes[e->n];
  memset(x, 0, sizeof *x);
  x->op = op, x->a = a, x->b = b, x->c = c, x->pos = pos, x->input = -1, x->cast = -1;
  return e->n++;
}

static int add_name(char ***names, int **pos, int *n, const char *name, int p) {
  for (int i = 0; i < *n; ++i)
    if (!strcmp((*names)[i], name)) return i;
  char **nn = realloc(*names, (size_t)(*n + 1) * sizeof *nn);
  if (!nn) return -1;
  *names = nn;
  if (pos) {
    int *np = realloc(*pos, (size_t)(*n + 1) * sizeof *np);
    if (!np) return -1;
    *pos = np;
    np[*n] = p;
  }
  if (!(nn[*n] = strdup(name))) return -1;
  return (*n)++;
}

static int p_expr(parser *P);
static int p_ternary(parser *P);

static int p_primary(parser *P) {
  int pos = P->tpos + 1;
  char d[80];
  if (P->tk == TK_NUM) {
    int n = add_node(P, XOP_CONST, -1, -1, -1, pos);
    if (n < 0) return -1;
    P->e->nodes[n].k = P->tnum;
    /* an integer literal is a weak i64 (exact to 2^53: the lexer reads a double; a Lua integer input is exact) */
    P->e->nodes[n].kint = P->tint && P->tnum < 9223372036854775808.0;
    next(P);
    return n;
  }
  if (is_op(P, "(")) {
    next(P);
    int x = p_expr(P);
    if (x < 0) return -1;
    if (!is_op(P, ")")) PFAIL(P, P->tpos + 1, "expected ')' (to close the '(' at %d), found %s", pos, tok_desc(P, d, sizeof d));
    next(P);
    return x;
  }
  if (P->tk == TK_NAME) {
    char name[XNAME_MAX + 1];
    memcpy(name, P->tname, sizeof name);
    next(P);
    if (is_op(P, "(")) { /* a function call */
      int cast, op = ck_xop_lookup(name, &cast);
      if (op < 0)
        PFAIL(P, pos, "unknown function '%s' (functions: f32 f64 i32 abs floor ceil round trunc sign relu min max "
                      "pow clamp where exp exp2 expm1 log log2 log10 log1p sqrt rsqrt cbrt sin cos tan asin acos "
                      "atan sinh cosh tanh erf erfc sigmoid atan2 hypot fma)", name);
      int want = ck_xop_arity(op), args[3] = {-1, -1, -1}, n = 0;
      next(P);
      if (!is_op(P, ")")) {
        for (;;) {
          int a = p_expr(P);
          if (a < 0) return -1;
          if (n < 3) args[n] = a;
          ++n;
          if (is_op(P, ",")) {
            next(P);
            continue;
          }
          break;
        }
      }
      if (!is_op(P, ")")) PFAIL(P, P->tpos + 1, "expected ',' or ')' in the call of %s, found %s", name, tok_desc(P, d, sizeof d));
      next(P);
      if (n != want) PFAIL(P, pos, "%s takes %d argument%s, got %d", name, want, want == 1 ? "" : "s", n);
      int x = add_node(P, op, args[0], args[1], args[2], pos);
      if (x >= 0) P->e->nodes[x].cast = cast;
      return x;
    }
    /* an earlier statement's result? */
    for (int i = P->na - 1; i >= 0; --i)
      if (!strcmp(P->asg[i].name, name)) return P->asg[i].root;
    if (ck_xop_is_constant(name)) { /* constants, never inputs (an input of that name is refused) */
      int n = add_node(P, XOP_CONST, -1, -1, -1, pos);
      if (n < 0) return -1;
      P->e->nodes[n].k = name[0] == 'p' ? 3.14159265358979323846 : name[0] == 'i' ? HUGE_VAL : NAN;
      return n;
    }
    if (P->fixed) {
      bool ok = false;
      for (int i = 0; i < P->nfixed; ++i) ok |= !strcmp(P->fixed[i], name);
      if (!ok) {
        char list[128] = "";
        for (int i = 0; i < P->nfixed; ++i) {
          strncat(list, P->fixed[i], sizeof list - strlen(list) - 3);
          if (i + 1 < P->nfixed) strncat(list, ", ", sizeof list - strlen(list) - 1);
        }
        PFAIL(P, pos, "unknown name '%s' (this expression can use: %s)", name, list);
      }
    }
    int k = add_name(&P->e->in_names, &P->e->in_pos, &P->e->nin, name, pos);
    if (k < 0) PFAIL(P, pos, "out of host memory");
    int n = add_node(P, XOP_INPUT, -1, -1, -1, pos);
    if (n >= 0) P->e->nodes[n].input = k;
    return n;
  }
  if (is_op(P, "^")) PFAIL(P, pos, "'^' is not an operator here (use pow(x, y))");
  PFAIL(P, pos, "expected a number, a name, a call or '(', found %s", tok_desc(P, d, sizeof d));
}

static int p_unary(parser *P) {
  int pos = P->tpos + 1;
  if (is_op(P, "-") || is_op(P, "!") || is_op(P, "+")) {
    char c = P->top[0];
    next(P);
    if (++P->depth > 256) PFAIL(P, pos, "expression nested too deeply (256 levels)");
    int a = p_unary(P);
    --P->depth;
    if (a < 0) return -1;
    if (c == '+') return a;
    /* fold -literal so that -2147483648 and -0.5 stay literals */
    xnode *x = &P->e->nodes[a];
    if (c == '-' && x->op == XOP_CONST) {
      x->k = -x->k;
      x->pos = pos;
      return a;
    }
    return add_node(P, c == '-' ? XOP_NEG : XOP_NOT, a, -1, -1, pos);
  }
  return p_primary(P);
}

typedef struct {
  const char *sym;
  int op;
} binop;
static int p_binary(parser *P, int level);
static const binop LEVELS[][5] = {
    {{"||", XOP_OR}, {0, 0}},
    {{"&&", XOP_AND}, {0, 0}},
    {{"==", XOP_EQ}, {"!=", XOP_NE}, {0, 0}},
    {{"<", XOP_LT}, {"<=", XOP_LE}, {">", XOP_GT}, {">=", XOP_GE}, {0, 0}},
    {{"+", XOP_ADD}, {"-", XOP_SUB}, {0, 0}},
    {{"*", XOP_MUL}, {"/", XOP_DIV}, {"%", XOP_MOD}, {0, 0}},
};
#define NLEVELS ((int)(sizeof LEVELS / sizeof *LEVELS))

static int p_binary(parser *P, int level) {
  if (level == NLEVELS) return p_unary(P);
  int a = p_binary(P, level + 1);
  if (a < 0) return -1;
  for (;;) {
    int op = -1;
    for (const binop *b = LEVELS[level]; b->sym; ++b)
      if (is_op(P, b->sym)) op = b->op;
    if (op < 0) return a;
    int pos = P->tpos + 1;
    next(P);
    int b = p_binary(P, level + 1);
    if (b < 0) return -1;
    if ((a = add_node(P, op, a, b, -1, pos)) < 0) return -1;
  }
}

static int p_expr(parser *P) {
  if (++P->depth > 256) PFAIL(P, P->tpos + 1, "expression nested too deeply (256 levels)");
  int r = p_ternary(P);
  --P->depth;
  return r;
}

static int p_ternary(parser *P) {
  int c = p_binary(P, 0);
  if (c < 0) return -1;
  if (!is_op(P, "?")) return c;
  int pos = P->tpos + 1;
  char d[80];
  next(P);
  int a = p_expr(P);
  if (a < 0) return -1;
  if (!is_op(P, ":")) PFAIL(P, P->tpos + 1, "expected ':' of the '?' at %d, found %s", pos, tok_desc(P, d, sizeof d));
  next(P);
  int b = p_expr(P);
  if (b < 0) return -1;
  return add_node(P, XOP_SELECT, c, a, b, pos);
}

static int p_program(parser *P) {
  char d[80];
  next(P);
  if (P->tk == TK_END) PFAIL(P, 1, "empty expression");
  while (P->tk != TK_END) {
    /* NAME '=' (not '==') starts an assignment */
    int save_p = P->p, save_tpos = P->tpos, stmt_pos = P->tpos + 1;
    char name[64] = "";
    if (P->tk == TK_NAME) {
      memcpy(name, P->tname, sizeof name);
      next(P);
      if (!is_op(P, "=")) { /* not an assignment: rewind */
        P->p = save_p, P->tpos = save_tpos;
        P->tk = TK_NAME;
        memcpy(P->tname, name, sizeof name);
        name[0] = 0;
      } else {
        next(P);
      }
    }
    int root = p_expr(P);
    if (root < 0) return -1;
    const bool bare = !name[0];
    if (bare) {
      if (P->tk != TK_END && !(is_op(P, ";"))) {
        if (is_op(P, "="))
          PFAIL(P, P->tpos + 1, "'=' assigns to a name only (use '==' to compare)");
        PFAIL(P, P->tpos + 1, "expected an operator, ';' or the end, found %s", tok_desc(P, d, sizeof d));
      }
      strcpy(name, "out");
    } else {
      int cast;
      if (ck_xop_lookup(name, &cast) >= 0) PFAIL(P, stmt_pos, "'%s' is a function; pick another output name", name);
      if (ck_xop_is_constant(name)) PFAIL(P, stmt_pos, "'%s' is a constant; pick another output name", name);
    }
    for (int i = 0; i < P->e->nin; ++i)
      if (!strcmp(P->e->in_names[i], name)) {
        if (!P->st) P->st = assign_clash(P->ctx, P->e, name, stmt_pos, bare);
        return -1;
      }
    for (int i = 0; i < P->na; ++i)
      if (!strcmp(P->asg[i].name, name)) PFAIL(P, stmt_pos, "'%s' is assigned twice", name);
    xassign *na = realloc(P->asg, (size_t)(P->na + 1) * sizeof *na);
    if (!na) PFAIL(P, stmt_pos, "out of host memory");
    P->asg = na;
    if (!(na[P->na].name = strdup(name))) PFAIL(P, stmt_pos, "out of host memory");
    na[P->na].pos = stmt_pos, na[P->na].root = root, na[P->na].bare = bare;
    P->na++;
    if (is_op(P, ";")) {
      next(P);
      continue;
    }
    if (P->tk != TK_END) {
      if (is_op(P, "=")) PFAIL(P, P->tpos + 1, "'=' assigns to a name only (use '==' to compare)");
      PFAIL(P, P->tpos + 1, "expected an operator, ';' or the end, found %s", tok_desc(P, d, sizeof d));
    }
  }
  return 0;
}

void ck_expr_free(ck_expr *e) {
  if (!e) return;
  for (int i = 0; i < e->nin; ++i) free(e->in_names[i]);
  for (int i = 0; i < e->nout; ++i) free(e->out_names[i]);
  free(e->in_names);
  free(e->in_pos);
  free(e->out_names);
  free(e->out_root);
  for (int i = 0; i < e->na; ++i) free(e->asg[i].name);
  free(e->asg);
  free(e->nodes);
  free(e->text);
  free(e);
}

ck_status ck_expr_parse(ck_ctx *ctx, const char *what, const char *text, const char *const *fixed, int nfixed,
                        bool single, ck_expr **out) {
  *out = NULL;
  ck_expr *e = calloc(1, sizeof *e);
  if (!e || !(e->text = strdup(text))) {
    free(e);
    return ck_error(ctx, CK_ERR_OOM, "out of host memory");
  }
  snprintf(e->what, sizeof e->what, "%s", what);
  parser P = {.ctx = ctx, .e = e, .s = e->text, .fixed = fixed, .nfixed = nfixed};
  int r = p_program(&P);
  ck_status st = P.st;
  if (r < 0 && !st) st = ck_error(ctx, CK_ERR_INTERNAL, "%s: parse failed", what);
  if (!st) {
    /* outputs: assigned names not starting with '_' (a lone temporary program is an error) */
    for (int i = 0; i < P.na; ++i) {
      if (P.asg[i].name[0] == '_') continue;
      char **nn = realloc(e->out_names, (size_t)(e->nout + 1) * sizeof *nn);
      int *nr = nn ? realloc(e->out_root, (size_t)(e->nout + 1) * sizeof *nr) : NULL;
      if (nn) e->out_names = nn;
      if (!nr) {
        st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
        break;
      }
      e->out_root = nr;
      if (!(nn[e->nout] = strdup(P.asg[i].name))) {
        st = ck_error(ctx, CK_ERR_OOM, "out of host memory");
        break;
      }
      nr[e->nout++] = P.asg[i].root;
    }
    if (!st && e->nout == 0)
      st = ck_expr_error_at(ctx, e, CK_ERR_ARG, 1, "no outputs (names beginning with '_' are temporaries)");
    if (!st && single && e->nout != 1)
      st = ck_expr_error_at(ctx, e, CK_ERR_ARG, 1, "this expression must have exactly one result, it has %d", e->nout);
  }
  e->asg = P.asg, e->na = P.na; /* kept: binding checks the inputs table against them */
  if (st) {
    ck_expr_free(e);
    return st;
  }
  *out = e;
  return CK_OK;
}

/* A name for messages: at most `max` bytes of it, control characters as \ddd (Lua's %q shows them so). */
static void show_name(char *buf, size_t n, const char *name, size_t max) {
  size_t k = 0, i = 0;
  for (; name[i] && i < max && k + 5 < n; ++i) {
    unsigned char c = (unsigned char)name[i];
    if (c < 32 || c == 127) k += (size_t)snprintf(buf + k, n - k, "\\%d", c);
    else buf[k++] = (char)c;
  }
  if (name[i] && k + 4 < n) memcpy(buf + k, "...", 3), k += 3;
  buf[k] = 0;
}

ck_status ck_expr_check_input(ck_ctx *ctx, const ck_expr *e, const char *name) {
  char shown[96];
  show_name(shown, sizeof shown, name, 40);
  bool ident = isalpha((unsigned char)name[0]) || name[0] == '_';
  size_t len = 0;
  for (; name[len]; ++len) ident = ident && (isalnum((unsigned char)name[len]) || name[len] == '_');
  if (!ident)
    return ck_error(ctx, CK_ERR_ARG, "%s: input name \"%s\" is not a name (a letter or '_', then letters, digits or '_')",
                    e->what, shown);
  if (len > XNAME_MAX)
    return ck_error(ctx, CK_ERR_ARG, "%s: input name \"%s\" is longer than %d characters", e->what, shown, XNAME_MAX);
  /* the expression reads these names as the language's own, so such an input could never be read */
  int cast;
  if (ck_xop_is_constant(name))
    return ck_error(ctx, CK_ERR_ARG, "%s: input name '%s' is a constant of the expression language (pi, inf, nan); "
                    "rename the input", e->what, name);
  if (ck_xop_lookup(name, &cast) >= 0)
    return ck_error(ctx, CK_ERR_ARG, "%s: input name '%s' is a function of the expression language; rename the input",
                    e->what, name);
  for (int i = 0; i < e->na; ++i)
    if (!strcmp(e->asg[i].name, name)) return assign_clash(ctx, e, name, e->asg[i].pos, e->asg[i].bare);
  return CK_OK;
}

// ---------------------------------------------------------------- expressions (ck_map.h: the public face of the language)

ck_status ck_expr_compile(ck_ctx *ctx, const char *what, const char *text, const char *const *fixed, int nfixed,
                          bool single, ck_expr **out) {
  return ck_expr_parse(ctx, what, text, fixed, nfixed, single, out);
}
void ck_expr_release(ck_expr *e) { ck_expr_free(e); }
int ck_expr_noutputs(const ck_expr *e) { return e->nout; }
const char *ck_expr_output(const ck_expr *e, int i) { return e->out_names[i]; }
int ck_expr_ninputs(const ck_expr *e) { return e->nin; }
const char *ck_expr_input(const ck_expr *e, int i) { return e->in_names[i]; }

