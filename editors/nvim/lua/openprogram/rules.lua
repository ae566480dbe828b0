--[[
`:OpenProgramRules`: the standing approval rules (`openprogram/rules`) in `vim.ui.select`;
choosing one asks to revoke it (`openprogram/revokeRule`), which takes effect at once. Rules
from the `rules` setting are listed but change only with the setting. Works with any
`vim.ui.select` override: `opts.kind` is 'openprogram.rules' for the list and
'openprogram.rules.revoke' for the confirmation.
]]

local client = require('openprogram.client')
local protocol = require('openprogram.protocol')

local M = {}

---@class openprogram.Rule
---@field id string
---@field decision 'allow'|'deny'
---@field kind string
---@field tool string
---@field value? string
---@field scope 'session'|'workspace'
---@field sessionId? string
---@field origin 'prompt'|'settings'|'legacy'
---@field createdAt string
---@field toolCallId? string
---@field description string
---@field revocable boolean

--- One line for a rule: what it covers, its scope, where it came from.
---@param r openprogram.Rule
---@return string
function M.format(r)
  local verb = r.decision == 'allow' and 'allow' or 'reject'
  local scope = r.scope == 'session' and 'this session' or 'workspace'
  local origin = r.origin == 'settings' and 'from settings'
    or ((r.origin == 'legacy' and 'older rule' or 'prompt') .. (r.createdAt ~= '' and (' ' .. r.createdAt) or ''))
  return ('%s: %s  [%s · %s]'):format(verb, r.description ~= '' and r.description or (r.value or r.tool), scope, origin)
end

--- Revoke one rule, then report.
---@param rule openprogram.Rule
---@param done? fun(ok: boolean)
function M.revoke(rule, done)
  client.request(protocol.methods.REVOKE_RULE, { ruleId = rule.id }, function(err)
    if err then
      vim.notify('openprogram: ' .. (err.message or 'revoke failed'), vim.log.levels.ERROR)
    else
      vim.notify(('openprogram: revoked %s; the next such call asks again'):format(M.format(rule)))
    end
    if done then
      done(not err)
    end
  end)
end

--- List the rules and offer to revoke one.
---@param done? fun(revoked: boolean)
function M.pick(done)
  local finish = done or function() end
  local S = require('openprogram.panel').state
  local params = S.session_id and { sessionId = S.session_id } or {}
  local ok = client.request(protocol.methods.RULES, params, function(err, res)
    if err then
      vim.notify('openprogram: ' .. (err.message or 'could not list rules'), vim.log.levels.ERROR)
      return finish(false)
    end
    local rules = (res and res.rules) or {}
    if #rules == 0 then
      vim.notify('openprogram: no approval rules; every edit and command asks')
      return finish(false)
    end
    vim.ui.select(rules, {
      prompt = 'Approval rules (choose one to revoke it)',
      kind = 'openprogram.rules',
      format_item = M.format,
    }, function(rule)
      if not rule then
        return finish(false)
      end
      if not rule.revocable then
        vim.notify('openprogram: this rule comes from the openprogram rules setting; remove it there')
        return finish(false)
      end
      vim.ui.select({ 'Revoke', 'Keep' }, {
        prompt = 'Revoke ' .. M.format(rule) .. '?',
        kind = 'openprogram.rules.revoke',
      }, function(choice)
        if choice ~= 'Revoke' then
          return finish(false)
        end
        M.revoke(rule, finish)
      end)
    end)
  end)
  if not ok then
    vim.notify('openprogram: the server is not running (see :checkhealth openprogram)', vim.log.levels.WARN)
    finish(false)
  end
end

return M
