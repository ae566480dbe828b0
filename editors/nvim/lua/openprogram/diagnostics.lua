--[[
Answers `openprogram/diagnostics`: what Neovim's other language servers report for some files
(`vim.diagnostic.get`), once they settle.

A file no buffer holds is loaded (hidden) and its filetype detected, so the user's servers attach
as they would on `:edit`; an unmodified buffer whose file changed on disk is reloaded first. The
answer waits for the servers, never longer than `timeoutMs` (a buffer just loaded waits even
when `settleMs` is 0), and comes as soon as the servers have answered the change:
- a buffer loaded or reloaded here: each attached server that publishes diagnostics has
  published for it since (after a reload, a first empty set is the one a server sends as the
  document closes, so it takes the next one);
- a buffer changed otherwise (an edit in it): each attached server known to put the document's
  version on its diagnostics (pylsp, pyright, ...) has published them for its current version;
- failing both: at least one `DiagnosticChanged` after the request, then `settleMs` without
  another one (three times that after a reload with only empty sets).
The openprogram client's own diagnostics are left out.
]]

local M = {}

local MAX_ITEMS = 500 -- per file
local MAX_MESSAGE = 2000 -- characters

--- What each client published last for a buffer, and how many times it did.
---@type table<integer, table<integer, {version: integer?, count: integer, empty: boolean}>>
local published = {}
--- Clients that put versions on their diagnostics.
---@type table<integer, boolean>
local versioned = {}
--- Clients that publish diagnostics at all.
---@type table<integer, boolean>
local publishers = {}

--- Note every published diagnostics set (`vim.lsp.diagnostic.on_publish_diagnostics` wrapped
--- once: the default handler calls it, and so do handlers that add to it).
function M.track()
  if M._tracking then
    return
  end
  M._tracking = true
  local diag = vim.lsp.diagnostic
  if diag._openprogram_seen then -- wrapped by an earlier load of this module: share its notes
    published, versioned, publishers = unpack(diag._openprogram_seen)
    return
  end
  diag._openprogram_seen = { published, versioned, publishers }
  local orig = diag.on_publish_diagnostics
  diag.on_publish_diagnostics = function(err, params, ctx, ...)
    local id = type(ctx) == 'table' and ctx.client_id or nil
    if id and type(params) == 'table' and type(params.uri) == 'string' then
      local ok, fname = pcall(vim.uri_to_fname, params.uri)
      local bufnr = ok and vim.fn.bufnr(fname) or -1
      local version = type(params.version) == 'number' and params.version or nil
      if bufnr > 0 then
        published[id] = published[id] or {}
        local last = published[id][bufnr]
        published[id][bufnr] = { version = version, count = (last and last.count or 0) + 1,
          empty = type(params.diagnostics) ~= 'table' or #params.diagnostics == 0 }
      end
      publishers[id] = true
      if version then
        versioned[id] = true
      end
    end
    return orig(err, params, ctx, ...)
  end
end

--- The other servers attached to a buffer.
---@param bufnr integer
---@return vim.lsp.Client[]
local function servers(bufnr)
  local name = require('openprogram.client').name
  return vim.tbl_filter(function(c)
    return c.name ~= name
  end, vim.lsp.get_clients({ bufnr = bufnr }))
end

--- How many sets each client published for a buffer so far.
---@param bufnr integer
---@return table<integer, integer>
function M.counts(bufnr)
  local out = {}
  for id, bufs in pairs(published) do
    out[id] = bufs[bufnr] and bufs[bufnr].count or 0
  end
  return out
end

--- Whether each server of the buffer that publishes diagnostics has published since `base`
--- (the counts when it was loaded or reloaded here); nil when none is known to publish.
---@param bufnr integer
---@param base table<integer, integer>
---@param reloaded boolean
---@return boolean?
function M.answered(bufnr, base, reloaded)
  local any, all = false, true
  for _, c in ipairs(servers(bufnr)) do
    if publishers[c.id] then
      any = true
      local p = published[c.id] and published[c.id][bufnr]
      local n = (p and p.count or 0) - (base[c.id] or 0)
      -- after a reload a first empty set may be the close's: the next one answers
      if not (n >= 2 or (n == 1 and not (reloaded and p.empty))) then
        all = false
      end
    end
  end
  if not any then
    return nil
  end
  return all
end

--- Whether the buffer's servers that version their diagnostics have all published them for its
--- current text; nil when there is no version to go by: none of its servers is known to give
--- one, or the document was just (re)opened (Neovim opens it as version 0, which some servers
--- leave off what they publish).
---@param bufnr integer
---@return boolean?
function M.current(bufnr)
  local want = vim.lsp.util.buf_versions[bufnr]
  if not want or want <= 0 then
    return nil
  end
  local any, all = false, true
  for _, c in ipairs(servers(bufnr)) do
    if versioned[c.id] then
      any = true
      local p = published[c.id] and published[c.id][bufnr]
      if not (p and p.version and p.version >= want) then
        all = false
      end
    end
  end
  if not any then
    return nil
  end
  return all
end

--- Namespaces of the openprogram clients' diagnostics (push and pull).
---@return table<integer, boolean>
local function own_namespaces()
  local skip = {}
  for _, c in ipairs(vim.lsp.get_clients({ name = require('openprogram.client').name })) do
    for _, pull in ipairs({ false, true }) do
      local ok, ns = pcall(vim.lsp.diagnostic.get_namespace, c.id, pull)
      if ok and ns then
        skip[ns] = true
      end
    end
  end
  return skip
end

--- Whether a language server other than openprogram is attached to the buffer (or starting).
---@param bufnr integer
---@return boolean
function M.served(bufnr)
  local name = require('openprogram.client').name
  for _, c in ipairs(vim.lsp.get_clients({ bufnr = bufnr, _uninitialized = true })) do
    if c.name ~= name then
      return true
    end
  end
  return false
end

--- The buffer of a file uri, loaded; whether it had to be loaded now, or reloaded from disk, and
--- the counts of what its servers had published before that.
---@param uri string
---@return integer? bufnr
---@return boolean fresh
---@return boolean reloaded
---@return table<integer, integer> base
function M.buffer(uri)
  if type(uri) ~= 'string' or not uri:match('^file:') then
    return nil, false, false, {}
  end
  local fname = vim.uri_to_fname(uri)
  local existed = vim.fn.bufexists(fname) == 1
  local ok, bufnr = pcall(vim.uri_to_bufnr, uri)
  if not ok then
    return nil, false, false, {}
  end
  local fresh = not vim.api.nvim_buf_is_loaded(bufnr)
  local base = M.counts(bufnr)
  if fresh then
    if vim.fn.filereadable(fname) == 0 then
      return nil, false, false, {}
    end
    vim.fn.bufload(bufnr)
    if vim.bo[bufnr].filetype == '' then
      vim.api.nvim_buf_call(bufnr, function()
        vim.cmd('silent! filetype detect')
      end)
    end
    if not M.served(bufnr) then -- no server checks it: leave no buffer behind
      if not existed then
        pcall(vim.api.nvim_buf_delete, bufnr, { force = true })
      end
      return nil, false, false, {}
    end
    return bufnr, fresh, false, base
  end
  local reloaded = false
  if not vim.bo[bufnr].modified then
    local tick = vim.b[bufnr].changedtick
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd('silent! checktime')
    end)
    reloaded = vim.b[bufnr].changedtick ~= tick
  end
  return bufnr, fresh, reloaded, base
end

--- Pause the handler's coroutine (or the whole editor when there is none) for `ms`.
---@param ms integer
function M.sleep(ms)
  local co = coroutine.running()
  if co and coroutine.isyieldable() then
    vim.defer_fn(function()
      coroutine.resume(co)
    end, ms)
    coroutine.yield()
  else
    vim.wait(ms)
  end
end

---@param d vim.Diagnostic
---@return table
local function item(d)
  local message = tostring(d.message or '')
  if #message > MAX_MESSAGE then
    message = message:sub(1, MAX_MESSAGE)
  end
  local code = d.code
  if type(code) ~= 'string' and type(code) ~= 'number' then
    code = nil
  end
  local source = type(d.source) == 'string' and d.source:sub(1, 200) or nil
  return {
    range = {
      start = { line = d.lnum, character = d.col or 0 },
      ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col or 0 },
    },
    message = message,
    severity = d.severity,
    source = source,
    code = code,
  }
end

---@param params {uris: string[], settleMs?: integer, timeoutMs?: integer}
---@return table
function M.handle(params, _)
  local settle = math.max(0, math.min(tonumber(params.settleMs) or 0, 5000))
  local timeout = math.max(0, math.min(tonumber(params.timeoutMs) or 1500, 10000))
  local start = vim.uv.now()
  local name = require('openprogram.client').name
  local others = vim.tbl_filter(function(c)
    return c.name ~= name
  end, vim.lsp.get_clients({ _uninitialized = true }))
  if #others == 0 then -- no language server runs: nothing to load or wait for
    return { files = {} }
  end
  local changed = {} ---@type table<integer, integer> bufnr -> last DiagnosticChanged
  local files = {} ---@type {uri: string, bufnr: integer}[]
  local wait = {} ---@type table<integer, integer> bufnr -> quiet ms it waits for
  local full = {} ---@type table<integer, boolean> a change that carried diagnostics came
  local reloads = {} ---@type table<integer, boolean>
  local opened = {} ---@type table<integer, table<integer, integer>> loaded here: counts before
  for _, uri in ipairs(type(params.uris) == 'table' and params.uris or {}) do
    local bufnr, fresh, reloaded, base = M.buffer(uri)
    if bufnr then
      table.insert(files, { uri = uri, bufnr = bufnr })
      reloads[bufnr] = reloaded
      if fresh or reloaded then
        opened[bufnr] = base
      end
      if M.served(bufnr) and (settle > 0 or fresh) then
        wait[bufnr] = math.max(settle, fresh and 300 or 0)
      end
    end
  end
  -- only what comes after the loads and reloads (a reload first clears the old diagnostics)
  local group = vim.api.nvim_create_augroup('openprogram.diagnostics.' .. start .. '.'
    .. math.random(1e9), { clear = true })
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    callback = function(a)
      changed[a.buf] = vim.uv.now()
      local data = a.data or {}
      if type(data.diagnostics) == 'table' and #data.diagnostics > 0 then
        full[a.buf] = true
      end
    end,
  })
  while vim.uv.now() - start < timeout do
    local now, done = vim.uv.now(), true
    for bufnr, quiet in pairs(wait) do
      local current = nil ---@type boolean?
      if opened[bufnr] then
        current = M.answered(bufnr, opened[bufnr], reloads[bufnr])
      else
        current = M.current(bufnr)
      end
      if current == nil then -- nothing to go by: the servers' quiet tells
        -- a reload closes and reopens the document: servers first clear its diagnostics (an
        -- empty change that is no answer), so only an empty state that lasts counts
        if reloads[bufnr] and not full[bufnr] then
          quiet = quiet * 3
        end
        if not changed[bufnr] or now - changed[bufnr] < quiet then
          done = false
        end
      elseif not current then
        done = false
      end
    end
    if done then
      break
    end
    M.sleep(20)
  end
  pcall(vim.api.nvim_del_augroup_by_id, group)
  local skip = own_namespaces()
  local out = {}
  for _, f in ipairs(files) do
    local items = {}
    for _, d in ipairs(vim.diagnostic.get(f.bufnr)) do
      if not skip[d.namespace] and #items < MAX_ITEMS then
        table.insert(items, item(d))
      end
    end
    table.insert(out, { uri = f.uri, diagnostics = items })
  end
  return { files = out }
end

M.track()

return M
