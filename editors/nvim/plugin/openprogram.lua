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

local function op()
  return require('openprogram')
end

local command = vim.api.nvim_create_user_command

command('OpenProgram', function(a)
  op().open(a.args)
end, { nargs = '*', desc = 'OpenProgram: open the chat panel; with text, send it' })

command('OpenProgramCancel', function()
  op().cancel()
end, { desc = 'OpenProgram: cancel the running turn' })

command('OpenProgramFork', function(a)
  op().fork(a.args)
end, { nargs = '*', desc = 'OpenProgram: fork from the message under the cursor' })

command('OpenProgramBranches', function()
  op().branches()
end, { desc = 'OpenProgram: switch branch' })

command('OpenProgramSessions', function()
  op().sessions()
end, { desc = 'OpenProgram: switch session' })

command('OpenProgramCheckpoints', function()
  op().checkpoints()
end, { desc = "OpenProgram: review a checkpoint's changes" })

command('OpenProgramRestore', function(a)
  op().restore(a.fargs[1], vim.list_slice(a.fargs, 2))
end, {
  nargs = '+',
  complete = function(lead)
    return require('openprogram.checkpoints').complete(lead)
  end,
  desc = 'OpenProgram: restore a checkpoint {id} [paths...]',
})
