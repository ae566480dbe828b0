-- `approvals = { ui = 'select' }`: a question arriving while the user types in Insert mode waits
-- until the user is idle (Normal mode, no key for a moment) before vim.ui.select opens, so the
-- typed text lands in the buffer and no key answers the question.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ approvals = { ui = 'select' } })
  H.track()
  H.out.selects = {}
  vim.cmd('edit code.txt')
  local code, code_win = vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win()
  vim.ui.select = function(items, opts, on_choice)
    table.insert(H.out.selects, { prompt = opts.prompt, code = H.lines(code),
      mode = vim.api.nvim_get_mode().mode })
    vim.defer_fn(function()
      on_choice(items[1])
    end, 20)
  end
  local asked = false
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'question.asked' then
        asked = true
      end
    end,
  })
  vim.cmd('OpenProgram ask me')
  vim.api.nvim_set_current_win(code_win)
  vim.cmd('stopinsert')
  -- `xt!` stays in Insert mode until a key ends it: the rest runs from a timer meanwhile, as
  -- the user's next keys would come while the question waits
  local t0 = vim.uv.now()
  local function later()
    H.out.mode_typing = vim.api.nvim_get_mode().mode
    if not asked and vim.uv.now() - t0 < 30000 then
      vim.defer_fn(later, 50)
      return
    end
    vim.defer_fn(function()
      H.out.asked = asked
      H.out.selects_while_typing = #H.out.selects
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(' world<Esc>', true, false, true), 't', false)
    end, 1500)
  end
  vim.defer_fn(later, 50)
  H.feed('ohello', true)
  H.wait(function()
    return H.turns >= 1
  end, 'the turn')
  H.out.code = H.lines(code)
  H.out.history = require('openprogram.client').request_sync('openprogram/history',
    { sessionId = require('openprogram').session_id() })
end)
