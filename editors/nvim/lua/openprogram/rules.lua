--[[
`:OpenProgramRules`: the standing approval rules (`openprogram/rules`, every workspace folder)
in `vim.ui.select`; choosing one asks to revoke it (`openprogram/revokeRule`), which takes effect
at once. A rule from the `rules` option of `setup()` is removed from the options of this Neovim
and the server is told (`workspace/didChangeConfiguration`), also at once; remove it from your
`setup()` call too, or it is back at the next start. Works with any `vim.ui.select` override:
`opts.kind` is 'openprogram.rules' for the list and 'openprogram.rules.revoke' for the
confirmation.
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
---@field workspace? string the workspace folder the rule belongs to

--- Whether the last listing spans several workspace folders (lines then name the folder).
M.several_folders = false

--- One line for a rule: what it covers, its scope, where it came from.
---@param r openprogram.Rule
---@return string
function M.format(r)
  local verb = r.decision == 'allow' and 'allow' or 'reject'
  local scope = r.scope == 'session' and 'this session' or 'workspace'
  local origin = r.origin == 'settings' and 'from your rules setting'
    or ((r.origin == 'legacy' and 'older rule' or 'prompt') .. (r.createdAt ~= '' and (' ' .. r.createdAt) or ''))
  local where = ''
  if M.several_folders and r.workspace then
    where = ' · ' .. vim.fn.fnamemodify(r.workspace, ':t')
  end
  return ('%s: %s  [%s%s · %s]'):format(verb, r.description ~= '' and r.description or (r.value or r.tool), scope,
    where, origin)
end

--- Whether an entry of the rules option is the settings rule the server listed.
---@param entry table
---@param rule openprogram.Rule
---@return boolean
local function same(entry, rule)
  return type(entry) == 'table' and entry.tool == rule.tool and entry.decision == rule.decision
    and (entry.pattern or vim.NIL) == (rule.value or vim.NIL)
end

--- Remove a settings rule from this Neovim's options and tell the server (at once).
---@param rule openprogram.Rule
---@return boolean removed
function M.remove_setting(rule)
  local config = require('openprogram.config')
  local opts = config.options
  local lists = { opts.rules, type(opts.init_options) == 'table' and opts.init_options.rules or nil }
  local removed = false
  for _, list in ipairs(lists) do
    if type(list) == 'table' and not removed then
      for i, entry in ipairs(list) do
        if same(entry, rule) then
          table.remove(list, i)
          removed = true
          break
        end
      end
    end
  end
  if not removed then
    vim.notify('openprogram: this rule is not in the rules option of this Neovim; remove it where it is set',
      vim.log.levels.WARN)
    return false
  end
  local left = config.init_options(opts).rules
  local c = client.find()
  if c then
    c:notify('workspace/didChangeConfiguration',
      { settings = { openprogram = { rules = (left and #left > 0) and left or vim.NIL } } })
  end
  vim.notify(('openprogram: removed %s from the rules option; delete it from your setup() call to keep it off')
    :format(M.format(rule)))
  return true
end

--- Revoke one rule, then report.
---@param rule openprogram.Rule
---@param done? fun(ok: boolean)
function M.revoke(rule, done)
  client.request(protocol.methods.REVOKE_RULE, { ruleId = rule.id, workspace = rule.workspace }, function(err)
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
    local folders = {}
    for _, r in ipairs(rules) do
      folders[r.workspace or ''] = true
    end
    M.several_folders = vim.tbl_count(folders) > 1
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
      local setting = rule.origin == 'settings'
      vim.ui.select({ 'Revoke', 'Keep' }, {
        prompt = (setting and 'Remove from the rules option ' or 'Revoke ') .. M.format(rule) .. '?',
        kind = 'openprogram.rules.revoke',
      }, function(choice)
        if choice ~= 'Revoke' then
          return finish(false)
        end
        if setting then
          return finish(M.remove_setting(rule))
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
