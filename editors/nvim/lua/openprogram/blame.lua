--[[
Agent blame in file buffers: once the openprogram server runs for the workspace, its file
buffers are attached to it (those already open as soon as it starts), so the server sees
their unsaved text (document sync: the agent reads what you see and never writes under your
unsaved edits) and its code lenses ("edited by the agent in turn 3 ·
branch `retry` · approved"), hovers (`K`) and code actions ("Restore this hunk to before the
agent's edit", `vim.lsp.buf.code_action()`) work there. Lenses refresh on entering and writing a
buffer, after each turn and after every restore or outside change the panel reloads buffers
for (a restored hunk's lens goes with it). `setup({ blame = { enabled = false } })` turns the lenses off
(buffers stay attached); `blame = { attach = false }` does not attach buffers at all.
]]

local M = {}

local group = nil

---@param buf integer
---@return boolean
local function is_file(buf)
  return vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' and vim.api.nvim_buf_get_name(buf) ~= ''
end

--- Attach a file buffer of the workspace to the running server and refresh its lenses.
---@param buf integer
function M.attach(buf)
  local cfg = require('openprogram.config').options.blame or {}
  if cfg.attach == false or not is_file(buf) then
    return
  end
  local client = require('openprogram.client')
  local root = client.root()
  local name = vim.fs.normalize(vim.api.nvim_buf_get_name(buf))
  if name:sub(1, #root + 1) ~= root .. '/' then
    return
  end
  local c = client.find(root)
  if not c or not c.initialized then
    return -- blame never starts the server by itself
  end
  if not vim.lsp.buf_is_attached(buf, c.id) then
    vim.lsp.buf_attach_client(buf, c.id)
  end
  if cfg.enabled ~= false then
    pcall(vim.lsp.codelens.refresh, { bufnr = buf })
  end
end

--- Refresh the lenses of every attached file buffer (after a turn or a restore).
function M.refresh_all()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if is_file(buf) then
      M.attach(buf)
    end
  end
end

--- Install the autocommands (idempotent).
function M.setup()
  if group then
    return
  end
  group = vim.api.nvim_create_augroup('openprogram.blame', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'BufWritePost' }, {
    group = group,
    callback = function(a)
      M.attach(a.buf)
    end,
  })
  vim.api.nvim_create_autocmd('User', {
    group = group,
    pattern = 'OpenProgramTurnDone',
    callback = function()
      vim.schedule(M.refresh_all)
    end,
  })
end

return M
