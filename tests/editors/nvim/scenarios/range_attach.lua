-- :'<,'>OpenProgram with text: the lines (unsaved edits included) and their diagnostics go with
-- the message; the transcript names the attachment, while streaming and after the redraw from
-- history. Then completion in the input: @file, /command, #buffer; then #buffer and @file in a
-- message attach the buffer and the file.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  vim.cmd('edit app.py')
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 4, 5, false, { '    return 1  # unsaved' })
  local ns = vim.api.nvim_create_namespace('op-test-lint')
  vim.diagnostic.set(ns, buf, { { lnum = 3, col = 10, end_col = 11, message = "undefined name 'x'",
    severity = vim.diagnostic.severity.ERROR, source = 'pyflakes' } })
  H.turn('3,5OpenProgram why does this fail?', 1)
  local S = require('openprogram.panel').state
  H.wait(function()
    return not S.busy and table.concat(H.panel_lines(), '\n'):find('%[selection') ~= nil
  end, 'the redraw')
  H.out.lines = H.panel_lines()
  H.out.session = S.session_id
  local attach = require('openprogram.attach')
  local words = function(items)
    return vim.tbl_map(function(i)
      return i.word
    end, items)
  end
  H.out.files = words(attach.complete(0, '@apy'))
  H.out.commands = words(attach.complete(0, '/com'))
  H.out.buffer = words(attach.complete(0, '#bu'))
  -- #buffer (the buffer as shown) and @path (a workspace file) in a message
  vim.cmd('wincmd p')
  H.turn('OpenProgram compare #buffer with @other.py', 2)
end)
