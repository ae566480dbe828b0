-- Watch a session another editor drives on a shared `serve --tcp`: subscribe with
-- :OpenProgramWatch, then record the panel while the other editor's turn streams, its
-- approval shows here read-only and its outcome follows.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ connect = tonumber(os.getenv('OP_CONNECT')) })
  H.track()
  local seen = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      table.insert(seen, { type = a.data.type, turn = a.data.turnId })
    end,
  })
  local watching
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramWatching',
    callback = function(a)
      watching = a.data
    end,
  })
  vim.cmd('OpenProgramWatch ' .. os.getenv('OP_SESSION'))
  H.wait(function()
    return watching ~= nil
  end, 'the subscription')
  local f = assert(io.open(os.getenv('OP_READY'), 'w'))
  f:write('ready')
  f:close()
  local finished
  H.wait(function()
    for _, e in ipairs(seen) do
      if e.type == 'turn.finished' then
        finished = e.turn
        return true
      end
    end
    return false
  end, "the other editor's turn", 60000)
  H.wait(function()
    local text = table.concat(H.panel_lines(), '\n')
    return text:find('allowed once in the other editor', 1, true) ~= nil
  end, 'the outcome on the read-only card')
  H.out.seen = vim.tbl_filter(function(e)
    return e.turn == finished
  end, seen)
  H.out.panel = H.panel_lines()
  H.out.winbar = vim.wo[vim.fn.bufwinid(require('openprogram.panel').state.buf)].winbar
  H.out.approvals_asked = H.out.approvals_asked or 0
end)
