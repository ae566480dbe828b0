-- A question answered elsewhere (openprogram/answer, as another client or a script would): the
-- question.replied event names the questionId, so the open vim.ui.input closes by itself.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  local async = require('openprogram.async')
  H.out.inputs = {}
  vim.ui.input = function(opts)
    table.insert(H.out.inputs, opts.prompt) -- never answers here
    H.out.pending_key = async.pending[#async.pending].key
  end
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      local p = a.data
      if p.type == 'question.asked' then
        H.out.question_id = p.data.questionId
      elseif p.type == 'tool.finished' then
        -- the question's call ended: its prompt was closed by question.replied before (at
        -- turn.finished the panel's backstop would close it anyway)
        H.out.pending_at_finish = #async.pending
      end
    end,
  })
  vim.cmd('OpenProgram ask me something')
  H.wait(function()
    return #H.out.inputs >= 1 and H.out.question_id ~= nil
  end, 'the question')
  H.out.answer = require('openprogram.client').request_sync('openprogram/answer',
    { questionId = H.out.question_id, answer = 'green' })
  H.wait(function()
    return H.turns >= 1
  end, 'the turn')
  H.out.pending = #async.pending
  H.out.history = require('openprogram.client').request_sync('openprogram/history',
    { sessionId = require('openprogram').session_id() })
end)
