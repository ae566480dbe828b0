-- Subagents in the panel. Turn 1 spawns a helper and waits (a command that returns once the
-- test writes go.txt, which it does when the helper's reply was taken into the running turn):
-- the reply shows as a follow-up interjection in the turn. Turn 2 spawns a second helper that
-- only finishes after the turn ended: its report comes back as a follow-up turn, which the panel
-- streams under a "Follow-up" header and then redraws.
local H = dofile(os.getenv('OP_HARNESS'))

local dir = vim.fs.dirname(H.result_path)

H.run(function()
  H.setup({ permission_mode = 'bypass', init_options = { agentModel = 'scripted:' .. dir .. '/child.json' } })
  H.track()
  local S = require('openprogram.panel').state
  H.out.kinds = {}
  H.out.follow = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      local p = a.data
      if p.type == 'branch.message_sent' and p.data.kind == 'reply' and p.data.inTurn then
        vim.fn.writefile({ 'go' }, 'go.txt') -- the reply is in the running turn: let it go on
      elseif p.type == 'turn.started' then
        table.insert(H.out.kinds, p.data.source)
        if p.data.source == 'follow_up' then
          H.out.follow.started = p.turnId
        end
      elseif S.watching and p.turnId == S.turn_id and p.sessionId == S.session_id then
        -- This autocmd runs once the panel has drawn the event: while the panel watches the
        -- follow-up turn, keep its latest state (turn.finished ends the watch before it fires).
        H.out.follow.watching = p.turnId
        H.out.follow.winbar = vim.wo[vim.fn.win_findbuf(S.buf)[1]].winbar
        H.out.follow.streamed = H.panel_lines()
      elseif p.type == 'turn.finished' and p.turnId == S.turn_id and p.sessionId == S.session_id
        and S.busy then
        H.out.streamed1 = H.out.streamed1 or H.panel_lines()
      end
    end,
  })
  H.turn('OpenProgram delegate a check', 1)
  H.out.lines1 = H.panel_lines()

  H.turn('OpenProgram start a slow check', 2)
  H.out.lines2 = H.panel_lines()
  vim.fn.writefile({ 'go' }, 'go2.txt') -- now the second helper may finish
  H.wait(function()
    return H.out.follow.streamed ~= nil and not S.watching
      and table.concat(H.panel_lines(), '\n'):find('## Follow%-up') ~= nil
  end, 'the follow-up turn and the redraw')
  H.wait(function()
    return table.concat(H.panel_lines(), '\n'):find('Thanks for the second report.', 1, true) ~= nil
      and #vim.tbl_filter(function(l)
        return l:find('^## Assistant') ~= nil
      end, H.panel_lines()) == 3
  end, 'the redraw with the follow-up reply')
  H.out.lines3 = H.panel_lines()
  H.out.session = S.session_id
  H.out.history = require('openprogram.client').request_sync('openprogram/history', { sessionId = S.session_id })
end)
