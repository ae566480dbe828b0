-- Sessions and cancelling: vim.lsp.enable('openprogram') attaches to a file buffer and the panel
-- reuses that client; a slow turn is cancelled with :OpenProgramCancel; a second session is
-- started and :OpenProgramSessions switches back to the first. A message sent while a turn
-- runs steers it.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  vim.lsp.enable('openprogram')
  vim.cmd('edit notes.md')
  H.wait(function()
    return #vim.lsp.get_clients({ bufnr = 0, name = 'openprogram' }) == 1
  end, 'vim.lsp.enable to attach')

  H.turn('OpenProgram first session', 1)
  H.out.clients = #vim.lsp.get_clients({ name = 'openprogram' })
  local first = require('openprogram').session_id()
  H.out.first = first

  -- A slow reply: cancel it once it has started streaming.
  local deltas = 0
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'text.delta' then
        deltas = deltas + 1
      end
    end,
  })
  local result
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramTurnDone',
    callback = function(a)
      result = a.data
    end,
  })
  vim.cmd('OpenProgram tell me a long story')
  H.wait(function()
    return deltas > 0
  end, 'the slow reply to stream')
  -- Sending while the turn runs steers it instead of starting another turn.
  require('openprogram').send('make it about dragons')
  H.wait(function()
    for _, l in ipairs(H.panel_lines()) do
      if l:find('steered: make it about dragons', 1, true) then
        return true
      end
    end
    return false
  end, 'the steer note')
  vim.cmd('OpenProgramCancel')
  H.wait(function()
    return H.turns >= 2
  end, 'the cancelled turn to end')
  H.out.cancel_status = result and result.status
  H.out.after_cancel = H.panel_lines()

  -- A new session through the picker, then back to the first one.
  vim.ui.select = function(items, opts, on_choice)
    H.out.session_items = vim.tbl_map(opts.format_item, items)
    on_choice(items[1]) -- "+ New session"
  end
  local done = false
  require('openprogram.branches').pick_session(function()
    done = true
  end)
  H.wait(function()
    return done
  end, 'new session')
  H.out.new_session_lines = H.panel_lines()
  H.turn('OpenProgram second session', 3)
  H.out.second = require('openprogram').session_id()

  vim.ui.select = function(items, _, on_choice)
    for _, s in ipairs(items) do
      if s.id == first then
        return on_choice(s)
      end
    end
  end
  done = false
  require('openprogram.branches').pick_session(function()
    done = true
  end)
  H.wait(function()
    return done
  end, 'switch back')
  H.out.back = require('openprogram').session_id()
  H.out.back_lines = H.panel_lines()
end)
