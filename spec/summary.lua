-- busted output handler: a dot per test while running, then every failure and error in full, the pending
-- (skipped) tests with their reasons, and last the plain line CI reads: "N passed, N failed, N skipped".
return function(options)
  local busted = require 'busted'
  local handler = require 'busted.outputHandlers.base'()

  local function message(el)
    if type(el.message) == 'string' then return el.message end
    if el.message == nil then return 'nil error' end
    local ok, pretty = pcall(require, 'pl.pretty')
    return ok and pretty.write(el.message) or tostring(el.message)
  end

  local function where(el)
    local t = el.element and el.element.trace or el.trace
    return t and t.short_src and (t.short_src .. ':' .. tostring(t.currentline)) or '?'
  end

  handler.testEnd = function(element, parent, status)
    local dot = ({success = '.', failure = 'F', error = 'E', pending = 's'})[status] or '?'
    io.write(dot)
    io.flush()
    return nil, true
  end

  handler.suiteEnd = function()
    io.write('\n')
    for _, f in ipairs(handler.failures) do
      io.write(('\nFAIL %s\n  %s\n%s\n'):format(where(f), f.name, message(f)))
    end
    for _, e in ipairs(handler.errors) do
      io.write(('\nERROR %s\n  %s\n%s\n'):format(where(e), e.name or '', message(e)))
      if options.verbose and e.trace and e.trace.traceback then io.write(e.trace.traceback, '\n') end
    end
    local reasons = {}
    for _, p in ipairs(handler.pendings) do
      local why = type(p.message) == "string" and p.message:gsub("^[^\n]-:%d+: ", "") or p.name
      reasons[why] = (reasons[why] or 0) + 1
    end
    for why, n in pairs(reasons) do io.write(('skipped %d: %s\n'):format(n, why)) end
    io.write(('%d passed, %d failed, %d skipped\n'):format(#handler.successes,
      #handler.failures + #handler.errors, #handler.pendings))
    io.flush()
    return nil, true
  end

  busted.subscribe({'test', 'end'}, handler.testEnd, {predicate = handler.cancelOnPending})
  busted.subscribe({'suite', 'end'}, handler.suiteEnd)
  return handler
end
