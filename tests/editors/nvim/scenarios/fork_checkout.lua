-- Fork from a message in the panel, then switch back with :OpenProgramBranches.
local H = dofile(os.getenv('OP_HARNESS'))

--- 1-based line of the first panel line equal to `text`.
local function find_line(text)
  for i, l in ipairs(H.panel_lines()) do
    if l == text then
      return i
    end
  end
  error('no panel line ' .. text)
end

H.run(function()
  H.setup()
  H.track()
  H.turn('OpenProgram first question', 1)
  H.turn('OpenProgram second question', 2)
  H.out.before = H.panel_lines()

  -- Cursor on the first reply; fork with a new message after it.
  local panel = require('openprogram.panel')
  local win = vim.fn.win_findbuf(panel.state.buf)[1]
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { find_line('Answer one.'), 0 })
  H.out.fork_from = panel.node_at_cursor()
  vim.ui.input = function(opts, on_confirm)
    H.out.fork_prompt = opts.prompt
    on_confirm('a different second question')
  end
  H.turn('OpenProgramFork', 3)
  H.out.after_fork = H.panel_lines()

  -- Back to the original branch through the picker.
  local sid = require('openprogram').session_id()
  vim.ui.select = function(items, opts, on_choice)
    H.out.branch_items = vim.tbl_map(opts.format_item, items)
    for _, b in ipairs(items) do
      if not b.active then
        H.out.picked = b.headId
        return on_choice(b)
      end
    end
  end
  local done = false
  require('openprogram.branches').pick_branch(function()
    done = true
  end)
  H.wait(function()
    return done
  end, 'checkout')
  H.out.after_checkout = H.panel_lines()
  H.out.branches = require('openprogram.client').request_sync('openprogram/branches', { sessionId = sid })

  -- Fork in place of a user message (edit it), with the panel's key.
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { find_line('second question'), 0 })
  vim.ui.input = function(_, on_confirm)
    on_confirm('an edited second question')
  end
  vim.api.nvim_feedkeys('gF', 'xt', false) -- the panel's fork key
  H.wait(function()
    return H.turns >= 4
  end, 'the fork made with gF')
  H.out.after_edit = H.panel_lines()

  -- Fork in place of the first message: openprogram/fork with fromNodeId null (a new root),
  -- with another model picked in this Neovim (as :OpenProgramModel leaves it): the fork runs on it.
  require('openprogram.pickers').chosen = os.getenv('OP_FORK_MODEL')
  local client = require('openprogram.client')
  local request = client.request
  client.request = function(method, params, cb)
    if method == 'openprogram/fork' then
      H.out.root_fork = { params = vim.deepcopy(params), null = params.fromNodeId == vim.NIL }
    end
    return request(method, params, cb)
  end
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { find_line('first question'), 0 })
  vim.ui.input = function(_, on_confirm)
    on_confirm('a new first question')
  end
  vim.api.nvim_feedkeys('gF', 'xt', false)
  H.wait(function()
    return H.turns >= 5
  end, 'the fork from the first message')
  client.request = request
  H.out.after_root = H.panel_lines()
  H.out.root_session = require('openprogram').session_id()
  H.out.session = sid
  H.out.root_history = client.request_sync('openprogram/history', { sessionId = sid })
end)
