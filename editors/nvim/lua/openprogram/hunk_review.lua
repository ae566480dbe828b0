--[[
Per-hunk review of a pending edit, before anything is written: the approval float's "Review
hunk by hunk" choice opens the edit in a tab of its own, one block per hunk the server listed
(`toolCall.diff.hunks`: the server's own split of exactly the text on the card, so the indices
answered are the ones it applies), each with up to three lines of context.

  ga / gr    accept / reject the hunk under the cursor (then on to the next undecided one)
  gA / gR    accept / reject every hunk not decided yet
  ]h / [h    next / previous hunk
  gs or :w   submit: the accepted hunks are approved (`acceptedHunks`), none accepted rejects
  q          back to the approval float, decisions kept

Submitting needs a decision for every hunk. The review closes with its request (answered,
withdrawn by the server, timed out).
]]

local M = {}

local ns = vim.api.nvim_create_namespace('openprogram.hunk_review')
local CONTEXT = 3

--- Lines of a text as the server counts them (only "\n" ends a line; no empty last line), a
--- CRLF line shown without its "\r".
---@param text string?
---@return string[]
local function split(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  for i, l in ipairs(lines) do
    lines[i] = l:gsub('\r$', '')
  end
  return lines
end

--- 0-based first line of a side of a hunk (a side with no lines names the line it follows).
local function first(start, count)
  return count > 0 and start - 1 or start
end

---@class openprogram.ReviewBlock
---@field index integer the hunk's index (0-based, as acceptedHunks names it)
---@field top integer first buffer line (1-based): the header
---@field bottom integer last buffer line (1-based)

--- The review buffer's lines: one block per hunk (header, context, `-` old, `+` new, context).
---@param diff table toolCall.diff with hunks
---@return string[] lines
---@return openprogram.ReviewBlock[] blocks
function M.render(diff)
  local old, new = split(diff.oldText), split(diff.newText)
  local hunks = diff.hunks or {}
  local lines, blocks = {}, {}
  local shown = 0 -- old lines already shown as context (0-based, exclusive)
  for k, h in ipairs(hunks) do
    local i1 = first(h.oldStart, h.oldLines)
    local i2 = i1 + h.oldLines
    local j1 = first(h.newStart, h.newLines)
    local nxt = hunks[k + 1]
    local stop = nxt and first(nxt.oldStart, nxt.oldLines) or #old
    local top = #lines + 1
    table.insert(lines, h.header or ('@@ -%d,%d +%d,%d @@'):format(h.oldStart, h.oldLines, h.newStart, h.newLines))
    for i = math.max(shown, i1 - CONTEXT) + 1, i1 do
      table.insert(lines, ' ' .. old[i])
    end
    for i = i1 + 1, i2 do
      table.insert(lines, '-' .. old[i])
    end
    for j = j1 + 1, j1 + h.newLines do
      table.insert(lines, '+' .. (new[j] or ''))
    end
    shown = math.min(i2 + CONTEXT, stop)
    for i = i2 + 1, shown do
      table.insert(lines, ' ' .. old[i])
    end
    table.insert(blocks, { index = h.index or (k - 1), top = top, bottom = #lines })
  end
  return lines, blocks
end

---@class openprogram.Review
---@field close fun() close the review (idempotent)
---@field tab integer its tab page

--- Open the review of `params.toolCall.diff`.
---@param params table requestPermission params
---@param decisions table<integer, 'accept'|'reject'> by hunk index, kept by the caller
---@param on_submit fun(accepted: integer[]) every hunk decided: the accepted indices, sorted
---@param on_back fun() the user left without submitting (q)
---@return openprogram.Review
function M.open(params, decisions, on_submit, on_back)
  local diff = params.toolCall.diff
  local lines, blocks = M.render(diff)
  local from_tab = vim.api.nvim_get_current_tabpage()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'acwrite' -- :w submits
  vim.bo[buf].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = 'diff'
  -- no "/" in the name: the tab label shows it whole (a path's folders shrink to one letter)
  local label = 'Review ' .. vim.fn.fnamemodify(diff.path, ':t')
  if not pcall(vim.api.nvim_buf_set_name, buf, label) then
    pcall(vim.api.nvim_buf_set_name, buf, ('%s (%s)'):format(label, tostring(params.toolCall.toolCallId)))
  end
  vim.cmd('tab split')
  local tab = vim.api.nvim_get_current_tabpage()
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.wo[win].number = false
  vim.wo[win].foldenable = false
  local closed = false

  local function undecided()
    local n = 0
    for _, b in ipairs(blocks) do
      if not decisions[b.index] then
        n = n + 1
      end
    end
    return n
  end

  local function draw()
    if not vim.api.nvim_buf_is_valid(buf) then
      return
    end
    vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    for _, b in ipairs(blocks) do
      local d = decisions[b.index]
      local mark = d == 'accept' and { ' ✓ accept', 'DiagnosticOk' }
        or d == 'reject' and { ' ✗ reject', 'DiagnosticError' } or { ' ? undecided', 'DiagnosticWarn' }
      vim.api.nvim_buf_set_extmark(buf, ns, b.top - 1, 0, {
        virt_text = { { ('hunk %d '):format(b.index), 'Comment' }, mark }, virt_text_pos = 'eol',
      })
      if d == 'reject' and b.bottom > b.top then -- a rejected hunk reads as dropped
        vim.api.nvim_buf_set_extmark(buf, ns, b.top, 0, {
          end_row = b.bottom, hl_group = 'Comment', hl_eol = true, priority = 200,
        })
      end
    end
    if vim.api.nvim_win_is_valid(win) then
      local left = undecided()
      vim.wo[win].winbar = (('Review %s · %d hunks, %s · ga accept · gr reject · gA/gR the rest · gs submit · q back')
        :format(diff.path, #blocks, left > 0 and (left .. ' undecided') or 'all decided'):gsub('%%', '%%%%'))
    end
  end

  local function close()
    if closed then
      return
    end
    closed = true
    if vim.api.nvim_tabpage_is_valid(tab) then
      if #vim.api.nvim_list_tabpages() > 1 then
        vim.cmd('tabclose ' .. vim.api.nvim_tabpage_get_number(tab))
      end
    end
    if vim.api.nvim_tabpage_is_valid(from_tab) then
      vim.api.nvim_set_current_tabpage(from_tab)
    end
    if vim.api.nvim_buf_is_valid(buf) then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end

  ---@return openprogram.ReviewBlock?
  local function at_cursor()
    local row = vim.api.nvim_win_get_cursor(0)[1]
    for _, b in ipairs(blocks) do
      if row >= b.top and row <= b.bottom then
        return b
      end
    end
    return nil
  end

  local function go(b)
    if b and vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { b.top, 0 })
    end
  end

  local function next_undecided(after)
    for _, b in ipairs(blocks) do
      if b.top > after and not decisions[b.index] then
        return b
      end
    end
    for _, b in ipairs(blocks) do
      if not decisions[b.index] then
        return b
      end
    end
    return nil
  end

  local function decide(what)
    local b = at_cursor()
    if not b then
      vim.notify('openprogram: the cursor is on no hunk', vim.log.levels.INFO)
      return
    end
    decisions[b.index] = what
    draw()
    go(next_undecided(b.top))
  end

  local function rest(what)
    for _, b in ipairs(blocks) do
      decisions[b.index] = decisions[b.index] or what
    end
    draw()
  end

  local function submit()
    local left = undecided()
    if left > 0 then
      vim.notify(('openprogram: %d hunk%s undecided: ga accepts, gr rejects (gA/gR the rest)'):format(
        left, left == 1 and '' or 's'), vim.log.levels.WARN)
      go(next_undecided(0))
      return
    end
    local accepted = {}
    for _, b in ipairs(blocks) do
      if decisions[b.index] == 'accept' then
        table.insert(accepted, b.index)
      end
    end
    table.sort(accepted)
    close()
    on_submit(accepted)
  end

  local function map(lhs, fn)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true })
  end
  map('ga', function()
    decide('accept')
  end)
  map('gr', function()
    decide('reject')
  end)
  map('gA', function()
    rest('accept')
  end)
  map('gR', function()
    rest('reject')
  end)
  map(']h', function()
    local row = vim.api.nvim_win_get_cursor(0)[1]
    for _, b in ipairs(blocks) do
      if b.top > row then
        return go(b)
      end
    end
  end)
  map('[h', function()
    local row = vim.api.nvim_win_get_cursor(0)[1]
    for k = #blocks, 1, -1 do
      if blocks[k].top < row then
        return go(blocks[k])
      end
    end
  end)
  map('gs', submit)
  map('q', function()
    close()
    on_back()
  end)
  vim.api.nvim_create_autocmd('BufWriteCmd', { buffer = buf, callback = submit })
  draw()
  go(next_undecided(0) or blocks[1])
  return { close = close, tab = tab }
end

return M
