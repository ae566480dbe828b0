--[[
Waiting until the user is idle before a prompt that takes the keyboard (`approvals = { ui =
'select' }`: `vim.ui.select`, whose default is a blocking `inputlist`, and `vim.ui.input`).
Idle means Normal mode, nothing waiting in the typeahead, and no key for `IDLE_MS`, so keys
typed for another window (`ohello world<Esc>`, `:wincmd t<CR>`) are never read as an answer.

  require('openprogram.idle').run(function() vim.ui.select(...) end)
]]

local M = {}

--- How long without a key counts as idle (ms).
M.IDLE_MS = 600

local last_key = 0 ---@type integer vim.uv.now() of the last key typed
local ns ---@type integer?

local function watch()
  if ns then
    return
  end
  ns = vim.api.nvim_create_namespace('openprogram.idle')
  vim.on_key(function()
    last_key = vim.uv.now()
  end, ns)
end

--- Whether a prompt may take the keyboard now.
---@return boolean
function M.is_idle()
  local m = vim.api.nvim_get_mode()
  if m.mode ~= 'n' or m.blocking then
    return false
  end
  if vim.fn.getchar(1) ~= 0 then -- typeahead not read yet (peeked, not consumed)
    return false
  end
  return vim.uv.now() - last_key >= M.IDLE_MS
end

--- Run `fn` once the user is idle (at once when already idle). Returns a function that cancels
--- the wait (the request was withdrawn meanwhile).
---@param fn fun()
---@return fun() cancel
function M.run(fn)
  watch()
  local done = false
  local timer = assert(vim.uv.new_timer())
  local function stop()
    done = true
    if not timer:is_closing() then
      timer:stop()
      timer:close()
    end
  end
  local function try()
    if done then
      return
    end
    if M.is_idle() then
      stop()
      fn()
    end
  end
  timer:start(0, 100, vim.schedule_wrap(try))
  return stop
end

-- Start counting keys when the plugin loads, so the first prompt knows when the user last typed.
watch()

return M
