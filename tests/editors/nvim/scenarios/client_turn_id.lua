-- Two new sessions started at the same moment on one connection: the panel's chat and a chat a
-- script sends. The panel finds its own turn by the clientTurnId echoed in turn.started, binds
-- to that turn's session right then (before the result), and streams only its own turn.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  local panel = require('openprogram.panel')
  local S = panel.state
  H.out.started = {}
  local mine ---@type {session: string, turn: string}?
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      local p = a.data
      if p.type == 'turn.started' then
        table.insert(H.out.started, { session = p.sessionId, turn = p.turnId, cid = p.data.clientTurnId })
        if p.data.clientTurnId ~= nil and p.data.clientTurnId == S.client_turn_id then
          H.out.sent_cid = S.client_turn_id
          mine = { session = p.sessionId, turn = p.turnId }
        end
      end
      if mine and p.type ~= 'turn.started' and p.turnId == mine.turn and not H.out.bound then
        -- The turn's next event, before the panel handles it: the panel has handled turn.started.
        -- (Not a vim.schedule from turn.started: that can run after the turn finished.)
        H.out.bound = { session = S.session_id, turn = S.turn_id, busy = S.busy, event_session = mine.session,
          event_turn = mine.turn }
      end
      if p.type == 'turn.finished' and p.turnId ~= nil and p.turnId == S.turn_id then
        H.out.streamed = H.panel_lines() -- what streamed, before the redraw from history
      end
    end,
  })
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramTurnDone',
    callback = function(a)
      H.out.result = a.data
    end,
  })
  panel.open(false)
  local client = require('openprogram.client')
  assert(client.ensure(), 'no server')
  local other
  -- Back to back: the script's chat first, then the panel's.
  client.request('openprogram/chat', { text = 'the other chat', clientTurnId = 'script-1' }, function(err, res)
    other = res or { error = err }
  end)
  require('openprogram.chat').send('the panel chat')
  H.wait(function()
    return H.turns >= 1 and other ~= nil
  end, 'both turns')
  H.out.other = other
  H.out.session = S.session_id
  H.wait(function()
    return table.concat(H.panel_lines(), '\n'):find('the panel chat', 1, true) ~= nil and not S.busy
  end, 'the redraw')
  H.out.lines = H.panel_lines()
end)
