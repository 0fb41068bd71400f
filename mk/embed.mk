# mk/embed.mk — the embedding example: examples/embed_host.c, an application that embeds Lua 5.4 and
# cukern through src/cukern.h, linked against cukern's objects and Lua 5.4 (the static library where there
# is one, so the program runs from anywhere). `make embed` builds it and runs it on this checkout;
# spec/embed_spec.lua does the same from `make test`.
EMBED_BIN := $(BUILD)/embed_host
# (beside LUA_INCDIR too: Debian's layout, also as ../shared/gpu/pack-lua.sh packs it for the GPU host)
EMBED_LUALIB ?= $(firstword $(wildcard $(LUA_LIBDIR)/liblua5.4.a $(dir $(LUA_INCDIR))../lib/x86_64-linux-gnu/liblua5.4.a \
                  /usr/lib/x86_64-linux-gnu/liblua5.4.a \
                  /usr/lib/$(shell gcc -print-multiarch 2>/dev/null)/liblua5.4.a /usr/local/lib/liblua5.4.a \
                  /usr/local/lib/liblua.a) -llua5.4)

$(EMBED_BIN): examples/embed_host.c examples/embed_util.h src/cukern.h $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CK_CFLAGS) -I$(LUA_INCDIR) $(LUA_MULTIARCH) -o $@ examples/embed_host.c $(OBJ) $(EMBED_LUALIB) $(LDLIBS)

.PHONY: embed
embed: $(EMBED_BIN)
	$(EMBED_BIN) $(CURDIR)

# The DLPack engine (examples/engine_dlpack.c, issue 36): needs dlpack/dlpack.h (mk/dlpack.mk); spec/embed_spec.lua
# builds and runs it when the header is there.
ENGINE_BIN := $(BUILD)/engine_dlpack
$(ENGINE_BIN): examples/engine_dlpack.c examples/embed_util.h src/cukern.h $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CK_CFLAGS) $(DLPACK_CFLAGS) -I$(LUA_INCDIR) $(LUA_MULTIARCH) -o $@ examples/engine_dlpack.c $(OBJ) $(EMBED_LUALIB) $(LDLIBS)

# The frame loop (examples/frame_loop.c, issue 36): upload, a script's elementwise chain and sum, download, each
# frame; serial against overlapped frame time.
FRAME_BIN := $(BUILD)/frame_loop
$(FRAME_BIN): examples/frame_loop.c examples/embed_util.h src/cukern.h $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CK_CFLAGS) -I$(LUA_INCDIR) $(LUA_MULTIARCH) -o $@ examples/frame_loop.c $(OBJ) $(EMBED_LUALIB) $(LDLIBS)
