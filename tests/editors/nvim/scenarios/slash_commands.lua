-- Slash commands typed in the input buffer: the editor runs /undo, /fork [name], /model, /mode
-- and /new; /compact and a custom command go to the server; an unknown /x is not sent; //x
-- and a path-like /usr/... are plain messages.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ permission_mode = 'accept-edits' })
  H.track()
  local panel = require('openprogram.panel')
  local S = panel.state
  panel.open(true)
  local input = S.input_buf
  local function type_and_send(text)
    vim.api.nvim_buf_set_lines(input, 0, -1, false, vim.split(text, '\n', { plain = true }))
    require('openprogram.input').submit(input)
  end
  local function sent(n, text)
    type_and_send(text)
    H.wait(function()
      return H.turns >= n and not S.busy
    end, 'turn ' .. n .. ' after ' .. text)
  end
  local function note_after(before, what)
    H.wait(function()
      return #H.notes > before
    end, what)
    return H.notes[#H.notes]
  end

  sent(1, 'create notes.txt')
  H.out.created = H.read('notes.txt')
  -- The CLI (another process) undoes the turn: /undo here knows it from the server
  local cli = vim.list_slice(H.server_cmd, 1, #H.server_cmd - 1) -- without `serve`
  local function run_cli(args)
    local res = vim.system(vim.list_extend(vim.deepcopy(cli), args), { text = true }):wait(60000)
    return (res.stdout or '') .. (res.stderr or ''), res.code
  end
  local undid, code = run_cli({ 'undo', '--workspace', vim.fn.getcwd() })
  H.out.cli_undo = { text = undid, code = code, file = H.read('notes.txt') }
  local n = #H.notes
  type_and_send('/undo')
  H.out.undo_after_cli = note_after(n, 'the /undo message after the CLI undo')
  -- the CLI's redo takes its undo back: /undo undoes the turn again
  local redo = undid:match('redo with: (.-)\n')
  local redone, redo_code = run_cli(vim.list_slice(vim.split(redo or '', ' ', { trimempty = true }), 2))
  H.out.cli_redo = { text = redone, code = redo_code, file = H.read('notes.txt') }
  -- /undo: the turn's file goes (it created it); a second /undo has nothing left
  n = #H.notes
  type_and_send('/undo')
  H.wait(function()
    return H.read('notes.txt') == nil
  end, '/undo to delete notes.txt')
  H.out.undo_note = note_after(n, 'the undo message')
  n = #H.notes
  type_and_send('/undo')
  H.out.undo_again = note_after(n, 'the second /undo message')
  H.out.turns_after_undo = H.turns

  sent(2, '/explain app.py')       -- custom: expanded by the server
  sent(3, 'first question')
  H.out.session = S.session_id
  -- /fork alt: the input holds the last message; the edited text forks from before it
  type_and_send('/fork alt')
  H.out.fork_input = vim.api.nvim_buf_get_lines(input, 0, -1, false)
  sent(4, 'second question')
  H.out.fork_lines = H.panel_lines()
  local client = require('openprogram.client')
  H.out.branches = client.request_sync('openprogram/branches', { sessionId = S.session_id }, 5000)
  H.out.history = client.request_sync('openprogram/history', { sessionId = S.session_id }, 5000)

  -- /model and /mode, with an argument and a bad one; an unknown command
  type_and_send('/model ' .. H.model)
  H.out.model = require('openprogram.pickers').chosen
  type_and_send('/mode plan')
  H.out.mode = require('openprogram.config').options.permission_mode
  n = #H.notes
  type_and_send('/mode sideways')
  H.out.bad_mode = note_after(n, 'the bad mode message')
  type_and_send('/mode accept-edits')
  n = #H.notes
  type_and_send('/nosuch thing')
  H.out.unknown = note_after(n, 'the unknown command message')
  H.out.turns_after_unknown = H.turns

  sent(5, '//etc/hosts is odd')    -- // escapes: sent as "/etc/hosts is odd"
  sent(6, '/usr/bin is missing')    -- not a command's form: a plain message
  sent(7, '/compact')               -- the server's: a turn with no model reply
  H.out.compact_lines = H.panel_lines()
  type_and_send('/new')
  H.out.new_session = S.session_id or false
  H.out.new_lines = H.panel_lines()
end)
