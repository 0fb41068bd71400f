# mk/io.mk — file formats (src/io/, src/lua/l_io.c; docs/io.md). Included by the Makefile.
# .npy needs nothing. .npz uses libzip and .mat libmatio when pkg-config finds them; without them the module
# still builds and loads, and those formats raise an error saying the build lacked the library.
# .mat also reads the head of each variable itself (zlib for -v7's compressed ones: io_mat.c says why); libmatio
# links zlib anyway. The specs check files against NumPy and GNU Octave themselves, so `make test` installs them.
DEBS += pkg-config libzip-dev libmatio-dev zlib1g-dev python3-numpy octave

PKG_CONFIG ?= pkg-config
IO_ZIP_CFLAGS := $(shell $(PKG_CONFIG) --exists libzip 2>/dev/null && echo -DCK_HAVE_LIBZIP $$($(PKG_CONFIG) --cflags libzip))
IO_ZIP_LIBS := $(if $(IO_ZIP_CFLAGS),$(shell $(PKG_CONFIG) --libs libzip))
IO_MAT_CFLAGS := $(shell $(PKG_CONFIG) --exists matio zlib 2>/dev/null && echo -DCK_HAVE_MATIO $$($(PKG_CONFIG) --cflags matio zlib))
IO_MAT_LIBS := $(if $(IO_MAT_CFLAGS),$(shell $(PKG_CONFIG) --libs matio zlib))

$(BUILD)/src/io/io_npz.o: CK_CFLAGS += $(IO_ZIP_CFLAGS)
$(BUILD)/src/io/io_mat.o: CK_CFLAGS += $(IO_MAT_CFLAGS)
LDLIBS += $(IO_ZIP_LIBS) $(IO_MAT_LIBS)

# Rebuild the library-backed files when what was found changes (e.g. after `make test` installed it).
IO_FOUND := zip:$(if $(IO_ZIP_CFLAGS),yes,no) matio:$(if $(IO_MAT_CFLAGS),yes,no)
$(BUILD)/io.found: FORCE_IO
	@mkdir -p $(BUILD); echo '$(IO_FOUND)' | cmp -s - $@ || echo '$(IO_FOUND)' >$@
$(BUILD)/src/io/io_npz.o $(BUILD)/src/io/io_mat.o cukern/core.so: $(BUILD)/io.found
.PHONY: FORCE_IO
FORCE_IO:
