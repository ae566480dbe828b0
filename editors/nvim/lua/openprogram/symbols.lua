--[[
Symbol attachments, from the user's own language servers (every attached client but ours):

  :OpenProgramSymbol          the symbol under the cursor: the innermost of the buffer's
                              document symbols holding it; a picker of them when it is in none
  :OpenProgramSymbol {query}  a picker of the workspace symbols matching {query}

The symbol goes with the next message as a `symbol` attachment (its name, its whole range and,
for a loaded buffer, that range's text as the buffer shows it, saved or not; otherwise the
server reads the range from the file).
]]

local M = {}

local TIMEOUT = 3000

local function own(c)
  return c.name == require('openprogram.client').name
end

--- Flatten document symbols (nested DocumentSymbol or flat SymbolInformation) with their
--- whole range.
---@param result table[]
---@param uri string
---@param container? string
---@param out table[]
local function flatten(result, uri, container, out)
  for _, s in ipairs(result) do
    if type(s) == 'table' and s.name then
      local loc = type(s.location) == 'table' and s.location or {}
      local r = s.range or loc.range
      if type(r) == 'table' then
        table.insert(out, { name = tostring(s.name), kind = s.kind, uri = loc.uri or uri, range = r,
          container = s.containerName or container })
      end
      if type(s.children) == 'table' then
        flatten(s.children, uri, tostring(s.name), out)
      end
    end
  end
end

--- `method` to every other language server of `buf` (every running one with no `buf`); `done`
--- gets the flattened symbols once all answered (or after a timeout).
---@param buf? integer
---@param method string
---@param params table
---@param done fun(symbols: table[], servers: integer)
local function ask(buf, method, params, done)
  local new_api = vim.fn.has('nvim-0.11') == 1
  local clients = vim.tbl_filter(function(c)
    if own(c) then
      return false
    end
    if new_api then
      return c:supports_method(method, buf)
    end
    return c.supports_method(method, { bufnr = buf })
  end, buf and vim.lsp.get_clients({ bufnr = buf }) or vim.lsp.get_clients())
  local out, pending, finished = {}, #clients, false
  local function finish()
    if not finished then
      finished = true
      done(out, #clients)
    end
  end
  if pending == 0 then
    return finish()
  end
  for _, c in ipairs(clients) do
    local function handler(err, result)
      if not err and type(result) == 'table' then
        local uri = params.textDocument and params.textDocument.uri or nil
        flatten(result, uri, nil, out)
      end
      pending = pending - 1
      if pending == 0 then
        finish()
      end
    end
    local ok
    if new_api then
      ok = pcall(c.request, c, method, params, handler, buf)
    else
      ok = pcall(c.request, method, params, handler, buf)
    end
    if not ok then
      handler('failed', nil)
    end
  end
  vim.defer_fn(finish, TIMEOUT)
end

--- Whether LSP range `r` holds the 0-based position (line, col) (`col` a byte index: exact
--- for ASCII, near enough elsewhere to pick the innermost symbol).
local function holds(r, line, col)
  local s, e = r.start, r['end']
  if line < s.line or line > e.line then
    return false
  end
  if line == s.line and col < s.character then
    return false
  end
  return not (line == e.line and col >= e.character) -- the end is exclusive
end

--- The innermost symbol whose range holds (line, col), or nil.
---@param symbols table[]
---@param line integer 0-based
---@param col integer 0-based
---@return table?
function M.innermost(symbols, line, col)
  local best
  for _, s in ipairs(symbols) do
    if holds(s.range, line, col) then
      local size = (s.range['end'].line - s.range.start.line) * 100000
        + (s.range['end'].character - s.range.start.character)
      if not best or size <= best.size then
        best = { symbol = s, size = size }
      end
    end
  end
  return best and best.symbol or nil
end

--- The attachment of symbol `s` (its whole lines; their text when its file is loaded).
---@param s table
---@return table
function M.item(s)
  local r = s.range
  local last = r['end'].line
  if r['end'].character == 0 and last > r.start.line then
    last = last - 1 -- a range ending at the start of a line leaves that line out
  end
  local range = { start = { line = r.start.line, character = 0 }, ['end'] = { line = last + 1, character = 0 } }
  local item = { kind = 'symbol', uri = s.uri, name = s.name, range = range }
  local buf = vim.fn.bufnr(vim.uri_to_fname(s.uri))
  if buf > 0 and vim.api.nvim_buf_is_loaded(buf) then
    item.text = table.concat(vim.api.nvim_buf_get_lines(buf, r.start.line, last + 1, false), '\n') .. '\n'
  end
  return item
end

---@param s table
---@return string
local function describe(s)
  local kind = vim.lsp.protocol.SymbolKind[s.kind] or 'symbol'
  local path = vim.fn.fnamemodify(vim.uri_to_fname(s.uri), ':~:.')
  local inside = s.container and (' in ' .. s.container) or ''
  return ('%s · %s%s · %s:%d'):format(s.name, kind:lower(), inside, path, s.range.start.line + 1)
end

--- Queue `s` for the next message and say so in the panel.
---@param s table
---@param done? fun(item: table?)
local function attach(s, done)
  local att = require('openprogram.attach')
  local item = M.item(s)
  att.add({ item })
  local panel = require('openprogram.panel')
  panel.open(true)
  panel.note(('attached %s: it goes with your next message'):format(att.label(item)))
  if done then
    done(item)
  end
end

---@param list table[]
---@param prompt string
---@param done? fun(item: table?)
local function pick(list, prompt, done)
  require('openprogram.choose').select(list, { prompt = prompt, kind = 'openprogram.symbol', format_item = describe },
    function(s)
      if s then
        attach(s, done)
      elseif done then
        done(nil)
      end
    end)
end

--- `:OpenProgramSymbol [query]`.
---@param query? string
---@param done? fun(item: table?) after attaching (nil: nothing attached)
function M.command(query, done)
  local function fail(msg)
    vim.notify('openprogram: ' .. msg, vim.log.levels.WARN)
    if done then
      done(nil)
    end
  end
  if query and vim.trim(query) ~= '' then
    ask(nil, 'workspace/symbol', { query = vim.trim(query) }, function(list, servers)
      if servers == 0 then
        return fail('no language server of yours answers workspace/symbol')
      end
      if #list == 0 then
        return fail(('no workspace symbol matches %q'):format(vim.trim(query)))
      end
      pick(list, 'Attach a workspace symbol', done)
    end)
    return
  end
  local buf = vim.api.nvim_get_current_buf()
  local cursor = vim.api.nvim_win_get_cursor(0)
  ask(buf, 'textDocument/documentSymbol', { textDocument = { uri = vim.uri_from_bufnr(buf) } },
    function(list, servers)
      if servers == 0 then
        return fail('no language server of yours gives the symbols of this buffer')
      end
      if #list == 0 then
        return fail('this buffer has no symbols')
      end
      local s = M.innermost(list, cursor[1] - 1, cursor[2])
      if s then
        return attach(s, done)
      end
      pick(list, 'Attach a symbol of this buffer', done)
    end)
end

return M
