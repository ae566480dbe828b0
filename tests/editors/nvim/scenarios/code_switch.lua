-- Code that follows the conversation with the plugin: fork from the first reply (asked once
-- whether the code comes along, "remember"), switch back through the branch picker (no second
-- question, "≠ code" marked), undo the switch, compare the branches in diff tabs, and agent
-- blame lenses in a file buffer.
local H = dofile(os.getenv('OP_HARNESS'))

H.run(function()
  H.setup({ permission_mode = 'bypass', switch_code = 'ask', blame = { attach = true } })
  H.track()
  local panel = require('openprogram.panel')
  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, opts.kind or '?')
    if opts.kind == 'openprogram.switch_code' then
      H.out.switch_items = vim.tbl_map(opts.format_item, items)
      return on_choice(items[1]) -- yes, and remember
    end
    if opts.kind == 'openprogram.branch' then
      H.out.branch_items = vim.tbl_map(opts.format_item, items)
      for _, b in ipairs(items) do
        if b.headId and not b.active then
          return on_choice(b)
        end
      end
    end
    if opts.kind == 'openprogram.branch_diff' then
      return on_choice(items[1])
    end
    on_choice(nil)
  end
  local function turn(text, n)
    require('openprogram').open(text)
    H.wait(function()
      return H.turns >= n
    end, 'turn ' .. n)
  end
  turn('write a.txt\none', 1)
  local first_reply = nil
  for _, n in ipairs(require('openprogram.client').request_sync('openprogram/history',
    { sessionId = panel.state.session_id }).nodes) do
    if n.role == 'assistant' then
      first_reply = n.id
    end
  end
  turn('write a.txt\ntwo', 2)
  H.out.before_fork = H.read('a.txt')

  require('openprogram.branches').fork(first_reply, 'write b.txt\nalt')
  H.wait(function()
    return H.turns >= 3
  end, 'the fork')
  H.out.after_fork = { a = H.read('a.txt'), b = H.read('b.txt') }
  H.out.remembered = require('openprogram.code').remembered()

  local done = false
  require('openprogram.branches').pick_branch(function()
    done = true
  end)
  H.wait(function()
    return done
  end, 'the checkout')
  H.out.after_switch = { a = H.read('a.txt'), b = H.read('b.txt') }

  done = false
  require('openprogram.code').undo_switch(function()
    done = true
  end)
  H.wait(function()
    return done
  end, 'the undo of the switch')
  H.out.after_undo = { a = H.read('a.txt'), b = H.read('b.txt') }

  local tabs = nil
  require('openprogram.code').pick_diff(function(t)
    tabs = t or {}
  end)
  H.wait(function()
    return tabs ~= nil
  end, 'the branch diff')
  H.out.diff_tabs = #tabs
  H.out.diff_sides = {}
  for _, tab in ipairs(tabs) do
    local side = {}
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
      table.insert(side, { bar = vim.wo[win].winbar, diff = vim.wo[win].diff,
        lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false) })
    end
    table.insert(H.out.diff_sides, side)
  end
  H.out.asked = asked

  vim.cmd('tabnew')
  vim.cmd('edit b.txt')
  local buf = vim.api.nvim_get_current_buf()
  H.wait(function()
    return #vim.lsp.codelens.get(buf) > 0
  end, 'code lenses in b.txt')
  H.out.lenses = vim.tbl_map(function(l)
    return { line = l.range.start.line, title = l.command and l.command.title or '' }
  end, vim.lsp.codelens.get(buf))
end)
