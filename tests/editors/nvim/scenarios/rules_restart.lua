-- Approval rules from Neovim, and prompts keyed by the server's unique ids across a restart.
-- With the offline model: "always allow" `echo one` for the workspace; the same command then
-- runs unasked; :OpenProgramRules lists the rule and revokes it, and the next `echo one` asks
-- again with no restart. A rule of the `rules` option is listed as a setting; choosing it
-- removes it from the options and tells the server: the command it allowed asks at once. Then
-- the server restarts mid-session (the offline model's own call ids start over) and the new
-- prompt carries the turn and call id of its own tool.started.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ approvals = { ui = 'select' },
    rules = { { tool = 'run_command', pattern = 'echo set*', decision = 'allow' } } })
  H.track()
  local async = require('openprogram.async')
  local answers = { 'allow_always_workspace', 'reject_once', 'reject_once', 'allow_once' }
  H.out.prompts, H.out.rule_items, H.out.confirm, H.out.started = {}, {}, {}, {}
  H.out.pending_keys = {}
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == 'openprogram.rules' then
      for _, it in ipairs(items) do
        table.insert(H.out.rule_items, opts.format_item(it))
      end
      return vim.schedule(function()
        on_choice(items[1])
      end)
    elseif opts.kind == 'openprogram.rules.revoke' then
      table.insert(H.out.confirm, opts.prompt)
      return vim.schedule(function()
        on_choice('Revoke')
      end)
    end
    local pending = async.pending[#async.pending]
    table.insert(H.out.pending_keys, { turn = pending.turn_id, key = pending.key })
    table.insert(H.out.prompts, opts.prompt)
    local want = table.remove(answers, 1)
    vim.schedule(function()
      for _, it in ipairs(items) do
        if it.optionId == want then
          return on_choice(it)
        end
      end
      on_choice(nil)
    end)
  end
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      local p = a.data
      if p.type == 'tool.started' then
        table.insert(H.out.started, { turn = p.turnId, id = p.data.toolCallId, title = p.data.title })
      end
    end,
  })

  H.turn('OpenProgram run echo one', 1)
  H.out.session = require('openprogram').session_id()
  H.turn('OpenProgram run echo one', 2)
  H.out.prompts_after_rule = #H.out.prompts

  local revoked = nil
  require('openprogram.rules').pick(function(ok)
    revoked = ok
  end)
  H.wait(function()
    return revoked ~= nil
  end, 'the revoke')
  H.out.revoked = revoked
  H.turn('OpenProgram run echo one', 3)
  H.out.prompts_after_revoke = #H.out.prompts

  -- The settings rule: it allows `echo settings` unasked, until it is removed from the editor.
  H.turn('OpenProgram run echo settings', 4)
  H.out.prompts_with_setting = #H.out.prompts
  H.out.first_items = H.out.rule_items
  H.out.rule_items = {}
  local removed = nil
  require('openprogram.rules').pick(function(ok)
    removed = ok
  end)
  H.wait(function()
    return removed ~= nil
  end, 'the setting removal')
  H.out.setting_items = H.out.rule_items
  H.out.setting_removed = removed
  H.out.options_rules = #(require('openprogram.config').options.rules or {})
  H.turn('OpenProgram run echo settings', 5)
  H.out.prompts_after_setting = #H.out.prompts

  -- Restart the server in the middle of the session.
  local old = require('openprogram.client').find()
  H.out.old_client = old and old.id
  old:stop(true)
  H.wait(function()
    return #vim.lsp.get_clients({ name = require('openprogram.client').name }) == 0
  end, 'the server to stop')
  H.turn('OpenProgram run echo two', 6)
  local new = require('openprogram.client').find()
  H.out.new_client = new and new.id
  H.out.session_after = require('openprogram').session_id()
  H.out.lines = H.panel_lines()
  H.out.pending_end = #async.pending
end)
