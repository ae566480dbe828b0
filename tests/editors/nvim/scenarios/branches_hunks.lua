-- Branches and checkpoint review: two forks with the same first message get distinct, stable
-- labels and one is named from the picker; in a checkpoint's diff tab ]h moves to the next
-- hunk, R restores that hunk alone and U undoes it; a restore that deletes a file closes its
-- unchanged buffer instead of leaving stale text. The blame lenses of the open file follow
-- the hunk restore (the restored hunk's lens goes).
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ permission_mode = 'bypass', blame = { attach = true } })
  H.track()
  local S = require('openprogram.panel').state
  local client = require('openprogram.client')
  vim.fn.writefile({ 'one', 'two', 'three', 'four', 'five', 'six', 'seven' }, 'code.py')
  H.turn('OpenProgram edit code.py', 1)
  local sid = S.session_id
  local first = client.request_sync('openprogram/history', { sessionId = sid }).nodes
  local reply = first[2].id
  H.turn('OpenProgram and then?', 2)
  -- two forks after the same message, both starting with "list ."
  require('openprogram.chat').fork(reply, 'list .')
  H.wait(function()
    return H.turns >= 3
  end, 'fork one')
  require('openprogram.chat').fork(reply, 'list .')
  H.wait(function()
    return H.turns >= 4
  end, 'fork two')

  local items
  vim.ui.select = function(list, opts, on_choice)
    if not items then
      items = vim.tbl_map(opts.format_item, list)
      return on_choice(list[#list]) -- "Name or rename a branch…"
    end
    for _, b in ipairs(list) do
      if b.active then
        return on_choice(b)
      end
    end
  end
  vim.ui.input = function(_, on_confirm)
    on_confirm('second try')
  end
  local done = false
  require('openprogram.branches').pick_branch(function()
    done = true
  end)
  H.wait(function()
    return done
  end, 'naming the branch')
  H.out.branch_items = items
  local named = nil
  vim.ui.select = function(list, opts, on_choice)
    named = vim.tbl_map(opts.format_item, list)
    on_choice(nil)
  end
  require('openprogram.branches').pick_branch()
  H.wait(function()
    return named ~= nil
  end, 'the picker again')
  H.out.branch_items_after = named

  -- code.py open in a tab of its own, with a blame lens per hunk of the agent's edit
  vim.cmd('tabnew code.py')
  local code_buf = vim.api.nvim_get_current_buf()
  require('openprogram.blame').attach(code_buf)
  H.wait(function()
    return #vim.lsp.codelens.get(code_buf) > 0
  end, 'blame lenses in code.py')
  H.out.lenses_before = #vim.lsp.codelens.get(code_buf)

  -- the edit turn's checkpoint in diff tabs
  local cps = client.request_sync('openprogram/checkpoints', { sessionId = sid }).checkpoints
  local cp
  for _, c in ipairs(cps) do
    for _, f in ipairs(c.files or {}) do
      if f.path == 'code.py' then
        cp = cp or c
      end
    end
  end
  local tabs
  require('openprogram.checkpoints').show(cp.id, function(t)
    tabs = t
  end)
  H.wait(function()
    return tabs ~= nil
  end, 'the diff tab')
  -- the after window is the current one (right side)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  H.feed(']h')
  H.out.first_hunk_line = vim.api.nvim_win_get_cursor(0)[1]
  H.feed(']h')
  H.out.second_hunk_line = vim.api.nvim_win_get_cursor(0)[1]
  local restored
  require('openprogram.checkpoints').restore_hunk_at_cursor(function(r)
    restored = r
  end)
  H.wait(function()
    return restored ~= nil
  end, 'the hunk restore')
  H.out.after_hunk = H.read('code.py')
  H.wait(function()
    -- (a refresh may first see the reload half-way: it settles on the file as restored)
    return #vim.lsp.codelens.get(code_buf) == H.out.lenses_before - 1
  end, 'the restored hunk losing its lens', 10000)
  H.out.lenses_after_restore = #vim.lsp.codelens.get(code_buf)
  local undone = false
  local safety = require('openprogram.checkpoints').last_safety
  require('openprogram.checkpoints').restore(safety, nil, function()
    undone = true
  end)
  H.wait(function()
    return undone
  end, 'the undo')
  H.out.after_undo = H.read('code.py')

  -- a restore that deletes an open file closes its buffer
  vim.cmd('tabonly')
  H.turn('OpenProgram add new.txt', 5)
  vim.cmd('edit new.txt')
  local nb = vim.api.nvim_get_current_buf()
  H.out.new_lines = H.lines(nb)
  local cps2 = client.request_sync('openprogram/checkpoints', { sessionId = sid }).checkpoints
  local back = false
  require('openprogram.checkpoints').restore(cps2[1].parentId, nil, function()
    back = true
  end)
  H.wait(function()
    return back
  end, 'the restore that deletes new.txt')
  H.out.new_exists = vim.uv.fs_stat('new.txt') ~= nil
  H.out.new_buffer_valid = vim.api.nvim_buf_is_valid(nb) and vim.api.nvim_buf_is_loaded(nb)
end)
