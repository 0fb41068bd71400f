# mk/linalg.mk — linear algebra (issue 34; src/linalg/, docs/api.md "Linear algebra"). Included by the Makefile.
# Nothing to link: LAPACKE (host arrays) and cuSOLVER (GPU arrays) are loaded at run time on first use
# (src/host/host_linalg.c, kernels/linalg/cusolver_dl.c say why), so core.so builds and loads without them. The
# specs need LAPACKE for host arrays and GNU Octave (mk/io.mk) to check against, so `make test` installs it.
DEBS += liblapacke
