-- Questions from the ask_user tool: free text through vim.ui.input, options through vim.ui.select.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup()
  H.track()
  H.out.inputs, H.out.selects = {}, {}
  vim.ui.input = function(opts, on_confirm)
    table.insert(H.out.inputs, opts.prompt)
    vim.defer_fn(function()
      on_confirm('blue')
    end, 20)
  end
  vim.ui.select = function(items, opts, on_choice)
    table.insert(H.out.selects, { prompt = opts.prompt, items = items, kind = opts.kind })
    vim.defer_fn(function()
      on_choice(items[2])
    end, 20)
  end
  H.turn('OpenProgram ask me two things', 1)
  H.out.lines = H.panel_lines()
  local res = require('openprogram.client').request_sync('openprogram/history', { sessionId = require('openprogram').session_id() })
  H.out.history = res
end)
