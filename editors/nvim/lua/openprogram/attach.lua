--[[
What the user points the agent at: a range of lines (`:'<,'>OpenProgram`), the current buffer
(`#buffer` in a message), a file (`@path`), with the range's diagnostics (`vim.diagnostic.get`),
a symbol (`:OpenProgramSymbol`, `symbols.lua`), or an image (`:OpenProgramImage {file}`, or the
clipboard's with no {file}: sent as base64 data; the server judges the bytes).
They go with the next message as `context` attachments (see docs/protocol.md).

Completion in the input buffer (`<C-x><C-u>`, or the completion plugin of your choice through
'completefunc'): `@` completes workspace files (`openprogram/files`), `/` slash commands
(`openprogram/commands`), `#` the word `#buffer`.
]]

local M = {}

---@type table[] attachments waiting for the next message
M.pending = {}

--- The buffer the user works in: the current one unless it is ours, else the alternate one.
---@return integer|nil
local function work_buffer()
  local buf = vim.api.nvim_get_current_buf()
  if vim.api.nvim_buf_get_name(buf):match('^openprogram://') or vim.bo[buf].buftype ~= '' then
    local alt = vim.fn.bufnr('#')
    if alt > 0 and vim.bo[alt].buftype == '' then
      return alt
    end
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      local b = vim.api.nvim_win_get_buf(w)
      if vim.bo[b].buftype == '' and vim.api.nvim_buf_get_name(b) ~= '' then
        return b
      end
    end
    return nil
  end
  return buf
end

---@param d vim.Diagnostic
---@return table
local function wire_diagnostic(d)
  return {
    range = {
      start = { line = d.lnum, character = d.col or 0 },
      ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col or 0 },
    },
    message = d.message,
    severity = d.severity,
    source = d.source,
    code = d.code ~= nil and tostring(d.code) or nil,
  }
end

--- Attachments for lines `line1`..`line2` (1-based, inclusive) of `buf`: the selection, and
--- its diagnostics when there are any.
---@param buf integer
---@param line1 integer
---@param line2 integer
---@return table[]
function M.range(buf, line1, line2)
  local uri = vim.uri_from_bufnr(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, line1 - 1, line2, false)
  local range = { start = { line = line1 - 1, character = 0 }, ['end'] = { line = line2, character = 0 } }
  local out = { { kind = 'selection', uri = uri, range = range, text = table.concat(lines, '\n') .. '\n' } }
  local diags = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.lnum >= line1 - 1 and d.lnum <= line2 - 1 then
      table.insert(diags, wire_diagnostic(d))
    end
  end
  if #diags > 0 then
    table.insert(out, { kind = 'diagnostics', uri = uri, range = range, diagnostics = diags })
  end
  return out
end

--- A whole buffer as a file attachment (its text as shown, saved or not).
---@param buf integer
---@return table
function M.buffer(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  return { kind = 'file', uri = vim.uri_from_bufnr(buf), text = table.concat(lines, '\n') .. '\n' }
end

--- Largest image the server takes (bytes).
M.MAX_IMAGE = 20 * 1024 * 1024

--- An image file as an attachment (its bytes in base64), or nil and why not.
---@param path string
---@return table|nil, string|nil
function M.image(path)
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ':p')
  local size = vim.fn.getfsize(full)
  if size < 0 or vim.fn.isdirectory(full) == 1 then
    return nil, full .. ': no such file'
  end
  if size > M.MAX_IMAGE then
    return nil, ('%s: %d bytes; images are limited to %d MB'):format(full, size, M.MAX_IMAGE / 1048576)
  end
  local fh = io.open(full, 'rb')
  if not fh then
    return nil, full .. ': cannot be read'
  end
  local data = fh:read('*a')
  fh:close()
  return {
    kind = 'image',
    uri = vim.uri_from_fname(full),
    name = vim.fn.fnamemodify(full, ':t'),
    data = vim.base64.encode(data),
  }
end

--- The command that prints the clipboard's image: `clipboard_image` from setup, else the first
--- found of wl-paste (Wayland), xclip (X11) and pngpaste (macOS); nil when there is none.
---@return string[]|nil
function M.clipboard_command()
  local opt = require('openprogram.config').options.clipboard_image
  if opt then
    return opt
  end
  if vim.env.WAYLAND_DISPLAY and vim.fn.executable('wl-paste') == 1 then
    return { 'wl-paste', '--no-newline', '--type', 'image/png' }
  end
  if vim.env.DISPLAY and vim.fn.executable('xclip') == 1 then
    return { 'xclip', '-selection', 'clipboard', '-target', 'image/png', '-out' }
  end
  if vim.fn.has('mac') == 1 and vim.fn.executable('pngpaste') == 1 then
    return { 'pngpaste', '-' }
  end
  return nil
end

--- What the first bytes of an image say its file name ends in (the server judges it again).
---@param data string
---@return string
local function extension(data)
  if data:sub(1, 8) == '\137PNG\r\n\26\n' then
    return 'png'
  elseif data:sub(1, 3) == '\255\216\255' then
    return 'jpg'
  elseif data:sub(1, 4) == 'GIF8' then
    return 'gif'
  elseif data:sub(1, 4) == 'RIFF' and data:sub(9, 12) == 'WEBP' then
    return 'webp'
  end
  return 'png'
end

local pasted = 0

--- The clipboard's image as an attachment (`paste-N.png`), or nil and why not.
---@return table|nil, string|nil
function M.clipboard_image()
  local cmd = M.clipboard_command()
  if not cmd then
    return nil, 'no clipboard command found (wl-paste, xclip or pngpaste): set clipboard_image in '
      .. "setup(), e.g. { 'wl-paste', '--type', 'image/png' }"
  end
  local ok, proc = pcall(vim.system, cmd, { text = false })
  if not ok then
    return nil, ('%s cannot be run: %s'):format(cmd[1], tostring(proc))
  end
  local res = proc:wait(5000)
  local data = res.stdout or ''
  if res.code ~= 0 or data == '' then
    local why = vim.trim((res.stderr or ''):gsub('\n.*', ''))
    return nil, ('%s found no image on the clipboard%s'):format(cmd[1], why ~= '' and (' (' .. why .. ')') or '')
  end
  if #data > M.MAX_IMAGE then
    return nil, ('the clipboard image is %d bytes; images are limited to %d MB'):format(#data, M.MAX_IMAGE / 1048576)
  end
  pasted = pasted + 1
  local name = ('paste-%d.%s'):format(pasted, extension(data))
  return { kind = 'image', uri = 'clipboard:' .. name, name = name, data = vim.base64.encode(data) }
end

--- `:OpenProgramImage [file]`: queue an image for the next message (no file: the clipboard's).
---@param path string
function M.attach_image(path)
  local panel = require('openprogram.panel')
  local item, err
  if vim.trim(path or '') == '' then
    item, err = M.clipboard_image()
  else
    item, err = M.image(path)
  end
  panel.open(true)
  if not item then
    panel.note('image not attached: ' .. err)
    return
  end
  M.add({ item })
  panel.note('attached ' .. M.label(item) .. ': it goes with your next message')
end

---@param n integer
---@return string
local function size_text(n)
  return n >= 1048576 and ('%.1f MB'):format(n / 1048576) or n >= 1024 and ('%d KB'):format(n / 1024)
    or ('%d B'):format(n)
end

--- One line naming an attachment, for the transcript (`[selection app.py:3-5]`,
--- `[image shot.png 640x480 12 KB]`).
---@param item table
---@return string
function M.label(item)
  if item.kind == 'image' then
    local name = item.name or (item.path and vim.fn.fnamemodify(item.path, ':t')) or 'image'
    local dims = item.width and (' %dx%d'):format(item.width, item.height) or ''
    local size = item.size or (item.data and math.floor(#item.data * 3 / 4))
    return ('[image %s%s%s]'):format(name, dims, size and (' ' .. size_text(size)) or '')
  end
  local path = item.path or vim.fn.fnamemodify(vim.uri_to_fname(item.uri), ':~:.')
  local where = ''
  if item.range and item.kind ~= 'file' then
    local first, last = item.range.start.line + 1, item.range['end'].line
    if item.range['end'].character > 0 or last < first then
      last = last + 1
    end
    where = first == last and (':' .. first) or (':%d-%d'):format(first, last)
  end
  local extra = item.kind == 'diagnostics' and (' (%d)'):format(#(item.diagnostics or {})) or ''
  local name = item.kind == 'symbol' and type(item.name) == 'string' and (item.name .. ' ') or ''
  return ('[%s %s%s%s%s]'):format(item.kind, name, path, where, extra)
end

--- Queue attachments for the next message.
---@param items table[]
function M.add(items)
  vim.list_extend(M.pending, items)
end

--- The attachments of a message being sent: the queued ones, `#buffer`, and each `@path`
--- naming a workspace file; clears the queue.
---@param text string
---@return table[]
function M.take(text)
  local out = M.pending
  M.pending = {}
  if text:find('#buffer', 1, true) then
    local buf = work_buffer()
    if buf then
      table.insert(out, M.buffer(buf))
    end
  end
  for path in text:gmatch('@([%w%._%-/]+)') do
    local full = vim.fn.fnamemodify(path, ':p')
    if vim.fn.filereadable(full) == 1 then
      table.insert(out, { kind = 'file', uri = vim.uri_from_fname(full) })
    end
  end
  return out
end

--- `:'<,'>OpenProgram [text]`: send the range with `text`, or queue it for the next message.
---@param line1 integer
---@param line2 integer
---@param text string
function M.send_range(line1, line2, text)
  local buf = work_buffer() or vim.api.nvim_get_current_buf()
  local items = M.range(buf, line1, line2)
  local panel = require('openprogram.panel')
  if vim.trim(text or '') == '' then
    M.add(items)
    panel.open(true)
    panel.note('attached ' .. table.concat(vim.tbl_map(M.label, items), ' ') .. ': it goes with your next message')
    return
  end
  M.add(items)
  panel.open(false)
  require('openprogram.chat').send(text)
end

--- 'completefunc' of the input buffer: `@file`, `/command`, `#buffer`.
---@param findstart integer
---@param base string
---@return integer|table
function M.complete(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line():sub(1, vim.fn.col('.') - 1)
    local start = line:find('[@/#][^%s@#]*$')
    return start and start - 1 or -3
  end
  local sigil, query = base:sub(1, 1), base:sub(2)
  local client = require('openprogram.client')
  local protocol = require('openprogram.protocol')
  if sigil == '#' then
    return vim.startswith('buffer', query) and { { word = '#buffer', menu = 'the current buffer' } } or {}
  end
  if sigil == '/' then
    local res = client.request_sync(protocol.methods.COMMANDS, {}, 3000)
    local out = {}
    for _, c in ipairs(res and res.commands or {}) do
      if vim.startswith(c.name, query) then
        table.insert(out, { word = '/' .. c.name, menu = c.description, info = c.argumentHint })
      end
    end
    return out
  end
  local res = client.request_sync(protocol.methods.FILES, { query = query, limit = 50 }, 3000)
  return vim.tbl_map(function(f)
    return { word = '@' .. f.path, menu = 'file' }
  end, res and res.files or {})
end

return M
