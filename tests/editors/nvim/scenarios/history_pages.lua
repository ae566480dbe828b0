-- A long session in pages: the panel shows the last page, its top line loads the one before.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ history_page = 3 })
  H.track()
  for n = 1, 4 do
    H.turn('OpenProgram question ' .. n, n)
  end
  local panel = require('openprogram.panel')
  local requests = {}
  local client = require('openprogram.client')
  local request = client.request
  client.request = function(method, params, cb)
    if method == 'openprogram/history' then
      table.insert(requests, vim.deepcopy(params))
    end
    return request(method, params, cb)
  end
  local done = false
  panel.refresh(function()
    done = true
  end)
  H.wait(function()
    return done
  end, 'the first page')
  H.out.first_page = H.panel_lines()
  local win = vim.fn.win_findbuf(panel.state.buf)[1]
  vim.api.nvim_set_current_win(win)
  local pages = 1
  for _ = 1, 5 do
    if not panel.state.has_more then
      break
    end
    local before = #panel.state.loaded
    vim.api.nvim_win_set_cursor(win, { 2, 0 })
    vim.api.nvim_win_set_cursor(win, { 1, 0 })
    vim.api.nvim_exec_autocmds('CursorMoved', { buffer = panel.state.buf })
    H.wait(function()
      return #panel.state.loaded > before
    end, 'an older page')
    pages = pages + 1
    H.out['cursor_after_page_' .. pages] = vim.api.nvim_win_get_cursor(win)[1]
  end
  H.out.pages = pages
  H.out.all = H.panel_lines()
  H.out.loaded = #panel.state.loaded
  H.out.requests = requests
  H.out.node_at_cursor = panel.node_at_cursor(win)
end)
