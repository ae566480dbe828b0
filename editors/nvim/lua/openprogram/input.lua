--[[
The message input under the panel: an ordinary multi-line scratch buffer (`buftype=nofile`), so
typed text never blocks `:qa` and never asks to be saved.

Keys (all configurable with `setup({ input = { keys = {...} } })`):
  <CR>            send (normal mode; in insert mode too unless `input.send_in_insert = false`)
  <S-CR>, <C-j>   new line (insert mode)
  <C-c>           cancel the running turn (normal and insert mode)
  q               close the panel (normal mode)
]]

local M = {}

--- The text in the input buffer, trimmed of surrounding blank lines.
---@param buf integer
---@return string
function M.text(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  while #lines > 0 and vim.trim(lines[1]) == '' do
    table.remove(lines, 1)
  end
  while #lines > 0 and vim.trim(lines[#lines]) == '' do
    table.remove(lines)
  end
  return table.concat(lines, '\n')
end

--- Clear the input (after a send).
---@param buf integer
function M.clear(buf)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '' })
  vim.bo[buf].modified = false
end

--- Send what was typed (slash commands run: see openprogram.slash); keeps insert mode.
---@param buf integer
function M.submit(buf)
  local text = M.text(buf)
  if text == '' then
    return
  end
  M.clear(buf)
  require('openprogram.slash').submit(text) -- a command, a pending /fork, or the message
end

---@param keys string|string[]|false|nil
---@return string[]
local function list(keys)
  if not keys then
    return {}
  end
  if type(keys) == 'string' then
    return { keys }
  end
  return keys
end

--- Create the input buffer with its keymaps.
---@param on_close fun()
---@return integer buf
function M.create(on_close)
  local opts = require('openprogram.config').options.input or {}
  local keys = opts.keys or {}
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  pcall(vim.api.nvim_buf_set_name, buf, 'openprogram://input')
  -- <C-x><C-u>: @file, /command, #buffer (see openprogram.attach)
  vim.bo[buf].completefunc = "v:lua.require'openprogram.attach'.complete"
  local function map(modes, lhs, rhs, desc)
    for _, l in ipairs(list(lhs)) do
      vim.keymap.set(modes, l, rhs, { buffer = buf, nowait = true, silent = true, desc = 'OpenProgram: ' .. desc })
    end
  end
  local send = function()
    M.submit(buf)
  end
  map('n', keys.send or '<CR>', send, 'send the message')
  if opts.send_in_insert ~= false then
    map('i', keys.send or '<CR>', send, 'send the message')
  end
  map('i', keys.newline or { '<S-CR>', '<C-j>' }, function()
    -- a literal line break at the cursor
    local row, col = unpack(vim.api.nvim_win_get_cursor(0))
    local line = vim.api.nvim_get_current_line()
    vim.api.nvim_buf_set_lines(buf, row - 1, row, false, { line:sub(1, col), line:sub(col + 1) })
    vim.api.nvim_win_set_cursor(0, { row + 1, 0 })
  end, 'new line')
  map({ 'n', 'i' }, keys.cancel or '<C-c>', function()
    require('openprogram.chat').cancel()
  end, 'cancel the turn')
  map('n', keys.close or 'q', on_close, 'close the panel')
  -- Typed text is a draft, never a file to save: keep it unmodified so :qa never refuses.
  vim.api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI', 'TextChangedP', 'InsertLeave' }, {
    buffer = buf,
    callback = function()
      vim.bo[buf].modified = false
    end,
  })
  return buf
end

return M
