--[[
Owns the language-server client: its config (capabilities, handlers, initializationOptions),
starting or finding it for the current workspace, and request helpers that work on 0.10 and 0.11.

A client started by `vim.lsp.enable('openprogram')` (the `lsp/openprogram.lua` config) and one
started by the panel share the name 'openprogram', so the panel reuses whichever runs.
]]

local protocol = require('openprogram.protocol')

local M = {}

M.name = 'openprogram'

local has_011 = vim.fn.has('nvim-0.11') == 1

--- Client capabilities: Neovim's defaults plus the experimental openprogram capability.
---@return lsp.ClientCapabilities
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  caps.experimental.openprogram = vim.deepcopy(protocol.capability)
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  return caps
end

--- Handlers for the server's custom notifications and requests.
---@return table<string, lsp.Handler>
function M.handlers()
  return {
    [protocol.server_methods.EVENT] = function(_, params, ctx)
      require('openprogram.chat').on_event(params, ctx)
    end,
    [protocol.server_methods.REQUEST_PERMISSION] = function(_, params, ctx)
      return require('openprogram.approvals').handle(params, ctx)
    end,
    [protocol.server_methods.ASK_QUESTION] = function(_, params, ctx)
      return require('openprogram.questions').handle(params, ctx)
    end,
    [protocol.server_methods.DIAGNOSTICS] = function(_, params, ctx)
      return require('openprogram.diagnostics').handle(params, ctx)
    end,
    -- The server also withdraws a prompt it stopped waiting for with $/cancelRequest, but
    -- Neovim does not give handlers the request id. The `permission.withdrawn` and
    -- `question.rejected` events name the prompt instead (chat.on_event); this is a no-op.
    ['$/cancelRequest'] = function() end,
  }
end

--- Workspace root for a buffer: a root marker upwards from its file, else the cwd.
---@param bufnr? integer
---@return string
function M.root(bufnr)
  local markers = require('openprogram.config').options.root_markers
  bufnr = bufnr or 0
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name ~= '' and vim.bo[bufnr].buftype == '' and not name:match('^%a+://') then
    local r = vim.fs.root(bufnr, markers)
    if r then
      return r
    end
  end
  local cwd = vim.fn.getcwd()
  return vim.fs.root(cwd, markers) or cwd
end

--- The `vim.lsp.Config` used by `lsp/openprogram.lua` and by the panel.
---@return table
function M.lsp_config()
  local config = require('openprogram.config')
  local opts = config.options
  local cmd = vim.deepcopy(opts.cmd)
  local init_options = config.init_options(opts)
  if opts.connect ~= nil then
    -- attach to a running `serve --tcp`: its run file gives the port and the token
    local att, err = config.attachment(opts.connect)
    if att then
      cmd = vim.lsp.rpc.connect('127.0.0.1', att.port)
      init_options.token = att.token
    else
      vim.notify('openprogram: ' .. err, vim.log.levels.ERROR)
    end
  end
  return {
    name = M.name,
    cmd = cmd,
    root_markers = vim.deepcopy(opts.root_markers),
    init_options = init_options,
    capabilities = M.capabilities(),
    handlers = M.handlers(),
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        require('openprogram.chat').on_server_exit(code, signal, client_id)
      end)
    end,
  }
end

---@param client vim.lsp.Client
---@param root string
---@return boolean
local function serves(client, root)
  if client.root_dir == root then
    return true
  end
  for _, wf in ipairs(client.workspace_folders or {}) do
    if vim.uri_to_fname(wf.uri) == root then
      return true
    end
  end
  return false
end

--- A running openprogram client for the workspace, if any.
---@param root? string
---@return vim.lsp.Client?
function M.find(root)
  root = root or M.root()
  local clients = vim.lsp.get_clients({ name = M.name })
  for _, c in ipairs(clients) do
    if serves(c, root) and not (c.is_stopped and c:is_stopped()) then
      return c
    end
  end
  return nil
end

--- Find or start the client for the current workspace and wait (bounded) for `initialize`.
---@return vim.lsp.Client?
function M.ensure()
  local root = M.root()
  local client = M.find(root)
  local started = false
  if not client then
    started = true
    local cfg = M.lsp_config()
    cfg.root_dir = root
    cfg.root_markers = nil
    if type(cfg.cmd) == 'table' and vim.fn.executable(cfg.cmd[1]) ~= 1 then
      vim.notify(('openprogram: the server command %q is not executable; set setup({ cmd = {...} }) '
        .. '(see :checkhealth openprogram)'):format(cfg.cmd[1]), vim.log.levels.ERROR)
      return nil
    end
    local ok, id = pcall(function()
      if has_011 then
        return vim.lsp.start(cfg, { attach = false })
      end
      return vim.lsp.start_client(cfg)
    end)
    client = ok and id and vim.lsp.get_client_by_id(id) or nil
    if not client then
      local what = type(cfg.cmd) == 'table' and table.concat(cfg.cmd, ' ') or 'the connection'
      vim.notify(('openprogram: could not start %s%s'):format(what,
        ok and '' or (': ' .. tostring(id):gsub('\n.*', ''))), vim.log.levels.ERROR)
      return nil
    end
  end
  if not client.initialized then
    vim.wait(15000, function()
      return client.initialized == true or (client.is_stopped and client:is_stopped()) == true
    end, 20)
  end
  if not client.initialized then
    vim.notify('openprogram: the server did not finish initialize', vim.log.levels.ERROR)
    return nil
  end
  if started then
    -- the workspace's open buffers, before any request: the server sees their unsaved text
    require('openprogram.blame').refresh_all()
  end
  return client
end

--- Send a request; `cb(err, result)` runs on the main loop. Returns the request id.
---@param method string
---@param params table
---@param cb? fun(err: lsp.ResponseError?, result: any)
---@return integer? request_id
---@return vim.lsp.Client? client
function M.request(method, params, cb)
  local client = M.ensure()
  if not client then
    return nil
  end
  -- An empty Lua table encodes as `[]`; the server takes `[]` as `{}` for optional params.
  local handler = function(err, result)
    if err and not cb then
      vim.notify(('openprogram: %s failed: %s'):format(method, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    if cb then
      cb(err, result)
    end
  end
  local ok, id
  if has_011 then
    ok, id = client:request(method, params, handler)
  else
    ok, id = client.request(method, params, handler)
  end
  if not ok then
    vim.notify('openprogram: could not send ' .. method, vim.log.levels.ERROR)
    return nil, client
  end
  return id, client
end

--- Send a request and wait for its answer (bounded by `timeout_ms`).
---@param method string
---@param params table
---@param timeout_ms? integer
---@return any result
---@return string? err
function M.request_sync(method, params, timeout_ms)
  local done, res, err = false, nil, nil
  local id = M.request(method, params, function(e, r)
    done, res, err = true, r, e and (e.message or vim.inspect(e)) or nil
  end)
  if not id then
    return nil, 'the openprogram server is not running'
  end
  if not vim.wait(timeout_ms or 10000, function()
    return done
  end, 10) then
    return nil, method .. ' timed out'
  end
  return res, err
end

--- Cancel a pending request with `$/cancelRequest`.
---@param client vim.lsp.Client
---@param request_id integer
function M.cancel_request(client, request_id)
  if has_011 then
    client:cancel_request(request_id)
  else
    client.cancel_request(request_id)
  end
end

return M
