-- An approval nobody answers: the server's timeout (approval_timeout = 1 s) rejects it and
-- withdraws the prompt with $/cancelRequest; the handler settles and closes the diff preview.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ approval_timeout = 1 })
  H.track()
  H.out.asked = 0
  vim.ui.select = function()
    H.out.asked = H.out.asked + 1 -- never answers
  end
  -- The rejected call ends after the server withdrew its prompt: one still pending at its
  -- tool.finished would mean $/cancelRequest did not reach it (turn.finished's backstop would
  -- close it anyway).
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'tool.finished' then
        H.out.pending_at_finish = #require('openprogram.async').pending
      end
    end,
  })
  H.turn('OpenProgram write late.txt', 1)
  H.out.file = H.read('late.txt')
  H.out.pending = #require('openprogram.async').pending
  H.out.diff_open = false
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.bo[vim.api.nvim_win_get_buf(w)].filetype == 'diff' then
      H.out.diff_open = true
    end
  end
  H.out.lines = H.panel_lines()
end)
