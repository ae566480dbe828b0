-- A failing command's output in the panel: its first lines show under the call's line, the rest
-- is folded and opens with <CR> on the call's line (and closes again); the same after a redraw
-- from history. The winbar names the branch.
local H = dofile(os.getenv('OP_HARNESS'))

--- The call's line, the lines after it, and whether the first folded line is closed.
local function look(tag)
  local S = require('openprogram.panel').state
  local win = vim.fn.win_findbuf(S.buf)[1]
  vim.api.nvim_set_current_win(win)
  local lines = H.panel_lines()
  local at
  for i, l in ipairs(lines) do
    if vim.startswith(l, '- ✗') then
      at = i
    end
  end
  assert(at, 'the failed call in the panel (' .. tag .. ')')
  local folded_at = at + 1
  while lines[folded_at] and vim.startswith(lines[folded_at], '    ! ') do
    folded_at = folded_at + 1
  end
  local r = { line = lines[at], after = vim.list_slice(lines, at + 1, at + 40),
    closed = vim.fn.foldclosed(folded_at) ~= -1, foldtext = '' }
  if r.closed then
    r.foldtext = vim.fn.foldtextresult(folded_at)
  end
  vim.api.nvim_win_set_cursor(win, { at, 0 })
  H.feed('<CR>')
  r.open_after_cr = vim.fn.foldclosed(folded_at) == -1
  H.feed('<CR>')
  r.closed_again = vim.fn.foldclosed(folded_at) ~= -1
  return r
end

H.run(function()
  H.setup({ permission_mode = 'bypass' })
  H.track()
  H.turn('OpenProgram run the failing tests', 1)
  H.out.live = look('live')
  require('openprogram.panel').refresh()
  H.wait(function()
    for _, l in ipairs(H.panel_lines()) do
      if l:find('✗', 1, true) then
        return true
      end
    end
    return false
  end, 'the redraw')
  H.out.history = look('history')
  local panel = require('openprogram.panel')
  H.wait(function()
    return panel.state.branch ~= nil
  end, 'the branch in the winbar')
  H.out.winbar = vim.wo[vim.fn.win_findbuf(panel.state.buf)[1]].winbar
  H.out.labels = {
    panel.branch_label({ { active = true, name = 'try-2' }, { active = false } }),
    panel.branch_label({ { active = false }, { active = true } }),
    panel.branch_label({ { active = true } }),
  }
end)
