--[[
Options of the plugin: defaults, validation, and the initializationOptions sent to the server.

Example:
  require('openprogram').setup({ model = 'anthropic:claude-sonnet-4-5', panel = { width = 70 } })
]]

---@class openprogram.PanelOpts
---@field position? 'right'|'left' Side of the editor the panel opens on.
---@field width? integer Columns of the panel window.
---@field input_height? integer Lines of the input (prompt buffer) window under the panel.

---@class openprogram.Opts
---@field cmd? string[] Command that starts the language server.
---@field model? string Model id, e.g. 'offline', 'openai:gpt-4o', 'scripted:/path/to/file.json'.
---@field permission_mode? 'ask'|'accept-edits'|'plan'|'bypass' Tool approval mode.
---@field root_markers? string[] Files that mark the workspace root.
---@field init_options? table Extra initializationOptions merged into the generated ones.
---@field panel? openprogram.PanelOpts
---@field approval_timeout? number Seconds the server waits for an approval or answer (server default: 600).

---@class openprogram.Config: openprogram.Opts
---@field cmd string[]
---@field panel openprogram.PanelOpts
---@field root_markers string[]

local M = {}

---@type openprogram.Config
M.defaults = {
  cmd = { 'openprogram-lsp', 'serve' },
  model = nil,
  permission_mode = nil,
  root_markers = { '.git', '.openprogram' },
  init_options = {},
  panel = { position = 'right', width = 60, input_height = 3 },
  approval_timeout = nil,
}

local PERMISSION_MODES = { ask = true, ['accept-edits'] = true, plan = true, bypass = true }

---@type openprogram.Config
M.options = vim.deepcopy(M.defaults)

--- Merge user options over the defaults; bad values fall back to defaults with a warning.
---@param opts? openprogram.Opts
---@return openprogram.Config
function M.setup(opts)
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  local problems = {}
  if type(merged.cmd) == 'string' then
    merged.cmd = { merged.cmd }
  end
  if type(merged.cmd) ~= 'table' or #merged.cmd == 0 then
    table.insert(problems, 'cmd must be a list of strings')
    merged.cmd = vim.deepcopy(M.defaults.cmd)
  end
  if merged.permission_mode ~= nil and not PERMISSION_MODES[merged.permission_mode] then
    table.insert(problems, ('permission_mode %q is not one of ask, accept-edits, plan, bypass'):format(
      tostring(merged.permission_mode)
    ))
    merged.permission_mode = nil
  end
  local pos = merged.panel.position
  if pos ~= 'right' and pos ~= 'left' then
    table.insert(problems, ('panel.position %q must be "right" or "left"'):format(tostring(pos)))
    merged.panel.position = 'right'
  end
  if type(merged.panel.width) ~= 'number' or merged.panel.width < 20 then
    table.insert(problems, 'panel.width must be a number >= 20')
    merged.panel.width = M.defaults.panel.width
  end
  if #problems > 0 then
    vim.notify('openprogram: ' .. table.concat(problems, '; ') .. ' (using defaults)', vim.log.levels.WARN)
  end
  M.options = merged
  return merged
end

--- Milliseconds a prompt may wait when it has to block (no coroutine).
---@return integer
function M.prompt_wait_ms()
  return math.floor((M.options.approval_timeout or 600) * 1000)
end

--- The initializationOptions the server receives ({model, permissionMode, ...}).
---@param cfg? openprogram.Config
---@return table
function M.init_options(cfg)
  cfg = cfg or M.options
  local out = vim.deepcopy(cfg.init_options or {})
  out.model = cfg.model or out.model
  out.permissionMode = cfg.permission_mode or out.permissionMode
  if cfg.approval_timeout then
    out.approvalTimeout = cfg.approval_timeout
    out.questionTimeout = out.questionTimeout or cfg.approval_timeout
  end
  out.client = out.client or 'openprogram.nvim'
  return out
end

return M
