-- Redraws keep what happened and what still waits: a cancelled tool call after the turn's redraw
-- and a session switch, a pending question after a reload and a switch. Streaming moves only a
-- panel whose cursor was at the end. Pickers left open by a dressing-like vim.ui.select (it
-- opens on the next tick and restores the cursor of its window before calling back) never throw:
-- not after the panel was redrawn shorter, not when replaced by a newer picker, not when called
-- back twice or from a fast event, not after the panel moved to another session.
local H = dofile(os.getenv('OP_HARNESS'))

---@param pat string
---@return boolean
local function shown(pat)
  for _, l in ipairs(H.panel_lines()) do
    if l:find(pat, 1, true) then
      return true
    end
  end
  return false
end

---@param pat string
---@return boolean
local function noted(pat)
  for _, n in ipairs(H.notes) do
    if tostring(n):find(pat, 1, true) then
      return true
    end
  end
  return false
end

local function wait_line(pat, what)
  H.wait(function()
    return shown(pat)
  end, what)
end

H.run(function()
  H.setup({ permission_mode = 'bypass' })
  H.track()
  local panel = require('openprogram.panel')
  local branches = require('openprogram.branches')
  local S = panel.state
  local counts = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      counts[a.data.type] = (counts[a.data.type] or 0) + 1
    end,
  })

  -- A cancel cuts a running command and the write after it.
  local cancel_sent = false
  vim.api.nvim_create_autocmd('User', {
    pattern = 'OpenProgramEvent',
    callback = function(a)
      if a.data.type == 'tool.started' and not cancel_sent then
        cancel_sent = true
        vim.schedule(function()
          vim.cmd('OpenProgramCancel')
        end)
      end
    end,
  })
  H.turn('OpenProgram run two things', 1)
  H.out.live_cancel = vim.deepcopy(H.panel_lines())
  local first = S.session_id
  local function switch(sid)
    local done = false
    panel.set_session(sid, nil, function()
      done = true
    end)
    H.wait(function()
      return done
    end, 'switching to ' .. tostring(sid))
  end
  switch(nil)
  switch(first)
  H.out.cancel_after_switch = H.panel_lines()

  -- A question waits while the panel is reloaded and the session switched away and back.
  local confirm
  vim.ui.input = function(opts, on_confirm)
    H.out.question_prompt = opts.prompt
    confirm = on_confirm
  end
  vim.cmd('OpenProgram ask me')
  H.wait(function()
    return confirm ~= nil
  end, 'the question prompt')
  local reloaded = false
  panel.refresh(function()
    reloaded = true
  end)
  H.wait(function()
    return reloaded
  end, 'the reload')
  H.out.question_after_reload = vim.deepcopy(H.panel_lines())
  switch(nil)
  switch(first)
  H.out.question_after_switch = vim.deepcopy(H.panel_lines())
  confirm('blue')
  wait_line('You chose blue.', 'the answered turn')
  H.wait(function()
    return not S.watching and not shown('waiting for your answer')
  end, 'the redraw after the answered turn')
  H.out.after_answer = H.panel_lines()

  -- Scrolled up while the reply streams: the panel stays where the user reads.
  local win = vim.fn.win_findbuf(S.buf)[1]
  local turns = H.turns
  local deltas = counts['text.delta'] or 0
  vim.cmd('OpenProgram tell me a long story')
  H.wait(function()
    return (counts['text.delta'] or 0) >= deltas + 3
  end, 'the long reply to stream')
  vim.api.nvim_win_set_cursor(win, { 1, 0 })
  H.wait(function()
    return H.turns > turns
  end, 'the long reply to end')
  H.out.scrolled = { row = vim.api.nvim_win_get_cursor(win)[1], top = vim.fn.getwininfo(win)[1].topline }
  -- At the end while the reply streams: the panel follows it.
  turns = H.turns
  vim.cmd('OpenProgram another long story')
  H.wait(function()
    return H.turns > turns
  end, 'the second long reply')
  H.out.following = { row = vim.api.nvim_win_get_cursor(win)[1], last = vim.api.nvim_buf_line_count(S.buf) }

  -- A picker plugin like dressing.nvim.
  H.out.picker_errors = {}
  local held = {}
  vim.ui.select = function(items, opts, on_choice)
    vim.schedule(function()
      local from = vim.api.nvim_get_current_win()
      local cursor = vim.api.nvim_win_get_cursor(from)
      table.insert(held, {
        items = items,
        kind = opts.kind,
        raw = on_choice,
        choose = function(i)
          local ok, err = pcall(function()
            if vim.api.nvim_win_is_valid(from) then
              vim.api.nvim_win_set_cursor(from, cursor)
            end
            on_choice(i and items[i] or nil, i)
          end)
          if not ok then
            table.insert(H.out.picker_errors, tostring(err))
          end
        end,
      })
    end)
  end
  local function opened(n)
    H.wait(function()
      return #held >= n
    end, 'picker ' .. n)
    return held[n]
  end

  -- 1. Opened from the end of the panel, which is then redrawn shorter.
  vim.api.nvim_set_current_win(win)
  for i = 1, 4 do
    panel.note('a note the redraw drops ' .. i)
  end
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(S.buf), 0 })
  local long = vim.api.nvim_buf_line_count(S.buf)
  local checked_out = false
  branches.pick_branch(function(head)
    checked_out = head ~= nil
  end)
  local p1 = opened(1)
  reloaded = false
  panel.refresh(function()
    reloaded = true
  end)
  H.wait(function()
    return reloaded
  end, 'the redraw under the picker')
  H.out.redrawn_lines, H.out.long_lines = #H.panel_lines(), long
  p1.choose(1)
  H.wait(function()
    return checked_out
  end, 'the checkout from the redrawn panel')

  -- 2. Replaced by a newer picker: choosing in the old one does nothing.
  local chosen = {}
  branches.pick_session(function(sid)
    table.insert(chosen, { 'old', sid })
  end)
  local old = opened(2)
  branches.pick_session(function(sid)
    table.insert(chosen, { 'new', sid })
  end)
  local new = opened(3)
  old.choose(1) -- "+ New session"
  H.wait(function()
    return noted('newer one')
  end, 'the out-of-date note of the replaced picker')
  H.out.after_stale = { session = S.session_id, chosen = vim.deepcopy(chosen) }
  local mine
  for i, s in ipairs(new.items) do
    if s.id == first then
      mine = i
    end
  end
  new.choose(mine)
  H.wait(function()
    return #chosen > 0
  end, 'the newer session picker')

  -- 3. Called back twice, from a fast event (a libuv timer).
  local fast = {}
  branches.pick_session(function(sid)
    table.insert(fast, sid or 'none')
  end)
  local p4 = opened(4)
  local timer = assert((vim.uv or vim.loop).new_timer())
  local fired = false
  timer:start(0, 0, function()
    local ok, err = pcall(function()
      p4.raw(p4.items[mine], mine)
      p4.raw(nil, nil)
    end)
    if not ok then
      table.insert(H.out.picker_errors, 'fast: ' .. tostring(err))
    end
    fired = true
    timer:close()
  end)
  H.wait(function()
    return fired and #fast > 0
  end, 'the choice from a fast event')

  -- 4. Opened on one session, chosen after the panel moved to another.
  switch(nil)
  H.turn('OpenProgram a second session', H.turns + 1)
  local second = S.session_id
  branches.pick_branch()
  local p5 = opened(5)
  switch(first)
  p5.choose(1)
  H.wait(function()
    return noted('another session')
  end, 'the out-of-date note of the branch picker')
  H.out.moved = { shown = S.session_id, first = first, second = second }
  H.out.fast = fast -- read last: a second call would have acted by now
  H.out.errmsg = vim.v.errmsg
end)
