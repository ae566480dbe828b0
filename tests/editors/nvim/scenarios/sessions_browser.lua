-- The session browser and switching while a turn runs: this workspace's sessions come first
-- and another workspace's session (made by the CLI) only shows behind `a`, labelled with its
-- folder; the preview shows the last messages; rename and delete reach the server. Moving to
-- another session while a slow turn runs and sending there starts a turn there (nothing is
-- dropped), and the first turn still finishes.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  local S = require('openprogram.panel').state
  H.turn('OpenProgram alpha question', 1)
  local alpha = S.session_id
  require('openprogram.panel').set_session(nil, nil)
  H.turn('OpenProgram beta question', 2)
  local beta = S.session_id
  H.out.alpha, H.out.beta = alpha, beta

  local b
  require('openprogram.sessions').open({ on_ready = function(x)
    b = x
  end })
  H.wait(function()
    return b ~= nil
  end, 'the browser')
  H.out.lines_here = H.lines(b.buf)
  H.out.title_here = vim.api.nvim_win_get_config(b.win).title
  -- the preview of the session under the cursor (line 2: the newest session)
  vim.api.nvim_win_set_cursor(b.win, { 2, 0 })
  vim.api.nvim_exec_autocmds('CursorMoved', { buffer = b.buf })
  H.wait(function()
    return table.concat(H.lines(b.preview_buf), '\n'):find('beta question', 1, true) ~= nil
  end, 'the preview')
  H.out.preview = H.lines(b.preview_buf)
  H.feed('a')
  H.out.lines_all = H.lines(b.buf)

  -- rename the alpha session
  for i, row in ipairs(b.rows) do
    if row and row.id == alpha then
      vim.api.nvim_win_set_cursor(b.win, { i, 0 })
    end
  end
  vim.ui.input = function(_, on_confirm)
    on_confirm('Renamed alpha')
  end
  H.feed('r')
  H.wait(function()
    return table.concat(H.lines(b.buf), '\n'):find('Renamed alpha', 1, true) ~= nil
  end, 'the renamed session')
  -- delete the beta session (confirmed)
  for i, row in ipairs(b.rows) do
    if row and row.id == beta then
      vim.api.nvim_win_set_cursor(b.win, { i, 0 })
    end
  end
  vim.ui.select = function(items, _, on_choice)
    on_choice(items[1])
  end
  H.feed('d')
  H.wait(function()
    return table.concat(H.lines(b.buf), '\n'):find('beta question', 1, true) == nil
  end, 'the deleted session to go')
  local sessions = require('openprogram.client').request_sync('openprogram/sessions', {})
  H.out.ids_after = vim.tbl_map(function(s)
    return s.id
  end, sessions.sessions)
  -- open alpha from the browser
  for i, row in ipairs(b.rows) do
    if row and row.id == alpha then
      vim.api.nvim_win_set_cursor(b.win, { i, 0 })
    end
  end
  local opened
  b = nil
  require('openprogram.sessions').close()
  require('openprogram.sessions').open({ on_ready = function(x)
    b = x
  end, on_open = function(sid)
    opened = sid
  end })
  H.wait(function()
    return b ~= nil
  end, 'the browser again')
  for i, row in ipairs(b.rows) do
    if row and row.id == alpha then
      vim.api.nvim_win_set_cursor(b.win, { i, 0 })
    end
  end
  H.feed('<CR>')
  H.wait(function()
    return opened == alpha
  end, 'alpha opened')
  H.out.title_opened = S.title

  -- a slow turn in alpha; switch to a new session and send there
  local deltas = 0
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'text.delta' and a.data.sessionId == alpha then
        deltas = deltas + 1
      end
    end,
  })
  vim.cmd('OpenProgram tell me a slow story')
  H.wait(function()
    return deltas > 0
  end, 'the slow turn to stream')
  require('openprogram.panel').set_session(nil, nil)
  H.out.busy_after_switch = S.busy
  vim.cmd('OpenProgram gamma question')
  H.wait(function()
    return H.turns >= 3
  end, 'the gamma turn')
  H.out.gamma_lines = H.panel_lines()
  H.out.gamma = S.session_id
  H.wait(function()
    for _, n in ipairs(H.notes) do
      if tostring(n):find('the turn in session ' .. alpha, 1, true) then
        return true
      end
    end
    return false
  end, 'the note that the alpha turn ended')
  local hist = require('openprogram.client').request_sync('openprogram/history', { sessionId = alpha })
  H.out.alpha_last = hist.nodes[#hist.nodes]
end)
