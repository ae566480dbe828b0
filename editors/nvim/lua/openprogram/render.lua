--[[
Pure rendering of history into panel lines (no buffers, no LSP), so it is testable alone.

  local lines, index = require('openprogram.render').history(nodes)
  -- lines: { '## You · 10:02', 'write hello.txt', '', '## Assistant · 10:02', ... }
  -- index: { { line = 0, id = 'u1', role = 'user' }, { line = 3, id = 'u1_reply', ... } }
]]

local M = {}

local ICON = { pending = '○', in_progress = '…', completed = '✓', failed = '✗' }

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

---@param tc table a Node.toolCalls entry
---@return string
local function history_tool_line(tc)
  local line = M.tool_line(tool_title(tc), tc.kind, tc.status)
  local out = type(tc.output) == 'string' and vim.trim(tc.output) or ''
  if out ~= '' and not out:find('\n') and #out <= 60 then
    line = line .. ' → ' .. out
  end
  return line
end

--- A message's body: its text, with tool calls placed after the model step that made them
--- (`metadata.steps` holds each step's text) so the order matches what streamed.
---@param node table
---@return string[]
function M.body_lines(node)
  local out = {}
  local calls = type(node.toolCalls) == 'table' and node.toolCalls or {}
  local steps = type(node.metadata) == 'table' and node.metadata.steps or nil
  local function add_text(text)
    if type(text) == 'string' and text ~= '' then
      if #out > 0 then
        table.insert(out, '')
      end
      vim.list_extend(out, vim.split(text, '\n', { plain = true }))
    end
  end
  local placed = {}
  if type(steps) == 'table' and #steps > 0 then
    for i, text in ipairs(steps) do
      add_text(text)
      for j, tc in ipairs(calls) do
        if tc.step == i - 1 then
          table.insert(out, history_tool_line(tc))
          placed[j] = true
        end
      end
    end
  else
    add_text(node.text)
  end
  for j, tc in ipairs(calls) do
    if not placed[j] then
      table.insert(out, history_tool_line(tc))
    end
  end
  return out
end

--- What follows a message's body: how it ended, if not well, and the checkpoint it made.
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
  if type(meta.checkpointId) == 'string' then
    table.insert(out, '')
    table.insert(out, ('> _checkpoint %s · :OpenProgramCheckpoints_'):format(meta.checkpointId))
  end
  return out
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
      local label = ({ user = 'You', assistant = 'Assistant', summary = 'Summary' })[role]
      table.insert(index, { line = #lines, id = node.id, role = role, predecessor = node.predecessor })
      table.insert(lines, ('## %s%s'):format(label, clock(node.createdAt)))
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
    end
  end
  return lines, index
end

return M
