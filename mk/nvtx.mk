# mk/nvtx.mk — the NVTX injection library of spec/nvtx_spec.lua (spec/c/nvtx_log.c, issue 36): it records the ranges
# cukern opens, so the spec checks CUKERN_NVTX's names without a profiler or a GPU.
$(BUILD)/nvtx_log.so: spec/c/nvtx_log.c
	@mkdir -p $(dir $@)
	$(CC) $(CK_CFLAGS) -shared -o $@ $<
