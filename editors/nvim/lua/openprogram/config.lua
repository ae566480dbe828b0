--[[
Options of the plugin: defaults, validation, and the initializationOptions sent to the server.

Example:
  require('openprogram').setup({ model = 'anthropic:claude-sonnet-4-5', panel = { width = 70 } })
]]

---@class openprogram.PanelOpts
---@field position? 'right'|'left'|'bottom'|'float' Where the panel opens.
---@field width? number Width of a side or float panel: a fraction of the screen (0.35) or columns (60).
---@field height? number Height of a bottom or float panel: a fraction of the screen or lines.
---@field input_height? integer Lines of the input window under the panel.

---@class openprogram.InputOpts
---@field send_in_insert? boolean <CR> sends in insert mode too (default true; then <S-CR>/<C-j> break lines).
---@field keys? {send?: string|string[], newline?: string|string[], cancel?: string|string[], close?: string|string[]}

---@class openprogram.KeymapOpts
---@field prefix? string Prefix of the global keymaps (default '<leader>o'); false/nil keymaps = none.
---@field toggle? string|false
---@field sessions? string|false
---@field branches? string|false
---@field checkpoints? string|false
---@field model? string|false
---@field mode? string|false
---@field cancel? string|false
---@field approve? string|false

---@class openprogram.Opts
---@field cmd? string[] Command that starts the language server.
---@field model? string Model id, e.g. 'offline', 'openai:gpt-4o', 'scripted:/path/to/file.json'.
---@field permission_mode? 'ask'|'accept-edits'|'plan'|'bypass' Tool approval mode.
---@field root_markers? string[] Files that mark the workspace root.
---@field init_options? table Extra initializationOptions merged into the generated ones.
---@field panel? openprogram.PanelOpts
---@field input? openprogram.InputOpts
---@field keymaps? openprogram.KeymapOpts|false Global keymaps (off unless given; `true` takes the defaults).
---@field approvals? {ui?: 'float'|'select'} How approvals ask: our float with the whole diff (default) or vim.ui.select.
---@field models? string[] Models the :OpenProgramModel picker offers besides the current one.
---@field approval_timeout? number Seconds the server waits for an approval or answer (server default: 600).
---@field history_page? integer Messages the panel loads at a time; older pages load at its top (200).
---@field mcp_servers? table<string, table> MCP servers, as in .mcp.json: { name = { command = 'x', args = {} } | { type = 'http', url = '...' } }.
---@field disabled_tools? string[] Tool-name patterns never offered to the model (e.g. 'mcp__github__*').
---@field connect? integer|string Attach to a running `openprogram-lsp serve --tcp`: its port, or its run file.
---@field providers? table<'openai'|'anthropic', {base_url?: string, api_key_env?: string, api_key_command?: string}> Base URL and where the key comes from (never the key).
---@field switch_code? 'ask'|'always'|'never' Whether switching branch also switches the workspace's code ('ask': once, the answer remembered).
---@field blame? {enabled?: boolean, attach?: boolean} Agent blame: code lenses and hovers on agent-written lines (`attach`: attach the server to the workspace's file buffers).
---@field rules? {tool: string, decision: 'allow'|'deny', pattern?: string}[] Approval rules you write yourself (fnmatch patterns); :OpenProgramRules lists them and can remove one.
---@field clipboard_image? string[] Command printing the clipboard's image for `:OpenProgramImage` with no file (default: wl-paste, xclip or pngpaste, the first found).

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
  panel = { position = 'right', width = 0.35, height = 0.35, input_height = 3 },
  input = { send_in_insert = true, keys = {} },
  keymaps = false,
  approvals = { ui = 'float' },
  models = {},
  approval_timeout = nil,
  mcp_servers = nil,
  disabled_tools = nil,
  connect = nil,
  providers = nil,
  history_page = 200,
  switch_code = 'ask',
  blame = { enabled = true, attach = true },
  rules = nil,
  clipboard_image = nil,
}

--- The keys of the global keymaps when `keymaps = true` (each after the prefix).
M.default_keymaps = {
  prefix = '<leader>o',
  toggle = 'o',
  sessions = 's',
  branches = 'b',
  checkpoints = 'c',
  model = 'm',
  mode = 'p',
  cancel = 'x',
  approve = 'a',
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
  if merged.mcp_servers ~= nil and type(merged.mcp_servers) ~= 'table' then
    table.insert(problems, 'mcp_servers must be a table of name = definition')
    merged.mcp_servers = nil
  end
  if merged.disabled_tools ~= nil and type(merged.disabled_tools) ~= 'table' then
    table.insert(problems, 'disabled_tools must be a list of patterns')
    merged.disabled_tools = nil
  end
  if merged.providers ~= nil then
    local ok, why = M.check_providers(merged.providers)
    if not ok then
      table.insert(problems, why)
      merged.providers = nil
    end
  end
  if merged.rules ~= nil then
    local ok = type(merged.rules) == 'table'
    for _, r in ipairs(ok and merged.rules or {}) do
      ok = ok and type(r) == 'table' and type(r.tool) == 'string'
        and (r.decision == 'allow' or r.decision == 'deny')
        and (r.pattern == nil or type(r.pattern) == 'string')
    end
    if not ok then
      table.insert(problems, "rules must be a list of { tool = '...', decision = 'allow'|'deny', pattern = '...' }")
      merged.rules = nil
    end
  end
  local clip = merged.clipboard_image
  if clip ~= nil and (type(clip) ~= 'table' or #clip == 0 or not vim.iter(clip):all(function(a)
    return type(a) == 'string'
  end)) then
    table.insert(problems, "clipboard_image must be a command as a list of strings, e.g. { 'wl-paste', '--type', 'image/png' }")
    merged.clipboard_image = nil
  end
  local pos = merged.panel.position
  if pos ~= 'right' and pos ~= 'left' and pos ~= 'bottom' and pos ~= 'float' then
    table.insert(problems, ('panel.position %q must be "right", "left", "bottom" or "float"'):format(tostring(pos)))
    merged.panel.position = 'right'
  end
  for _, key in ipairs({ 'width', 'height' }) do
    local v = merged.panel[key]
    if type(v) ~= 'number' or v <= 0 or (v > 1 and v < 10) then
      table.insert(problems, ('panel.%s must be a fraction of the screen (0-1) or a count >= 10'):format(key))
      merged.panel[key] = M.defaults.panel[key]
    end
  end
  local ui = type(merged.approvals) == 'table' and merged.approvals.ui or nil
  if ui ~= 'float' and ui ~= 'select' then
    table.insert(problems, 'approvals.ui must be "float" or "select"')
    merged.approvals = { ui = 'float' }
  end
  if merged.keymaps == true then
    merged.keymaps = vim.deepcopy(M.default_keymaps)
  elseif type(merged.keymaps) == 'table' then
    merged.keymaps = vim.tbl_extend('keep', merged.keymaps, M.default_keymaps)
  end
  local sc = merged.switch_code
  if sc ~= 'ask' and sc ~= 'always' and sc ~= 'never' then
    table.insert(problems, ('switch_code %q must be "ask", "always" or "never"'):format(tostring(sc)))
    merged.switch_code = 'ask'
  end
  if type(merged.blame) ~= 'table' then
    table.insert(problems, 'blame must be a table { enabled = true, attach = true }')
    merged.blame = vim.deepcopy(M.defaults.blame)
  end
  if merged.connect ~= nil and type(merged.connect) ~= 'number' and type(merged.connect) ~= 'string' then
    table.insert(problems, 'connect must be a port number or the path of a run file')
    merged.connect = nil
  end
  local page = merged.history_page
  if type(page) ~= 'number' or page < 1 or page > 10000 or page % 1 ~= 0 then
    table.insert(problems, 'history_page must be a whole number from 1 to 10000')
    merged.history_page = M.defaults.history_page
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

--- The state root of the server: `$OPENPROGRAM_HOME`, else `${XDG_DATA_HOME:-~/.local/share}/openprogram-lsp`.
---@return string
function M.state_home()
  local home = vim.env.OPENPROGRAM_HOME
  if home and home ~= '' then
    return home
  end
  local data = vim.env.XDG_DATA_HOME
  if not data or data == '' then
    data = vim.fs.joinpath(vim.env.HOME or '~', '.local', 'share')
  end
  return vim.fs.joinpath(data, 'openprogram-lsp')
end

--- Port and token of the running `serve --tcp` that `connect` names (its run file).
---@param connect integer|string
---@return {port: integer, token: string}? attachment
---@return string? err
function M.attachment(connect)
  local file = tostring(connect)
  if file:match('^%d+$') then
    file = vim.fs.joinpath(M.state_home(), 'run', file .. '.json')
  end
  local fd = io.open(file, 'r')
  if not fd then
    return nil, ('cannot read the server run file %s'):format(file)
  end
  local text = fd:read('*a')
  fd:close()
  local ok, data = pcall(vim.json.decode, text)
  if not ok or type(data) ~= 'table' or type(data.port) ~= 'number' or type(data.token) ~= 'string' then
    return nil, ('%s is not an openprogram-lsp run file'):format(file)
  end
  return { port = data.port, token = data.token }, nil
end

local PROVIDER_KEYS = { base_url = true, api_key_env = true, api_key_command = true }

--- Whether `providers` is { openai|anthropic = { base_url?, api_key_env?, api_key_command? } }.
---@param providers any
---@return boolean ok
---@return string? why
function M.check_providers(providers)
  if type(providers) ~= 'table' then
    return false, 'providers must be a table: { openai = { base_url = ..., api_key_env = ... } }'
  end
  for name, p in pairs(providers) do
    if name ~= 'openai' and name ~= 'anthropic' then
      return false, ('providers.%s: only openai and anthropic'):format(tostring(name))
    end
    if type(p) ~= 'table' then
      return false, ('providers.%s must be a table'):format(name)
    end
    for key, value in pairs(p) do
      if not PROVIDER_KEYS[key] then
        return false, ('providers.%s.%s is not a setting (base_url, api_key_env, api_key_command; never the key)'):format(name, tostring(key))
      elseif type(value) ~= 'string' then
        return false, ('providers.%s.%s must be a string'):format(name, key)
      end
    end
    if p.base_url and not p.base_url:match('^https?://') then
      return false, ('providers.%s.base_url must be an http(s) URL'):format(name)
    end
    if p.api_key_env and not p.api_key_env:match('^[%a_][%w_]*$') then
      return false, ('providers.%s.api_key_env must be a variable name, not the key'):format(name)
    end
  end
  return true, nil
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
  if cfg.mcp_servers then
    out.mcpServers = cfg.mcp_servers
  end
  if cfg.disabled_tools then
    out.disabledTools = cfg.disabled_tools
  end
  if cfg.providers then
    local providers = {}
    for name, p in pairs(cfg.providers) do
      providers[name] = { baseUrl = p.base_url, apiKeyEnv = p.api_key_env, apiKeyCommand = p.api_key_command }
    end
    out.providers = providers
  end
  out.blame = out.blame or { enabled = cfg.blame == nil or cfg.blame.enabled ~= false }
  if cfg.rules then
    out.rules = cfg.rules
  end
  out.client = out.client or 'openprogram.nvim'
  return out
end

return M
