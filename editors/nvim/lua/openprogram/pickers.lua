--[[
Model and permission-mode pickers (`:OpenProgramModel`, `:OpenProgramMode`), and the global
keymaps of `setup({ keymaps = true })` with which-key group names.

A choice is sent to the running server with `workspace/didChangeConfiguration` (the server takes
the same fields as its initializationOptions) and kept in the options, so a restarted server
starts with it; the chosen model also rides on every `openprogram/chat`.
]]

local M = {}

--- The model picked in this Neovim (sent with every openprogram/chat); nil: the server's choice.
---@type string?
M.chosen = nil

M.MODES = { 'ask', 'accept-edits', 'plan', 'bypass' }

local MODE_HELP = {
  ask = 'reads run; edits and commands ask',
  ['accept-edits'] = 'edits run; commands ask',
  plan = 'read-only: every change is refused',
  bypass = 'nothing asks (registered gates still apply)',
}

--- The permission mode the panel shows.
---@return string
function M.mode()
  return require('openprogram.config').options.permission_mode or 'ask'
end

--- Push one setting to the running server (no-op when none runs).
---@param settings table
local function push(settings)
  local c = require('openprogram.client').find()
  if c then
    c:notify('workspace/didChangeConfiguration', { settings = { openprogram = settings } })
  end
end

--- Set the permission mode (validated).
---@param mode string
---@return boolean ok
function M.set_mode(mode)
  if not vim.tbl_contains(M.MODES, mode) then
    vim.notify(('openprogram: %q is not a permission mode (%s)'):format(mode, table.concat(M.MODES, ', ')),
      vim.log.levels.ERROR)
    return false
  end
  require('openprogram.config').options.permission_mode = mode
  push({ permissionMode = mode })
  require('openprogram.panel').update_winbar()
  return true
end

--- Set the model for the next turns.
---@param model string
function M.set_model(model)
  model = vim.trim(model)
  if model == '' then
    return
  end
  require('openprogram.config').options.model = model
  M.chosen = model
  push({ model = model })
  require('openprogram.panel').update_winbar()
end

--- Pick a permission mode (or set `mode` directly: false when it is not a mode).
---@param mode? string
---@return boolean?
function M.pick_mode(mode)
  if mode and mode ~= '' then
    return M.set_mode(mode)
  end
  local current = M.mode()
  require('openprogram.choose').select(M.MODES, {
    prompt = 'Permission mode',
    kind = 'openprogram.mode',
    format_item = function(m)
      return ('%s %s · %s'):format(m == current and '*' or ' ', m, MODE_HELP[m])
    end,
  }, function(choice)
    if choice then
      M.set_mode(choice)
    end
  end)
end

--- Models the picker offers: the current one, the configured list, the offline model.
---@return string[]
function M.models()
  local opts = require('openprogram.config').options
  local out, seen = {}, {}
  for _, m in ipairs(vim.list_extend({ opts.model or 'offline' }, vim.list_extend(vim.deepcopy(opts.models or {}),
    { 'offline' }))) do
    if type(m) == 'string' and not seen[m] then
      seen[m] = true
      table.insert(out, m)
    end
  end
  return out
end

--- Pick a model (or set `model` directly); "Other…" asks for any model id.
---@param model? string
function M.pick_model(model)
  if model and model ~= '' then
    M.set_model(model)
    return
  end
  local current = require('openprogram.config').options.model or 'offline'
  local items = vim.list_extend(M.models(), { false })
  local choose = require('openprogram.choose')
  choose.select(items, {
    prompt = 'Model',
    kind = 'openprogram.model',
    format_item = function(m)
      return m and ((m == current and '* ' or '  ') .. m) or '  Other… (openai:MODEL, anthropic:MODEL)'
    end,
  }, function(choice)
    if choice then
      M.set_model(choice)
    elseif choice == false then
      choose.input('model', { prompt = 'Model id: ', default = current }, function(input)
        if input then
          M.set_model(input)
        end
      end)
    end
  end)
end

--- Define the global keymaps (`setup({ keymaps = true | {...} })`).
---@param km openprogram.KeymapOpts|false|nil
function M.keymaps(km)
  if type(km) ~= 'table' then
    return
  end
  local op = require('openprogram')
  local actions = {
    toggle = { op.toggle, 'toggle the panel' },
    sessions = { op.sessions, 'sessions' },
    branches = { op.branches, 'branches' },
    checkpoints = { op.checkpoints, 'checkpoints' },
    model = { function() M.pick_model() end, 'model' },
    mode = { function() M.pick_mode() end, 'permission mode' },
    cancel = { op.cancel, 'cancel the turn' },
    approve = { function() require('openprogram.approval_float').focus() end, 'answer the waiting approval' },
  }
  local prefix = km.prefix or ''
  for name, action in pairs(actions) do
    local key = km[name]
    if type(key) == 'string' and key ~= '' then
      vim.keymap.set('n', prefix .. key, action[1], { desc = 'OpenProgram: ' .. action[2] })
    end
  end
  local ok, wk = pcall(require, 'which-key')
  if ok and prefix ~= '' and type(wk.add) == 'function' then
    wk.add({ { prefix, group = 'OpenProgram' } })
  end
end

return M
