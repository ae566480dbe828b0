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
    [protocol.server_methods.NAVIGATE] = function(_, params, ctx)
      return require('openprogram.navigate').handle(params, ctx)
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

--- workspace root -> id of the client the plugin started there (also before `initialize`)
---@type table<string, integer>
M.started = {}

--- A running openprogram client for the workspace, if any.
---@param root? string
---@return vim.lsp.Client?
function M.find(root)
  root = root or M.root()
  -- vim.lsp.get_clients() lists a client only once it answered `initialize`
  local id = M.started[root]
  local mine = id and vim.lsp.get_client_by_id(id)
  if mine and not (mine.is_stopped and mine:is_stopped()) then
    return mine
  end
  local clients = vim.lsp.get_clients({ name = M.name })
  for _, c in ipairs(clients) do
    if serves(c, root) and not (c.is_stopped and c:is_stopped()) then
      return c
    end
  end
  return nil
end

--- Requests made before the server answered `initialize`, per client id: sent on `initialize`.
---@type table<integer, {id: integer, method: string, params: table, handler: fun(err: any, result: any)}[]>
M.queued = {}
--- queued id -> the id it was sent with
---@type table<integer, integer>
M.sent_ids = {}
local next_queued = 0

--- Flush the queue once the client finished `initialize`, also for a client started elsewhere
--- (`vim.lsp.enable`) whose on_init is not ours. Bounded: gives up when the client stops.
---@param client vim.lsp.Client
local function poll(client)
  local timer = assert(vim.uv.new_timer())
  local started = vim.uv.now()
  timer:start(50, 50, vim.schedule_wrap(function()
    if timer:is_closing() then
      return
    end
    local stopped = client.is_stopped and client:is_stopped()
    if client.initialized or stopped or vim.uv.now() - started > 120000 then
      timer:stop()
      timer:close()
      if client.initialized then
        M.flush(client)
      else
        M.fail_queued(client.id)
      end
    end
  end))
end

--- Whether the client still waits for `initialize` (the panel shows "starting…").
---@param client? vim.lsp.Client
---@return boolean
function M.starting(client)
  local clients = {}
  if client then
    clients = { client }
  else
    for _, id in pairs(M.started) do
      table.insert(clients, vim.lsp.get_client_by_id(id))
    end
  end
  for _, c in ipairs(clients) do
    if not c.initialized and not (c.is_stopped and c:is_stopped()) then
      return true
    end
  end
  return false
end

---@param client vim.lsp.Client
---@param method string
---@param params table
---@param handler fun(err: any, result: any)
---@return boolean ok
---@return integer? id
local function send(client, method, params, handler)
  if has_011 then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

--- Send what waited for `initialize` (from the client's on_init), in order.
---@param client vim.lsp.Client
function M.flush(client)
  local q = M.queued[client.id] or {}
  M.queued[client.id] = nil
  for _, r in ipairs(q) do
    local ok, id = send(client, r.method, r.params, r.handler)
    if ok and id then
      M.sent_ids[r.id] = id
    else
      r.handler({ code = -32603, message = 'could not send ' .. r.method }, nil)
    end
  end
  vim.schedule(function()
    require('openprogram.panel').update_winbar()
  end)
end

--- The server ended before `initialize`: fail what waited for it.
---@param client_id integer
function M.fail_queued(client_id)
  local q = M.queued[client_id] or {}
  M.queued[client_id] = nil
  for _, r in ipairs(q) do
    r.handler({ code = -32099, message = 'the server ended before it finished initialize' }, nil)
  end
end

--- Find or start the client for the current workspace. Never waits: a client that has not
--- finished `initialize` is returned as it is, and `M.request` queues for it.
---@return vim.lsp.Client?
function M.ensure()
  local root = M.root()
  local client = M.find(root)
  if client then
    return client
  end
  local cfg = M.lsp_config()
  cfg.root_dir = root
  cfg.root_markers = nil
  if type(cfg.cmd) == 'table' and vim.fn.executable(cfg.cmd[1]) ~= 1 then
    vim.notify(('openprogram: the server command %q is not executable; set setup({ cmd = {...} }) '
      .. '(see :checkhealth openprogram)'):format(cfg.cmd[1]), vim.log.levels.ERROR)
    return nil
  end
  -- what the user's servers publish from now on: openprogram/diagnostics answers by it
  require('openprogram.diagnostics').track()
  local on_exit = cfg.on_exit
  cfg.on_exit = function(code, signal, client_id)
    vim.schedule(function()
      M.fail_queued(client_id)
    end)
    on_exit(code, signal, client_id)
  end
  cfg.on_init = function(c)
    M.flush(c)
    -- the workspace's open buffers, before any request of ours: the server sees their unsaved text
    vim.schedule(function()
      require('openprogram.blame').refresh_all()
    end)
  end
  local ok, id = pcall(function()
    if has_011 then
      return vim.lsp.start(cfg, { attach = false })
    end
    return vim.lsp.start_client(cfg)
  end)
  client = ok and id and vim.lsp.get_client_by_id(id) or nil
  if client then
    M.started[root] = client.id
  end
  if not client then
    local what = type(cfg.cmd) == 'table' and table.concat(cfg.cmd, ' ') or 'the connection'
    vim.notify(('openprogram: could not start %s%s'):format(what,
      ok and '' or (': ' .. tostring(id):gsub('\n.*', ''))), vim.log.levels.ERROR)
    return nil
  end
  return client
end

--- Send a request; `cb(err, result)` runs on the main loop. Returns the request id (a negative
--- one while it waits for `initialize`; `M.cancel_request` takes either).
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
  if not client.initialized then
    next_queued = next_queued - 1
    if not M.queued[client.id] then
      M.queued[client.id] = {}
      poll(client)
    end
    table.insert(M.queued[client.id], { id = next_queued, method = method, params = params, handler = handler })
    return next_queued, client
  end
  local ok, id = send(client, method, params, handler)
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

--- Cancel a pending request with `$/cancelRequest` (one still waiting for `initialize` is
--- dropped; one sent since by its queued id is cancelled on the wire).
---@param client vim.lsp.Client
---@param request_id integer
function M.cancel_request(client, request_id)
  if request_id < 0 then
    local q = M.queued[client.id] or {}
    for i, r in ipairs(q) do
      if r.id == request_id then
        table.remove(q, i)
        return
      end
    end
    request_id = M.sent_ids[request_id]
    if not request_id then
      return
    end
  end
  if has_011 then
    client:cancel_request(request_id)
  else
    client.cancel_request(request_id)
  end
end

return M
