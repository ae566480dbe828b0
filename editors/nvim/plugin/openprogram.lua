-- openprogram: an AI coding agent in a language server. Load guard and user commands only;
-- everything else is required lazily from lua/openprogram/.
if vim.g.loaded_openprogram then
  return
end
vim.g.loaded_openprogram = true

if vim.fn.has('nvim-0.10') ~= 1 then
  vim.notify_once('openprogram needs Neovim 0.10 or newer', vim.log.levels.ERROR)
  return
end

-- `:help openprogram` without a manual :helptags: build the tags once, when they are missing.
do
  local doc = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h') .. '/doc'
  if vim.fn.filereadable(doc .. '/tags') == 0 and vim.fn.filewritable(doc) == 2 then
    pcall(vim.cmd.helptags, vim.fn.fnameescape(doc))
  end
end

local function op()
  return require('openprogram')
end

local command = vim.api.nvim_create_user_command

command('OpenProgram', function(a)
  if a.range > 0 then
    op().open_range(a.line1, a.line2, a.args)
  else
    op().open(a.args)
  end
end, {
  nargs = '*',
  range = true,
  desc = 'OpenProgram: open the chat panel; with text, send it; with a range, attach those lines',
})

command('OpenProgramImage', function(a)
  op().image(a.args)
end, {
  nargs = '?',
  complete = 'file',
  desc = "OpenProgram: attach an image file (PNG, JPEG, GIF, WebP), or the clipboard's, to the next message",
})

command('OpenProgramSymbol', function(a)
  op().symbol(a.args)
end, {
  nargs = '?',
  desc = 'OpenProgram: attach the symbol under the cursor (your language servers), or with {query} a workspace symbol, to the next message',
})

command('OpenProgramToggle', function()
  op().toggle()
end, { desc = 'OpenProgram: open or close the chat panel' })

command('OpenProgramModel', function(a)
  op().model(a.args)
end, { nargs = '?', desc = 'OpenProgram: pick the model (or :OpenProgramModel openai:gpt-4o)' })

command('OpenProgramMode', function(a)
  op().mode(a.args)
end, {
  nargs = '?',
  complete = function()
    return { 'ask', 'accept-edits', 'plan', 'bypass' }
  end,
  desc = 'OpenProgram: pick the permission mode',
})

command('OpenProgramApproval', function()
  require('openprogram.approval_float').focus()
end, { desc = 'OpenProgram: move into the waiting approval' })

command('OpenProgramCancel', function()
  op().cancel()
end, { desc = 'OpenProgram: cancel the running turn' })

command('OpenProgramFork', function(a)
  op().fork(a.args)
end, { nargs = '*', desc = 'OpenProgram: fork from the message under the cursor' })

command('OpenProgramBranches', function()
  op().branches()
end, { desc = 'OpenProgram: switch branch' })

command('OpenProgramSessions', function(a)
  op().sessions({ all = a.bang })
end, { bang = true, desc = 'OpenProgram: browse sessions (! : every workspace)' })

command('OpenProgramBranchName', function(a)
  op().name_branch(a.args)
end, { nargs = '?', desc = 'OpenProgram: name the active branch' })

command('OpenProgramCheckpoints', function()
  op().checkpoints()
end, { desc = "OpenProgram: review a checkpoint's changes" })

command('OpenProgramMcp', function()
  require('openprogram.mcp').pick()
end, { desc = 'OpenProgram: MCP servers (status, restart, revoke trust, tools)' })

command('OpenProgramUndo', function(a)
  op().undo(a.fargs[1])
end, {
  nargs = '?',
  complete = function(lead)
    return require('openprogram.checkpoints').complete(lead)
  end,
  desc = "OpenProgram: undo a turn's file changes [checkpoint id] (default: the newest turn)",
})

command('OpenProgramWatch', function(a)
  op().watch(a.fargs[1])
end, { nargs = '?', desc = 'OpenProgram: watch a live session another editor drives [session id]' })

command('OpenProgramRules', function()
  op().rules()
end, { desc = 'OpenProgram: list the approval rules; choose one to revoke it' })

command('OpenProgramBranchDiff', function()
  op().branch_diff()
end, { desc = "OpenProgram: compare the active branch's code with another branch's" })

command('OpenProgramUndoSwitch', function()
  op().undo_switch()
end, { desc = 'OpenProgram: undo the last branch switch that changed files' })

command('OpenProgramRestore', function(a)
  op().restore(a.fargs[1], vim.list_slice(a.fargs, 2))
end, {
  nargs = '+',
  complete = function(lead)
    return require('openprogram.checkpoints').complete(lead)
  end,
  desc = 'OpenProgram: restore a checkpoint {id} [paths...]',
})
