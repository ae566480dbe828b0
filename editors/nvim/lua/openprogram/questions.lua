--[[
Answers `openprogram/askQuestion`. By default (`approvals = { ui = 'float' }`) in a float of its
own like an approval (`approval_float.lua`): it never takes the cursor, and is answered only
after the user moves into it (`:OpenProgramApproval`, `ga` in the panel). With `approvals = {
ui = 'select' }`: `vim.ui.select` when the question has options (plus an "Other…" entry when
free text is allowed), `vim.ui.input` otherwise, opened only once the user is idle
(`idle.lua`), so keys typed for another window never answer it.

Example params:
  { sessionId = 's1', turnId = 't1', questionId = 'q1', question = 'Which file?',
    options = { 'a.txt', 'b.txt' }, allowFreeText = true }
Result: { answer = 'a.txt' } or { cancelled = true }.
A prompt closes by itself when `question.rejected` (timeout, cancelled turn) or
`question.replied` (answered elsewhere, e.g. `openprogram/answer`) names its questionId.
]]

local async = require('openprogram.async')

local M = {}

local OTHER = 'Other…'

---@class openprogram.QuestionParams
---@field sessionId string
---@field turnId string
---@field questionId string
---@field question string
---@field options? string[]
---@field allowFreeText boolean

--- Await one vim.ui call, withdrawable while the turn runs.
---@param turn_id? string
---@param question_id? string
---@param start fun(resolve: fun(value: any))
---@return any
local function ask(turn_id, question_id, start)
  local untrack = function() end
  local choose = require('openprogram.choose')
  local row = choose.pin('question') -- a picker plugin restores this cursor row when it answers
  local cancel_wait = function() end
  local value = async.await(function(resolve)
    untrack = async.track(turn_id, function(v)
      cancel_wait() -- withdrawn before the user was idle: never opened
      resolve(v)
    end, question_id)
    cancel_wait = require('openprogram.idle').run(function()
      start(function(v)
        choose.unpin(row) -- only when the picker itself answered (a late answer restores it too)
        resolve(v)
      end)
    end)
  end, require('openprogram.config').prompt_wait_ms(), false)
  cancel_wait()
  untrack()
  return value
end

---@param turn_id? string
---@param question_id? string
---@param question string
---@return string|false
local function input(turn_id, question_id, question)
  return ask(turn_id, question_id, function(resolve)
    vim.ui.input({ prompt = question .. ' ' }, function(text)
      resolve(text or false)
    end)
  end)
end

--- questionId -> true once the panel noted it (the event and the request may come in either order).
---@type table<string, boolean>
M.noted = {}

--- Questions waiting for the user's answer, oldest first (a redraw of the panel shows them again).
---@type {id?: string, sessionId?: string, turnId?: string, question: string}[]
M.waiting = {}

--- Drop waiting questions matching `pred` (answered; or their turn ended).
---@param pred fun(e: table): boolean
function M.forget(pred)
  for i = #M.waiting, 1, -1 do
    if pred(M.waiting[i]) then
      table.remove(M.waiting, i)
    end
  end
end

--- Lines for the questions of a session still waiting (what the panel appends after a redraw).
---@param sid? string
---@return string[]
function M.waiting_lines(sid)
  local out = {}
  for _, q in ipairs(M.waiting) do
    if q.sessionId == sid then
      vim.list_extend(out, { '', ('> question (waiting for your answer): %s'):format((q.question:gsub('\n', ' '))) })
    end
  end
  return out
end

--- Note a question in the panel once (when it belongs to the session on screen).
---@param params table question params or a `question.asked` event's data plus sessionId
function M.note(params)
  local id = params.questionId
  if type(id) == 'string' and M.noted[id] then
    return
  end
  if type(id) == 'string' then
    M.noted[id] = true
  end
  local panel = require('openprogram.panel')
  if params.sessionId == nil or params.sessionId == panel.state.session_id then
    panel.note('question: ' .. tostring(params.question or '?'))
  end
end

--- Ask the user and return the response for the server.
---@param params openprogram.QuestionParams
---@param ctx? lsp.HandlerContext
---@return table
function M.handle(params, ctx)
  local _ = ctx
  local question = params.question or '?'
  -- The panel shows the question before the prompt covers the screen.
  M.note(params)
  vim.cmd('redraw')
  local entry = { id = params.questionId, sessionId = params.sessionId, turnId = params.turnId,
    question = tostring(question) }
  table.insert(M.waiting, entry)
  local answer = M.answer(params, question) -- may yield (no pcall: PUC Lua cannot yield across it)
  M.forget(function(e)
    return e == entry
  end)
  if type(answer) == 'string' and answer ~= '' then
    return { answer = answer }
  end
  return { cancelled = true }
end

--- Run the prompt for a question: its answer, or false.
---@param params openprogram.QuestionParams
---@param question string
---@return string|false
function M.answer(params, question)
  if (require('openprogram.config').options.approvals or {}).ui ~= 'select' then
    local untrack = function() end
    local answer = async.await(function(resolve)
      local settle = require('openprogram.approval_float').ask_question(params, resolve)
      -- a withdrawal (timeout, turn ended, answered elsewhere) closes the float as well
      untrack = async.track(params.turnId, settle, params.questionId)
    end, require('openprogram.config').prompt_wait_ms(), false)
    untrack()
    return type(answer) == 'string' and answer or false
  end
  local options = params.options
  if options == vim.NIL then
    options = nil
  end
  local answer ---@type string|false
  if options and #options > 0 then
    local items = vim.list_extend({}, options)
    if params.allowFreeText then
      table.insert(items, OTHER)
    end
    answer = ask(params.turnId, params.questionId, function(resolve)
      vim.ui.select(items, { prompt = question, kind = 'openprogram.question' }, function(item)
        resolve(item or false)
      end)
    end)
    if answer == OTHER then
      answer = input(params.turnId, params.questionId, question)
    end
  else
    answer = input(params.turnId, params.questionId, question)
  end
  return answer
end

return M
