--[[
Answers `openprogram/requestPermission`: in our float by default (`approval_float.lua`), or with
`approvals = { ui = 'select' }` through `vim.ui.select` over the server's options, opened only
once the user is idle (`idle.lua`: Normal mode, no typeahead, no key for a moment), so keys
typed for another window never answer it.

The prompt names the tool's title; for an edit the proposed diff opens in a preview split
(filetype diff) while the choice is pending. When the server gives up on the prompt (timeout,
turn cancelled) it sends a `permission.withdrawn` event naming the toolCallId; `chat.lua` then
settles exactly this prompt (`async.withdraw_key`), which closes the choice and the preview. Works with any `vim.ui.select` override (telescope,
dressing, snacks, fzf-lua): `opts.kind` is 'openprogram.permission'.

Example params:
  { sessionId = 's1', turnId = 't1',
    toolCall = { toolCallId = 'c1', name = 'write_file', kind = 'edit', title = 'Write hello.txt',
                 input = {...}, diff = { path = 'hello.txt', oldText = '', newText = 'hi\n' } },
    options = { { optionId = 'allow_once', name = 'Allow once', kind = 'allow_once' }, ... } }
]]

local async = require('openprogram.async')

local M = {}

---@class openprogram.PermissionOption
---@field optionId string
---@field name string
---@field kind 'allow_once'|'allow_always'|'reject_once'|'reject_always'

---@class openprogram.PermissionToolCall
---@field toolCallId string
---@field name string
---@field kind string
---@field title string
---@field input table
---@field diff? {path: string, oldText: string, newText: string, hunks?: openprogram.PreviewHunk[]}
---@field mcp? {server: string, tool: string} Set when an MCP server's tool asks.
---@field sandboxed? boolean commands: whether it runs in the sandbox
---@field sandboxNote? string why not, when it does not
---@field parts? string[] the simple commands of an execute call

---@class openprogram.PermissionParams
---@field sessionId string
---@field turnId string
---@field toolCall openprogram.PermissionToolCall
---@field options openprogram.PermissionOption[]

--- A unified diff of an edit proposal, as lines.
---@param d {path: string, oldText?: string, newText?: string}
---@return string[]
function M.diff_lines(d)
  local old, new = d.oldText or '', d.newText or ''
  if old ~= '' and old:sub(-1) ~= '\n' then
    old = old .. '\n'
  end
  if new ~= '' and new:sub(-1) ~= '\n' then
    new = new .. '\n'
  end
  local differ = (vim.text and vim.text.diff) or vim.diff
  local body = differ(old, new, { result_type = 'unified', ctxlen = 3 }) --[[@as string]]
  local lines = { '--- a/' .. d.path, '+++ b/' .. d.path }
  vim.list_extend(lines, vim.split(body, '\n', { trimempty = true }))
  return lines
end

--- The arguments of an MCP call, pretty-printed, as lines (the whole input, never cut).
---@param tc openprogram.PermissionToolCall
---@return string[]
function M.argument_lines(tc)
  local mcp = tc.mcp or {}
  local lines = {
    ('// MCP server: %s'):format(tostring(mcp.server)),
    ('// tool: %s'):format(tostring(mcp.tool)),
    '// arguments:',
  }
  local input = type(tc.input) == 'table' and tc.input or {}
  local keys = vim.tbl_keys(input)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  table.insert(lines, '{')
  for i, k in ipairs(keys) do
    local ok, value = pcall(vim.json.encode, input[k])
    local text = ('  %s: %s%s'):format(vim.json.encode(tostring(k)), ok and value or vim.inspect(input[k]),
      i < #keys and ',' or '')
    -- one line per argument; long values wrap in the split instead of being cut
    vim.list_extend(lines, vim.split(text, '\n', { plain = true }))
  end
  table.insert(lines, '}')
  return lines
end

--- Open a preview split with some lines; returns a function that closes it.
---@param lines string[]
---@param filetype string
---@param name string
---@param bar string
---@return fun()
local function preview(lines, filetype, name, bar)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = filetype
  vim.bo[buf].modifiable = false
  pcall(vim.api.nvim_buf_set_name, buf, 'openprogram://approve/' .. name)
  local prev = vim.api.nvim_get_current_win()
  local layout = vim.fn.winrestcmd() -- closing the split must not resize the panel and input
  vim.cmd('botright ' .. math.min(20, vim.api.nvim_buf_line_count(buf) + 1) .. 'split')
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.wo[win].winfixheight = true
  vim.wo[win].winbar = bar
  if vim.api.nvim_win_is_valid(prev) then
    vim.api.nvim_set_current_win(prev)
  end
  return function()
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
      pcall(vim.cmd, layout)
    end
  end
end

--- The prompt shown by vim.ui.select: the title, then every part of a compound command or the
--- task of a child agent, so the choice covers exactly what is shown.
---@param tc openprogram.PermissionToolCall
---@return string
function M.prompt(tc)
  local title = tc.title or tc.name
  if type(tc.mcp) == 'table' then
    local ok, args = pcall(vim.json.encode, tc.input or vim.empty_dict())
    return ('Allow MCP server %s, tool %s [%s] with %s?'):format(
      tostring(tc.mcp.server), tostring(tc.mcp.tool), tc.kind or 'other', ok and args or '?')
  end
  local box = ''
  if tc.sandboxed == true then
    box = ' (sandboxed)'
  elseif tc.sandboxed == false then
    box = (' (NOT sandboxed: %s)'):format(tc.sandboxNote or 'no sandbox')
  end
  local lines = {}
  local input = type(tc.input) == 'table' and tc.input or {}
  if type(tc.parts) == 'table' and #tc.parts > 1 then
    for _, part in ipairs(tc.parts) do
      table.insert(lines, '  $ ' .. part)
    end
  end
  if tc.name == 'agent' and type(input.prompt) == 'string' then
    table.insert(lines, '  task: ' .. input.prompt)
  end
  local head = ('Allow %s [%s]: %s%s?'):format(tc.name, tc.kind or 'other', title, box)
  if #lines == 0 then
    return head
  end
  return table.concat(lines, '\n') .. '\n' .. head
end

--- A panel note about this prompt, when it belongs to the session the panel shows (a prompt of
--- another session still asks, it just leaves this conversation alone).
---@param params openprogram.PermissionParams
---@param text string
local function note(params, text)
  local S = require('openprogram.panel').state
  if params.sessionId == nil or params.sessionId == S.session_id then
    require('openprogram.panel').note(text)
  end
end

--- Ask the user and return the response for the server.
---@param params openprogram.PermissionParams
---@param ctx? lsp.HandlerContext
---@return table
function M.handle(params, ctx)
  local _ = ctx
  local tc = params.toolCall or {}
  local options = params.options or {}
  local use_float = (require('openprogram.config').options.approvals or {}).ui ~= 'select'
  local close = function() end
  local ok, c = true, nil
  if use_float then
    ok = false -- the float shows the whole request itself
  elseif tc.diff and tc.diff.path then
    ok, c = pcall(preview, M.diff_lines(tc.diff), 'diff', tc.diff.path,
      ('Proposed change to %s (choose in the prompt)'):format(tc.diff.path))
  elseif type(tc.mcp) == 'table' then
    ok, c = pcall(preview, M.argument_lines(tc), 'jsonc', tc.toolCallId or 'mcp',
      ('MCP %s · %s: the arguments to approve (choose in the prompt)'):format(
        tostring(tc.mcp.server), tostring(tc.mcp.tool)))
  end
  if ok and c then
    local closed = false
    close = function()
      if not closed then
        closed = true
        c()
      end
    end
  end
  note(params, ('approval asked: %s'):format(tc.title or tc.name or '?'))
  -- Blocking UIs (the default inputlist) draw over a stale screen unless we redraw first.
  vim.cmd('redraw')
  local timeout = require('openprogram.config').prompt_wait_ms()
  local untrack = function() end
  local choice = async.await(function(resolve)
    if use_float then
      local settle = require('openprogram.approval_float').ask(params, resolve)
      -- a withdrawal (timeout, turn ended) closes the float as well as answering
      untrack = async.track(params.turnId, settle, tc.toolCallId)
      return
    end
    -- keyed by turn id + call id: the pair the server guarantees unique
    local answered = false
    local cancel_wait = function() end
    untrack = async.track(params.turnId, function(v)
      answered = true
      cancel_wait() -- withdrawn before the user was idle: the prompt never opens
      close() -- withdrawn: the preview goes with the prompt, in the same tick
      resolve(v)
    end, tc.toolCallId)
    local choose = require('openprogram.choose')
    local row = choose.pin('permission') -- a late answer must still find its cursor row
    -- vim.ui.select may take the keyboard (inputlist): only once the user is idle
    cancel_wait = require('openprogram.idle').run(function()
      vim.ui.select(options, {
        prompt = M.prompt(tc),
        kind = 'openprogram.permission',
        format_item = function(o)
          return o.name
        end,
      }, function(item)
        choose.unpin(row)
        if answered and item then
          -- the picker outlived its request (a picker plugin cannot be closed from here)
          vim.notify(('openprogram: too late: the approval of %s was already withdrawn; nothing ran'):format(
            tc.title or tc.name or '?'), vim.log.levels.WARN)
          return
        end
        answered = true
        resolve(item or false)
      end)
    end)
  end, timeout, false)
  untrack()
  close()
  if type(choice) == 'table' and choice.optionId then
    if type(choice.acceptedHunks) == 'table' then -- a hunk review's answer
      local shown = vim.tbl_map(tostring, choice.acceptedHunks)
      note(params, ('%s, hunks %s of %d: %s'):format(choice.name or choice.optionId,
        table.concat(shown, ', '), #((tc.diff or {}).hunks or {}), tc.title or tc.name or '?'))
      return { outcome = 'selected', optionId = choice.optionId, acceptedHunks = choice.acceptedHunks }
    end
    note(params, ('%s: %s'):format(choice.name or choice.optionId, tc.title or tc.name or '?'))
    return { outcome = 'selected', optionId = choice.optionId }
  end
  if type(choice) == 'table' and choice.withdrawn then
    note(params, ('approval withdrawn (%s): %s'):format(
      tostring(choice.withdrawn), tc.title or tc.name or '?'))
  else
    note(params, 'approval cancelled: ' .. (tc.title or tc.name or '?'))
  end
  return { outcome = 'cancelled' }
end

return M
