/* placeholder while the ladder is written */
#include "la_int.h"
ck_status la_lu_variant(la_env *e, ck_la_job *j) { return la_exec(e, j); }
