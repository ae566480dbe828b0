-- Watch a session another editor drives on a shared `serve --tcp`: join its running turn with
-- :OpenProgramWatch (what it streamed so far is replayed), then record the panel while the
-- turn goes on, its approval shows here read-only and its outcome follows.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ connect = tonumber(os.getenv('OP_CONNECT')) })
  H.track()
  local seen = {}
  local panel = require('openprogram.panel')
  -- notes are redrawn away when a turn ends (the panel then shows history): record them
  local notes, note = {}, panel.note
  panel.note = function(text)
    table.insert(notes, text)
    return note(text)
  end
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      table.insert(seen, { type = a.data.type, turn = a.data.turnId })
      if a.data.replayed then
        H.out.replayed = (H.out.replayed or 0) + 1
      end
      if a.data.type == 'permission.requested' then
        H.out.streaming = H.panel_lines() -- the other editor's turn as it streams in
      end
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
  local want = tonumber(os.getenv('OP_TURNS') or '1')
  H.wait(function()
    local n = 0
    for _, e in ipairs(seen) do
      if e.type == 'turn.finished' then
        n = n + 1
      end
    end
    return n >= want
  end, "the other editor's turns", 60000)
  H.out.seen = seen
  H.out.panel = H.panel_lines()
  H.out.panel_notes = notes
  H.out.winbar = vim.wo[vim.fn.bufwinid(require('openprogram.panel').state.buf)].winbar
  H.out.approvals_asked = H.out.approvals_asked or 0
end)
