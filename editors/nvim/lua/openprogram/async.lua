--[[
Answering a server request after asynchronous UI (vim.ui.select / vim.ui.input).

Neovim runs each server->client request handler inside a coroutine (runtime lua/vim/lsp/rpc.lua,
`handle_body`: `vim.schedule(coroutine.wrap(...))`) and sends whatever the handler returns as
the response. So a handler can start the UI, yield, and be resumed from the UI callback; this is
what the built-in `window/showMessageRequest` handler does. When there is no coroutine (a
handler called directly), we fall back to a bounded `vim.wait`.
]]

local M = {}

---@class openprogram.PendingPrompt
---@field turn_id? string
---@field key? string what the server names it by: a toolCallId (approval) or questionId
---@field resolve fun(value: any)

--- Prompts waiting for the user, so the server can withdraw them (timeout, turn ended).
---@type openprogram.PendingPrompt[]
M.pending = {}

--- Remember a pending prompt; returns a function that forgets it.
---@param turn_id? string
---@param resolve fun(value: any)
---@param key? string toolCallId of an approval, questionId of a question
---@return fun()
function M.track(turn_id, resolve, key)
  local entry = { turn_id = turn_id, resolve = resolve, key = key }
  table.insert(M.pending, entry)
  return function()
    for i, e in ipairs(M.pending) do
      if e == entry then
        table.remove(M.pending, i)
        return
      end
    end
  end
end

--- Settle every pending prompt as unanswered (the server is gone).
function M.withdraw_all()
  local all = M.pending
  M.pending = {}
  for _, e in ipairs(all) do
    e.resolve(false)
  end
end

--- Drop `hits` from the pending list now, then settle them: a settled prompt is gone at once,
--- not when its coroutine next runs (an event handled in the same tick must not see it).
---@param hits openprogram.PendingPrompt[]
---@param value any
local function settle(hits, value)
  for _, hit in ipairs(hits) do
    for i, e in ipairs(M.pending) do
      if e == hit then
        table.remove(M.pending, i)
        break
      end
    end
  end
  for _, e in ipairs(hits) do
    e.resolve(value)
  end
end

--- Settle the pending prompts of a turn as unanswered (the turn is over).
---@param turn_id string
---@return integer withdrawn
function M.withdraw(turn_id)
  local hits = {}
  for _, e in ipairs(M.pending) do
    if e.turn_id == turn_id then
      table.insert(hits, e)
    end
  end
  settle(hits, false)
  return #hits
end

--- Settle the prompt the server names (`permission.withdrawn` toolCallId, `question.*`
--- questionId), whatever else is pending. When both the event and the prompt name a turn, the
--- turns must match: a call id alone never reaches a prompt of another turn.
---@param key string
---@param turn_id? string
---@param value? any what the prompt's await returns (default false: unanswered)
---@return integer withdrawn
function M.withdraw_key(key, turn_id, value)
  local hits = {}
  for _, e in ipairs(M.pending) do
    if e.key == key and (turn_id == nil or e.turn_id == nil or e.turn_id == turn_id) then
      table.insert(hits, e)
    end
  end
  settle(hits, value == nil and false or value)
  return #hits
end

--- Run `start(resolve)` and return the value passed to `resolve`, suspending the caller.
---@generic T
---@param start fun(resolve: fun(value: T))
---@param timeout_ms? integer bound for the no-coroutine fallback
---@param default? T value returned when the fallback times out
---@return T
function M.await(start, timeout_ms, default)
  local co, is_main = coroutine.running()
  local settled, value = false, nil
  if co and not is_main then
    local yielded = false
    start(function(v)
      if settled then
        return
      end
      settled, value = true, v
      -- vim.ui implementations may call back synchronously, before we yield: resume later.
      vim.schedule(function()
        if yielded and coroutine.status(co) == 'suspended' then
          coroutine.resume(co, v)
        end
      end)
    end)
    if settled and not yielded then
      -- Synchronous answer: no need to suspend at all.
      settled = true
      return value
    end
    yielded = true
    return coroutine.yield()
  end
  start(function(v)
    if not settled then
      settled, value = true, v
    end
  end)
  vim.wait(timeout_ms or 300000, function()
    return settled
  end, 20)
  if not settled then
    return default
  end
  return value
end

return M
