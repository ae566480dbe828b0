--[[
Our `vim.ui.select` / `vim.ui.input` calls (sessions, branches, models, modes), made safe for
picker plugins (dressing, telescope-ui-select, fzf-lua, snacks) that outlive what they were
opened for:

- the callback acts once: a second call (an item, then nil on close) is ignored;
- it runs scheduled, never inside a fast event or textlock (some pickers call back from one);
- a picker replaced by a newer one of the same kind, or whose `valid()` check fails (the panel
  shows another session now), is out of date: choosing in it does nothing and says so;
- an error in what the choice does is reported with vim.notify, not thrown into the picker;
- dressing restores the cursor of the window it was opened from before calling back, and
  throws when that row no longer exists: while one of ours is open, a redraw of the panel keeps
  at least as many lines as the row it will restore (`min_lines`; approvals and questions,
  which settle their own callbacks, `pin` their row too).

  require('openprogram.choose').select(items, { kind = 'openprogram.branch', ... }, on_choice,
    function() return panel.state.session_id == sid or 'the panel shows another session now' end)
]]

local M = {}

---@type table<string, integer> kind -> generation of its newest picker
local gens = {}

---@class openprogram.PinnedRow
---@field kind string the picker's kind
---@field win integer the window current when the picker opened
---@field row integer its cursor row then

---@type openprogram.PinnedRow[]
local pinned = {}

--- Remember the row a picker of `kind` will restore (a newer picker of the kind replaces it,
--- so one that never calls back does not pin the row for ever).
---@param kind string
---@return openprogram.PinnedRow
function M.pin(kind)
  for i = #pinned, 1, -1 do
    if pinned[i].kind == kind then
      table.remove(pinned, i)
    end
  end
  local win = vim.api.nvim_get_current_win()
  local entry = { kind = kind, win = win, row = vim.api.nvim_win_get_cursor(win)[1] }
  table.insert(pinned, entry)
  return entry
end

--- Forget a pinned row (its picker called back).
---@param entry openprogram.PinnedRow
function M.unpin(entry)
  for i, e in ipairs(pinned) do
    if e == entry then
      table.remove(pinned, i)
      return
    end
  end
end

--- The fewest lines `buf` may have while pickers opened from a window showing it are open.
---@param buf integer
---@return integer
function M.min_lines(buf)
  local n = 0
  for _, e in ipairs(pinned) do
    if vim.api.nvim_win_is_valid(e.win) and vim.api.nvim_win_get_buf(e.win) == buf then
      n = math.max(n, e.row)
    end
  end
  return n
end

---@param msg string
local function say(msg)
  vim.notify('openprogram: ' .. msg, vim.log.levels.WARN)
end

--- The once-only, scheduled, checked callback for a picker of `kind`.
---@param kind string
---@param what string what the picker is for (in messages)
---@param act fun(...: any)
---@param valid? fun(): (boolean|string)
---@return fun(...: any)
local function guarded(kind, what, act, valid)
  gens[kind] = (gens[kind] or 0) + 1
  local gen = gens[kind]
  local settled = false
  local row = M.pin(kind)
  return function(...)
    if settled then
      return
    end
    settled = true
    local args = vim.F.pack_len(...)
    vim.schedule(function()
      M.unpin(row)
      local chose = args[1] ~= nil
      if gen ~= gens[kind] then
        if chose then
          say(('the %s picker was out of date (a newer one was opened); nothing was done'):format(what))
        end
        return
      end
      local ok = valid == nil or valid()
      if chose and ok ~= true then
        say(('the %s picker was out of date (%s); nothing was done'):format(what,
          type(ok) == 'string' and ok or 'things changed meanwhile'))
        return
      end
      local done, err = xpcall(act, debug.traceback, vim.F.unpack_len(args))
      if not done then
        vim.notify(('openprogram: %s failed: %s'):format(what, tostring(err)), vim.log.levels.ERROR)
      end
    end)
  end
end

--- `vim.ui.select` with a guarded callback (see the module comment).
---@param items any[]
---@param opts table vim.ui.select options; `kind` names the picker
---@param on_choice fun(item: any?, idx: integer?)
---@param valid? fun(): (boolean|string) true while a choice still applies, else why not
function M.select(items, opts, on_choice, valid)
  local kind = opts.kind or 'openprogram'
  vim.ui.select(items, opts, guarded(kind, (kind:gsub('^openprogram%.', '')), on_choice, valid))
end

--- `vim.ui.input` with a guarded callback (`kind` names it for staleness and messages).
---@param kind string
---@param opts table vim.ui.input options
---@param on_confirm fun(text: string?)
---@param valid? fun(): (boolean|string)
function M.input(kind, opts, on_confirm, valid)
  vim.ui.input(opts, guarded('input.' .. kind, kind, on_confirm, valid))
end

return M
