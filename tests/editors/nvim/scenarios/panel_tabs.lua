-- One panel per tab page: `:q` in the log or in the input closes both, reopening gives the same
-- layout (log beside the code, input under the log), toggling acts on the current tab page only,
-- and a side panel's width stays its fraction of the screen when the screen is resized.
local H = dofile(os.getenv('OP_HARNESS'))

--- The current tab page's windows: {buf name or 'code', row, col, width}.
local function layout()
  local S = require('openprogram.panel').state
  local out = {}
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(w)
    local pos = vim.api.nvim_win_get_position(w)
    table.insert(out, { b == S.buf and 'log' or b == S.input_buf and 'input' or 'code',
      pos[1], pos[2], vim.api.nvim_win_get_width(w) })
  end
  return out
end

local function settle()
  vim.wait(100, function()
    return false
  end)
end

local function win_of(buf)
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(w) == buf then
      return w
    end
  end
end

H.run(function()
  H.setup({ panel = { width = 0.35 } })
  H.track()
  vim.o.columns, vim.o.lines = 160, 40
  vim.cmd('edit code.txt')
  vim.cmd('OpenProgram')
  local S = require('openprogram.panel').state
  H.out.opened = layout()
  H.out.open_in_input = vim.api.nvim_get_current_buf() == S.input_buf
  vim.cmd('stopinsert')
  -- :q from the log
  vim.api.nvim_set_current_win(win_of(S.buf))
  vim.cmd('quit')
  settle()
  H.out.after_q_log = layout()
  require('openprogram').toggle()
  settle()
  H.out.reopened = layout()
  -- :q from the input
  vim.cmd('stopinsert')
  vim.api.nvim_set_current_win(win_of(S.input_buf))
  vim.cmd('quit')
  settle()
  H.out.after_q_input = layout()
  -- two tab pages
  require('openprogram').toggle()
  settle()
  vim.cmd('stopinsert')
  vim.cmd('tabnew')
  vim.cmd('edit other.txt')
  require('openprogram').toggle()
  settle()
  H.out.tab2 = layout()
  H.out.tab2_cur_is_input = vim.api.nvim_get_current_buf() == S.input_buf
  vim.cmd('stopinsert')
  vim.cmd('tabprevious')
  H.out.tab1_kept = layout()
  vim.cmd('tabnext')
  require('openprogram').toggle()
  settle()
  H.out.tab2_closed = layout()
  vim.cmd('tabprevious')
  H.out.tab1_still = layout()
  -- resize: the width follows the fraction
  vim.o.columns = 200
  vim.cmd('doautocmd VimResized')
  H.out.wide = vim.api.nvim_win_get_width(win_of(S.buf))
  vim.o.columns = 100
  vim.cmd('doautocmd VimResized')
  H.out.narrow = vim.api.nvim_win_get_width(win_of(S.buf))
end)
