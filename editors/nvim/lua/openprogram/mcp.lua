--[[
MCP servers of the workspace: `openprogram/mcp` (status), `openprogram/mcpRestart` and
`openprogram/mcpRevokeTrust`, for `:OpenProgramMcp` and `:checkhealth openprogram`.

Example: `require('openprogram.mcp').pick()` lists the servers in `vim.ui.select`; choosing one
offers restart, revoking the `.mcp.json` trust answer, and its tools.
]]

local M = {}

---@class openprogram.McpServer
---@field name string
---@field origin 'user'|'workspace'|'editor'|'acp'
---@field transport 'stdio'|'http'
---@field target string
---@field status string
---@field trust? 'allow'|'deny'|'unknown'
---@field lastError? string
---@field restarts integer
---@field tools {name: string, tool: string, kind: string, description: string}[]
---@field prompts {name: string, command: string}[]
---@field resources {uri: string, reference: string}[]

--- One line about a server: name, where it comes from, status, tool count.
---@param s openprogram.McpServer
---@return string
function M.line(s)
  local out = ('%s (%s, %s): %s, %d tool(s)'):format(s.name, s.origin, s.transport, s.status, #(s.tools or {}))
  if s.trust and s.trust ~= vim.NIL then
    out = out .. ', trust ' .. s.trust
  end
  if s.lastError and s.lastError ~= vim.NIL then
    out = out .. ' | ' .. s.lastError
  end
  return out
end

--- The workspace's MCP status from the running server, or nil and why.
---@param timeout_ms? integer
---@return {servers: openprogram.McpServer[], problems: string[], trust: table[]}?
---@return string? err
function M.status(timeout_ms)
  return require('openprogram.client').request_sync('openprogram/mcp', vim.empty_dict(), timeout_ms or 10000)
end

--- Tell the user what happened.
---@param msg string
---@param level? integer
local function say(msg, level)
  vim.notify('openprogram: ' .. msg, level or vim.log.levels.INFO)
end

--- Restart one server (or all with nil).
---@param name? string
function M.restart(name)
  local params = name and { server = name } or vim.empty_dict()
  require('openprogram.client').request('openprogram/mcpRestart', params, function(err, res)
    if err then
      return say('restart failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    local lines = {}
    for _, s in ipairs(res.servers or {}) do
      table.insert(lines, M.line(s))
    end
    say('restarted ' .. table.concat(res.restarted or {}, ', ') .. '\n' .. table.concat(lines, '\n'))
  end)
end

--- Forget the trust answer about a `.mcp.json` server (it asks again next time).
---@param name string
function M.revoke(name)
  require('openprogram.client').request('openprogram/mcpRevokeTrust', { server = name }, function(err, res)
    if err then
      return say('revoke failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    say(res.revoked and ('trust in %s revoked; it asks again before starting'):format(name)
      or ('%s had no remembered trust answer'):format(name))
  end)
end

--- `:OpenProgramMcp`: pick a server, then an action.
function M.pick()
  local res, err = M.status()
  if not res then
    return say('MCP status unavailable: ' .. tostring(err), vim.log.levels.WARN)
  end
  local servers = res.servers or {}
  if #servers == 0 then
    return say('no MCP servers configured (.mcp.json, mcp_servers in setup(), or the user config file)')
  end
  require('openprogram.choose').select(servers, {
    prompt = 'MCP servers',
    kind = 'openprogram.mcp',
    format_item = M.line,
  }, function(server)
    if not server then
      return
    end
    local actions = { 'Restart', 'Show tools' }
    if server.origin == 'workspace' then
      table.insert(actions, 'Revoke trust')
    end
    require('openprogram.choose').select(actions, { prompt = server.name, kind = 'openprogram.mcp.action' }, function(action)
      if action == 'Restart' then
        M.restart(server.name)
      elseif action == 'Revoke trust' then
        M.revoke(server.name)
      elseif action == 'Show tools' then
        local lines = {}
        for _, t in ipairs(server.tools or {}) do
          table.insert(lines, ('%s [%s] %s'):format(t.name, t.kind, t.description or ''))
        end
        for _, p in ipairs(server.prompts or {}) do
          table.insert(lines, ('%s (prompt)'):format(p.command))
        end
        for _, r in ipairs(server.resources or {}) do
          table.insert(lines, ('%s (resource)'):format(r.reference))
        end
        say(server.name .. ':\n' .. (#lines > 0 and table.concat(lines, '\n') or '(nothing offered)'))
      end
    end)
  end)
end

--- The `:checkhealth` section.
---@param health table vim.health
---@param opts openprogram.Config
function M.check(health, opts)
  health.start('MCP servers')
  local configured = vim.tbl_count(opts.mcp_servers or {})
  local file = vim.fs.find('.mcp.json', { upward = true, path = vim.fn.getcwd(), type = 'file' })[1]
  if configured > 0 then
    health.info(('%d server(s) from setup({ mcp_servers = ... })'):format(configured))
  end
  if file then
    health.info('workspace file: ' .. file .. ' (its servers start once you trust them)')
  end
  if not require('openprogram.client').find() then
    health.info('no client running: start one with :OpenProgram to see the servers\' status')
    return
  end
  local res, err = M.status(5000)
  if not res then
    return health.warn('openprogram/mcp failed: ' .. tostring(err))
  end
  for _, p in ipairs(res.problems or {}) do
    health.warn(p)
  end
  if #(res.servers or {}) == 0 then
    return health.info('no MCP servers configured')
  end
  for _, s in ipairs(res.servers) do
    local line = M.line(s)
    if s.status == 'ready' then
      health.ok(line)
    elseif s.status == 'failed' or s.status == 'invalid' then
      health.error(line, { ':OpenProgramMcp to restart it; the server log has its stderr' })
    else
      health.warn(line, s.status == 'untrusted' and { 'send a message: you are asked whether to trust it' } or nil)
    end
  end
end

return M
