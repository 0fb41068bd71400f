# mk/dlpack.mk — DLPack in the embedding C API (src/lua/l_dlpack.c, issue 36): Debian's libdlpack-dev has the header
# (header-only). Without it the module still builds, and cukern_push_dlpack / cukern_to_dlpack say what is missing.
DEBS += libdlpack-dev
# (DLPACK_INCDIR=dir: a dlpack/dlpack.h elsewhere, e.g. carried to a machine without the package)
DLPACK_H := $(firstword $(wildcard $(if $(DLPACK_INCDIR),$(DLPACK_INCDIR)/dlpack/dlpack.h) /usr/include/dlpack/dlpack.h \
              /usr/local/include/dlpack/dlpack.h))
DLPACK_CFLAGS := $(if $(DLPACK_H),-DCK_HAVE_DLPACK -I$(patsubst %/dlpack/dlpack.h,%,$(DLPACK_H)))
$(BUILD)/src/lua/l_dlpack.o: CK_CFLAGS += $(DLPACK_CFLAGS)
# (rebuilt when the header appears or goes, e.g. after `make test` installed it)
$(BUILD)/dlpack.found: FORCE_DLPACK
	@mkdir -p $(BUILD); echo '$(DLPACK_H)' | cmp -s - $@ || echo '$(DLPACK_H)' >$@
$(BUILD)/src/lua/l_dlpack.o: $(BUILD)/dlpack.found
.PHONY: FORCE_DLPACK
FORCE_DLPACK:
