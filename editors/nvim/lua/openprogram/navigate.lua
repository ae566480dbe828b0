--[[
Answers `openprogram/navigate`: definitions, references, hover, document and workspace symbols,
from Neovim's other language servers (every attached client but openprogram's own).

The file is loaded in a buffer as for diagnostics (`openprogram.diagnostics`), the request goes
to the buffer's servers (`vim.lsp.buf_request_all`; `workspace/symbol` to every running server),
and the answer is flattened to locations, symbols or text, bounded, by `timeoutMs`.
]]

local diagnostics = require('openprogram.diagnostics')

local M = {}

local MAX = 1000 -- locations or symbols
local MAX_HOVER = 100000 -- characters

local METHODS = {
  definition = 'textDocument/definition',
  references = 'textDocument/references',
  hover = 'textDocument/hover',
  documentSymbols = 'textDocument/documentSymbol',
  workspaceSymbols = 'workspace/symbol',
}

local function own(c)
  return c.name == require('openprogram.client').name
end

--- Wait (yielding) for `start(done)` to call `done(value)`, at most `ms`; nil on timeout.
---@param start fun(done: fun(value: any))
---@param ms integer
local function await(start, ms)
  local co = coroutine.running()
  local yields = co ~= nil and coroutine.isyieldable() -- decided here, not in the callbacks
  local value, finished, waiting = nil, false, false
  local function done(v)
    if finished then
      return
    end
    finished, value = true, v
    if waiting then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end
  start(done)
  if yields then
    vim.defer_fn(function()
      done(nil)
    end, ms)
    if not finished then
      waiting = true
      coroutine.yield()
    end
  else
    vim.wait(ms, function()
      return finished
    end, 10)
  end
  return value
end

--- Results of a buffer request from every attached server but ours: `{name, result}` pairs.
local function ask_buffer(bufnr, method, params, ms)
  local clients = vim.tbl_filter(function(c)
    return not own(c)
  end, vim.lsp.get_clients({ bufnr = bufnr }))
  local out = {}
  local pending = #clients
  if pending == 0 then
    return out
  end
  await(function(done)
    for _, c in ipairs(clients) do
      local function handler(err, result)
        if not err and result ~= nil and result ~= vim.NIL then
          table.insert(out, { name = c.name, result = result })
        end
        pending = pending - 1
        if pending == 0 then
          done(true)
        end
      end
      local ok
      if vim.fn.has('nvim-0.11') == 1 then
        ok = pcall(c.request, c, method, params, handler, bufnr)
      else
        ok = pcall(c.request, method, params, handler, bufnr)
      end
      if not ok then
        handler('failed', nil)
      end
    end
  end, ms)
  return out
end

local function range(r)
  r = type(r) == 'table' and r or {}
  local s = type(r.start) == 'table' and r.start or {}
  local e = type(r['end']) == 'table' and r['end'] or s
  return { start = { line = s.line or 0, character = s.character or 0 },
    ['end'] = { line = e.line or s.line or 0, character = e.character or s.character or 0 } }
end

local function locations(result, out)
  if result.uri or result.targetUri then
    result = { result }
  end
  for _, l in ipairs(result) do
    if #out >= MAX then
      return
    end
    if type(l) == 'table' and (l.targetUri or l.uri) then
      table.insert(out, { uri = l.targetUri or l.uri,
        range = range(l.targetSelectionRange or l.targetRange or l.range) })
    end
  end
end

local function hover_text(contents)
  if type(contents) == 'string' then
    return contents
  end
  if type(contents) ~= 'table' then
    return ''
  end
  if contents.value then
    return tostring(contents.value)
  end
  local parts = {}
  for _, c in ipairs(contents) do
    table.insert(parts, hover_text(c))
  end
  return table.concat(parts, '\n\n')
end

local function symbols(result, uri, container, out)
  for _, s in ipairs(result) do
    if #out >= MAX or type(s) ~= 'table' then
      return
    end
    local loc = type(s.location) == 'table' and s.location or {}
    table.insert(out, { name = tostring(s.name or '?'):sub(1, 1000), kind = s.kind or 13,
      uri = loc.uri or uri, range = range(s.selectionRange or s.range or loc.range),
      container = s.containerName or container })
    if type(s.children) == 'table' then
      symbols(s.children, uri, s.name, out)
    end
  end
end

---@param params {kind: string, uri?: string, position?: table, query?: string, timeoutMs?: integer}
---@return table
function M.handle(params, _)
  local ms = math.max(100, math.min(tonumber(params.timeoutMs) or 5000, 30000))
  local start = vim.uv.now()
  local method = METHODS[params.kind]
  local out = { locations = {}, symbols = {}, servers = {} }
  if not method then
    return out
  end
  local answers = {}
  if params.kind == 'workspaceSymbols' then
    local bufnr = vim.api.nvim_get_current_buf()
    for _, c in ipairs(vim.lsp.get_clients()) do
      if not own(c) then
        local got = await(function(done)
          local function handler(err, result)
            done((not err) and result or false)
          end
          local q = { query = tostring(params.query or '') }
          local ok
          if vim.fn.has('nvim-0.11') == 1 then
            ok = pcall(c.request, c, method, q, handler, bufnr)
          else
            ok = pcall(c.request, method, q, handler, bufnr)
          end
          if not ok then
            done(false)
          end
        end, math.max(100, ms - (vim.uv.now() - start)))
        if type(got) == 'table' then
          table.insert(answers, { name = c.name, result = got })
        end
      end
    end
  else
    local bufnr = diagnostics.buffer(params.uri)
    if not bufnr then
      return out
    end
    -- a server just attached may still be starting: wait for one to be ready
    while vim.uv.now() - start < ms do
      local ready = vim.tbl_filter(function(c)
        return not own(c)
      end, vim.lsp.get_clients({ bufnr = bufnr }))
      if #ready > 0 then
        break
      end
      diagnostics.sleep(20)
    end
    local p = { textDocument = { uri = params.uri } }
    if params.kind ~= 'documentSymbols' then
      p.position = params.position
    end
    if params.kind == 'references' then
      p.context = { includeDeclaration = true }
    end
    answers = ask_buffer(bufnr, method, p, math.max(100, ms - (vim.uv.now() - start)))
  end
  local hover = {}
  for _, a in ipairs(answers) do
    table.insert(out.servers, a.name)
    local r = a.result
    if type(r) == 'table' then
      if params.kind == 'definition' or params.kind == 'references' then
        locations(r, out.locations)
      elseif params.kind == 'hover' then
        local text = hover_text(r.contents)
        if text ~= '' then
          table.insert(hover, text)
        end
      else
        symbols(r, params.uri, nil, out.symbols)
      end
    end
  end
  if #hover > 0 then
    out.hover = table.concat(hover, '\n\n'):sub(1, MAX_HOVER)
  end
  return out
end

return M
