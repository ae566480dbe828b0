--[[
Pure rendering of history into panel lines (no buffers, no LSP), so it is testable alone.

  local lines, index = require('openprogram.render').history(nodes)
  -- lines: { '## You · 10:02', 'write hello.txt', '', '## Assistant · 10:02', ... }
  -- index: { { line = 0, id = 'u1', role = 'user' }, { line = 3, id = 'u1_reply', ... } }
]]

local M = {}

local ICON = { pending = '○', in_progress = '…', completed = '✓', failed = '✗', cancelled = '⊘' }

---@param iso? string
---@return string
local function clock(iso)
  local hm = type(iso) == 'string' and iso:match('T(%d%d:%d%d)') or nil
  return hm and (' · ' .. hm) or ''
end

--- One line describing a tool call.
---@param title string
---@param kind? string
---@param status? string
---@return string
function M.tool_line(title, kind, status)
  status = status or 'pending'
  local label = status == 'in_progress' and 'running' or status
  return ('- %s %s · %s · %s'):format(ICON[status] or '•', title, kind or 'other', label)
end

--- A token count as the panel shows it (`1.3k`).
---@param n any
---@return string
function M.tokens(n)
  n = tonumber(n) or 0
  if n >= 1000 then
    return ('%.1fk'):format(n / 1000)
  end
  return tostring(n)
end

--- The token usage of an assistant message (`metadata.usage`), for its header: ` · ↑1.3k ↓52`.
---@param node table
---@return string
function M.usage_suffix(node)
  local usage = type(node.metadata) == 'table' and node.metadata.usage or nil
  if node.role ~= 'assistant' or type(usage) ~= 'table' then
    return ''
  end
  local input, output = tonumber(usage.inputTokens) or 0, tonumber(usage.outputTokens) or 0
  if input == 0 and output == 0 then
    return ''
  end
  return (' · ↑%s ↓%s'):format(M.tokens(input), M.tokens(output))
end

---@param tc table a Node.toolCalls entry
---@return string
local function tool_title(tc)
  if type(tc.title) == 'string' and tc.title ~= '' then
    return tc.title
  end
  local input = type(tc.input) == 'table' and tc.input or {}
  local arg = input.path or input.command or input.pattern or input.question
  return arg and ('%s %s'):format(tc.name, arg) or tc.name
end

--- The suffix naming why a call was refused before it ran (a hook, a policy, admission, ...).
---@param reason any
---@return string
function M.blocked_suffix(reason)
  if type(reason) ~= 'string' or vim.trim(reason) == '' then
    return ''
  end
  return ' → blocked: ' .. vim.trim(reason):gsub('%s*\n%s*', ' ')
end

--- Prefix of a tool's output line folded under its line (`za` / <CR> opens it).
M.OUTPUT = '    │ '
--- Prefix of a failed call's first output lines, shown without opening anything.
M.OUTPUT_SHOWN = '    ! '
M.OUTPUT_MAX = 200 -- output lines in the panel (the rest: a line saying how many)
M.FAILURE_SHOWN = 3

--- A call's output as the panel shows it: a suffix for its line (one short line of output)
--- and the lines under it (folded; a failure's first lines shown).
---@param output any
---@param status? string
---@return string suffix
---@return string[] lines
function M.tool_output(output, status)
  local out = type(output) == 'string' and vim.trim(output) or ''
  if out == '' then
    return '', {}
  end
  if not out:find('\n') and #out <= 60 then
    return ' → ' .. out, {}
  end
  local all = vim.split(out, '\n', { plain = true })
  local lines = {}
  for i, l in ipairs(all) do
    if i > M.OUTPUT_MAX then
      table.insert(lines, M.OUTPUT .. ('… %d more lines'):format(#all - M.OUTPUT_MAX))
      break
    end
    local shown = status == 'failed' and i <= M.FAILURE_SHOWN
    table.insert(lines, (shown and M.OUTPUT_SHOWN or M.OUTPUT) .. l:gsub('\r', ''))
  end
  return '', lines
end

---@param tc table a Node.toolCalls entry
---@return string
local function history_tool_line(tc)
  -- A call the turn's cancel cut (running, waiting for approval, not started) says so.
  local line = M.tool_line(tool_title(tc), tc.kind, tc.cancelled == true and 'cancelled' or tc.status)
  if tc.cancelled == true then
    return line
  end
  if type(tc.blockedReason) == 'string' and tc.blockedReason ~= '' then
    return line .. M.blocked_suffix(tc.blockedReason)
  end
  return line .. (M.tool_output(tc.output, tc.status))
end

local PLAN_MARK = { pending = '[ ]', in_progress = '[~]', completed = '[x]' }

--- The agent's to-do list (`plan.updated` entries, or a `todo_write` call's `todos`) as
--- checklist lines; an item in progress shows its `activeForm` when it has one.
---@param entries any
---@return string[]
function M.plan_lines(entries)
  local out = {}
  for _, e in ipairs(type(entries) == 'table' and entries or {}) do
    if type(e) == 'table' and type(e.content) == 'string' then
      local text = e.content
      if e.status == 'in_progress' and type(e.activeForm) == 'string' and e.activeForm ~= '' then
        text = e.activeForm
      end
      table.insert(out, ('  %s %s'):format(PLAN_MARK[e.status] or '[ ]', (text:gsub('\n', ' '))))
    end
  end
  return out
end

--- A history tool call's lines: its line, and for a completed `todo_write` its checklist.
---@param tc table a Node.toolCalls entry
---@return string[]
local function history_tool_lines(tc)
  local out = { history_tool_line(tc) }
  if tc.name == 'todo_write' and tc.status == 'completed' and type(tc.input) == 'table' then
    vim.list_extend(out, M.plan_lines(tc.input.todos))
  elseif tc.cancelled ~= true and not (type(tc.blockedReason) == 'string' and tc.blockedReason ~= '') then
    local _, lines = M.tool_output(tc.output, tc.status)
    vim.list_extend(out, lines)
  end
  return out
end

--- The first 12 characters of an id (`c` + time + 2 random characters), as
--- `openprogram-lsp checkpoints` prints them; the server accepts any unique prefix of 6 or more.
---@param id any
---@return string
function M.short_id(id)
  id = tostring(id)
  return #id > 12 and id:sub(1, 12) or id
end

local INTERJECTION_LABEL = { steer = 'steering', follow_up = 'follow-up' }
local FOLLOW_UP_LINES = 6 -- a follow-up carries a whole report: show its start

--- A user message fed into a running turn (steering or a follow-up), as quoted lines.
---@param item {kind?: string, text?: string}
---@return string[]
function M.interjection_lines(item)
  local label = INTERJECTION_LABEL[item.kind] or tostring(item.kind or 'message')
  local body = vim.split(vim.trim(tostring(item.text or '')), '\n', { plain = true })
  local cut = 0
  if item.kind ~= 'steer' and #body > FOLLOW_UP_LINES then
    cut = #body - FOLLOW_UP_LINES
    body = vim.list_slice(body, 1, FOLLOW_UP_LINES)
  end
  local out = { ('> **%s** · %s'):format(label, body[1] or '') }
  for i = 2, #body do
    table.insert(out, body[i] == '' and '>' or ('> ' .. body[i]))
  end
  if cut > 0 then
    table.insert(out, ('> … (+%d lines)'):format(cut))
  end
  return out
end

--- The one line a thought (the model's reasoning) shows as: collapsed, `gT` opens it.
---@param text string the thought so far
---@param streaming? boolean still coming
---@return string
function M.thought_line(text, streaming)
  local n = #vim.split(vim.trim(text), '\n', { plain = true })
  if streaming then
    return ('> ▸ _thinking… · %d line%s · gT to read_'):format(n, n == 1 and '' or 's')
  end
  return ('> ▸ _thought · %d line%s · gT to read_'):format(n, n == 1 and '' or 's')
end

--- The thoughts stored on a reply node (`metadata.thoughts`), joined per model step (0-based).
---@param node table
---@return table<integer, string>
function M.thoughts_by_step(node)
  local meta = type(node.metadata) == 'table' and node.metadata or {}
  local out = {} ---@type table<integer, string>
  for _, t in ipairs(type(meta.thoughts) == 'table' and meta.thoughts or {}) do
    if type(t) == 'table' and type(t.text) == 'string' and t.text ~= '' then
      local k = tonumber(t.step) or 0
      out[k] = out[k] and (out[k] .. '\n\n' .. t.text) or t.text
    end
  end
  return out
end

--- A message's body: its text, with tool calls placed after the model step that made them
--- (`metadata.steps` holds each step's text) so the order matches what streamed, and the
--- steering / follow-up messages (`metadata.interjections`) before the step that saw them.
---@param node table
---@return string[]
function M.body_lines(node)
  local out = {}
  local calls = type(node.toolCalls) == 'table' and node.toolCalls or {}
  local meta = type(node.metadata) == 'table' and node.metadata or {}
  local steps = meta.steps
  local function add_text(text)
    if type(text) == 'string' and text ~= '' then
      if #out > 0 then
        table.insert(out, '')
      end
      vim.list_extend(out, vim.split(text, '\n', { plain = true }))
    end
  end
  local before = {} ---@type table<integer, table[]>
  local keys = {} ---@type integer[]
  for _, item in ipairs(type(meta.interjections) == 'table' and meta.interjections or {}) do
    if type(item) == 'table' then
      local k = math.max(0, tonumber(item.beforeStep) or 0)
      if not before[k] then
        before[k] = {}
        table.insert(keys, k)
      end
      table.insert(before[k], item)
    end
  end
  table.sort(keys)
  local shown = {}
  local function add_interjections(k)
    for _, item in ipairs(before[k] or {}) do
      if #out > 0 then
        table.insert(out, '')
      end
      vim.list_extend(out, M.interjection_lines(item))
    end
    shown[k] = true
  end
  local placed = {}
  local thoughts = M.thoughts_by_step(node)
  if type(steps) == 'table' and #steps > 0 then
    for i, text in ipairs(steps) do
      add_interjections(i - 1)
      if thoughts[i - 1] then -- collapsed: one line, the text behind gT
        if #out > 0 then
          table.insert(out, '')
        end
        table.insert(out, M.thought_line(thoughts[i - 1]))
      end
      add_text(text)
      for j, tc in ipairs(calls) do
        if tc.step == i - 1 then
          vim.list_extend(out, history_tool_lines(tc))
          placed[j] = true
        end
      end
    end
  else
    add_text(node.text)
  end
  for j, tc in ipairs(calls) do
    if not placed[j] then
      vim.list_extend(out, history_tool_lines(tc))
    end
  end
  for _, k in ipairs(keys) do -- fed in after the last step (just before a cancel), or no steps
    if not shown[k] then
      add_interjections(k)
    end
  end
  return out
end

--- What follows a message's body: how it ended, if not well, its warnings, and the checkpoint
--- it made.
---@param node table
---@return string[]
function M.footer_lines(node)
  local out = {}
  local meta = type(node.metadata) == 'table' and node.metadata or {}
  local last = M.body_lines(node)
  local said = table.concat(last, '\n')
  if node.status == 'error' or node.status == 'cancelled' or node.status == 'interrupted' then
    local why = type(meta.error) == 'table' and meta.error.message or nil
    if not said:find('[' .. node.status, 1, true) then
      table.insert(out, ('_(%s%s)_'):format(node.status, why and (': ' .. why) or ''))
    end
  end
  for _, w in ipairs(type(meta.warnings) == 'table' and meta.warnings or {}) do
    local text = type(w) == 'table' and w.message or w
    table.insert(out, '')
    table.insert(out, ('> warning: %s'):format((tostring(text):gsub('\n', ' '))))
  end
  if type(meta.checkpointId) == 'string' then
    table.insert(out, '')
    table.insert(out, ('> checkpoint %s · :OpenProgramCheckpoints'):format(M.short_id(meta.checkpointId)))
  end
  return out
end

--- The header label of a chain message: who said it (a follow-up turn's message is a report
--- brought back from a subagent or another branch, not something the user typed).
---@param node table
---@return string
function M.label(node)
  local source = type(node.metadata) == 'table' and node.metadata.source or nil
  if node.role == 'user' then
    return ({ follow_up = 'Follow-up', send_message = 'Message', agent_spawn = 'Task' })[source] or 'You'
  end
  return ({ assistant = 'Assistant', summary = 'Summary' })[node.role] or node.role
end

--- A `system` node with `metadata.kind` "attach" (an outcome brought back to this message), as
--- one quoted line.
---@param node table
---@return string
function M.attach_line(node)
  local meta = type(node.metadata) == 'table' and node.metadata or {}
  local first = vim.split(vim.trim(tostring(node.text or '')), '\n', { plain = true })[1] or ''
  if #first > 80 then
    first = first:sub(1, 77) .. '...'
  end
  local what = meta.sourceKind == 'message' and 'reply' or 'result'
  local status = type(meta.status) == 'string' and (' (' .. meta.status .. ')') or ''
  return ('> ↩ %s%s: %s'):format(what, status, first)
end

--- Lines for a history (root -> head), one header per message, and the header index.
---@param nodes table[] Node list from openprogram/history
---@return string[] lines
---@return openprogram.PanelNode[] index 0-based header line of each message
function M.history(nodes)
  local lines, index = {}, {}
  for _, node in ipairs(nodes or {}) do
    local role = node.role
    if role == 'user' or role == 'assistant' or role == 'summary' then
      if #lines > 0 then
        table.insert(lines, '')
      end
      local label = M.label(node)
      table.insert(index, { line = #lines, id = node.id, role = role, predecessor = node.predecessor })
      table.insert(lines, ('## %s%s%s'):format(label, clock(node.createdAt), M.usage_suffix(node)))
      if role == 'user' and type(node.context) == 'table' and #node.context > 0 then
        -- what the user attached, as the model saw it (context attachments)
        table.insert(lines, table.concat(vim.tbl_map(require('openprogram.attach').label, node.context), ' '))
      end
      vim.list_extend(lines, M.body_lines(node))
      vim.list_extend(lines, M.footer_lines(node))
    elseif role == 'tool' then
      -- Tool results belong to the assistant section above them (not a fork point of their own).
      local text = type(node.text) == 'string' and node.text or ''
      local body = vim.split(text, '\n', { plain = true, trimempty = true })
      local first = body[1] or ''
      if #first > 80 then
        first = first:sub(1, 77) .. '...'
      end
      table.insert(lines, ('  ↳ %s%s'):format(first, #body > 1 and (' (+%d lines)'):format(#body - 1) or ''))
    elseif role == 'system' and type(node.metadata) == 'table' and node.metadata.kind == 'attach' then
      table.insert(lines, '')
      table.insert(lines, M.attach_line(node))
    end
  end
  return lines, index
end

return M
